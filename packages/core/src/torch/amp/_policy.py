"""Which operators autocast casts, and to what: PyTorch's documented op lists, one table per
device family, one row per policy.

``lower`` runs in the autocast dtype (matrix products and convolutions: the ops that gain from
half precision and tolerate it); ``fp32`` runs in float32 (ops whose range or accumulation
suffers in half precision); ``promote`` runs in the widest floating dtype among the inputs (ops
that take several tensors and would otherwise fail or round on mixed dtypes); ``keep`` (Plait's
own, :data:`UNCAST`) casts nothing, in or under the call.

PyTorch keeps two families of lists: the CPU's, and the one CUDA introduced that the other
accelerators (``xpu``, ``mps``, out-of-tree devices) follow. They differ on purpose: on the CPU
pointwise math and reductions stay in bfloat16 (``exp``, ``sum``, ``softmax``), while losses and
linear algebra go to float32; on GPUs the pointwise transcendental functions, reductions and
norms go to float32 as well. :data:`CPU` serves ``cpu``; :data:`ACCELERATOR` every other device
type, since a plugin's device is an accelerator.

A name that is neither an aten operator here nor a composite registered with
:func:`torch.amp.autocast_mode.composite` is skipped; every overload of a listed name is covered,
except in-place and ``out=`` forms, which autocast leaves alone as PyTorch does.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# Ops both families run in the autocast dtype. (``convolution`` is below ``conv1d``..., where
# PyTorch casts; Plait's convolution functions call it directly, so it is listed for both.)
_LOWER_COMMON = (
    "convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "_convolution", "conv_tbc", "addmm", "matmul", "mm", "linear", "addbmm",
    "baddbmm", "bmm",
    "linalg_vecdot", "prelu", "scaled_dot_product_attention", "_native_multi_head_attention",
)

# Losses both families compute in float32.
_FP32_LOSSES = (
    "cosine_embedding_loss", "poisson_nll_loss", "nll_loss", "nll_loss2d", "cross_entropy_loss",
    "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
    "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "binary_cross_entropy_with_logits",
)

ACCELERATOR: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "lower": _LOWER_COMMON + (
        "addmv", "addr", "einsum", "mv", "chain_matmul", "linalg_multi_dot",
    ),
    "fp32": _FP32_LOSSES + (
        "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
        "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm",
        "native_layer_norm", "group_norm", "frobenius_norm", "nuclear_norm", "norm",
        "linalg_vector_norm", "linalg_matrix_norm", "cosine_similarity", "dist", "pdist",
        "cdist", "renorm", "logsumexp", "prod", "sum", "cumprod", "cumsum", "softmax",
        "log_softmax", "_softmax", "_log_softmax",
    ),
    "promote": (
        "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sampler", "index_put",
        "scatter_add", "tensordot",
    ),
})

CPU: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "lower": _LOWER_COMMON + ("mkldnn_rnn_layer",),
    "fp32": _FP32_LOSSES + (
        "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile",
        "nanquantile", "stft", "cdist", "trace", "view_as_complex", "cholesky",
        "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr",
        "pinverse", "max_pool3d", "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d",
        "reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d",
        "replication_pad3d", "ctc_loss", "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2",
        "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2", "fft_irfft2",
        "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_cond", "linalg_matrix_rank",
        "linalg_solve", "linalg_cholesky", "linalg_svdvals", "linalg_eigvals",
        "linalg_eigvalsh", "linalg_inv", "linalg_householder_product", "linalg_tensorinv",
        "linalg_tensorsolve", "geqrf", "_lu_with_info", "qr", "svd", "triangular_solve",
        "fractional_max_pool2d", "fractional_max_pool3d", "adaptive_max_pool3d", "linalg_qr",
        "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh", "linalg_lstsq",
        "linalg_inv_ex",
    ),
    "promote": ("stack", "cat", "index_copy"),
})

# Operators PyTorch runs as one native kernel that no list names (their inputs are not cast),
# which Plait writes in other ops: inside an autocast region their inputs are left alone and
# the ops they are written in are not cast either (``torch.linalg.lu_solve``'s products would
# otherwise run in bfloat16 beside its float32 operands and fail). Policy "keep".
UNCAST = frozenset((
    "linalg_cross", "linalg_det", "linalg_ldl_factor", "linalg_ldl_factor_ex", "linalg_ldl_solve",
    "linalg_lu", "linalg_lu_factor", "linalg_lu_factor_ex", "linalg_lu_solve",
    "linalg_matrix_exp", "linalg_slogdet", "linalg_solve_ex", "linalg_solve_triangular",
))

# device type -> the policy of each listed op name (device types not named: ACCELERATOR's)
_BY_NAME = {family: {op: policy for policy, ops in table.items() for op in ops}
            for family, table in (("cpu", CPU), ("accelerator", ACCELERATOR))}

# every op name some family lists: these get an Autocast kernel
LISTED = frozenset(_BY_NAME["cpu"]) | frozenset(_BY_NAME["accelerator"])


def policy_of(device_type: str, op_name: str) -> str | None:
    """The policy autocast applies to ``op_name`` (an aten name without overload) on
    ``device_type``, or ``None`` when that device's list leaves it alone."""
    family = "cpu" if device_type == "cpu" else "accelerator"
    policy = _BY_NAME[family].get(op_name)
    return "keep" if policy is None and op_name in UNCAST else policy
