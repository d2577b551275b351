"""Elementwise math: unary and binary functions, comparisons, logical and bitwise ops, clamp, lerp,
where, and their operators and in-place forms.

Each op is a row of a table: its public name, the primitive it runs (or a composite kernel
written in other ops), its dtype rule and its method names. The ops that run one primitive come
from the pointwise op table (``torch._core.op_tables``); this module attaches the dtype rules
(:data:`RULES`) its rows name. Every public function calls an
``aten`` operator registered with the dispatcher (``CompositeExplicitAutograd`` when it runs one
primitive, ``CompositeImplicitAutograd`` when it is written in other ops), so modes, autograd
and backend overrides see it. Kernels do the shared work once (type promotion, broadcasting,
output allocation) and hand the primitive inputs of one dtype already broadcast.
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._core import (
    config as _config,
    dispatch as _dispatch,
    dtype as _dtype,
    fast as _fast,
    op_tables as _op_tables,
    plan as _plan,
    registry as _registry,
    upcalls,
)
from .._core.alloc import PRIMS, new_tensor
from .._core.dtype_info import finfo
from .._core.grad_mode import no_grad
from .._core.output_layout import follow_inputs, new_elementwise
from .._core.promotion import (
    NUMBER_TYPES,
    broadcast_shape_tuples,
    broadcast_shapes,
    common_device,
    numpy_scalar,
    result_type,
)
from .._core.tensor import Tensor
from .arith import DIRECT_PRIMS, add, inplace_method, mul, operand, scalar_operand
from .convert import copy_, scalar_type_name, to_dtype, write_out, write_out_of

_NUMBER = NUMBER_TYPES
_WIDEN = (_dtype.float16, _dtype.bfloat16, _dtype.float32)
DtypeRule = Callable[[_dtype.dtype, str], "tuple[_dtype.dtype, _dtype.dtype]"]


# -- shared work -------------------------------------------------------------------------


def _not_implemented(name: str, dt: _dtype.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{name}_cpu" not implemented for \'{scalar_type_name(dt)}\'')


def _require_tensor(x: Any, fname: str, arg: str, position: int) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' (position {position}) must be Tensor, not "
                        f"{type(x).__name__}")


def _require_operand(x: Any, fname: str, arg: str, position: int) -> None:
    if not isinstance(x, (Tensor, *_NUMBER)):
        raise TypeError(f"{fname}(): argument '{arg}' (position {position}) must be Tensor or "
                        f"Number, not {type(x).__name__}")


def float_of(dt: _dtype.dtype) -> _dtype.dtype:
    """The dtype a floating function computes in: integers and bool take the default dtype."""
    return _config.get_default_dtype() if dt._category <= _dtype.INT else dt


def run(prim: str, operands: list[Any], compute: _dtype.dtype, out_dtype: _dtype.dtype,
        **kwargs: Any) -> Tensor:
    """Broadcast ``operands`` (tensors or Python scalars) to one shape in dtype ``compute``,
    allocate the output and run primitive ``prim`` once."""
    tensors = [o for o in operands if isinstance(o, Tensor)]
    dev = common_device(tensors)
    shape = tensors[0]._shape if tensors else ()
    for t in tensors:
        if t._shape is not shape:  # (tensors of one interned layout share the shape object)
            shape = broadcast_shape_tuples(*(t._shape for t in tensors))
            break
    for t in tensors:
        # an input that is not an interned contiguous one: follow its layout
        if t._interned_layout is None:
            out = new_elementwise(shape, out_dtype, dev, tensors)
            break
    else:
        out = new_tensor(shape, out_dtype, dev)
    getattr(PRIMS, prim)(out, *(operand(o, compute, dev, shape) for o in operands), **kwargs)
    if _plan.recording is not None:  # the dispatcher is planning this call
        _plan.note(prim, operands, compute, out_dtype, kwargs, out)
    return out


_DOUBLE_PRECISION: dict[Any, bool] = {}


def computes_float64(dev: Any) -> bool:
    """Whether device ``dev`` computes in double precision: False only where its device module
    says so (``torch.xpu.get_device_properties(i).has_fp64`` is False on Intel GPUs without
    fp64, where a float64 kernel is an error)."""
    found = _DOUBLE_PRECISION.get(dev)
    if found is None:
        found = True
        kind = getattr(dev, "type", "cpu")
        if kind not in ("cpu", "meta"):
            module = _registry.device_module(kind)
            properties = getattr(module, "get_device_properties", None)
            if properties is not None:
                found = bool(getattr(properties(dev.index or 0), "has_fp64", True))
        _DOUBLE_PRECISION[dev] = found
    return found


def wide_float(dev: Any) -> _dtype.dtype:
    """The dtype composites accumulate floats in on ``dev``: float64, or float32 on a device
    without double precision (as PyTorch's GPU kernels accumulate float32 in float)."""
    return _dtype.float64 if computes_float64(dev) else _dtype.float32


def _opmath(x: Tensor) -> Tensor:
    """Composites of floating functions compute float32 and the half types in float64 and
    round once at the end, as the correctly rounded results of PyTorch's fused kernels (in
    float32 on a device without double precision)."""
    return to_dtype(x, wide_float(x._device)) if x._dtype in _WIDEN else x


def _float_input(x: Tensor) -> tuple[Tensor, _dtype.dtype]:
    """``x`` in the dtype a composite floating function computes in, and the result dtype."""
    dt = float_of(x._dtype)
    return _opmath(to_dtype(x, dt)), dt


def _define(name: str, schema: str, kernel: Callable[..., Any],
            implicit: bool = False) -> _dispatch.Operator:
    """Define ``aten::<name>`` (if needed) and register ``kernel`` as its composite."""
    key = _dispatch.COMPOSITE_IMPLICIT if implicit else _dispatch.COMPOSITE_EXPLICIT
    return _dispatch.define_aten({name: (schema, kernel, key)})[name]


# -- dtype rules: input dtype -> (compute dtype, output dtype) -------------------------------


def _same(dt: _dtype.dtype, name: str) -> tuple[_dtype.dtype, _dtype.dtype]:
    return dt, dt


def _no_bool(dt: _dtype.dtype, name: str) -> tuple[_dtype.dtype, _dtype.dtype]:
    if dt is _dtype.bool_:
        raise _not_implemented(name, dt)
    return dt, dt


def _floating(dt: _dtype.dtype, name: str) -> tuple[_dtype.dtype, _dtype.dtype]:
    f = float_of(dt)
    return f, f


def _floating_only(dt: _dtype.dtype, name: str) -> tuple[_dtype.dtype, _dtype.dtype]:
    if dt._category <= _dtype.INT:
        raise _not_implemented(name, dt)
    return dt, dt


def _integral(dt: _dtype.dtype, name: str) -> tuple[_dtype.dtype, _dtype.dtype]:
    if dt._category > _dtype.INT:
        raise _not_implemented(name, dt)
    return dt, dt


def _integral_no_bool(dt: _dtype.dtype, name: str) -> tuple[_dtype.dtype, _dtype.dtype]:
    if dt._category != _dtype.INT:
        raise _not_implemented(name, dt)
    return dt, dt


def _magnitude(dt: _dtype.dtype, name: str) -> tuple[_dtype.dtype, _dtype.dtype]:
    """abs: the magnitude of a complex number is real (``_unary_kernel`` takes the real parts
    of the primitive's complex result)."""
    if dt is _dtype.bool_:
        raise _not_implemented(name, dt)
    return dt, dt.to_real() if dt.is_complex else dt


def _to_bool(dt: _dtype.dtype, name: str) -> tuple[_dtype.dtype, _dtype.dtype]:
    return dt, _dtype.bool_


def _ordered(dt: _dtype.dtype, name: str) -> tuple[_dtype.dtype, _dtype.dtype]:
    """Comparisons that order values (lt/le/gt/ge): complex numbers have no order."""
    if dt.is_complex:
        raise _not_implemented(name, dt)
    return dt, _dtype.bool_


def _ordered_same(dt: _dtype.dtype, name: str) -> tuple[_dtype.dtype, _dtype.dtype]:
    """maximum/minimum/fmax/fmin: complex numbers have no order."""
    if dt.is_complex:
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    return dt, dt


def _real_sign(dt: _dtype.dtype, name: str) -> tuple[_dtype.dtype, _dtype.dtype]:
    if dt.is_complex:
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")
    return dt, dt


def _rounding(dt: _dtype.dtype, name: str) -> tuple[_dtype.dtype, _dtype.dtype]:
    """floor/ceil/trunc: complex numbers have no order to round in."""
    if dt.is_complex:
        raise NotImplementedError(f"{name} is not supported for complex inputs")
    return _no_bool(dt, name)


def _negation(dt: _dtype.dtype, name: str) -> tuple[_dtype.dtype, _dtype.dtype]:
    if dt is _dtype.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")
    return dt, dt


# -- the tables ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Unary:
    """A unary op running one primitive.

    :param name: the public name (``torch.<name>``, ``Tensor.<name>``).
    :param prim: the primitive it runs.
    :param rule: input dtype -> (compute dtype, output dtype); raises for dtypes it refuses.
    :param aliases: other public names of the same op (``absolute`` for ``abs``).
    :param inplace: whether ``Tensor.<name>_`` exists.
    :param torch_inplace: whether ``torch.<name>_`` exists.
    """

    name: str
    prim: str
    rule: DtypeRule
    aliases: tuple[str, ...] = ()
    inplace: bool = True
    torch_inplace: bool = True


# input dtype -> (compute dtype, output dtype), by the names the op table's rows give
RULES: dict[str, DtypeRule] = {
    "same": _same, "no_bool": _no_bool, "floating": _floating, "floating_only": _floating_only,
    "integral": _integral, "integral_no_bool": _integral_no_bool, "to_bool": _to_bool,
    "ordered": _ordered, "ordered_same": _ordered_same, "real_sign": _real_sign,
    "rounding": _rounding, "negation": _negation, "magnitude": _magnitude,
}

# The ops running one primitive on their operands alone, from the pointwise op table.
UNARY: list[Unary] = [
    Unary(row.name, row.prim, RULES[row.promotion], row.aliases, row.inplace, row.torch_inplace)
    for row in _op_tables.POINTWISE if row.generate and row.kind == "unary"
]


@dataclass(frozen=True)
class Binary:
    """A binary op running one primitive on two broadcast operands.

    :param name: the public name.
    :param prim: the primitive it runs.
    :param rule: promoted dtype -> (compute dtype, output dtype).
    :param number_other: whether ``other`` may be a Python number.
    :param number_input: whether ``input`` may be a Python number (``torch.pow(2, t)``).
    :param aliases: other public names.
    :param inplace: whether ``Tensor.<name>_`` exists.
    """

    name: str
    prim: str
    rule: DtypeRule
    number_other: bool = True
    number_input: bool = False
    aliases: tuple[str, ...] = ()
    inplace: bool = True


BINARY: list[Binary] = [
    Binary(row.name, row.prim, RULES[row.promotion], row.number_other, row.number_input,
           row.aliases, row.inplace)
    for row in _op_tables.POINTWISE if row.generate and row.kind in ("binary", "compare")
]

# Errors name the kernels as PyTorch's CPU build does where it differs from the op's name.
_KERNEL_NAMES = {"bitwise_left_shift": "lshift", "bitwise_right_shift": "rshift"}


# Complex dtypes whose magnitude is computed from their parts (complex32's float16 parts have
# no hypot of their own precision: it keeps the complex primitive).
_HYPOT_PARTS = frozenset((_dtype.complex64, _dtype.complex128))


def _unary_kernel(row: Unary) -> Callable[[Tensor], Tensor]:
    def kernel(self: Tensor) -> Tensor:
        _require_tensor(self, row.name, "input", 1)
        compute, out_dt = row.rule(self._dtype, row.name)
        return run(row.prim, [self], compute, out_dt)

    def magnitude(self: Tensor) -> Tensor:
        _require_tensor(self, row.name, "input", 1)
        compute, out_dt = row.rule(self._dtype, row.name)
        if out_dt is compute:
            return run(row.prim, [self], compute, out_dt)
        if compute in _HYPOT_PARTS:
            # |z| = hypot(re, im) (what C's cabs computes): one real primitive over the parts
            # read in place, into an output that follows self's layout
            stride = tuple(2 * s for s in self._stride)
            parts = [Tensor._make(self._storage, self._shape, stride, 2 * self._offset + part,
                                  out_dt, self._device, self._vc) for part in (0, 1)]
            return run("hypot", parts, out_dt, out_dt)
        # the primitive's inputs and output share a dtype: |z| comes back as complex numbers
        # with zero imaginary parts, whose real parts are the result
        result = run(row.prim, [self], compute, compute)
        parts = Tensor._make(result._storage, result._shape, tuple(2 * s for s in result._stride),
                             2 * result._offset, out_dt, result._device, result._vc)
        out = new_tensor(result._shape, out_dt, result._device)
        PRIMS.copy_(out, parts)
        return out

    chosen = magnitude if row.rule is _magnitude else kernel
    chosen.__name__ = row.name
    return chosen


def _binary_kernel(row: Binary) -> Callable[[Any, Any], Tensor]:
    def kernel(self: Any, other: Any) -> Tensor:
        check = _require_operand if row.number_input else _require_tensor
        check(self, row.name, "input", 1)
        if isinstance(self, Tensor):
            (_require_operand if row.number_other else _require_tensor)(other, row.name,
                                                                          "other", 2)
        else:
            _require_tensor(other, row.name, "other", 2)
        compute, out_dt = row.rule(result_type(self, other),
                                   _KERNEL_NAMES.get(row.name, row.name))
        return run(row.prim, [self, other], compute, out_dt)

    kernel.__name__ = row.name
    return kernel


def _public_unary(op: _dispatch.Operator, name: str) -> Callable[..., Tensor]:
    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        # (write_out only with an out tensor: one call less on every small op)
        return op(input) if out is None else write_out_of(op, out, input)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}`` of each element of ``input``."
    return fn


