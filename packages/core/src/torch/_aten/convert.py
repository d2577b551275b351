"""Moving values between dtypes, devices and the host: ``copy_``, ``to``, ``clone``,
``fill_``, ``numpy()``, ``tolist()``, ``item()``, and ``out=`` handling."""

from __future__ import annotations

import struct as _struct
import warnings
from typing import Any

import numpy as np

from .. import _refs
from .._core import (
    config as _config,
    dispatch as _dispatch,
    dtype as _dtype,
    layout as _layout,
    plan as _plan,
    storage as _storage,
    upcalls,
)
from .._core.alloc import PRIMS, _is_non_overlapping_and_dense, check_dtype, new_like, new_tensor
from .._core.device import INDEXLESS, device as _device
from .._core.tensor import Tensor, check_no_internal_overlap, storage_extent

__all__ = ["clone", "is_nonzero"]

def check_castable(result: _dtype.dtype, out: _dtype.dtype) -> None:
    """PyTorch's rule for writing a result into an existing tensor (``out=``, in-place ops)."""
    if not _dtype.can_cast(result, out):
        raise RuntimeError(f"result type {scalar_type_name(result)} can't be cast to the "
                           f"desired output type {scalar_type_name(out)}")


def write_out(out: Tensor | None, result: Tensor) -> Tensor:
    """``out=`` handling: resize an empty ``out`` or require the result's shape, then copy."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"out must be a Tensor, not {type(out).__name__}")
    check_castable(result._dtype, out._dtype)
    if out._shape != result._shape:
        if out.numel() != 0:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._shape)}, which does not match the required output shape "
                f"{list(result._shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).", UserWarning, stacklevel=_config.external_stacklevel())
        fresh = new_tensor(result._shape, out._dtype, out._device)
        out._storage, out._shape, out._stride, out._offset = (
            fresh._storage, fresh._shape, fresh._stride, 0)
        out._interned_layout = None  # the layout changed: no stale fast-path key
    copy_(out, result)
    return out


def write_out_of(op: _dispatch.Operator, out: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``op(*args, **kwargs)`` into ``out`` (an elementwise operator's ``out=``): PyTorch's
    checks first (no graph through an out= call, no partial overlap between ``out`` and an
    input), then the op's one launch straight into ``out`` where its plan allows
    (``plan.call_out``), else the result computed and copied (:func:`write_out`)."""
    if isinstance(out, Tensor):
        grad = not _state.no_grad_active or _config._local.grad
        for a in args:
            if isinstance(a, Tensor):
                if grad and a._requires_grad:
                    _out_grad_error(op)
                if a._storage is out._storage:
                    check_no_partial_overlap(out, a)
        if grad and out._requires_grad:
            _out_grad_error(op)
        done = _plan.call_out(op, args, kwargs, out, write_out)
        if done is not None:
            return done
    return write_out(out, op(*args, **kwargs))


def _out_grad_error(op: _dispatch.Operator) -> None:
    raise RuntimeError(f"{op._opname}(): functions with out=... arguments don't support "
                       "automatic differentiation, but one of the arguments requires grad.")


def scalar_type_name(dt: _dtype.dtype) -> str:
    """PyTorch's ScalarType name, used in its error messages."""
    return _SCALAR_TYPE_NAMES[dt._name]


_SCALAR_TYPE_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
    "int64": "Long", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
    "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def _host_copy(src: Tensor) -> Tensor:
    """A CPU tensor with ``src``'s values, shape, dtype and strides (a view if ``src`` already
    lives in host memory)."""
    st = src._storage
    size = src._dtype.itemsize
    cpu = _storage._normalise("cpu")
    if st._host is not None:
        if src._device.type == "cpu":
            return src
        # host-accessible device memory: view it in place (a CPU storage over the host view,
        # whatever allocator the CPU has: its handles are not this backend's)
        host_st = _storage.wrap_host(st._host)
        return Tensor._make(host_st, src._shape, src._stride, src._offset, src._dtype, cpu)
    if src.numel() == 0:
        return new_tensor(src._shape, src._dtype, cpu)
    # Copy the smallest byte span that covers every element, then view it with src's strides.
    span = storage_extent(src._shape, src._stride)
    raw = _storage.read_bytes(st, src._offset * size, span * size)
    host_st = _storage.allocate(span * size, cpu)
    host_st._host[:] = raw
    return Tensor._make(host_st, src._shape, src._stride, 0, src._dtype, cpu)


