"""``torch.nn.functional``: stateless layers, activations and losses with PyTorch's signatures.

Each function is a thin wrapper over core ops (``torch.layer_norm``, ``torch.conv2d``,
``torch.ops.aten.cross_entropy_loss``, ``torch.ops.aten.scaled_dot_product_attention``, ...):
argument conventions and checks live here, the math (and any fused native kernel) lives in core
and the backends. Where core has no op yet (``relu``, ``silu``, ``dropout``, ``nll_loss``)
the function is a short composite over core ops with the same semantics.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor
from torch.jit._recording import traced_as

__all__ = [
    "conv1d", "conv2d", "conv3d", "cross_entropy", "dropout", "gelu", "layer_norm", "linear",
    "log_softmax", "mse_loss", "nll_loss", "relu", "relu_", "scaled_dot_product_attention",
    "sigmoid", "silu", "softmax", "tanh",
]

# PyTorch's reduction enum (at::Reduction): the aten loss ops take the integer.
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction: str) -> int:
    try:
        return _REDUCTIONS[reduction]
    except (KeyError, TypeError):
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """The ``reduction`` string the deprecated ``size_average``/``reduce`` pair stands for."""
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  "reduction='mean' instead.", UserWarning, stacklevel=3)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


# --------------------------------------------------------------------------- linear, conv


# one node in traces (an ONNX MatMul over any leading dims, which stay dynamic), as
# aten::linear in PyTorch
@traced_as("aten::linear")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: ``input`` (*, in_features), ``weight`` (out_features,
    in_features), ``bias`` (out_features)."""
    # the operator aten::linear: one node with one derivative (x's rows times W^T, the bias
    # folded into the product), where the composite recorded a view, a transpose and addmm
    return _LINEAR(input, weight, bias)


_LINEAR = torch.ops.aten.linear.default


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-d convolution of ``input`` (N, C_in, L) with ``weight`` (C_out, C_in/groups, k);
    ``padding`` may be an int, a tuple, ``"same"`` or ``"valid"``."""
    return torch.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-d convolution of ``input`` (N, C_in, H, W) with ``weight`` (C_out, C_in/groups, kH,
    kW); ``padding`` may be an int, a tuple, ``"same"`` or ``"valid"``."""
    return torch.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-d convolution of ``input`` (N, C_in, D, H, W) with ``weight`` (C_out, C_in/groups, kD,
    kH, kW); ``padding`` may be an int, a tuple, ``"same"`` or ``"valid"``."""
    return torch.conv3d(input, weight, bias, stride, padding, dilation, groups)


# --------------------------------------------------------------------------- activations


# The operator torch.relu calls: this function's own entry has checked __torch_function__
# (once per call, as PyTorch's F.relu does), so it calls the operator, not torch.relu's entry.
_aten_relu = torch.ops.aten.relu.default


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)``; NaN stays NaN and the gradient at 0 is 0, as in PyTorch."""
    if inplace:
        return relu_(input)
    return _aten_relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place :func:`relu`."""
    return torch.relu_(input)


_aten_gelu = torch.ops.aten.gelu.default
_aten_silu = torch.ops.aten.silu.default
_aten_mse_loss = torch.ops.aten.mse_loss.default


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit: ``x * Phi(x)``, or its tanh approximation with
    ``approximate="tanh"``; one operator (``aten::gelu``) forward and one (``gelu_backward``)
    backward."""
    if approximate == "none":  # the schema's default, not passed (as PyTorch shows the call)
        return _aten_gelu(input)
    return _aten_gelu(input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (swish)."""
    if inplace:
        return input.mul_(torch.sigmoid(input))
    return _aten_silu(input)


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))`` (same as ``torch.sigmoid``)."""
    return torch.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent (same as ``torch.tanh``)."""
    return torch.tanh(input)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: torch.dtype | None = None) -> Tensor:
    """``exp(x) / sum(exp(x), dim)``; ``dtype`` casts the input first."""
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    return torch.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: torch.dtype | None = None) -> Tensor:
    """``log(softmax(x, dim))``, computed without the loss of precision of the two steps."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    return torch.log_softmax(input, dim, dtype=dtype)


# --------------------------------------------------------------------------- normalization


# The operator torch.layer_norm calls (this function's entry has checked __torch_function__).
_aten_layer_norm = torch.ops.aten.layer_norm.default


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize over the trailing ``normalized_shape`` dims, then scale by ``weight`` and shift
    by ``bias``."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    if (input.__class__ is Tensor and (weight is None or isinstance(weight, Tensor))
            and (bias is None or isinstance(bias, Tensor)) and eps.__class__ is float):
        return _aten_layer_norm(input, list(normalized_shape), weight, bias, eps)
    # anything else through torch.layer_norm, which checks the arguments' types
    return torch.layer_norm(input, list(normalized_shape), weight, bias, eps, True)


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (in
    training mode; the identity otherwise)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0) if inplace else input * 0
    keep = torch.empty_like(input).bernoulli_(1.0 - p)
    keep.div_(1.0 - p)
    return input.mul_(keep) if inplace else input * keep


# --------------------------------------------------------------------------- attention