def _public_binary(op: _dispatch.Operator, name: str) -> Callable[..., Tensor]:
    def fn(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
        return op(input, other) if out is None else write_out_of(op, out, input, other)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}`` of ``input`` and ``other`` elementwise, with broadcasting and "
                  "type promotion.")
    return fn


# Public functions by name; Tensor methods by name; torch.<name>_ functions.
FUNCTIONS: dict[str, Callable[..., Any]] = {}
METHODS: dict[str, Any] = {}


def _publish(names: tuple[str, ...], fn: Callable[..., Any], *, method: bool = True,
             inplace: bool = True, torch_inplace: bool = False) -> None:
    """Expose ``fn`` as ``torch.<name>`` and, as asked, ``Tensor.<name>``, ``Tensor.<name>_``
    and ``torch.<name>_`` for every name in ``names``."""
    for name in names:
        FUNCTIONS[name] = fn
        if method:
            METHODS[name] = fn
        if inplace:
            METHODS[name + "_"] = inplace_method(fn, name + "_")
        if torch_inplace:
            FUNCTIONS[name + "_"] = inplace_method(fn, name + "_")


ATEN: dict[str, _dispatch.Operator] = {}

for _row in UNARY:
    ATEN[_row.name] = _op = _define(_row.name, f"{_row.name}(Tensor self) -> Tensor",
                                    _unary_kernel(_row))
    _publish((_row.name, *_row.aliases),
             _fast.unary(_row.prim, _op, _public_unary(_op, _row.name), _row.rule),
             inplace=_row.inplace, torch_inplace=_row.torch_inplace)
    if _row.name == "abs":
        FUNCTIONS.pop("absolute_")  # torch.abs_ exists, torch.absolute_ does not


