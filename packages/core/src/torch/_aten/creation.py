"""Creation beyond the basic factories: ranges (arange, range, linspace, logspace), eye,
tril/triu and their indices, complex/polar, and the bridges that share memory with other
libraries (from_numpy, as_tensor, asarray, frombuffer, ``__array__``, DLPack).

Ranges and masks are composite over primitives (``arange_``, compares, ``where``,
``nonzero``), so they run on any device. The bridges are CPU-only: host memory another
library owns becomes a storage through :func:`torch._core.storage.wrap_host`, without a copy.
"""

from __future__ import annotations

import builtins
import math
import operator
import warnings
from typing import Any

import numpy as np

from .. import _refs
from .._core import config as _config, dispatch as _dispatch, dtype as _dtype, storage as _storage
from .._core.alloc import (
    PRIMS,
    _interned,
    check_dtype,
    device_of,
    finish_factory,
    new_tensor,
    scalar_tensor as _scalar,
)
from .._core.promotion import broadcast_shapes
from .._core.symbolic import SymInt
from .._core.tensor import Tensor, contiguous_strides
from . import factories as _factories
from .convert import copy_, scalar_type_name, to, to_dtype, write_out
from .elementwise import wide_float
from .factories import _np_to_dtype, tensor
from .inplace_operators import seen_as_inplace_form

__all__ = ["arange", "as_tensor", "asarray", "complex", "eye", "from_dlpack", "from_file",
           "from_numpy", "frombuffer", "linspace", "logspace", "polar", "range", "scalar_tensor",
           "tril", "tril_indices", "triu", "triu_indices"]

_builtin_complex = complex


def _number(x: Any, name: str) -> Any:
    """A Python number from a number, a numpy scalar or a one-element tensor (a SymInt, a
    symbolic size being traced, stays one)."""
    if isinstance(x, Tensor):
        return x.item()
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (bool, int, float, _builtin_complex, SymInt)):
        return x
    raise TypeError(f"argument '{name}' must be Number, not {type(x).__name__}")


# -- ranges --------------------------------------------------------------------------------


