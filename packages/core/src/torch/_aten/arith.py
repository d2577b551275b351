"""Arithmetic over primitives: the shared work (promotion, broadcasting, output allocation)
done once, then one primitive call with inputs of one dtype already broadcast."""

from __future__ import annotations

from typing import Any

from .._core import (
    config as _config,
    dispatch as _dispatch,
    dtype as _dtype,
    fast as _fast,
    plan as _plan,
)
from .._core.alloc import PRIMS, new_tensor, scalar_tensor
from .._core.device import device as _device
from .._core.output_layout import new_elementwise
from .._core.promotion import NUMBER_TYPES, broadcast_shape_tuples, common_device, result_type
from .._core.tensor import Tensor, plain_tensor_classes as _PLAIN
from .convert import (
    check_castable,
    check_no_partial_overlap,
    copy_,
    to_device,
    to_dtype,
    write_out,
    write_out_of,
)
from .inplace_operators import call_inplace_form

__all__ = ["add", "is_floating_point", "mul", "numel", "sum"]

def scalar_operand(value: Any, dt: _dtype.dtype, dev: _device) -> Tensor:
    """A Python number as a 0-d tensor of ``dt``. An integer beyond an integer dtype's range
    wraps, as PyTorch's arithmetic does with it (``uint8_tensor + 300``)."""
    if dt._category == _dtype.INT and isinstance(value, int) and not isinstance(value, bool):
        bits = 8 * dt.itemsize
        low = -(1 << (bits - 1)) if dt.is_signed else 0
        value = (value - low) % (1 << bits) + low
    return scalar_tensor(value, dt, dev)


def operand(x: Any, dt: _dtype.dtype, dev: _device, shape: tuple[int, ...]) -> Tensor:
    """``x`` (a tensor or a Python number) as a tensor of ``dt`` on ``dev``, broadcast (stride
    0) to ``shape``."""
    if not isinstance(x, Tensor):
        x = scalar_operand(x, dt, dev)
    else:
        if x._dtype is not dt:
            x = to_dtype(x, dt)
        if x._device is not dev and x._device != dev:
            x = to_device(x, dev)
    # lengths first: a tuple comparison of different lengths compares the leading sizes
    # (a symbolic size against a constant would record a guard that specialises it)
    return x if len(x._shape) == len(shape) and x._shape == shape else x.expand(shape)


_operand = operand


def _binary(prim: _dispatch.Operator, a: Any, b: Any) -> Tensor:
    if not isinstance(a, Tensor):
        raise TypeError(f"{prim.name}(): argument 'input' must be Tensor, not "
                        f"{type(a).__name__}")
    if not isinstance(b, (Tensor, *NUMBER_TYPES)):
        raise TypeError(f"{prim.name}(): argument 'other' must be Tensor or Number, not "
                        f"{type(b).__name__}")
    dt = result_type(a, b)
    tensors = [a, b] if isinstance(b, Tensor) else [a]
    dev = common_device(tensors)
    shape = broadcast_shape_tuples(a._shape, b._shape) if isinstance(b, Tensor) else a._shape
    # follow a strided input
    if a._interned_layout is None or (len(tensors) == 2 and b._interned_layout is None):
        out = new_elementwise(shape, dt, dev, tensors)
    else:
        out = new_tensor(shape, dt, dev)
    prim(out, _operand(a, dt, dev, shape), _operand(b, dt, dev, shape))
    if _plan.recording is not None:  # the dispatcher is planning this call
        _plan.note(prim.name, [a, b], dt, dt, {}, out)
    return out


def _apply_alpha(other: Any, alpha: Any, input: Tensor) -> Any:
    if isinstance(alpha, bool) and result_type(input, other) is not _dtype.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if alpha == 1 and not isinstance(alpha, float):
        return other
    if isinstance(alpha, float) and not (input._dtype.is_floating_point or input._dtype.is_complex):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if isinstance(other, Tensor):
        return _binary(PRIMS.mul, other, alpha)
    return other * alpha