def _public_compare(tensor_op: _dispatch.Operator, number_op: _dispatch.Operator,
                    name: str) -> Callable[..., Tensor]:
    """A comparison with a number ``other`` reaches its ``.Scalar`` overload, as in PyTorch
    (``x > 0`` is ``aten::gt.Scalar``), a tensor its ``.Tensor`` one."""
    def fn(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
        op = tensor_op if other.__class__ is Tensor or isinstance(other, Tensor) else number_op
        return op(input, other) if out is None else write_out_of(op, out, input, other)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}`` of ``input`` and ``other`` elementwise, with broadcasting: a "
                  "bool tensor.")
    return fn


# The comparisons with a ``.Scalar`` overload of their own (PyTorch's ``eq`` ... ``ge``).
SCALAR_COMPARISONS = tuple(row.name for row in _op_tables.POINTWISE
                           if row.kind == "compare" and row.number_other)

for _brow in BINARY:
    _kernel = _binary_kernel(_brow)
    ATEN[_brow.name] = _op = _define(f"{_brow.name}.Tensor",
                                     f"{_brow.name}.Tensor(Tensor self, Tensor other) -> Tensor",
                                     _kernel)
    if _brow.name in SCALAR_COMPARISONS:
        ATEN[f"{_brow.name}.Scalar"] = _number_op = _define(
            f"{_brow.name}.Scalar", f"{_brow.name}.Scalar(Tensor self, Scalar other) -> Tensor",
            _kernel)
        _publish((_brow.name, *_brow.aliases), _public_compare(_op, _number_op, _brow.name),
                 inplace=_brow.inplace)
    else:
        _publish((_brow.name, *_brow.aliases), _public_binary(_op, _brow.name),
                 inplace=_brow.inplace)


# The functions the composites below are written in.
(abs, neg, exp, exp2, log, log1p, reciprocal, trunc, isnan, bitwise_not, logical_not, eq, ne,
 lt, le, logical_and, logical_or, maximum, copysign) = (FUNCTIONS[n] for n in (
    "abs", "neg", "exp", "exp2", "log", "log1p", "reciprocal", "trunc", "isnan", "bitwise_not",
    "logical_not", "eq", "ne", "lt", "le", "logical_and", "logical_or", "maximum", "copysign"))


# -- arithmetic with extra arguments: sub, div, pow --------------------------------------


def _check_alpha(alpha: Any, dt: _dtype.dtype) -> None:
    if isinstance(alpha, bool) and dt is not _dtype.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and dt._category <= _dtype.INT:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