_state = _config.state


def _copy_plan(lay: Any) -> Any:
    """The backend's native copy between two blocks of interned layout ``lay``
    (``FastPath.prepare_into("copy", ...)``, a function of the two addresses), or False:
    ``PRIMS.copy_`` serves such copies. Cached on the layout, which drops it on every kernel
    registration; not taken once a library has overridden the backend's copy."""
    plan = lay.fast_plans.get("copy_into")
    if plan is None:
        plan = False
        into = getattr(lay.fast, "prepare_into", None)
        if into is not None and lay.numel and _dispatch.registered(
                PRIMS.copy_.resolve(lay.runtime.dispatch_key)) is lay.fast.kernels.get("copy_"):
            plan = into("copy", lay.dcode, lay.shape, lay.stride) or False
        lay.fast_plans["copy_into"] = plan
    return plan


def _native_copy(dst: Tensor, src: Tensor) -> bool:
    """Copy between two plain contiguous tensors of one interned layout (an out= result into
    its out, a plain ``copy_``) by the backend's one native call, where it has one (one lookup
    otherwise), outside dispatch modes. False: nothing done, the copy primitive serves it."""
    lay = dst._interned_layout
    if lay is None or src._interned_layout is not lay or lay.fast is None or \
            dst.__class__ is not Tensor or src.__class__ is not Tensor or _state.modes_active:
        return False
    plan = _copy_plan(lay)
    size = lay.dtype.itemsize
    return bool(plan) and bool(plan(dst._storage._ptr + dst._offset * size,
                                    src._storage._ptr + src._offset * size))


def _move(dst: Tensor, src: Tensor) -> None:
    """Write ``src``'s values (already of ``dst``'s shape) into ``dst``, casting dtype and
    crossing devices as needed."""
    if src._device == dst._device:
        if not _native_copy(dst, src):
            PRIMS.copy_(dst, src)
    elif dst._device.type == "cpu" or dst._storage._host is not None:
        PRIMS.copy_(dst, _host_copy(src)) if dst._device.type == "cpu" else (
            PRIMS.copy_(_host_copy(dst), _host_copy(src)))
    else:
        # To a device: stage a contiguous host tensor of dst's dtype, upload it, and let the
        # device's own copy primitive place it if dst is strided.
        staged = new_tensor(dst._shape, dst._dtype, _storage._normalise("cpu"))
        PRIMS.copy_(staged, _host_copy(src))
        target = dst if dst.is_contiguous() else new_tensor(dst._shape, dst._dtype, dst._device)
        _storage.write_bytes(target._storage, target._offset * dst._dtype.itemsize,
                             _refs.np_view(staged).reshape(-1).view(np.uint8))
        if target is not dst:
            PRIMS.copy_(dst, target)