def _arange_kernel(start: Any, end: Any, step: Any = 1, *, dtype: _dtype.dtype | None = None,
                   layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    if any(isinstance(v, _builtin_complex) for v in (start, end, step)):
        raise RuntimeError("value cannot be converted to type double without overflow")
    integral = all(isinstance(v, (int, SymInt)) for v in (start, end, step))
    dt = check_dtype(dtype) or (_dtype.int64 if integral else _config.get_default_dtype())
    if dt is _dtype.bool_ or dt.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{scalar_type_name(dt)}'")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    symbolic = any(isinstance(v, SymInt) for v in (start, end, step))
    if not symbolic and not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if symbolic:  # a bound is a symbolic size (traced with symbolic shapes): ceil division
        size = -((start - end) // step)
    elif dt is _dtype.int64:  # PyTorch counts with the bounds already cast to int64
        size = math.ceil((int(end) - int(start)) / int(step)) if int(step) else 0
    else:
        size = math.ceil((end - start) / step)
    if dt._category <= _dtype.INT:
        # the values are start + i * step with both cast to the integer type first
        start, step = int(start), int(step)
        if step == 0:
            raise ValueError("step must be nonzero")
    size = max(size, 0)
    t = new_tensor((size,), dt, device_of(device))
    if size:
        PRIMS.arange_(t, start, step)
    return t


def _arange_end_kernel(end: Any, *, dtype: _dtype.dtype | None = None, layout: Any = None,
                       device: Any = None, pin_memory: Any = None) -> Tensor:
    return _arange_kernel(0, end, 1, dtype=dtype, layout=layout, device=device,
                          pin_memory=pin_memory)


def _arange_start_kernel(start: Any, end: Any, *, dtype: _dtype.dtype | None = None,
                         layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return _arange_kernel(start, end, 1, dtype=dtype, layout=layout, device=device,
                          pin_memory=pin_memory)


def arange(start: Any = 0, end: Any = None, step: Any = None, *, out: Tensor | None = None,
           dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """``[start, end)`` in steps of ``step`` (``arange(end)`` starts at 0): int64 when every
    bound is an integer, the default dtype otherwise; ``ceil((end - start) / step)``
    elements."""
    # the overload PyTorch's call reaches: arange(end), arange(start, end) or with a step
    overload = "start_step" if step is not None else ("default" if end is None else "start")
    if end is None:
        start, end = 0, start
    start, end, step = (_number(v, n) for v, n in ((start, "start"), (end, "end"),
                                                    (1 if step is None else step, "step")))
    if dtype is None and out is not None:
        dtype = out._dtype
    options = {"dtype": check_dtype(dtype), "device": device_of(device)}
    if overload == "default":
        t = ATEN["arange"](end, **options)
    elif overload == "start":
        t = ATEN["arange.start"](start, end, **options)
    else:
        t = ATEN["arange.start_step"](start, end, step, **options)
    return finish_factory(write_out(out, t), requires_grad)


def _range_kernel(start: Any, end: Any, step: Any = 1, *, dtype: _dtype.dtype | None = None,
                  layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    dt = check_dtype(dtype) or _config.get_default_dtype()
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    size = math.floor((end - start) / step) + 1
    t = new_tensor((size,), dt, device_of(device))
    if dt._category <= _dtype.INT:
        start, step = int(start), int(step)
    PRIMS.arange_(t, start, step)
    return t


def range(start: Any, end: Any, step: Any = 1, *, out: Tensor | None = None,
          dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Deprecated: ``[start, end]`` *including* ``end``, in the default dtype. Use
    :func:`arange`."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=_config.external_stacklevel())
    start, end, step = (_number(v, n) for v, n in ((start, "start"), (end, "end"),
                                                    (step, "step")))
    dt = check_dtype(dtype) or (out._dtype if out is not None else _config.get_default_dtype())
    t = ATEN["range.step"](start, end, step, dtype=dt, device=device_of(device))
    return finish_factory(write_out(out, t), requires_grad)


def _linspace_into(out: Tensor, start: float, end: float, steps: int) -> None:
    """PyTorch's linspace rule into a 1-d float tensor: the first half counts up from
    ``start``, the second half counts down from ``end``, so both ends are exact."""
    if steps == 1:
        PRIMS.fill_(out, start)
        return
    step = (end - start) / (steps - 1)
    halfway = steps // 2
    lower, upper = out[:halfway], out[halfway:]
    if halfway:
        PRIMS.arange_(lower, 0, 1)
        PRIMS.mul(lower, lower, _scalar(step, out._dtype, out._device).expand(lower._shape))
        PRIMS.add(lower, lower, _scalar(start, out._dtype, out._device).expand(lower._shape))
    # element i of the upper half is end - step * (steps - 1 - i)
    PRIMS.arange_(upper, steps - 1 - halfway, -1)
    PRIMS.mul(upper, upper, _scalar(-step, out._dtype, out._device).expand(upper._shape))
    PRIMS.add(upper, upper, _scalar(end, out._dtype, out._device).expand(upper._shape))


def _linspace_values(start: Any, end: Any, steps: int, dt: _dtype.dtype, dev: Any) -> Tensor:
    """``steps`` evenly spaced values for a result of dtype ``dt``, computed as PyTorch does:
    from bounds already cast to ``dt``, in ``dt`` itself for floats (each step rounds) and
    in float64 for integers (truncated when cast back; float32 on a device without double
    precision)."""
    ct = dt if dt._category > _dtype.INT else wide_float(dev)
    values = new_tensor((steps,), ct, dev)
    if not steps:
        return values
    if ct.is_complex:
        parts = view_as_real_storage(values)
        start, end = _builtin_complex(start), _builtin_complex(end)
        real_dt = parts._dtype
        for k, (a, b) in enumerate(((start.real, end.real), (start.imag, end.imag))):
            part = new_tensor((steps,), real_dt, dev)
            _linspace_into(part, _as_value(a, real_dt), _as_value(b, real_dt), steps)
            PRIMS.copy_(parts[:, k], part)
        return values
    _linspace_into(values, _as_value(start, dt), _as_value(end, dt), steps)
    return values


def _as_value(x: Any, dt: _dtype.dtype) -> Any:
    """The number ``x`` becomes in a tensor of ``dt`` (rounded; integers truncate and wrap,
    as a C++ cast does)."""
    if dt._category <= _dtype.INT:
        if dt is _dtype.bool_:
            return int(bool(x))
        bits = dt.itemsize * 8
        v = int(x) % (1 << bits)
        signed = dt is not _dtype.uint8
        return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v
    if dt is _dtype.float64:
        return float(x)
    return _scalar(float(x), dt, device_of("cpu")).item()


def _range_dtype(dtype: Any, out: Tensor | None, *bounds: Any) -> _dtype.dtype:
    if dtype is None and out is not None:
        return out._dtype
    if dtype is not None:
        return check_dtype(dtype)
    if any(isinstance(b, _builtin_complex) for b in bounds):
        return _config.get_default_complex_dtype()
    return _config.get_default_dtype()


def _check_steps(steps: Any) -> int:
    steps = operator.index(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return steps


def _linspace_kernel(start: Any, end: Any, steps: int, *, dtype: _dtype.dtype | None = None,
                     layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    steps = _check_steps(steps)
    dt = _range_dtype(dtype, None, start, end)
    values = _linspace_values(start, end, steps, dt, device_of(device))
    return to_dtype(values, dt)


def linspace(start: Any, end: Any, steps: int, *, out: Tensor | None = None,
             dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    start, end = _number(start, "start"), _number(end, "end")
    steps = _check_steps(steps)
    dt = _range_dtype(dtype, out, start, end)
    t = ATEN["linspace"](start, end, steps, dtype=dt, device=device_of(device))
    return finish_factory(write_out(out, t), requires_grad)


def _logspace_kernel(start: Any, end: Any, steps: int, base: float = 10.0, *,
                     dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
                     pin_memory: Any = None) -> Tensor:
    steps = _check_steps(steps)
    dt = _range_dtype(dtype, None, start, end)
    dev = device_of(device)
    exponents = _linspace_values(start, end, steps, dt, dev)
    ct = exponents._dtype
    values = new_tensor((steps,), ct, dev)
    if steps:
        PRIMS.pow(values, _scalar(base, ct, dev).expand((steps,)), exponents)
    return to_dtype(values, dt)


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *,
             out: Tensor | None = None, dtype: _dtype.dtype | None = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``."""
    start, end = _number(start, "start"), _number(end, "end")
    steps = _check_steps(steps)
    dt = _range_dtype(dtype, out, start, end)
    t = ATEN["logspace"](start, end, steps, base, dtype=dt, device=device_of(device))
    return finish_factory(write_out(out, t), requires_grad)


def _eye_kernel(n: int, m: int, *, dtype: _dtype.dtype | None = None, layout: Any = None,
                device: Any = None, pin_memory: Any = None) -> Tensor:
    n, m = operator.index(n), operator.index(m)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    t = new_tensor((n, m), check_dtype(dtype) or _config.get_default_dtype(), device_of(device))
    PRIMS.fill_(t, 0)
    if n and m:
        PRIMS.fill_(t.diagonal(), 1)
    return t


def eye(n: int, m: int | None = None, *, out: Tensor | None = None,
        dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
        requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An ``n x m`` matrix (``m = n`` by default) with ones on the diagonal."""
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    dt = check_dtype(dtype) or (out._dtype if out is not None else _config.get_default_dtype())
    t = ATEN["eye.m"](n, m, dtype=dt, device=device_of(device))
    return finish_factory(write_out(out, t), requires_grad)


def scalar_tensor(s: Any, *, dtype: _dtype.dtype | None = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """A 0-d tensor holding ``s``, in the default dtype unless ``dtype`` is given."""
    t = _factories.ATEN["scalar_tensor"](_number(s, "s"), dtype=check_dtype(dtype),
                                         device=device_of(device))
    return finish_factory(t, requires_grad)


# -- triangles -----------------------------------------------------------------------------


def _triangle_mask(rows: int, cols: int, diagonal: int, lower: bool, dev: Any) -> Tensor:
    """A ``(rows, cols)`` bool mask: ``col - row <= diagonal`` (lower) or ``>= diagonal``."""
    shifted = new_tensor((rows, 1), _dtype.int64, dev)  # row + diagonal
    col = new_tensor((1, cols), _dtype.int64, dev)
    if rows:
        PRIMS.arange_(shifted.view(rows), diagonal, 1)
    if cols:
        PRIMS.arange_(col.view(cols), 0, 1)
    mask = new_tensor((rows, cols), _dtype.bool_, dev)
    (PRIMS.le if lower else PRIMS.ge)(mask, col.expand(rows, cols), shifted.expand(rows, cols))
    return mask


def _triangle(input: Tensor, diagonal: int, lower: bool) -> Tensor:
    name = "tril" if lower else "triu"
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    rows, cols = input._shape[-2], input._shape[-1]
    mask = _triangle_mask(rows, cols, operator.index(diagonal), lower, input._device)
    out = new_tensor(input._shape, input._dtype, input._device)
    PRIMS.where(out, mask.expand(input._shape), input,
            _scalar(0, input._dtype, input._device).expand(input._shape))
    return out


def tril(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
    """The lower triangle of the last two dims: elements with ``col - row <= diagonal``; the
    rest are zero."""
    return write_out(out, ATEN["tril"](input, diagonal))


def triu(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
    """The upper triangle of the last two dims: elements with ``col - row >= diagonal``; the
    rest are zero."""
    return write_out(out, ATEN["triu"](input, diagonal))


def _tril_(self: Tensor, diagonal: int = 0) -> Tensor:
    return copy_(self, tril(self, diagonal))


def _triu_(self: Tensor, diagonal: int = 0) -> Tensor:
    return copy_(self, triu(self, diagonal))


def _triangle_indices(row: int, col: int, offset: int, lower: bool, dtype: Any,
                      device: Any) -> Tensor:
    row, col, offset = operator.index(row), operator.index(col), operator.index(offset)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt = check_dtype(dtype) or _dtype.int64
    if dt._category > _dtype.INT or dt is _dtype.bool_:
        name = "tril_indices" if lower else "triu_indices"
        raise NotImplementedError(f"\"{name}\" not implemented for '{scalar_type_name(dt)}'")
    dev = device_of(device)
    if dev.type == "meta":  # nonzero cannot run there, but the count follows from the sizes
        return new_tensor((2, _triangle_count(row, col, offset, lower)), dt, dev)
    coords = PRIMS.nonzero(_triangle_mask(row, col, offset, lower, dev))  # (n, 2), row-major
    return to_dtype(coords.t().contiguous(), dt)


def _triangle_count(rows: int, cols: int, offset: int, lower: bool) -> int:
    """How many elements of a ``rows x cols`` matrix satisfy ``col - row <= offset`` (lower)
    or ``>= offset``."""
    if lower:
        return sum(min(max(r + offset + 1, 0), cols) for r in builtins.range(rows))
    return sum(cols - min(max(r + offset, 0), cols) for r in builtins.range(rows))


def _tril_indices_kernel(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                         layout: Any = None, device: Any = None, pin_memory: Any = None
                         ) -> Tensor:
    return _triangle_indices(row, col, offset, True, dtype, device)


def _triu_indices_kernel(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                         layout: Any = None, device: Any = None, pin_memory: Any = None
                         ) -> Tensor:
    return _triangle_indices(row, col, offset, False, dtype, device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: _dtype.dtype | None = None,
                 device: Any = None, layout: Any = None) -> Tensor:
    """The ``(2, n)`` coordinates of the lower triangle of a ``row x col`` matrix, row by
    row."""
    return ATEN["tril_indices"](row, col, offset, dtype=check_dtype(dtype) or _dtype.int64,
                                device=device_of(device))


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: _dtype.dtype | None = None,
                 device: Any = None, layout: Any = None) -> Tensor:
    """The ``(2, n)`` coordinates of the upper triangle of a ``row x col`` matrix, row by
    row."""
    return ATEN["triu_indices"](row, col, offset, dtype=check_dtype(dtype) or _dtype.int64,
                                device=device_of(device))


# -- complex -------------------------------------------------------------------------------

_REAL_OF = {_dtype.complex64: _dtype.float32, _dtype.complex128: _dtype.float64}
_COMPLEX_OF = {_dtype.float32: _dtype.complex64, _dtype.float64: _dtype.complex128}


def view_as_real_storage(t: Tensor) -> Tensor:
    """A real view of complex ``t`` with a last dim of 2 holding (real, imag)."""
    real_dt = _REAL_OF[t._dtype]
    base = t._base if t._base is not None else t
    return Tensor._make(t._storage, tuple(t._shape) + (2,),
                        tuple(2 * s for s in t._stride) + (1,), 2 * t._offset, real_dt,
                        t._device, t._vc, base)


def _check_complex_parts(real: Any, imag: Any, names: tuple[str, str]) -> None:
    for value, name, pos in ((real, names[0], 1), (imag, names[1], 2)):
        if not isinstance(value, Tensor):
            raise TypeError(f"complex(): argument '{name}' (position {pos}) must be Tensor, "
                            f"not {type(value).__name__}")
    if real._dtype not in _COMPLEX_OF or imag._dtype not in _COMPLEX_OF:
        if not (real._dtype.is_floating_point and imag._dtype.is_floating_point):
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but "
                               f"got {scalar_type_name(real._dtype)} and "
                               f"{scalar_type_name(imag._dtype)}")
        raise NotImplementedError("complex32 (ComplexHalf) is not supported: use float32 or "
                                  "float64 parts")
    if real._dtype is not imag._dtype:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(real._dtype)} but "
                           f"got scalar type {scalar_type_name(imag._dtype)} for second "
                           "argument")


def _from_parts(real: Tensor, imag: Tensor) -> Tensor:
    shape = tuple(broadcast_shapes(real._shape, imag._shape))
    out = new_tensor(shape, _COMPLEX_OF[real._dtype], real._device)
    if not out.numel():
        return out
    parts = view_as_real_storage(out)
    PRIMS.copy_(parts[..., 0], real.expand(shape))
    PRIMS.copy_(parts[..., 1], imag.expand(shape))
    return out


def _complex_kernel(real: Tensor, imag: Tensor) -> Tensor:
    _check_complex_parts(real, imag, ("real", "imag"))
    return _from_parts(real, imag)


def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The complex tensor ``real + imag * 1j`` (float32 -> complex64, float64 ->
    complex128), broadcasting the two parts."""
    _check_complex_parts(real, imag, ("real", "imag"))
    return write_out(out, ATEN["complex"](real, imag))


def _polar_kernel(abs: Tensor, angle: Tensor) -> Tensor:
    _check_complex_parts(abs, angle, ("abs", "angle"))
    shape = tuple(broadcast_shapes(abs._shape, angle._shape))
    parts = []
    for prim in (PRIMS.cos, PRIMS.sin):
        trig = new_tensor(angle._shape, angle._dtype, angle._device)
        prim(trig, angle)
        part = new_tensor(shape, abs._dtype, abs._device)
        PRIMS.mul(part, abs.expand(shape), trig.expand(shape))
        parts.append(part)
    return _from_parts(parts[0], parts[1])


def polar(abs: Tensor, angle: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The complex tensor ``abs * (cos(angle) + sin(angle) * 1j)``."""
    _check_complex_parts(abs, angle, ("abs", "angle"))
    return write_out(out, ATEN["polar"](abs, angle))


# -- the aten operators ---------------------------------------------------------------------
#
# As for the basic factories (torch._aten.factories), each kernel is the op's whole semantics on
# any device, meta included, and so also its meta function.


def _define_aten() -> dict[str, _dispatch.Operator]:
    options = _factories._OPTIONS
    table = {
        "arange.start_step": ("arange.start_step(Scalar start, Scalar end, Scalar step=1, *, "
                              f"{options}) -> Tensor", _arange_kernel),
        "arange": (f"arange(Scalar end, *, {options}) -> Tensor", _arange_end_kernel),
        "arange.start": (f"arange.start(Scalar start, Scalar end, *, {options}) -> Tensor",
                         _arange_start_kernel),
        "range.step": (f"range.step(Scalar start, Scalar end, Scalar step=1, *, {options}) -> "
                       "Tensor", _range_kernel),
        "linspace": (f"linspace(Scalar start, Scalar end, int steps, *, {options}) -> Tensor",
                     _linspace_kernel),
        "logspace": ("logspace(Scalar start, Scalar end, int steps, float base=10.0, *, "
                     f"{options}) -> Tensor", _logspace_kernel),
        "eye.m": (f"eye.m(SymInt n, SymInt m, *, {options}) -> Tensor", _eye_kernel),
        "tril_indices": ("tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=long, "
                         "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> "
                         "Tensor", _tril_indices_kernel),
        "triu_indices": ("triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=long, "
                         "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> "
                         "Tensor", _triu_indices_kernel),
        "tril": ("tril(Tensor self, int diagonal=0) -> Tensor",
                 lambda self, diagonal=0: _triangle(self, diagonal, True)),
        "triu": ("triu(Tensor self, int diagonal=0) -> Tensor",
                 lambda self, diagonal=0: _triangle(self, diagonal, False)),
        "complex": ("complex(Tensor real, Tensor imag) -> Tensor", _complex_kernel),
        "polar": ("polar(Tensor abs, Tensor angle) -> Tensor", _polar_kernel),
    }
    # complex and polar are differentiable (autograd/_formulas/complex.py)
    return _dispatch.define_aten(table)


ATEN = _define_aten()


# -- numpy, buffers, DLPack ----------------------------------------------------------------

_warned_not_writable = False


def _warn_not_writable(what: str, consequence: str) -> None:
    """PyTorch warns once per process about wrapping read-only memory."""
    global _warned_not_writable
    if _warned_not_writable:
        return
    _warned_not_writable = True
    warnings.warn(f"The given {what} is not writable, and PyTorch does not support non-writable "
                  f"tensors. {consequence} You may want to copy the {what.split()[-1]} to "
                  "protect its data or make it writable before converting it to a tensor. This "
                  "type of warning will be suppressed for the rest of this program.",
                  UserWarning, stacklevel=_config.external_stacklevel())


class _BytesOf:
    """The ``span`` bytes from ``array``'s first element, as numpy's array interface; the
    ``uint8`` array numpy makes from it keeps ``array`` (and so its memory) alive."""

    def __init__(self, array: np.ndarray, span: int) -> None:
        self._array = array
        self.__array_interface__ = {
            "data": (array.__array_interface__["data"][0], not array.flags.writeable),
            "shape": (span,), "typestr": "|u1", "version": 3,
        }


def _wrap_array(array: np.ndarray, dt: _dtype.dtype | None = None) -> Tensor:
    """A CPU tensor sharing ``array``'s memory (strides must be non-negative multiples of
    the itemsize). ``dt`` overrides the dtype (bfloat16 arrives as uint16 bits)."""
    dt = dt or _np_to_dtype(array.dtype)
    size = array.itemsize
    if any(s < 0 for s in array.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if any(s % size for s in array.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    shape = tuple(array.shape)
    # numpy's strides, in elements, even for an empty array (as from_numpy keeps them): a
    # 0-byte storage slice stays a stride-1 byte run that view(dtype) can reinterpret
    strides = tuple(s // size for s in array.strides)
    if array.size == 0:
        buffer = np.empty(0, np.uint8)
    else:
        span = sum((n - 1) * s for n, s in zip(shape, array.strides)) + size
        buffer = np.asarray(_BytesOf(array, span))
    storage = _storage.wrap_host(buffer)
    t = Tensor._make(storage, shape, strides, 0, dt, storage._device)
    if array.size and strides == contiguous_strides(shape):
        # row-major from byte 0, like an allocated tensor: the hot path's tiers take it too
        t._interned_layout = _interned(shape, dt, storage._device)
    return _factories.lift_fresh(t)


def _check_array(array: np.ndarray) -> None:
    if not array.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    _np_to_dtype(array.dtype)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with ``ndarray`` (writes show on both sides)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _check_array(ndarray)
    if not ndarray.flags.writeable:
        _warn_not_writable("NumPy array", "This means writing to this tensor will result in "
                           "undefined behavior.")
    return _wrap_array(ndarray)


def frombuffer(buffer: Any, *, dtype: _dtype.dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-d CPU tensor over the bytes of an object with the buffer protocol, without
    copying: ``count`` elements (-1: all) of ``dtype`` from byte ``offset``."""
    dt = check_dtype(dtype)
    raw = np.frombuffer(buffer, np.uint8)
    length = raw.size
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % dt.itemsize:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({dt.itemsize})")
        count = (length - offset) // dt.itemsize
    elif length - offset < count * dt.itemsize:
        raise ValueError(f"requested buffer length ({count} * {dt.itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if not raw.flags.writeable:
        _warn_not_writable("buffer", "This means you can write to the underlying (supposedly "
                           "non-writable) buffer using the tensor.")
    window = raw[offset:offset + count * dt.itemsize]
    storage = _storage.wrap_host(window)
    t = Tensor._make(storage, (count,), (1,), 0, dt, storage._device)
    return finish_factory(_factories.lift_fresh(t), requires_grad)


def from_file(filename: str, shared: bool | None = None, size: int = 0, *,
              dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
              pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """A 1-d CPU tensor of ``size`` elements over the file ``filename``, memory-mapped.

    :param shared: changes write through to the file (created or extended as needed);
        otherwise (the default) they stay private and the file must be long enough.
    :raises RuntimeError: a device other than the CPU, or a private mapping of a short file.
    """
    import os

    dt = check_dtype(dtype) or _config.get_default_dtype()
    if device is not None and device_of(device).type != "cpu":
        raise RuntimeError("from_file: only CPU tensors can be mapped from a file")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise RuntimeError(f"from_file: size must be a non-negative int, got {size!r}")
    storage = _storage.UntypedStorage.from_file(os.fspath(filename), bool(shared),
                                                size * dt.itemsize)
    t = Tensor._make(storage, (size,), (1,), 0, dt, storage._device)
    return finish_factory(_factories.lift_fresh(t), requires_grad)


def as_tensor(data: Any, dtype: _dtype.dtype | None = None, device: Any = None) -> Tensor:
    """``data`` as a tensor, sharing memory when it already is one (a tensor, or a numpy
    array on the CPU) of the requested dtype and device; a copy otherwise."""
    if isinstance(data, Tensor):
        return to(data, device=device, dtype=check_dtype(dtype))
    if isinstance(data, np.ndarray) and data.dtype.isnative and data.dtype in _refs.FROM_NP:
        return to(_wrap_array(data), device=device, dtype=check_dtype(dtype))
    return tensor(data, dtype=dtype, device=device)


def _alias_error(have: _dtype.dtype, want: _dtype.dtype) -> ValueError:
    return ValueError(f"can't alias tensor with dtype '{scalar_type_name(have)}' into dtype "
                      f"'{scalar_type_name(want)}'.")


def asarray(obj: Any, *, dtype: _dtype.dtype | None = None, device: Any = None,
            copy: bool | None = None, requires_grad: bool = False) -> Tensor:
    """``obj`` (a tensor, an array, a DLPack or buffer-protocol object, a sequence or a
    number) as a tensor. It shares memory when it can; ``copy=True`` always copies and
    ``copy=False`` raises instead of copying."""
    dt = check_dtype(dtype)
    source: Tensor | None = None
    if isinstance(obj, Tensor):
        source = obj
    elif isinstance(obj, np.ndarray):
        _check_array(obj)
        source = _wrap_array(obj)
    elif hasattr(obj, "__dlpack__"):
        source = from_dlpack(obj)
    elif isinstance(obj, (bytes, bytearray, memoryview)):
        source = frombuffer(obj, dtype=dt or _config.get_default_dtype())
    elif isinstance(obj, _storage.UntypedStorage):
        # A storage has no dtype: its bytes are read as ``dtype`` (uint8 by default), shared.
        source = _wrap_array(obj.cpu()._host)
        if dt is not None and dt is not source._dtype:
            source = source.view(dt)
    if source is not None:
        dev = source._device if device is None else _storage._normalise(device)
        want = dt or source._dtype
        if copy is False:
            if want is not source._dtype:
                raise _alias_error(source._dtype, want)
            if dev != source._device:
                raise ValueError(f"can't alias tensor from device '{source._device}' to "
                                 f"'{dev}'.")
        result = to(source, device=dev, dtype=want, copy=bool(copy))
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        if isinstance(obj, np.generic):
            obj = obj.item()
        result = tensor(obj, dtype=dt, device=device)
    if requires_grad:
        if result is obj:
            result = result.detach()
        result.requires_grad_(True)
    return result


def _array(self: Tensor, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    """``numpy.asarray(tensor)``: the tensor's memory as an array (a copy when ``dtype``
    differs or ``copy=True``)."""
    from .convert import numpy as _numpy

    array = _numpy(self)
    if dtype is not None and np.dtype(dtype) != array.dtype:
        return array.astype(dtype)
    return array.copy() if copy else array


_KDL_CPU = 1


def _dlpack(self: Tensor, *, stream: Any = None, max_version: Any = None,
            dl_device: Any = None, copy: bool | None = None) -> Any:
    """Export as a DLPack capsule without copying (CPU tensors, through numpy's
    exporter)."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if self._device.type != "cpu":
        raise BufferError(f"DLPack export of '{self._device.type}' tensors is not supported yet; "
                          "only CPU tensors can be exported")
    if self._dtype is _dtype.bfloat16:
        raise BufferError("DLPack export of bfloat16 tensors is not supported (numpy has no "
                          "bfloat16)")
    kwargs: dict[str, Any] = {"stream": stream}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return _refs.np_view(self).__dlpack__(**kwargs)


def _dlpack_device(self: Tensor) -> tuple[int, int]:
    if self._device.type != "cpu":
        raise BufferError(f"DLPack export of '{self._device.type}' tensors is not supported yet")
    return (_KDL_CPU, 0)


class _Capsule:
    """Lets ``numpy.from_dlpack`` read a bare (legacy) DLPack capsule."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_KDL_CPU, 0)


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A CPU tensor sharing memory with ``ext_tensor``: an object with ``__dlpack__`` (numpy,
    real PyTorch, JAX, ...) or a DLPack capsule."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor.detach()
    if hasattr(ext_tensor, "__dlpack__"):
        device = getattr(ext_tensor, "__dlpack_device__", None)
        if device is not None and int(device()[0]) != _KDL_CPU:
            raise BufferError(f"from_dlpack: only CPU memory can be imported so far, got DLPack "
                              f"device {tuple(int(x) for x in device())}")
        source = ext_tensor
    elif type(ext_tensor).__name__ == "PyCapsule":
        source = _Capsule(ext_tensor)
    else:
        raise RuntimeError(_INVALID_CAPSULE)
    try:
        return _wrap_array(np.from_dlpack(source))
    except ValueError:
        if isinstance(source, _Capsule):  # numpy renames a capsule it has consumed
            raise RuntimeError(_INVALID_CAPSULE) from None
        raise


_INVALID_CAPSULE = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                    "consumed only once, so you might have already constructed a tensor from it "
                    "once.")


METHODS: dict[str, Any] = {
    "tril": tril,
    "triu": triu,
    "tril_": seen_as_inplace_form(tril, _tril_),
    "triu_": seen_as_inplace_form(triu, _triu_),
    "__array__": _array,
    "__array_priority__": 1000,
    "__dlpack__": _dlpack,
    "__dlpack_device__": _dlpack_device,
}