# The operators these functions call, looked up once (a torch.ops.aten attribute is
# resolved on every read).
_aten_sdpa = torch.ops.aten.scaled_dot_product_attention.default
_aten_cross_entropy = torch.ops.aten.cross_entropy_loss.default


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` over (..., L, E) / (..., S, E) inputs;
    a boolean mask marks the positions that take part, ``is_causal`` masks the future."""
    return _aten_sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale=scale,
                      enable_gqa=enable_gqa)


# --------------------------------------------------------------------------- losses


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy between the logits ``input`` (N, C, d1, ...) or (C,) and class-index or
    class-probability ``target``."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    code = _REDUCTIONS.get(reduction) if reduction.__class__ is str else None
    if code is None:
        code = _reduction_enum(reduction)  # (raises PyTorch's error)
    return _aten_cross_entropy(input, target, weight, code, ignore_index, label_smoothing)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class-index ``target`` (N, d1, ...) under log-probabilities
    ``input`` (N, C, d1, ...) or (C,)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    code = _reduction_enum(reduction)
    nd = getattr(torch.ops.aten, "nll_loss_nd", None) if _has_aten("nll_loss_nd") else None
    if nd is not None:
        return nd(input, target, weight, code, ignore_index)
    return _nll_loss_composite(input, target, weight, reduction, ignore_index)


def _has_aten(name: str) -> bool:
    try:
        getattr(torch.ops.aten, name)
    except (AttributeError, RuntimeError):
        return False
    return True


def _nll_loss_composite(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                        ignore_index: int) -> Tensor:
    """``-weight[t] * input[n, t, ...]`` per element; "mean" divides by the summed weights of
    the targets that are not ``ignore_index``."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    batched = input.ndim != 1
    if batched and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0]}).")
    if target.dtype.is_floating_point:
        raise RuntimeError("expected scalar type Long but found " + str(target.dtype))
    classes = input.shape[1] if batched else input.shape[0]
    x = input if batched else input.unsqueeze(0)  # (N, C, d...)
    t = target if batched else target.unsqueeze(0)  # (N, d...)
    valid = t != ignore_index
    safe = torch.where(valid, t, 0)
    if bool(((safe < 0) | (safe >= classes)).any()):
        bad = int(safe[(safe < 0) | (safe >= classes)].reshape(-1)[0])
        raise IndexError(f"Target {bad} is out of bounds.")
    picked = torch.gather(x, 1, safe.unsqueeze(1)).squeeze(1)  # (N, d...)
    w = valid.to(x.dtype) if weight is None else weight[safe] * valid
    loss = -picked * w
    if reduction == "none":
        return loss if batched else loss.squeeze(0)
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """Mean squared error ``(input - target)^2``, optionally weighted element-wise."""
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=2)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    enum = _reduction_enum(reduction)
    if weight is None:
        if target.shape != input.shape:  # the operator takes operands of one shape
            input, target = torch.broadcast_tensors(input, target)
        return _aten_mse_loss(input, target, enum)  # PyTorch's operator, as a mode sees it
    diff = input - target
    loss = diff * diff
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean":
        return loss.sum() / weight.sum()  # a weighted mean, as PyTorch defines it
    return _reduce(loss, reduction)


# Everything else nn.functional has, area by area (torch/nn/_functional/).
from ._functional import *  # noqa: E402, F403
from ._functional import __all__ as _areas_all  # noqa: E402

__all__ += _areas_all

# Composites here that PyTorch's autocast lists name as operators (torch.amp._policy): inside an
# autocast region they take that operator's policy (the losses run in float32) rather than
# letting each op they are written in follow its own. function name -> listed operator.
_AUTOCAST_COMPOSITES = {
    "adaptive_avg_pool3d": "adaptive_avg_pool3d", "adaptive_max_pool3d": "adaptive_max_pool3d",
    "avg_pool3d": "avg_pool3d", "bilinear": "bilinear",
    "binary_cross_entropy": "binary_cross_entropy",
    "binary_cross_entropy_with_logits": "binary_cross_entropy_with_logits",
    "cosine_embedding_loss": "cosine_embedding_loss", "cosine_similarity": "cosine_similarity",
    "ctc_loss": "ctc_loss", "fractional_max_pool2d": "fractional_max_pool2d",
    "fractional_max_pool3d": "fractional_max_pool3d", "grid_sample": "grid_sampler",
    "group_norm": "group_norm", "hinge_embedding_loss": "hinge_embedding_loss",
    "huber_loss": "huber_loss", "kl_div": "kl_div", "l1_loss": "l1_loss",
    "margin_ranking_loss": "margin_ranking_loss", "max_pool3d": "max_pool3d",
    "max_unpool2d": "max_unpool2d", "max_unpool3d": "max_unpool3d", "mse_loss": "mse_loss",
    "multi_margin_loss": "multi_margin_loss", "multilabel_margin_loss": "multilabel_margin_loss",
    "nll_loss": "nll_loss", "pdist": "pdist", "poisson_nll_loss": "poisson_nll_loss",
    "prelu": "prelu", "smooth_l1_loss": "smooth_l1_loss", "soft_margin_loss": "soft_margin_loss",
    "softplus": "softplus", "triplet_margin_loss": "triplet_margin_loss",
}
from torch.amp._composite import composite as _autocast_composite  # noqa: E402

for _name, _operator in _AUTOCAST_COMPOSITES.items():
    globals()[_name] = _autocast_composite(_operator)(globals()[_name])

# The public functions behind the __torch_function__ entry, once (identity never changes).
from torch import _torch_function  # noqa: E402

_torch_function.wrap_module(__name__)

# grid_sample's modes by PyTorch's enum values (code that validates arguments reads them)
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

# The __torch_function__ helpers PyTorch's functional module imports, which functions copied
# from it call (loaded with torch.overrides on first use, not at import)
_OVERRIDE_HELPERS = frozenset(("has_torch_function", "has_torch_function_unary",
                               "has_torch_function_variadic", "handle_torch_function"))


def __getattr__(name: str) -> Any:
    if name in _OVERRIDE_HELPERS:
        import torch.overrides

        value = globals()[name] = getattr(torch.overrides, name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