def check_no_partial_overlap(out: Tensor, arg: Tensor) -> None:
    """Refuse an in-place op whose operand ``arg`` shares some, but not all, of the memory it
    writes (``base[1:5].add_(base[:4])``): PyTorch raises rather than pick an order for the
    writes. As in PyTorch only the sure case is checked: two dense layouts (each tiles one
    block) whose blocks intersect, unless they are the same block in the same order (a tensor
    and itself, or another view of it with its strides); ``a.add_(a.t())`` is refused too."""
    if arg is out or arg._storage is not out._storage:
        return
    if 0 in out._shape or 0 in arg._shape:
        return
    if not (_is_non_overlapping_and_dense(out) and _is_non_overlapping_and_dense(arg)):
        return
    out_start = out._offset * out._dtype.itemsize
    arg_start = arg._offset * arg._dtype.itemsize
    out_end = out_start + out.numel() * out._dtype.itemsize
    arg_end = arg_start + arg.numel() * arg._dtype.itemsize
    same_block = (out_start, out_end) == (arg_start, arg_end)
    if (same_block and out._stride != arg._stride) or (
            not same_block and out_start < arg_end and arg_start < out_end):
        raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                           "written-to tensor refer to a single memory location. Please clone() "
                           "the tensor before performing the operation.")