def _sub_kernel(self: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    _require_operand(self, "sub", "input", 1)
    _require_operand(other, "sub", "other", 2)
    if not isinstance(self, Tensor):
        _require_tensor(other, "sub", "other", 2)
    a_bool = getattr(self, "_dtype", None) is _dtype.bool_ or isinstance(self, bool)
    b_bool = getattr(other, "_dtype", None) is _dtype.bool_ or isinstance(other, bool)
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    dt = result_type(self, other)
    _check_alpha(alpha, dt)
    if not (alpha == 1 and not isinstance(alpha, float)):
        other = run("mul", [other, alpha], dt, dt) if isinstance(other, Tensor) else (
            other * alpha)
    return run("sub", [self, other], dt, dt)


def _rsub_kernel(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    return _sub_kernel(other, self, alpha=alpha)


_ROUNDING_MODES = (None, "trunc", "floor")


def _div_kernel(self: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    _require_operand(self, "div", "input", 1)
    _require_operand(other, "div", "other", 2)
    if rounding_mode not in _ROUNDING_MODES:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    dt = result_type(self, other)
    if rounding_mode is None:
        dt = float_of(dt)
    elif dt is _dtype.bool_:
        raise _not_implemented(f"div_{rounding_mode}", dt)
    return run("div", [self, other], dt, dt, rounding_mode=rounding_mode)


def _pow_kernel(self: Any, exponent: Any) -> Tensor:
    _require_operand(self, "pow", "input", 1)
    _require_operand(exponent, "pow", "exponent", 2)
    dt = result_type(self, exponent)
    if dt is _dtype.bool_:
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    if (dt._category == _dtype.INT and isinstance(exponent, int) and exponent < 0):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return run("pow", [self, exponent], dt, dt)


_aten_sub = _define("sub.Tensor", "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
                    "Tensor", _sub_kernel)
_aten_rsub = _define("rsub.Scalar", "rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> "
                     "Tensor", _rsub_kernel)
_aten_div = _define("div.Tensor_mode", "div.Tensor_mode(Tensor self, Tensor other, *, "
                    "str? rounding_mode=None) -> Tensor", _div_kernel)
# True division is an overload of its own, as in PyTorch (what ``x / 2`` reaches).
_aten_true_div = _define("div.Tensor", "div.Tensor(Tensor self, Tensor other) -> Tensor",
                         _div_kernel)
_aten_pow = _define("pow.Tensor_Tensor", "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> "
                    "Tensor", _pow_kernel)
# A number exponent or base has an overload of its own, as in PyTorch (``x ** 2``, ``2 ** x``)
_aten_pow_scalar_exponent = _define("pow.Tensor_Scalar", "pow.Tensor_Scalar(Tensor self, Scalar "
                                    "exponent) -> Tensor", _pow_kernel)
_aten_pow_scalar_base = _define("pow.Scalar", "pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
                                _pow_kernel)
# Kernels decided by the call signature alone (they read no tensor values): the dispatcher
# may replay their plans (torch._core.plan).
_plan.enable(*ATEN.values(), _aten_sub, _aten_rsub, _aten_div, _aten_true_div, _aten_pow,
             _aten_pow_scalar_exponent, _aten_pow_scalar_base)


def sub(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """``input - alpha * other`` with broadcasting and type promotion (not for bool)."""
    # The schema's default is not passed (a mode sees no `alpha`, as in PyTorch; the call's
    # plan key is shorter)
    if alpha.__class__ is int and alpha == 1:
        if out is None:
            return _aten_sub(input, other)  # (the usual call: one test each)
        return write_out_of(_aten_sub, out, input, other)
    result = _aten_sub(input, other, alpha=alpha)
    return result if out is None else write_out(out, result)


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input`` (the reflected subtraction of ``2 - t``)."""
    return _aten_rsub(input, other, alpha=alpha)


def div(input: Any, other: Any, *, rounding_mode: str | None = None,
        out: Tensor | None = None) -> Tensor:
    """``input / other``: true division (integers give the default float dtype), or rounded
    with ``rounding_mode="trunc"`` (toward zero) or ``"floor"`` (keeping integer dtypes).
    Integer division by zero raises."""
    result = (_aten_true_div(input, other) if rounding_mode is None
              else _aten_div(input, other, rounding_mode=rounding_mode))
    return result if out is None else write_out(out, result)


def true_divide(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """``div`` without rounding: the result is floating point."""
    return write_out(out, _aten_true_div(input, other))


def floor_divide(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """``input // other``: division rounded toward negative infinity, as Python's ``//``.
    Not differentiable, as in PyTorch: a backward through the result raises."""
    with no_grad():
        result = _aten_div(input, other, rounding_mode="floor")
    tensors = tuple(t for t in (input, other) if isinstance(t, Tensor))
    error = RuntimeError("derivative for aten::floor_divide is not implemented")
    return write_out(out, upcalls.not_differentiable(result, error, *tensors))


def pow(input: Any, exponent: Any, *, out: Tensor | None = None) -> Tensor:
    """``input ** exponent`` elementwise; ``input`` may be a number (``torch.pow(2, t)``).
    Integer tensors to negative integer powers are refused."""
    if exponent.__class__ is Tensor or isinstance(exponent, Tensor):
        if input.__class__ is Tensor or isinstance(input, Tensor):
            result = _aten_pow(input, exponent)
        else:
            result = _aten_pow_scalar_base(input, exponent)
    elif input.__class__ is Tensor or isinstance(input, Tensor):
        result = _aten_pow_scalar_exponent(input, exponent)
    else:
        result = _aten_pow(input, exponent)  # (its argument checks raise PyTorch's error)
    return result if out is None else write_out(out, result)


def float_power(input: Any, exponent: Any, *, out: Tensor | None = None) -> Tensor:
    """``pow`` computed in double precision: the result is float64 (complex128 for complex)."""
    return write_out(out, _aten_float_power(input, exponent))


def _float_power_kernel(self: Any, exponent: Any) -> Tensor:
    _require_operand(self, "float_power", "input", 1)
    _require_operand(exponent, "float_power", "exponent", 2)
    dt = _dtype.complex128 if result_type(self, exponent).is_complex else _dtype.float64
    base = to_dtype(self, dt) if isinstance(self, Tensor) else self
    exp_ = to_dtype(exponent, dt) if isinstance(exponent, Tensor) else exponent
    return run("pow", [base, exp_], dt, dt)


_aten_float_power = _define("float_power.Tensor_Tensor", "float_power.Tensor_Tensor(Tensor self, "
                            "Tensor exponent) -> Tensor", _float_power_kernel, implicit=True)


def _float_power_inplace(self: Tensor, exponent: Any) -> Tensor:
    want = _dtype.complex128 if result_type(self, exponent).is_complex else _dtype.float64
    if self._dtype is not want:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{scalar_type_name(self._dtype)} but the operation's result requires "
                           f"dtype {scalar_type_name(want)}")
    return copy_(self, float_power(self, exponent))


DIRECT_PRIMS.update({sub: "sub", div: "div"})  # (their in-place forms write into self)
_publish(("sub", "subtract"), sub)
_publish(("div", "divide"), div)
_publish(("true_divide",), true_divide)
_publish(("floor_divide",), floor_divide)
_publish(("pow",), pow)
_publish(("float_power",), float_power, inplace=False)
METHODS["float_power_"] = _float_power_inplace
FUNCTIONS["rsub"] = rsub
# mul lives with add in torch._aten.arith (their fast tier); its alias and in-place forms live here
FUNCTIONS["multiply"] = mul
METHODS["multiply_"] = inplace_method(mul, "multiply_")


# -- composite unary functions -------------------------------------------------------------


def _round_kernel(self: Tensor, *, decimals: int = 0) -> Tensor:
    _require_tensor(self, "round", "input", 1)
    _no_bool(self._dtype, "round")
    if decimals == 0:
        return run("round", [self], self._dtype, self._dtype)
    if self._dtype._category <= _dtype.INT:
        raise _not_implemented("round", self._dtype)
    x = _opmath(self)
    scale = 10.0 ** builtins.abs(decimals)
    # as PyTorch: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d
    if decimals > 0:
        y = div(run("round", [mul(x, scale)], x._dtype, x._dtype), scale)
    else:
        y = mul(run("round", [div(x, scale)], x._dtype, x._dtype), scale)
    return to_dtype(y, self._dtype)


def _logit_kernel(self: Tensor, eps: float | None = None) -> Tensor:
    dt = float_of(self._dtype)
    x = to_dtype(self, dt)
    if eps is not None and eps >= 0:
        # in the input's dtype, as PyTorch's kernel clamps: its bound 1 - eps rounds there
        # (float32 0.99999899 for eps 1e-6, whose logit is 13.8023, not 13.8155)
        x = clamp(x, eps, 1 - eps)
    x = _opmath(x)
    return to_dtype(log(div(x, sub(1, x))), dt)


def _frac_kernel(self: Tensor) -> Tensor:
    _floating_only(self._dtype, "frac")
    return sub(self, trunc(self))


def _square_kernel(self: Tensor) -> Tensor:
    return pow(self, 2)


def _positive_kernel(self: Tensor) -> Tensor:
    if self._dtype is _dtype.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def _scaled(factor: float) -> Callable[[Tensor], Tensor]:
    def kernel(self: Tensor) -> Tensor:
        x, dt = _float_input(self)
        return to_dtype(mul(x, factor), dt)

    return kernel


def _bool_like(self: Tensor, value: bool) -> Tensor:
    out = new_elementwise(self._shape, _dtype.bool_, self._device, [self])
    PRIMS.fill_(out, value)
    return out


def _is_float(t: Tensor) -> bool:
    return t._dtype._category >= _dtype.FLOAT


def _isinf_kernel(self: Tensor) -> Tensor:
    if not _is_float(self):
        return _bool_like(self, False)
    return eq(abs(self), math.inf)


def _isposinf_kernel(self: Tensor) -> Tensor:
    return eq(self, math.inf) if _is_float(self) else _bool_like(self, False)


def _isneginf_kernel(self: Tensor) -> Tensor:
    return eq(self, -math.inf) if _is_float(self) else _bool_like(self, False)


def _isfinite_kernel(self: Tensor) -> Tensor:
    if not _is_float(self):
        return _bool_like(self, True)
    return logical_and(eq(self, self), ne(abs(self), math.inf))


def _isreal_kernel(self: Tensor) -> Tensor:
    if self._dtype.is_complex:  # real where the imaginary part is zero
        from .complex_views import imag

        return eq(imag(self), 0)
    return _bool_like(self, True)


def _signbit_kernel(self: Tensor) -> Tensor:
    if _is_float(self):
        # copysign sees the sign of -0.0 and of NaN
        return lt(copysign(_as_tensor(1.0, self._dtype, self), self), 0)
    return lt(self, 0) if self._dtype.is_signed else _bool_like(self, False)


def _nan_to_num_kernel(self: Tensor, nan: float | None = 0.0, posinf: float | None = None,
                       neginf: float | None = None) -> Tensor:
    if not _is_float(self):
        return self.clone()
    info = finfo(self._dtype)
    nan = 0.0 if nan is None else nan
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    result = where(isnan(self), nan, self)
    result = where(eq(self, math.inf), posinf, result)
    return where(eq(self, -math.inf), neginf, result)


def _angle_kernel(self: Tensor) -> Tensor:
    if self._dtype.is_complex:  # the argument of z, real; differentiable through its parts
        from .complex_views import imag, real

        return FUNCTIONS["atan2"](imag(self), real(self))
    x, dt = _float_input(self)
    # pi for negative numbers, 0 otherwise; NaN stays NaN
    result = where(lt(x, 0), _as_tensor(math.pi, x._dtype, x), _as_tensor(0.0, x._dtype, x))
    if _is_float(self):
        # x * 0 keeps NaN (and the graph) but, like PyTorch, passes back a zero gradient
        result = where(isnan(x), x * 0, result)
    return to_dtype(result, dt)


@dataclass(frozen=True)
class Composite:
    """A public op written in other ops (``CompositeImplicitAutograd``).

    :param name: the public name; ``schema`` its aten schema.
    :param kernel: the composite.
    :param aliases, method, inplace, torch_inplace: as for :class:`Unary`.
    """

    name: str
    schema: str
    kernel: Callable[..., Tensor]
    aliases: tuple[str, ...] = ()
    method: bool = True
    inplace: bool = True
    torch_inplace: bool = True
    out: bool = True


COMPOSITE_UNARY: list[Composite] = [
    Composite("round", "round.decimals(Tensor self, *, int decimals=0) -> Tensor", _round_kernel),
    Composite("logit", "logit(Tensor self, float? eps=None) -> Tensor", _logit_kernel),
    Composite("frac", "frac(Tensor self) -> Tensor", _frac_kernel),
    Composite("square", "square(Tensor self) -> Tensor", _square_kernel),
    Composite("positive", "positive(Tensor self) -> Tensor", _positive_kernel, inplace=False,
              torch_inplace=False, out=False),
    Composite("deg2rad", "deg2rad(Tensor self) -> Tensor", _scaled(math.pi / 180)),
    Composite("rad2deg", "rad2deg(Tensor self) -> Tensor", _scaled(180 / math.pi)),
    Composite("isinf", "isinf(Tensor self) -> Tensor", _isinf_kernel, inplace=False,
              torch_inplace=False, out=False),
    Composite("isposinf", "isposinf(Tensor self) -> Tensor", _isposinf_kernel, inplace=False,
              torch_inplace=False),
    Composite("isneginf", "isneginf(Tensor self) -> Tensor", _isneginf_kernel, inplace=False,
              torch_inplace=False),
    Composite("isfinite", "isfinite(Tensor self) -> Tensor", _isfinite_kernel, inplace=False,
              torch_inplace=False, out=False),
    Composite("isreal", "isreal(Tensor self) -> Tensor", _isreal_kernel, inplace=False,
              torch_inplace=False, out=False),
    Composite("signbit", "signbit(Tensor self) -> Tensor", _signbit_kernel, inplace=False,
              torch_inplace=False),
    Composite("nan_to_num", "nan_to_num(Tensor self, float? nan=None, float? posinf=None, "
              "float? neginf=None) -> Tensor", _nan_to_num_kernel),
    Composite("angle", "angle(Tensor self) -> Tensor", _angle_kernel, inplace=False,
              torch_inplace=False),
]


def _public_composite(row: Composite, op: _dispatch.Operator) -> Callable[..., Tensor]:
    if row.out:
        def fn(input: Tensor, *args: Any, out: Tensor | None = None, **kwargs: Any) -> Tensor:
            _require_tensor(input, row.name, "input", 1)
            return write_out(out, op(input, *args, **kwargs))
    else:
        def fn(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
            _require_tensor(input, row.name, "input", 1)
            return op(input, *args, **kwargs)

    fn.__name__ = fn.__qualname__ = row.name
    fn.__doc__ = (row.kernel.__doc__ or f"``{row.name}`` of each element of ``input``, "
                  f"composed of other elementwise ops.")
    return fn


for _crow in COMPOSITE_UNARY:
    ATEN[_crow.name] = _op = _define(_crow.schema.partition("(")[0], _crow.schema, _crow.kernel,
                                     implicit=True)
    _publish((_crow.name, *_crow.aliases), _public_composite(_crow, _op), inplace=_crow.inplace,
             torch_inplace=_crow.torch_inplace)


isinf, isfinite = FUNCTIONS["isinf"], FUNCTIONS["isfinite"]


# real and imag: torch._aten.complex_views (views of complex tensors)


# -- composite binary functions ------------------------------------------------------------


def _xlogy_kernel(self: Any, other: Any) -> Tensor:
    _require_operand(self, "xlogy", "input", 1)
    _require_operand(other, "xlogy", "other", 2)
    if not isinstance(self, Tensor):
        _require_tensor(other, "xlogy", "other", 2)
    dt = float_of(result_type(self, other))
    dev = (self if isinstance(self, Tensor) else other)._device
    compute = wide_float(dev) if dt in _WIDEN else dt
    x = to_dtype(self, compute) if isinstance(self, Tensor) else self
    y = to_dtype(other, compute) if isinstance(other, Tensor) else other
    x, y = _as_tensor(x, compute, y), _as_tensor(y, compute, x)
    # 0 * log(y) is 0 unless y is NaN
    zero = logical_and(eq(x, 0), logical_not(isnan(y)))
    return to_dtype(where(zero, 0.0, mul(x, log(y))), dt)


def _as_tensor(value: Any, dt: _dtype.dtype, like: Any) -> Tensor:
    """A Python number as a 0-d tensor of ``dt`` on ``like``'s device (tensors pass through)."""
    if isinstance(value, Tensor):
        return value
    dev = like._device if isinstance(like, Tensor) else common_device([])
    return scalar_operand(value, dt, dev)


def _logaddexp_kernel(self: Tensor, other: Tensor, base2: bool = False) -> Tensor:
    name = "logaddexp2" if base2 else "logaddexp"
    _require_tensor(self, name, "input", 1)
    _require_tensor(other, name, "other", 2)
    dt = result_type(self, other)
    _floating_only(dt, name)
    a, b = _opmath(to_dtype(self, dt)), _opmath(to_dtype(other, dt))
    m = maximum(a, b)
    gap = neg(abs(sub(a, b)))
    if base2:
        tail = mul(log1p(exp2(gap)), 1 / math.log(2))
    else:
        tail = log1p(exp(gap))
    # inf + inf (or -inf with -inf) would give NaN through a - b
    result = where(logical_and(isinf(a), eq(a, b)), a, add(m, tail))
    return to_dtype(result, dt)


def _logaddexp2_kernel(self: Tensor, other: Tensor) -> Tensor:
    return _logaddexp_kernel(self, other, base2=True)


COMPOSITE_BINARY: list[Composite] = [
    Composite("xlogy", "xlogy.Tensor(Tensor self, Tensor other) -> Tensor", _xlogy_kernel),
    Composite("logaddexp", "logaddexp(Tensor self, Tensor other) -> Tensor", _logaddexp_kernel,
              inplace=False, torch_inplace=False),
    Composite("logaddexp2", "logaddexp2(Tensor self, Tensor other) -> Tensor",
              _logaddexp2_kernel, inplace=False, torch_inplace=False),
]


def _public_composite_binary(row: Composite, op: _dispatch.Operator) -> Callable[..., Tensor]:
    def fn(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
        return write_out(out, op(input, other))

    fn.__name__ = fn.__qualname__ = row.name
    fn.__doc__ = f"``{row.name}`` of ``input`` and ``other`` elementwise, with broadcasting."
    return fn


for _crow in COMPOSITE_BINARY:
    ATEN[_crow.name] = _op = _define(_crow.schema.partition("(")[0], _crow.schema, _crow.kernel,
                                     implicit=True)
    _publish((_crow.name, *_crow.aliases), _public_composite_binary(_crow, _op),
             inplace=_crow.inplace, torch_inplace=_crow.torch_inplace)


# -- clamp, lerp, addcmul, addcdiv, where --------------------------------------------------


def _clamp_kernel(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    _require_tensor(self, "clamp", "input", 1)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [b for b in (min, max) if b is not None]
    for name, b in (("min", min), ("max", max)):
        if b is not None:
            _require_operand(b, "clamp", name, 2)
    dt = result_type(self, *bounds)
    if dt.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    result = self
    # maximum then minimum: NaN propagates from any operand, and min > max gives max
    if min is not None:
        result = run("maximum", [result, min], dt, dt)
    if max is not None:
        result = run("minimum", [result, max], dt, dt)
    if result is self:  # pragma: no cover - at least one bound ran
        result = self.clone()
    return result


def _clamp_min_kernel(self: Tensor, min: Any) -> Tensor:
    return _clamp_kernel(self, min, None)


def _clamp_max_kernel(self: Tensor, max: Any) -> Tensor:
    return _clamp_kernel(self, None, max)


def _check_same_dtype(name: str, self: Tensor, other: Tensor) -> None:
    if other._dtype is not self._dtype:
        raise RuntimeError(f"expected dtype {self._dtype._name.replace('float32', 'float')} for "
                           f"`{name}` but got dtype "
                           f"{other._dtype._name.replace('float64', 'double')}")


def _lerp_kernel(self: Tensor, end: Tensor, weight: Any) -> Tensor:
    _require_tensor(self, "lerp", "input", 1)
    _require_tensor(end, "lerp", "end", 2)
    _check_same_dtype("end", self, end)
    if isinstance(weight, Tensor):
        _check_same_dtype("weight", self, weight)
    else:
        _require_operand(weight, "lerp", "weight", 3)
    if self._dtype._category <= _dtype.INT:
        raise NotImplementedError(f"\"lerp_kernel_scalar\" not implemented for "
                                  f"'{scalar_type_name(self._dtype)}'")
    start, stop = _opmath(self), _opmath(end)
    diff = sub(stop, start)
    # PyTorch's two-sided formula, exact at both ends: from start for |w| < 0.5, else from end
    if isinstance(weight, Tensor):
        w = _opmath(weight)
        result = where(lt(abs(w), 0.5), add(start, mul(diff, w)), sub(stop, mul(diff, sub(1, w))))
    elif builtins.abs(weight) < 0.5:
        result = add(start, mul(diff, weight))
    else:
        result = sub(stop, mul(diff, 1 - weight))
    # (the steps above order their operands for exactness, not for the output's layout)
    inputs = [self, end, weight] if isinstance(weight, Tensor) else [self, end]
    return to_dtype(follow_inputs(result, inputs), self._dtype)


def _scalar_in(value: Any, dt: _dtype.dtype) -> Any:
    """``value`` as the dtype's Python type (addcmul's value is cast to the result dtype)."""
    if dt is _dtype.bool_:
        return bool(value)
    if dt._category == _dtype.INT:
        return int(value)
    return value


def _addcmul_kernel(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    for i, (n, t) in enumerate((("input", self), ("tensor1", tensor1), ("tensor2", tensor2))):
        _require_tensor(t, "addcmul", n, i + 1)
    dt = result_type(self, tensor1, tensor2)
    value = _scalar_in(value, dt)
    t1, t2 = _opmath(to_dtype(tensor1, dt)), _opmath(to_dtype(tensor2, dt))
    return to_dtype(add(_opmath(to_dtype(self, dt)), mul(mul(t1, value), t2)), dt)


def _addcdiv_kernel(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    for i, (n, t) in enumerate((("input", self), ("tensor1", tensor1), ("tensor2", tensor2))):
        _require_tensor(t, "addcdiv", n, i + 1)
    if tensor1._dtype._category <= _dtype.INT and tensor2._dtype._category <= _dtype.INT:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
            "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    dt = result_type(self, tensor1, tensor2)
    t1, t2 = _opmath(to_dtype(tensor1, dt)), _opmath(to_dtype(tensor2, dt))
    return to_dtype(add(_opmath(to_dtype(self, dt)), div(mul(t1, value), t2)), dt)


def _where_kernel(condition: Tensor, self: Any, other: Any) -> Tensor:
    _require_tensor(condition, "where", "condition", 1)
    _require_operand(self, "where", "input", 2)
    _require_operand(other, "where", "other", 3)
    if condition._dtype is _dtype.uint8:
        _plan.refuse()  # (every call warns: no replay)
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and "
                      "will be removed in a future version of PyTorch. Use a boolean condition "
                      "instead.", UserWarning, stacklevel=_config.external_stacklevel())
        condition = to_dtype(condition, _dtype.bool_)
    elif condition._dtype is not _dtype.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {scalar_type_name(condition._dtype)}")
    dt = result_type(self, other)
    tensors = [t for t in (condition, self, other) if isinstance(t, Tensor)]
    dev = common_device(tensors)
    shape = broadcast_shapes(*(t._shape for t in tensors))
    out = new_elementwise(shape, dt, dev, tensors)
    PRIMS.where(out, operand(condition, _dtype.bool_, dev, shape), operand(self, dt, dev, shape),
            operand(other, dt, dev, shape))
    if _plan.recording is not None and condition._dtype is _dtype.bool_:
        # (a uint8 condition warns: its calls stay on this path, which warns each time)
        _plan.note("where", [condition, self, other], dt, dt, {}, out)
    return out


_aten_clamp = _define("clamp", "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> "
                      "Tensor", _clamp_kernel)
_aten_clamp_min = _define("clamp_min", "clamp_min(Tensor self, Scalar min) -> Tensor",
                          _clamp_min_kernel)
_aten_clamp_max = _define("clamp_max", "clamp_max(Tensor self, Scalar max) -> Tensor",
                          _clamp_max_kernel)
# clamp with tensor bounds (PyTorch's overload for them, which dispatch modes see): maximum
# and/or minimum on the bound tensors
_aten_clamp_tensor = _define("clamp.Tensor", "clamp.Tensor(Tensor self, Tensor? min=None, "
                             "Tensor? max=None) -> Tensor", _clamp_kernel)
# clamp with number bounds is maximum and/or minimum on a bound constant, with tensor bounds on
# the bound tensors: a function of the signature either way (a tensor bound passed to the
# Scalar overload, as a mix of a tensor and a number is, is never replayed)
_plan.enable(_aten_clamp, _aten_clamp_min, _aten_clamp_max, _aten_clamp_tensor)
_aten_lerp = _define("lerp.Tensor", "lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> "
                     "Tensor", _lerp_kernel, implicit=True)


def _lerp_scalar_kernel(self: Tensor, end: Tensor, weight: Any) -> Tensor:
    # lerp.Tensor takes a number weight too, and backends serve it (fused): run that
    return _aten_lerp(self, end, weight)


# A number as the weight: an overload of its own, as PyTorch's, which a dispatch mode sees
# (lerp.Scalar); calls without a mode go straight to lerp.Tensor, which backends serve.
_aten_lerp_scalar = _define("lerp.Scalar", "lerp.Scalar(Tensor self, Tensor end, Scalar weight) "
                            "-> Tensor", _lerp_scalar_kernel, implicit=True)


def _lerp_overload(self: Tensor, end: Tensor, weight: Any) -> _dispatch.Operator:
    """lerp.Scalar for a number weight where a dispatch mode would see the call, else
    lerp.Tensor."""
    if weight.__class__ is Tensor or isinstance(weight, Tensor) \
            or not _dispatch.python_key_active((self, end), {}):
        return _aten_lerp
    return _aten_lerp_scalar
_aten_addcmul = _define("addcmul", "addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, "
                        "Scalar value=1) -> Tensor", _addcmul_kernel, implicit=True)
_aten_addcdiv = _define("addcdiv", "addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, "
                        "Scalar value=1) -> Tensor", _addcdiv_kernel, implicit=True)
_aten_where = _define("where.self", "where.self(Tensor condition, Tensor self, Tensor other) -> "
                      "Tensor", _where_kernel)
_plan.enable(_aten_where)  # one primitive on broadcast operands: a function of the signature


def _tensor_bounds(min: Any, max: Any) -> bool:
    """Whether clamp's bounds are tensors (or None), at least one given: PyTorch's
    ``clamp.Tensor`` overload."""
    return ((min.__class__ is Tensor or isinstance(min, Tensor) or min is None)
            and (max.__class__ is Tensor or isinstance(max, Tensor) or max is None)
            and (min is not None or max is not None))


def clamp(input: Tensor, min: Any = None, max: Any = None, *,
          out: Tensor | None = None) -> Tensor:
    """Limit ``input`` to ``[min, max]`` (numbers or tensors; either may be ``None``). NaN
    propagates, and where ``min > max`` the result is ``max``."""
    # (the schema's default max is not passed, as PyTorch's dispatcher shows the call)
    op = _aten_clamp_tensor if _tensor_bounds(min, max) else _aten_clamp
    result = op(input, min) if max is None else op(input, min, max)
    return result if out is None else write_out(out, result)


def clamp_min(input: Tensor, min: Any, *, out: Tensor | None = None) -> Tensor:
    """``clamp(input, min=min)``."""
    return write_out(out, _aten_clamp_min(input, min))


def clamp_max(input: Tensor, max: Any, *, out: Tensor | None = None) -> Tensor:
    """``clamp(input, max=max)``."""
    return write_out(out, _aten_clamp_max(input, max))


def lerp(input: Tensor, end: Tensor, weight: Any, *, out: Tensor | None = None) -> Tensor:
    """Linear interpolation ``input + weight * (end - input)`` (floating dtypes, all alike)."""
    return write_out(out, _lerp_overload(input, end, weight)(input, end, weight))


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1,
            out: Tensor | None = None) -> Tensor:
    """``input + value * tensor1 * tensor2`` with broadcasting."""
    return write_out(out, _aten_addcmul(input, tensor1, tensor2, value=value))


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1,
            out: Tensor | None = None) -> Tensor:
    """``input + value * tensor1 / tensor2`` with broadcasting (not for integer division)."""
    return write_out(out, _aten_addcdiv(input, tensor1, tensor2, value=value))


_MISSING: Any = object()


def where(condition: Tensor, input: Any = _MISSING, other: Any = _MISSING, *,
          out: Tensor | None = None) -> Any:
    """``input`` where ``condition`` holds, else ``other`` (numbers allowed, broadcast).
    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``."""
    if input is _MISSING and other is _MISSING:
        from .indexing import nonzero  # (indexing builds on this module)

        return nonzero(condition, as_tuple=True)
    if input is _MISSING or other is _MISSING:
        raise TypeError("where() takes 1 or 3 arguments (condition, input, other)")
    return write_out(out, _aten_where(condition, input, other))


def _where_method(self: Tensor, condition: Tensor, y: Any) -> Tensor:
    return where(condition, self, y)


_publish(("clamp", "clip"), clamp, torch_inplace=True)
_publish(("clamp_min",), clamp_min, torch_inplace=True)
_publish(("clamp_max",), clamp_max, torch_inplace=True)
def _lerp_scalar_inplace_kernel(self: Tensor, end: Tensor, weight: Any) -> Tensor:
    # lerp_.Tensor takes a number weight too, and backends serve it in place: run that
    return _aten_lerp_(self, end, weight)


# The in-place forms are operators of their own, as PyTorch's: a backend may write `self`
# directly (the CPU's fused kernels do); the composite computes out of place and copies.
_INPLACE = _dispatch.define_aten({
    "lerp_.Tensor": ("lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)",
                     inplace_method(_aten_lerp, "lerp_"), _dispatch.COMPOSITE_IMPLICIT),
    "lerp_.Scalar": ("lerp_.Scalar(Tensor(a!) self, Tensor end, Scalar weight) -> Tensor(a!)",
                     _lerp_scalar_inplace_kernel, _dispatch.COMPOSITE_IMPLICIT),
    "addcmul_": ("addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) "
                 "-> Tensor(a!)", inplace_method(_aten_addcmul, "addcmul_"),
                 _dispatch.COMPOSITE_IMPLICIT),
    "addcdiv_": ("addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) "
                 "-> Tensor(a!)", inplace_method(_aten_addcdiv, "addcdiv_"),
                 _dispatch.COMPOSITE_IMPLICIT),
})
_aten_lerp_, _aten_addcmul_, _aten_addcdiv_ = (
    _INPLACE[name] for name in ("lerp_.Tensor", "addcmul_", "addcdiv_"))


def _lerp_inplace(self: Tensor, end: Tensor, weight: Any) -> Tensor:
    """In-place version of ``lerp``."""
    if _lerp_overload(self, end, weight) is _aten_lerp:
        return _aten_lerp_(self, end, weight)
    return _INPLACE["lerp_.Scalar"](self, end, weight)


def _addcmul_inplace(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In-place version of ``addcmul``."""
    return _aten_addcmul_(self, tensor1, tensor2, value=value)


def _addcdiv_inplace(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In-place version of ``addcdiv``."""
    return _aten_addcdiv_(self, tensor1, tensor2, value=value)


_publish(("lerp",), lerp, inplace=False)
_publish(("addcmul",), addcmul, inplace=False)
_publish(("addcdiv",), addcdiv, inplace=False)
METHODS.update(lerp_=_lerp_inplace, addcmul_=_addcmul_inplace, addcdiv_=_addcdiv_inplace)
FUNCTIONS["where"] = where
METHODS["where"] = _where_method


# -- comparisons that answer for the whole tensor ------------------------------------------


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Whether ``|input - other| <= atol + rtol * |other|`` elementwise (both of one dtype);
    infinities are close only to themselves, NaN only to NaN with ``equal_nan``."""
    _require_tensor(input, "isclose", "input", 1)
    _require_tensor(other, "isclose", "other", 2)
    if input._dtype is not other._dtype:
        raise RuntimeError(f"{scalar_type_name(input._dtype)} did not match "
                           f"{scalar_type_name(other._dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = eq(input, other)
    if equal_nan and _is_float(input):
        close = logical_or(close, logical_and(isnan(input), isnan(other)))
    if rtol == 0 and atol == 0:
        return close
    # integers and bool measure their errors in the default float dtype (no wrapping)
    a, b = to_dtype(input, float_of(input._dtype)), to_dtype(other, float_of(other._dtype))
    allowed = add(abs(mul(b, rtol)), atol)
    actual = abs(sub(a, b))
    # the primitive itself: magnitudes of complex values are real numbers that stay in the
    # complex dtype, which ``le`` refuses to order
    within = run("le", [actual, allowed], actual._dtype, _dtype.bool_)
    return logical_or(close, logical_and(isfinite(actual), within))


def _count_true(t: Tensor) -> int:
    return int(_arith_sum(t).item())


def _arith_sum(t: Tensor) -> Tensor:
    from .arith import sum as _sum

    return _sum(t)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether every element of ``input`` is close to ``other`` (see :func:`isclose`)."""
    close = isclose(input, other, rtol, atol, equal_nan)
    return _count_true(logical_not(close)) == 0


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether both tensors have the same shape and the same values."""
    _require_tensor(input, "equal", "input", 1)
    _require_tensor(other, "equal", "other", 2)
    if input._shape != other._shape:
        return False
    return _count_true(ne(input, other)) == 0


for _fn in (isclose, allclose, equal):
    FUNCTIONS[_fn.__name__] = _fn
    METHODS[_fn.__name__] = _fn


# -- Python operators ----------------------------------------------------------------------


def _operator(fn: Callable[[Tensor, Any], Any]) -> Callable[[Tensor, Any], Any]:
    """``Tensor.__sub__`` and friends: numbers and tensors only, else ``NotImplemented`` (so
    ``t == None`` is ``False`` and ``t < None`` a TypeError, as in Python)."""

    def method(self: Tensor, other: Any) -> Any:
        if not isinstance(other, (Tensor, *_NUMBER)):
            other = numpy_scalar(other)
            if other is NotImplemented:
                return NotImplemented
        return fn(self, other)

    method.__name__ = fn.__name__
    return method


def _reflected(fn: Callable[[Any, Tensor], Any]) -> Callable[[Tensor, Any], Any]:
    """``Tensor.__rsub__`` and friends: ``number <op> tensor``."""

    def method(self: Tensor, other: Any) -> Any:
        if not isinstance(other, _NUMBER):
            other = numpy_scalar(other)
            if other is NotImplemented:
                return NotImplemented
        return fn(other, self)

    return method


def _python_inplace(fn: Callable[..., Tensor], name: str) -> Callable[[Tensor, Any], Any]:
    inner = inplace_method(fn, name)

    def method(self: Tensor, other: Any) -> Any:
        if not isinstance(other, (Tensor, *_NUMBER)):
            return NotImplemented
        return inner(self, other)

    return method


def _invert(self: Tensor) -> Tensor:
    if self._dtype._category > _dtype.INT:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(self)


def _rsub_number(other: Any, self: Tensor) -> Tensor:
    return rsub(self, other)


def _rtruediv(other: Any, self: Tensor) -> Tensor:
    # as PyTorch: number / t is reciprocal(t) * number
    return mul(reciprocal(self), other)


_OPERATORS = {
    # dunder stem: (forward, reflected)
    "sub": (sub, _rsub_number),
    "truediv": (div, _rtruediv),
    "floordiv": (floor_divide, floor_divide),
    "mod": (FUNCTIONS["remainder"], FUNCTIONS["remainder"]),
    "pow": (pow, pow),
    "and": (FUNCTIONS["bitwise_and"], FUNCTIONS["bitwise_and"]),
    "or": (FUNCTIONS["bitwise_or"], FUNCTIONS["bitwise_or"]),
    "xor": (FUNCTIONS["bitwise_xor"], FUNCTIONS["bitwise_xor"]),
    "lshift": (FUNCTIONS["bitwise_left_shift"], FUNCTIONS["bitwise_left_shift"]),
    "rshift": (FUNCTIONS["bitwise_right_shift"], FUNCTIONS["bitwise_right_shift"]),
}
for _stem, (_fwd, _rev) in _OPERATORS.items():
    METHODS[f"__{_stem}__"] = _operator(_fwd)
    METHODS[f"__r{_stem}__"] = _reflected(_rev)
    METHODS[f"__i{_stem}__"] = _python_inplace(_fwd, f"__i{_stem}__")
# The hot path's tiers (torch._core.fast) in front of the common ones. `number / t` is not among
# them: PyTorch computes it as reciprocal(t) * number.
METHODS["__sub__"] = _fast.binary("sub", _aten_sub, METHODS["__sub__"])
METHODS["__rsub__"] = _fast.binary("sub", _aten_rsub, METHODS["__rsub__"], reflected=True)
METHODS["__truediv__"] = _fast.binary("div", _aten_true_div, METHODS["__truediv__"])
for _stem, _name in (("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"),
                     ("ge", "ge")):
    METHODS[f"__{_stem}__"] = _operator(FUNCTIONS[_name])
METHODS.update({
    "__neg__": FUNCTIONS["neg"],
    "__pos__": FUNCTIONS["positive"],
    "__abs__": FUNCTIONS["abs"],
    "__invert__": _invert,
})

globals().update({k: v for k, v in FUNCTIONS.items() if k not in globals()})
# Public functions of torch defined here (the facade serves them lazily).
__all__: list[str] = sorted(FUNCTIONS)
