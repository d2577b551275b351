"""``softmax`` and ``log_softmax``: composites over primitives with dedicated derivative
formulas (``autograd/_formulas/foundation.py``), because the plain decomposition is slower and
loses precision where the inputs spread far. A backend may override either op with a fused
kernel; these stay the reference."""

from __future__ import annotations

from typing import Any

from . import _dispatch, _dtype
from ._convert import to_dtype, write_out
from ._tensor import Tensor, wrap_dim

__all__ = ["log_softmax", "softmax"]


def _shifted(x: Tensor, dim: int) -> Tensor:
    import torch

    if x.ndim and x._shape[dim] == 0:
        return x  # nothing to normalize over (and no maximum to shift by)
    shift = torch.amax(x, dim, keepdim=True)
    # an all -inf (or +inf) slice: shift by 0 so that inf - inf does not make NaN here
    shift = torch.where(torch.isinf(shift), 0, shift)
    return x - shift


def _compute_dtype(x: Tensor, dtype: Any) -> Tensor:
    if dtype is not None:
        return to_dtype(x, dtype)
    if not (x._dtype.is_floating_point or x._dtype.is_complex):
        raise NotImplementedError(f'"softmax_lastdim_kernel_impl" not implemented for '
                                  f"'{_int_name(x._dtype)}'")
    return x


def _int_name(dt: _dtype.dtype) -> str:
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(dt._name, dt._name)


_HALF = (_dtype.float16, _dtype.bfloat16)


def _softmax_kernel(self: Tensor, dim: int, half_to_float: bool = False) -> Tensor:
    import torch

    d = wrap_dim(dim, self.ndim)
    x = to_dtype(self, _dtype.float32) if self._dtype in _HALF else self  # one rounding
    e = torch.exp(_shifted(x, d))
    return to_dtype(e / torch.sum(e, d, keepdim=True), self._dtype)


def _log_softmax_kernel(self: Tensor, dim: int, half_to_float: bool = False) -> Tensor:
    import torch

    d = wrap_dim(dim, self.ndim)
    x = to_dtype(self, _dtype.float32) if self._dtype in _HALF else self  # one rounding
    z = _shifted(x, d)
    return to_dtype(z - torch.log(torch.sum(torch.exp(z), d, keepdim=True)), self._dtype)


ATEN = _dispatch.define_aten({
    "_softmax": ("_softmax(Tensor self, int dim, bool half_to_float=False) -> Tensor",
                 _softmax_kernel),
    "_log_softmax": ("_log_softmax(Tensor self, int dim, bool half_to_float=False) -> Tensor",
                     _log_softmax_kernel),
})


def softmax(input: Tensor, dim: int, dtype: _dtype.dtype | None = None, *,
            out: Tensor | None = None) -> Tensor:
    """``exp(x) / sum(exp(x), dim)``, computed without overflow."""
    if not isinstance(input, Tensor):
        raise TypeError(f"softmax(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    return write_out(out, ATEN["_softmax"](_compute_dtype(input, dtype), dim, False))


def log_softmax(input: Tensor, dim: int, dtype: _dtype.dtype | None = None, *,
                out: Tensor | None = None) -> Tensor:
    """``x - logsumexp(x, dim)``, the log of :func:`softmax` without its rounding."""
    if not isinstance(input, Tensor):
        raise TypeError(f"log_softmax(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    return write_out(out, ATEN["_log_softmax"](_compute_dtype(input, dtype), dim, False))


def _method(fn: Any) -> Any:
    def method(self: Tensor, dim: int, dtype: _dtype.dtype | None = None) -> Tensor:
        return fn(self, dim, dtype)

    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


METHODS: dict[str, Any] = {"softmax": _method(softmax), "log_softmax": _method(log_softmax)}