def _copy_kernel(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    if src._storage is self._storage:
        check_no_partial_overlap(self, src)
    if src._shape != self._shape:
        src = src.expand(self._shape)
    if 0 in self._stride:
        check_no_internal_overlap(self)
    if "_inference" in self.__dict__ and not _config.is_inference_mode_enabled():
        _inference_write_error()
    _move(self, src)
    self._vc[0] += 1
    return self


def _to_copy_kernel(self: Tensor, *, dtype: _dtype.dtype | None = None, layout: Any = None,
                    device: Any = None, pin_memory: bool | None = None,
                    non_blocking: bool = False, memory_format: Any = None) -> Tensor:
    dt = self._dtype if dtype is None else dtype
    dev = self._device if device is None else _storage._normalise(device)
    out = new_like(self, dt, dev, memory_format)
    if out.numel():
        _move(out, self)
        if _plan.recording is not None and dev == self._device:  # planning: one cast
            _plan.note("copy_", [self], self._dtype, dt, {}, out)
    return out


def _clone_kernel(self: Tensor, *, memory_format: Any = None) -> Tensor:
    out = new_like(self, self._dtype, self._device, memory_format)
    if out.numel():
        PRIMS.copy_(out, self)
        if _plan.recording is not None:  # the dispatcher is planning this call: one copy
            _plan.note("copy_", [self], self._dtype, self._dtype, {}, out)
    return out


def _contiguous_kernel(self: Tensor, *, memory_format: Any = None) -> Tensor:
    fmt = _layout.contiguous_format if memory_format is None else memory_format
    if self.is_contiguous(fmt):
        return self
    return ATEN["clone"](self, memory_format=fmt)


def _to_kernel(self: Tensor, *, dtype: _dtype.dtype | None = None, layout: Any = None,
               device: Any = None, pin_memory: bool | None = None, non_blocking: bool = False,
               copy: bool = False, memory_format: Any = None) -> Tensor:
    dt = self._dtype if dtype is None else dtype
    dev = self._device if device is None else _storage._normalise(device)
    if (dt is self._dtype and dev == self._device and not copy
            and (memory_format in (None, _layout.preserve_format)
                 or self.is_contiguous(memory_format))):
        return self
    return ATEN["_to_copy"](self, dtype=dt, device=dev, non_blocking=non_blocking,
                            memory_format=memory_format)


# The struct format of one element, by dtype: ``item()`` of a host tensor reads its one value
# straight from the storage's bytes (a bounds-checked read, 1 µs), where a numpy view of it
# cost 8. Other dtypes (bfloat16, complex, the float8s) take the numpy path.
_ITEM_FORMATS = {
    _dtype.float32: "=f", _dtype.float64: "=d", _dtype.float16: "=e", _dtype.int64: "=q",
    _dtype.int32: "=i", _dtype.int16: "=h", _dtype.int8: "=b", _dtype.uint8: "=B",
    _dtype.bool_: "=?",
}


def _local_scalar_dense_kernel(self: Tensor) -> Any:
    n = self.numel()
    if n != 1:
        raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
    host = self._storage._host
    fmt = _ITEM_FORMATS.get(self._dtype)
    if fmt is not None and host is not None and self._device.type == "cpu":
        return _struct.unpack_from(fmt, host, self._offset * self._dtype.itemsize)[0]
    return _host_values(self).reshape(()).item()


def _is_nonzero_kernel(self: Tensor) -> bool:
    n = self.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(ATEN["_local_scalar_dense"](self))


_IMPLICIT = _dispatch.COMPOSITE_IMPLICIT
ATEN = _dispatch.define_aten({
    "copy_": ("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
              _copy_kernel),
    "_to_copy": ("_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
                 "Device? device=None, bool? pin_memory=None, bool non_blocking=False, "
                 "MemoryFormat? memory_format=None) -> Tensor", _to_copy_kernel),
    "clone": ("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
              _clone_kernel),
    "_local_scalar_dense": ("_local_scalar_dense(Tensor self) -> Scalar",
                            _local_scalar_dense_kernel),
    # written in the operators above
    "contiguous": ("contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format)"
                   " -> Tensor(a)", _contiguous_kernel, _IMPLICIT),
    "to.dtype_layout": ("to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, "
                        "Layout? layout=None, Device? device=None, bool? pin_memory=None, "
                        "bool non_blocking=False, bool copy=False, "
                        "MemoryFormat? memory_format=None) -> Tensor(a)", _to_kernel, _IMPLICIT),
    "is_nonzero": ("is_nonzero(Tensor self) -> bool", _is_nonzero_kernel, _IMPLICIT),
})


class MetaValueError(RuntimeError):
    """A meta tensor's value was asked for (``item()``, ``bool()``): PyTorch's RuntimeError,
    a class of its own so that a fake tensor mode can tell it apart."""


def _local_scalar_dense_meta(self: Tensor) -> Any:
    raise MetaValueError("Tensor.item() cannot be called on meta tensors")


ATEN["_local_scalar_dense"].register(_dispatch.META, _local_scalar_dense_meta)
_COPY = ATEN["copy_"]
_TO_COPY = ATEN["_to_copy"]
_CLONE = ATEN["clone"]
# clone's result is a function of its signature (one copy into a new tensor of the input's
# format): a plan replays it as the backend's strided copy. So is _to_copy's on one device (a
# cast: `x.double()`, `x.to(torch.float16)`); a copy across devices notes nothing and keeps
# running its kernel.
_plan.enable(_CLONE, _TO_COPY)


def _copy_direct(dst: Tensor, src: Tensor) -> bool:
    """Copy ``src`` into ``dst`` by the backend's native copy when nothing but the values can
    differ from the dispatched ``copy_``: two plain tensors of one interned (contiguous)
    layout in distinct blocks, neither requiring grad (no graph), no dispatch mode or inference
    mode, ``dst`` not an inference tensor. Bumps ``dst``'s version as ``copy_`` does. False:
    nothing done, the dispatched ``copy_`` serves the call (an ``out=`` result lands here)."""
    if (dst._interned_layout is None or _state.inference_active
            or dst._requires_grad or src._requires_grad or src._storage is dst._storage
            or "_inference" in dst.__dict__ or not _native_copy(dst, src)):
        return False
    dst._vc[0] += 1
    return True


def copy_(dst: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast to ``dst``'s shape) into ``dst``, casting dtype and crossing
    devices as needed. In place; bumps ``dst``'s version."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    if _copy_direct(dst, src):
        return dst
    if src._device != dst._device and (src._shape or src._device.type != "cpu"):
        # across devices: first to dst's device (an operator of its own, as the dispatcher
        # runs an op on one device; a 0-d CPU tensor mixes with any device)
        src = _TO_COPY(src, device=dst._device)
    return _COPY(dst, src, non_blocking)


def _inference_write_error() -> None:
    raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                       "allowed. You can make a clone to get a normal tensor before doing "
                       "inplace update.")


def to_device(t: Tensor, device: Any) -> Tensor:
    """``t`` on ``device`` (``t`` itself when it is already there)."""
    dev = device if isinstance(device, _device) and (
        device.index is not None or device.type in INDEXLESS) else (
        _storage._normalise(device))
    if t._device == dev:
        return t
    return _TO_COPY(t, device=dev)


def to_dtype(t: Tensor, dt: _dtype.dtype, copy: bool = False) -> Tensor:
    if t._dtype is dt and not copy:
        return t
    return _TO_COPY(t, dtype=dt, memory_format=_layout.preserve_format)


_TO_KW = ("device", "dtype", "non_blocking", "copy", "memory_format")


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``to(dtype)``, ``to(device[, dtype])``, ``to(other)``, plus ``non_blocking``/``copy``."""
    unknown = set(kwargs) - set(_TO_KW)
    if unknown:
        raise TypeError(f"to() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    non_blocking = kwargs.get("non_blocking", False)
    copy = kwargs.get("copy", False)
    memory_format = kwargs.get("memory_format")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        device, dtype = other._device, other._dtype
    elif rest and (isinstance(rest[0], _dtype.dtype)
                   or (isinstance(rest[0], type) and rest[0] in _dtype.PYTHON_TYPES)):
        dtype = rest.pop(0)
    elif rest and (rest[0] is None or (isinstance(rest[0], (str, _device, int))
                                       and not isinstance(rest[0], bool))):
        # to(device=None, dtype=None, ...) positionally: `t.to(None)` is `t` (Hugging Face's
        # models call `.to(device)` with a device that may be None)
        device = rest.pop(0)
        if rest and (rest[0] is None or isinstance(rest[0], _dtype.dtype)
                     or (isinstance(rest[0], type) and rest[0] in _dtype.PYTHON_TYPES)):
            dtype = rest.pop(0)
    if rest:  # trailing non_blocking, copy
        if not all(isinstance(x, bool) for x in rest) or len(rest) > 2:
            raise TypeError(f"to() received an invalid combination of arguments: "
                            f"{tuple(type(a).__name__ for a in args)}")
        non_blocking = rest[0]
        if len(rest) == 2:
            copy = rest[1]
    # aten::to.dtype_layout's decomposition, here without its dispatch: self, or _to_copy
    dt = check_dtype(dtype) or self._dtype
    dev = self._device if device is None else _storage._normalise(device)
    if (dt is self._dtype and dev == self._device and not copy
            and (memory_format in (None, _layout.preserve_format)
                 or self.is_contiguous(memory_format))):
        return self
    if device is None:  # (the device is passed when one was asked for, as PyTorch's to())
        return _TO_COPY(self, dtype=dt, non_blocking=non_blocking, memory_format=memory_format)
    return _TO_COPY(self, dtype=dt, device=dev, non_blocking=non_blocking,
                    memory_format=memory_format)


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy with its own storage (keeping a dense layout's strides, as PyTorch does)."""
    return _CLONE(input, memory_format=memory_format)


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """``self`` if it is laid out densely in ``memory_format`` (row-major by default), else a
    copy that is."""
    if memory_format is None or memory_format is _layout.contiguous_format:
        # the common case, checked here with no dispatch: an interned layout is row-major, a
        # current interned geometry knows whether it is
        if self._interned_layout is not None:
            return self
        geo = self._geometry
        if geo is not None and geo.shape is self._shape and geo.stride is self._stride:
            if geo.contiguous:
                return self
        elif self.is_contiguous():
            return self
        fmt = _layout.contiguous_format
    else:
        fmt = memory_format
        if self.is_contiguous(fmt):
            return self
    return _CLONE(self, memory_format=fmt)


def _fill_kernel(self: Tensor, value: Any) -> Tensor:
    """``aten::fill_`` (both overloads): fill ``self`` with ``value`` (a number or a
    one-element tensor). In place."""
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.dim()} dimensions.")
        if 0 in self._stride:  # PyTorch fills from a tensor through copy_, which checks
            check_no_internal_overlap(self)
        value = value.item()
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"fill_(): argument 'value' must be Number, not {type(value).__name__}")
    if isinstance(value, complex) and not self._dtype.is_complex:
        raise RuntimeError(f"value cannot be converted to type {self._dtype._name} without "
                           "overflow")
    if "_inference" in self.__dict__ and not _config.is_inference_mode_enabled():
        _inference_write_error()
    # autograd records the write (after its checks) when the tensor or its base requires grad
    recorded = (self._requires_grad or self._base is not None) and \
        upcalls.inplace_begin(self, None)
    PRIMS.fill_(self, value)
    self._vc[0] += 1
    if recorded:
        upcalls.inplace_end(self, None)
    return self


