"""``softmax`` and ``log_softmax``: composites over primitives with dedicated derivative
formulas (``autograd/_formulas/foundation.py``), because the plain decomposition is slower and
loses precision where the inputs spread far. The formulas call the aten ops
``_softmax_backward_data`` and ``_log_softmax_backward_data`` (PyTorch's names), so a backend
may override the forward and the backward of either op with fused kernels; the composites here
stay the reference."""

from __future__ import annotations

from typing import Any

from .._aten import elementwise as _ew, reductions as _red
from .._aten.convert import to_dtype, write_out
from .._core import dispatch as _dispatch, dtype as _dtype
from .._core.tensor import Tensor, wrap_dim

__all__ = ["_log_softmax", "_log_softmax_backward_data", "_softmax", "_softmax_backward_data",
           "log_softmax", "softmax"]


def _shifted(x: Tensor, dim: int) -> Tensor:
    if x.ndim and x._shape[dim] == 0:
        return x  # nothing to normalize over (and no maximum to shift by)
    # an infinite maximum (a +inf entry, or an all -inf slice) makes the slice NaN through
    # inf - inf, which is PyTorch's result
    return x - _red.amax(x, dim, keepdim=True)


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
    d = wrap_dim(dim, self.ndim)
    x = to_dtype(self, _dtype.float32) if self._dtype in _HALF else self  # one rounding
    e = _ew.exp(_shifted(x, d))
    return to_dtype(e / _red.sum(e, d, keepdim=True), self._dtype)


def _log_softmax_kernel(self: Tensor, dim: int, half_to_float: bool = False) -> Tensor:
    d = wrap_dim(dim, self.ndim)
    x = to_dtype(self, _dtype.float32) if self._dtype in _HALF else self  # one rounding
    z = _shifted(x, d)
    return to_dtype(z - _ew.log(_red.sum(_ew.exp(z), d, keepdim=True)), self._dtype)


def _upcast(t: Tensor) -> Tensor:
    return to_dtype(t, _dtype.float32) if t._dtype in _HALF else t


def _softmax_backward_kernel(grad_output: Tensor, output: Tensor, dim: int,
                             input_dtype: _dtype.dtype) -> Tensor:
    # y * (g - sum(g * y)): the vector-Jacobian product of softmax through its output y
    d = wrap_dim(dim, output.ndim)
    g, y = _upcast(grad_output), _upcast(output)
    return to_dtype(y * (g - (g * y).sum(d, keepdim=True)), input_dtype)


def _log_softmax_backward_kernel(grad_output: Tensor, output: Tensor, dim: int,
                                 input_dtype: _dtype.dtype) -> Tensor:
    # g - exp(y) * sum(g): the vector-Jacobian product of log_softmax through its output y
    d = wrap_dim(dim, output.ndim)
    g, y = _upcast(grad_output), _upcast(output)
    return to_dtype(g - _ew.exp(y) * g.sum(d, keepdim=True), input_dtype)


_BACKWARD_SCHEMA = ("(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) "
                    "-> Tensor")

ATEN = _dispatch.define_aten({
    "_softmax": ("_softmax(Tensor self, int dim, bool half_to_float=False) -> Tensor",
                 _softmax_kernel),
    "_log_softmax": ("_log_softmax(Tensor self, int dim, bool half_to_float=False) -> Tensor",
                     _log_softmax_kernel),
    "_softmax_backward_data": ("_softmax_backward_data" + _BACKWARD_SCHEMA,
                               _softmax_backward_kernel),
    "_log_softmax_backward_data": ("_log_softmax_backward_data" + _BACKWARD_SCHEMA,
                                   _log_softmax_backward_kernel),
})


def _check_input(fn: str, input: Any) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be Tensor, not {type(input).__name__}")


def _softmax(input: Tensor, dim: int, half_to_float: bool) -> Tensor:
    """The ``aten::_softmax`` op: :func:`softmax` of a floating ``input`` in its own dtype."""
    _check_input("_softmax", input)
    return ATEN["_softmax"](_compute_dtype(input, None), dim, half_to_float)


def _log_softmax(input: Tensor, dim: int, half_to_float: bool) -> Tensor:
    """The ``aten::_log_softmax`` op: :func:`log_softmax` of a floating ``input``."""
    _check_input("_log_softmax", input)
    return ATEN["_log_softmax"](_compute_dtype(input, None), dim, half_to_float)


def _softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int,
                           input_dtype: _dtype.dtype) -> Tensor:
    """The gradient of ``softmax`` at its ``output`` along ``dim`` for ``grad_output``."""
    return ATEN["_softmax_backward_data"](grad_output, output, dim, input_dtype)


def _log_softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int,
                               input_dtype: _dtype.dtype) -> Tensor:
    """The gradient of ``log_softmax`` at its ``output`` along ``dim`` for ``grad_output``."""
    return ATEN["_log_softmax_backward_data"](grad_output, output, dim, input_dtype)


# The floating dtypes a plain call passes through as they are (no conversion, no check).
_FLOATING = frozenset(dt for dt in _dtype.DTYPES.values() if dt.is_floating_point)
_SOFTMAX, _LOG_SOFTMAX = ATEN["_softmax"], ATEN["_log_softmax"]


def softmax(input: Tensor, dim: int, dtype: _dtype.dtype | None = None, *,
            out: Tensor | None = None) -> Tensor:
    """``exp(x) / sum(exp(x), dim)``, computed without overflow."""
    if input.__class__ is Tensor and dtype is None and out is None \
            and input._dtype in _FLOATING:  # the usual call: the checks below, inlined
        return _SOFTMAX(input, dim, False)
    _check_input("softmax", input)
    return write_out(out, _SOFTMAX(_compute_dtype(input, dtype), dim, False))


def log_softmax(input: Tensor, dim: int, dtype: _dtype.dtype | None = None, *,
                out: Tensor | None = None) -> Tensor:
    """``x - logsumexp(x, dim)``, the log of :func:`softmax` without its rounding."""
    if input.__class__ is Tensor and dtype is None and out is None \
            and input._dtype in _FLOATING:  # the usual call: the checks below, inlined
        return _LOG_SOFTMAX(input, dim, False)
    _check_input("log_softmax", input)
    return write_out(out, _LOG_SOFTMAX(_compute_dtype(input, dtype), dim, False))


def _method(fn: Any) -> Any:
    def method(self: Tensor, dim: int, dtype: _dtype.dtype | None = None) -> Tensor:
        return fn(self, dim, dtype)

    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


METHODS: dict[str, Any] = {"softmax": _method(softmax), "log_softmax": _method(log_softmax)}
