"""Which aten operators autocast casts, and to what: PyTorch's op lists, one row per policy.

``LOWER`` runs in the autocast dtype (matrix products and convolutions: the ops that gain from
half precision and tolerate it); ``FP32`` runs in float32 (ops whose range or accumulation
suffers in half precision: exponentials and logarithms, reductions, softmax, norms, losses).
A name that is not an aten operator here (yet) is skipped; every overload of a listed name is
covered, except in-place and ``out=`` forms, which autocast leaves alone as PyTorch does.
"""

from __future__ import annotations

LOWER = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "convolution", "_convolution", "conv_tbc", "addmm", "addmv", "addr", "matmul", "einsum",
    "mm", "mv", "linear", "addbmm", "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot",
    "linalg_vecdot", "prelu", "scaled_dot_product_attention", "_native_multi_head_attention",
)

FP32 = (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
    "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm", "native_layer_norm",
    "group_norm", "batch_norm", "instance_norm", "frobenius_norm", "nuclear_norm", "norm",
    "linalg_vector_norm", "linalg_matrix_norm", "cosine_similarity", "poisson_nll_loss",
    "cosine_embedding_loss", "nll_loss", "nll_loss2d", "cross_entropy_loss",
    "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
    "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "dist",
    "pdist", "cdist", "renorm", "logsumexp", "prod", "sum", "cumprod", "cumsum", "softmax",
    "log_softmax", "_softmax", "_log_softmax",
)

# policy name -> the op names it covers
POLICIES: dict[str, tuple[str, ...]] = {"lower": LOWER, "fp32": FP32}