def _zero_kernel(self: Tensor) -> Tensor:
    return _fill_kernel(self, 0)


def fill_(self: Tensor, value: Any) -> Tensor:
    """Fill ``self`` with ``value`` (a number or a one-element tensor). In place.

    A plain tensor outside dispatch modes runs the kernel directly (the write is one
    primitive); a mode or a tensor subclass sees PyTorch's ``aten::fill_.Scalar`` /
    ``aten::fill_.Tensor``."""
    if self.__class__ is Tensor and not _state.modes_active and value.__class__ is not Tensor:
        return _fill_kernel(self, value)
    op = _FILL_TENSOR if isinstance(value, Tensor) else _FILL_SCALAR
    return op(self, value)


def zero_(self: Tensor) -> Tensor:
    """Fill ``self`` with zeros. In place (``aten::zero_`` under a mode or for a subclass)."""
    if self.__class__ is Tensor and not _state.modes_active:
        return _fill_kernel(self, 0)
    return _ZERO(self)


_FILL_OPS = _dispatch.define_aten({
    "fill_.Scalar": ("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", _fill_kernel),
    "fill_.Tensor": ("fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)", _fill_kernel),
    "zero_": ("zero_(Tensor(a!) self) -> Tensor(a!)", _zero_kernel),
})
_FILL_SCALAR, _FILL_TENSOR, _ZERO = (_FILL_OPS["fill_.Scalar"], _FILL_OPS["fill_.Tensor"],
                                     _FILL_OPS["zero_"])


