"""Layer normalisation: ``aten::native_layer_norm`` -> (output, mean, rstd) and its backward
``aten::native_layer_norm_backward``, composites over primitives (the reference a backend's
fused kernel is checked against), and ``aten::layer_norm`` / :func:`layer_norm` on top.

Shapes, for an input (*batch, *normalized_shape): ``mean`` and ``rstd`` (``1 / sqrt(var +
eps)``, biased variance) are (*batch, 1, ..., 1), one per normalised row, in the input's dtype.
float16 and bfloat16 compute in float32 and round once. As in PyTorch, ``mean`` and ``rstd``
are not differentiable outputs, and the derivative formulas (``autograd/_formulas/norm.py``)
call ``native_layer_norm_backward`` so that a backend may fuse the backward too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._aten import elementwise as _ew, factories as _fac
from .._aten.convert import to_dtype
from .._core import dispatch as _dispatch, dtype as _dtype
from .._core.tensor import Tensor

__all__ = ["layer_norm", "native_layer_norm", "rms_norm"]

_HALF = (_dtype.float16, _dtype.bfloat16)


def _type_name(dt: _dtype.dtype) -> str:
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(dt._name, dt._name)


def check_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None,
                     bias: Tensor | None) -> tuple[int, int, int]:
    """PyTorch's argument checks; returns (axis, rows, cols): the input is normalised over
    its dims ``axis:``, seen as a (rows, cols) matrix."""
    shape = tuple(int(n) for n in normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t._shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t._shape)} and normalized_shape = "
                               f"{list(shape)}")
    axis = input.ndim - len(shape)
    if axis < 0 or tuple(input._shape[axis:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input._shape)}")
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f'"LayerNormKernelImpl" not implemented for '
                                  f"'{_type_name(input._dtype)}'")
    cols = 1
    for n in shape:
        cols *= n
    rows = 1
    for n in input._shape[:axis]:
        rows *= n
    return axis, rows, cols


def _compute(t: Tensor | None, dtype: _dtype.dtype) -> Tensor | None:
    # the dtype the arithmetic runs in: float32 for half inputs, else the input's own
    return None if t is None else to_dtype(t, dtype)


def _compute_dtype(dt: _dtype.dtype) -> _dtype.dtype:
    return _dtype.float32 if dt in _HALF else dt


def _native_layer_norm_kernel(input: Tensor, normalized_shape: Sequence[int],
                              weight: Tensor | None, bias: Tensor | None,
                              eps: float) -> tuple[Tensor, Tensor, Tensor]:
    axis, _rows, cols = check_layer_norm(input, normalized_shape, weight, bias)
    dims = list(range(axis, input.ndim))
    ct = _compute_dtype(input._dtype)
    x = to_dtype(input, ct)
    stat_shape = tuple(input._shape[:axis]) + (1,) * len(dims)
    if cols == 0:  # nothing to normalise: PyTorch's mean is 0 and rstd NaN
        mean = _fac.zeros(stat_shape, dtype=ct, device=input.device)
        rstd = _fac.full(stat_shape, float("nan"), dtype=ct, device=input.device)
        out = x.clone()
    else:
        mean = x.mean(dims, keepdim=True)  # (*batch, 1, ..., 1)
        centered = x - mean
        var = (centered * centered).mean(dims, keepdim=True)
        rstd = _ew.rsqrt(var + eps)
        out = centered * rstd
        if weight is not None:
            out = out * _compute(weight, ct)
        if bias is not None:
            out = out + _compute(bias, ct)
    dt = input._dtype
    return to_dtype(out, dt), to_dtype(mean, dt), to_dtype(rstd, dt)


def _native_layer_norm_backward_kernel(
        grad_out: Tensor, input: Tensor, normalized_shape: Sequence[int], mean: Tensor,
        rstd: Tensor, weight: Tensor | None, bias: Tensor | None,
        output_mask: Sequence[bool]) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    axis, _rows, cols = check_layer_norm(input, normalized_shape, weight, bias)
    dims = list(range(axis, input.ndim))
    batch = list(range(axis))
    ct = _compute_dtype(input._dtype)
    g, x = to_dtype(grad_out, ct), to_dtype(input, ct)
    m, r = to_dtype(mean, ct), to_dtype(rstd, ct)
    xhat = (x - m) * r  # the normalised input
    dx = dw = db = None
    if output_mask[0]:
        h = g if weight is None else g * _compute(weight, ct)
        if cols == 0:
            dx = h.clone()
        else:
            # rstd * (h - mean(h) - xhat * mean(h * xhat)) over the normalised dims
            dx = r * (h - h.mean(dims, keepdim=True)
                      - xhat * (h * xhat).mean(dims, keepdim=True))
        dx = to_dtype(dx, input._dtype)
    if len(output_mask) > 1 and output_mask[1] and weight is not None:
        gx = g * xhat
        dw = to_dtype(gx.sum(batch) if batch else gx, weight._dtype)
    if len(output_mask) > 2 and output_mask[2] and bias is not None:
        db = to_dtype(g.sum(batch) if batch else g.clone(), bias._dtype)
    return dx, dw, db


def _layer_norm_kernel(input: Tensor, normalized_shape: Sequence[int],
                       weight: Tensor | None = None, bias: Tensor | None = None,
                       eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    if normalized_shape.__class__ is not list:  # (F.layer_norm passes a list already)
        normalized_shape = list(normalized_shape)
    return _NATIVE_LAYER_NORM(input, normalized_shape, weight, bias, eps)[0]


ATEN = _dispatch.define_aten({
    "native_layer_norm": ("native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? "
                          "weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
                          _native_layer_norm_kernel),
    "native_layer_norm_backward": (
        "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
        "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> "
        "(Tensor, Tensor, Tensor)", _native_layer_norm_backward_kernel),
    # written in native_layer_norm: autograd goes through its formula
    "layer_norm": ("layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
                   "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
                   _layer_norm_kernel, _dispatch.COMPOSITE_IMPLICIT),
})


_NATIVE_LAYER_NORM = ATEN["native_layer_norm"]


# mean and rstd are not differentiable outputs of native_layer_norm, as in PyTorch: its
# derivative rule says so (autograd/_formulas/norm.py).


def _check_tensor(fn: str, name: str, t: Any, optional: bool = False) -> None:
    if optional and t is None:
        return
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(t).__name__}")


def native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """Layer normalisation over the trailing ``normalized_shape`` dims of ``input``, returning
    ``(output, mean, rstd)`` (``rstd = 1 / sqrt(var + eps)``, biased variance)."""
    _check_tensor("native_layer_norm", "input", input)
    _check_tensor("native_layer_norm", "weight", weight, optional=True)
    _check_tensor("native_layer_norm", "bias", bias, optional=True)
    return ATEN["native_layer_norm"](input, list(normalized_shape), weight, bias, float(eps))


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enable: bool = True) -> Tensor:
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the trailing
    ``normalized_shape`` dims of ``input`` (biased variance)."""
    if not (isinstance(input, Tensor) and (weight is None or isinstance(weight, Tensor))
            and (bias is None or isinstance(bias, Tensor))):  # (one test on the usual path)
        _check_tensor("layer_norm", "input", input)
        _check_tensor("layer_norm", "weight", weight, optional=True)
        _check_tensor("layer_norm", "bias", bias, optional=True)
    if isinstance(normalized_shape, int):
        normalized_shape = [normalized_shape]
    return ATEN["layer_norm"](input, list(normalized_shape), weight, bias, float(eps),
                              cudnn_enable)


def rms_norm(input: Tensor, normalized_shape: Sequence[int] | int,
             weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dims;
    ``eps=None`` uses the machine epsilon of the input's dtype (``torch.rms_norm``,
    ``F.rms_norm``)."""
    from .._core.dtype_info import finfo

    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if len(shape) > input.dim() or tuple(input.shape[input.dim() - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in shape)}], but got input of size"
                           f"{list(input.shape)}")
    if input._dtype is _dtype.float16 or input._dtype is _dtype.bfloat16:
        # in float32, as PyTorch does (eps=None then means float32's machine epsilon too)
        out = rms_norm(to_dtype(input, _dtype.float32), shape, weight, eps)
        return to_dtype(out, input._dtype)
    if eps is None:
        eps = finfo(input._dtype).eps
    dims = tuple(range(-len(shape), 0))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out * weight if weight is not None else out


METHODS: dict[str, Any] = {}