def _add_kernel(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    return _binary(PRIMS.add, self, _apply_alpha(other, alpha, self))


def _mul_kernel(self: Tensor, other: Any) -> Tensor:
    return _binary(PRIMS.mul, self, other)


def _define_aten() -> dict[str, _dispatch.Operator]:
    table = {
        "add.Tensor": ("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                       _add_kernel),
        "mul.Tensor": ("mul.Tensor(Tensor self, Tensor other) -> Tensor", _mul_kernel),
    }
    return _dispatch.define_aten(table)


ATEN = _define_aten()
_plan.enable(ATEN["add"], ATEN["mul"])  # kernels decided by the call signature alone
_aten_add, _aten_mul = ATEN["add"], ATEN["mul"]
# Declared here, where sum() is; its kernel is torch._aten.reductions' (one kernel per op and key).
_aten_sum = _dispatch.define("aten::sum.dim_IntList",
                             "sum.dim_IntList(Tensor self, int[1]? dim=None, "
                             "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")


def add(input: Tensor, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """``input + alpha * other`` with broadcasting and type promotion."""
    # (the schema's default is not passed: see sub)
    if alpha.__class__ is int and alpha == 1:
        if out is None:
            return _aten_add(input, other)
        return write_out_of(_aten_add, out, input, other)
    result = _aten_add(input, other, alpha=alpha)
    return result if out is None else write_out(out, result)


def mul(input: Tensor, other: Any, *, out: Tensor | None = None) -> Tensor:
    """``input * other`` with broadcasting and type promotion."""
    if out is None:
        return _aten_mul(input, other)
    return write_out_of(_aten_mul, out, input, other)


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *,
        dtype: _dtype.dtype | None = None, out: Tensor | None = None) -> Tensor:
    """Sum over ``dim`` (all dims by default); integer and bool inputs sum to int64."""
    if not isinstance(input, Tensor):
        raise TypeError(f"sum(): argument 'input' must be Tensor, not {type(input).__name__}")
    return write_out(out, _aten_sum(input, dim, keepdim, dtype=dtype))


# Public binary functions whose in-place forms may run their primitive straight into ``self``
# (function -> primitive name; the op modules add theirs before making the in-place forms).
DIRECT_PRIMS: dict[Any, str] = {}
# The keyword a direct in-place call may carry, per primitive, and the value it may take
# (None: any number; alpha scales ``other`` first, as the out-of-place kernel does).
_DIRECT_KWARGS: dict[str, tuple[str, Any]] = {"add": ("alpha", None), "sub": ("alpha", None),
                                              "div": ("rounding_mode", "none")}
_state = _config.state
_NUMBERS = (int, float, bool)
_NUMBER_MIN = 4096  # elements: the smallest self a number operand is written straight into


# In-place plans: (primitive, self's interned layout, other's interned layout, or its class
# and value) -> the backend's native call writing ``self <prim> other`` into self's memory
# (``FastPath.prepare_into``) with everything the signature decides bound (the dtype rule,
# the broadcast of ``other`` to self's shape, the kernel nobody overrode), or False: the
# signature takes the unplanned route below. Dropped on every kernel (un)registration.
_inplace_plans: dict[Any, Any] = {}
_MAX_INPLACE_PLANS = 512  # (numbers are keyed by value: a loop over changing values is capped)
_dispatch.on_invalidate.append(_inplace_plans.clear)


def _inplace_plan(prim_name: str, lay: Any, other: Any) -> Any:
    """The native in-place call for ``self`` of layout ``lay`` and ``other`` (a tensor of an
    interned layout or a Python number), or False when the signature is not planned."""
    fast = lay.fast
    into = None if fast is None else getattr(fast, "prepare_into", None)
    if into is None or not lay.dtype.is_floating_point or \
            lay.dtype not in fast.dtype_codes or \
            _dispatch.registered(getattr(PRIMS, prim_name).resolve(lay.runtime.dispatch_key)) \
            is not fast.kernels.get(prim_name):
        return False
    keep = None
    if other.__class__ is Tensor:
        olay = other._interned_layout
        if olay.dtype is not lay.dtype or olay.device is not lay.device:
            return False
        try:
            if broadcast_shape_tuples(lay.shape, olay.shape) != lay.shape:
                return False
        except RuntimeError:
            return False
        strides = _fast._expanded(olay, lay.shape)
    else:
        # the 0-d operand the general path makes of the number, kept for every call
        keep = scalar_operand(other, lay.dtype, lay.device)
        strides = [0] * len(lay.shape)
    native = into(prim_name, fast.dtype_codes[lay.dtype], lay.shape, strides)
    if native is None:
        return False
    if keep is None:
        return native
    ptr = keep._storage._ptr

    def with_number(out: int, _: Any, _keep: Tensor = keep) -> bool:  # (keeps it alive)
        return native(out, ptr)
    return with_number


def _write_into(self: Tensor, prim_name: str, other: Any, kwargs: dict[str, Any]) -> Any:
    """``self <prim>= other`` run straight into ``self``'s memory, one pass, when nothing else
    has to see the call: a plain contiguous floating ``self`` already of the result's dtype and
    shape, ``other`` a number or a tensor of that dtype and device that broadcasts to it and does
    not partly overlap it, no graph to record, no dispatch mode. None: the general path (compute,
    then copy) serves the call, with its checks and errors."""
    lay = self._interned_layout
    # (modes_active: a dispatch mode or autocast region sees every call; __torch_dispatch__
    # subclasses, which keep keys_active up once defined, are not among the plain classes)
    if self.__class__ not in _PLAIN or _state.modes_active or lay is None or \
            _state.inference_active or "_inference" in self.__dict__:
        return None
    if not kwargs:
        # The planned call: a contiguous self and a contiguous tensor or a number, no graph.
        cls = other.__class__
        if cls is Tensor or cls in _PLAIN:  # (nn.Parameter is a plain tensor here)
            olay = other._interned_layout
            if olay is not None:
                if (self._requires_grad or other._requires_grad) and (
                        not _state.no_grad_active or _config._local.grad):
                    return None  # a graph to record: the general path
                if other._storage is self._storage and olay is not lay:
                    return None  # overlapping memory: the general path decides
                key = (prim_name, lay, olay)
                plan = _inplace_plans.get(key)
                if plan is None:
                    plan = _new_inplace_plan(key, prim_name, lay, other)
                if plan and plan(self._storage._ptr, other._storage._ptr):
                    self._vc[0] += 1
                    return self
        elif cls is float or cls is int:  # (a bool keeps sub's error: the general path)
            if self._requires_grad and (not _state.no_grad_active or _config._local.grad):
                return None
            key = (prim_name, lay, cls, other)
            plan = _inplace_plans.get(key)
            if plan is None:
                plan = _new_inplace_plan(key, prim_name, lay, other)
            if plan and plan(self._storage._ptr, None):
                self._vc[0] += 1
                return self
    dt = self._dtype
    if not dt.is_floating_point:
        return None  # (integer wrapping and division keep the general path)
    alpha: Any = 1
    if kwargs:
        allowed = _DIRECT_KWARGS.get(prim_name)
        if allowed is None or len(kwargs) != 1 or allowed[0] not in kwargs:
            return None
        value = kwargs[allowed[0]]
        if allowed[1] == "none":
            if value is not None:
                return None
        elif value.__class__ is int or value.__class__ is float:
            alpha = value
        else:
            return None
    grad = not _state.no_grad_active or _config._local.grad
    if grad and self._requires_grad:
        return None
    cls = other.__class__
    if cls is Tensor or cls in _PLAIN:
        if other._dtype is not dt or other._device is not self._device or (
                grad and other._requires_grad):
            return None
        if other._shape != self._shape:
            try:
                if broadcast_shape_tuples(self._shape, other._shape) != self._shape:
                    return None
            except RuntimeError:
                return None
        if other._storage is self._storage and (other._offset != self._offset
                                                or other._stride != self._stride):
            return None  # a partial overlap: the general path computes out of place first
        if alpha.__class__ is float or alpha != 1:
            other = mul(other, alpha)  # (a planned call, as the out-of-place kernel scales it)
    elif cls in _NUMBERS:
        # A number becomes a 0-d tensor first: below this size the planned out-of-place call
        # and the copy are fewer Python steps than that, above it the single pass wins.
        if alpha.__class__ is float or alpha != 1 or self._interned_layout.numel < _NUMBER_MIN:
            return None
    else:
        return None
    getattr(PRIMS, prim_name)(self, self, operand(other, dt, self._device, self._shape))
    self._vc[0] += 1
    return self


def _new_inplace_plan(key: tuple[Any, ...], prim_name: str, lay: Any, other: Any) -> Any:
    if len(_inplace_plans) >= _MAX_INPLACE_PLANS:
        _inplace_plans.clear()
    plan = _inplace_plans[key] = _inplace_plan(prim_name, lay, other)
    return plan


def through_inplace_operator(op: Any, self: Tensor, args: tuple[Any, ...],
                             kwargs: dict[str, Any]) -> Tensor | None:
    """``self`` written with ``op(self, *args, **kwargs)`` by the in-place aten operator a
    dispatch mode or ``__torch_dispatch__`` subclass is to see (``aten::add_.Tensor``, as
    PyTorch's), when the call would reach the Python key; None otherwise (the caller computes
    out of place and copies)."""
    if not _dispatch.python_key_active((self, *args), kwargs):
        return None
    return call_inplace_form(op, self, args, kwargs)


def inplace_method(op: Any, name: str | None = None) -> Any:
    """The in-place form of ``op`` (``Tensor.sub_``, ``__isub__``...): compute out of place,
    then write into ``self``, which must be able to hold the result's dtype and shape
    (in-place ops never broadcast ``self``). The binary arithmetic of :data:`DIRECT_PRIMS`
    writes straight into ``self`` where :func:`_write_into` allows."""
    direct = DIRECT_PRIMS.get(op)

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if direct is not None and len(args) == 1:
            done = _write_into(self, direct, args[0], kwargs)
            if done is not None:
                return done
        if _state.keys_active:
            done = through_inplace_operator(op, self, args, kwargs)
            if done is not None:
                return done
        # (written out rather than through inplace_operators' helpers: the common path)
        for a in args:
            if a.__class__ is Tensor or isinstance(a, Tensor):
                check_no_partial_overlap(self, a)
        result = op(self, *args, **kwargs)
        if result._shape != self._shape:
            raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the "
                               f"broadcast shape {list(result._shape)}")
        check_castable(result._dtype, self._dtype)
        return copy_(self, result)

    method.__name__ = method.__qualname__ = name or f"{getattr(op, '__name__', 'op')}_"
    method.__doc__ = f"In-place version of ``{getattr(op, '__name__', 'op')}``."
    return method


DIRECT_PRIMS.update({add: "add", mul: "mul"})


def numel(input: Tensor) -> int:
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    return input._dtype.is_floating_point