def numpy(self: Tensor, *, force: bool = False) -> np.ndarray:
    """A numpy array sharing memory with this CPU tensor."""
    if force:
        self = to_device(self.detach(), "cpu")
    if self._device.type != "cpu":
        raise TypeError(f"can't convert {self._device.type}:{self._device.index or 0} device type "
                        "tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
                        "first.")
    if self._requires_grad and _config.is_grad_enabled():  # (under no_grad it may, as PyTorch)
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")
    if self._dtype is _dtype.bfloat16:
        raise TypeError("Got unsupported ScalarType BFloat16")
    return _refs.np_view(self)


def _host_values(self: Tensor) -> np.ndarray:
    host = _host_copy(self)
    values = _refs.np_view(host)
    return _refs.bf16_to_f32(values) if self._dtype is _dtype.bfloat16 else values


def tolist(self: Tensor) -> Any:
    """The values as (nested) Python numbers."""
    return _host_values(self).tolist()


def item(self: Tensor) -> Any:
    """The value of a one-element tensor as a Python number."""
    return ATEN["_local_scalar_dense"](self)


def is_nonzero(input: Tensor) -> bool:
    """Whether a one-element tensor's value is nonzero (``bool(t)``)."""
    return ATEN["is_nonzero"](input)


def view_dtype(t: Tensor, dt: _dtype.dtype) -> Tensor:
    """``t.view(dt)``: the same bytes read as ``dt`` (an operator: ``aten::view.dtype``)."""
    return t.view(dt)


# What core calls up into: the CPU fallback's copies, and outputs that follow their inputs' layout.
upcalls.install(to_device=to_device, host_copy=_host_copy, copy_=copy_)
