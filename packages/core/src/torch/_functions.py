"""The op surface of the foundation: creation, copies across devices and dtypes, and the
first arithmetic (``add``, ``mul``, ``sum``) that proves the dispatch path end to end.

Core does the shared work once here (argument parsing, type promotion, broadcasting, output
allocation) and hands primitives outputs plus inputs of one dtype, already broadcast. Loaded on
first use (it imports numpy); it binds itself into :mod:`torch._tensor` as ``_F``.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np

from . import _config, _dispatch, _dtype, _layout, _refs, _storage, _tensor
from ._device import device as _device
from ._tensor import Size, Tensor, _shape_arg, contiguous_strides, storage_extent, wrap_dim
from .backends import _registry

__all__ = [
    "add", "broadcast_shapes", "can_cast", "clone", "empty", "empty_like", "empty_strided", "full",
    "full_like", "is_floating_point", "is_nonzero", "mul", "numel", "ones", "ones_like",
    "promote_types", "result_type", "sum", "tensor", "zeros", "zeros_like",
]


class _Prims:
    """``prims::<name>`` operators by attribute, resolved once."""

    def __getattr__(self, name: str) -> _dispatch.Operator:
        op = _dispatch.get(f"prims::{name}")
        if op is None:
            raise AttributeError(f"no primitive named {name!r}")
        setattr(self, name, op)
        return op


P = _Prims()


# -- helpers -------------------------------------------------------------------------------


def _default_device() -> _device:
    return _config.get_default_device()


def _device_of(device: Any) -> _device:
    return _storage._normalise(device if device is not None else _default_device())


class Layout:
    """An interned contiguous (shape, dtype, device): what allocating such a tensor needs, and
    the fast paths' key. Tensors made by :func:`new_tensor` carry theirs in the ``_fk`` slot,
    so "same layout" is one identity test (DESIGN.md §4, "Hot path")."""

    __slots__ = ("_epoch", "_kernels", "device", "dtype", "index", "nbytes", "runtime",
                 "shape", "stride")

    def __init__(self, shape: tuple[int, ...], dt: _dtype.dtype, dev: _device) -> None:
        numel = 1
        for s in shape:
            numel *= s
        self.shape = Size(shape)
        self.stride = contiguous_strides(shape)
        self.dtype = dt
        self.device = dev
        self.nbytes = numel * dt.itemsize
        self.runtime = _registry.runtime(dev.type)
        self.index = dev.index or 0
        self._kernels: dict[str, Any] = {}
        self._epoch = -1

    def kernel(self, prim: str) -> Any:
        """The kernel this layout's device runs for primitive ``prim`` (cached until the next
        registration anywhere)."""
        if self._epoch != _dispatch.epoch:
            self._kernels.clear()
            self._epoch = _dispatch.epoch
        fn = self._kernels.get(prim)
        if fn is None:
            fn = self._kernels[prim] = getattr(P, prim).resolve(self.runtime.dispatch_key)
        return fn


_LAYOUTS: dict[Any, Layout] = {}
_MAX_LAYOUTS = 4096


def _interned(shape: tuple[int, ...], dt: _dtype.dtype, dev: _device) -> Layout | None:
    key = (shape, dt, dev)
    try:
        lay = _LAYOUTS.get(key)
    except TypeError:  # symbolic sizes are not hashable: no interning
        return None
    if lay is None:
        if len(_LAYOUTS) >= _MAX_LAYOUTS:
            _LAYOUTS.clear()
        lay = _LAYOUTS[key] = Layout(shape, dt, dev)
    return lay


def _from_layout(lay: Layout) -> Tensor:
    rt = lay.runtime
    storage = _storage.UntypedStorage._from_handle(
        rt.allocator.allocate(lay.nbytes, lay.index), lay.nbytes, lay.device, rt)
    t = Tensor._make(storage, lay.shape, lay.stride, 0, lay.dtype, lay.device)
    t._fk = lay
    return t


def new_tensor(shape: tuple[int, ...], dt: _dtype.dtype, dev: _device) -> Tensor:
    """An uninitialised contiguous tensor (``dev`` already normalised)."""
    lay = _interned(shape, dt, dev)
    if lay is not None:
        return _from_layout(lay)
    numel = 1
    for s in shape:
        numel *= s
    storage = _storage.allocate(numel * dt.itemsize, dev)
    return Tensor._make(storage, shape, contiguous_strides(shape), 0, dt, dev)


def _is_non_overlapping_and_dense(t: Tensor) -> bool:
    """Whether ``t``'s elements exactly tile one block of memory (a contiguous layout with its
    dims in some order, e.g. a transposed matrix)."""
    dims = sorted((d for d in range(t.ndim) if t._shape[d] > 1), key=lambda d: t._stride[d])
    expected = 1
    for d in dims:
        if t._stride[d] != expected:
            return False
        expected *= t._shape[d]
    return True


def new_like(src: Tensor, dt: _dtype.dtype, dev: _device, memory_format: Any = None) -> Tensor:
    """An uninitialised tensor shaped like ``src``. PyTorch's default ``preserve_format`` keeps
    ``src``'s strides when it is non-overlapping and dense (a transposed tensor's clone is
    transposed too); otherwise, or with ``contiguous_format``, the result is contiguous."""
    if (memory_format in (None, _layout.preserve_format)
            and src._stride != contiguous_strides(src._shape)
            and _is_non_overlapping_and_dense(src)):
        storage = _storage.allocate(src.numel() * dt.itemsize, dev)
        return Tensor._make(storage, src._shape, src._stride, 0, dt, dev)
    return new_tensor(src._shape, dt, dev)


def _check_shape(shape: tuple[int, ...]) -> None:
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def _check_dtype(dtype: Any) -> _dtype.dtype | None:
    if dtype is None or isinstance(dtype, _dtype.dtype):
        return dtype
    raise TypeError(f"dtype must be torch.dtype, not {type(dtype).__name__}")


def _scalar_dtype(value: Any) -> _dtype.dtype:
    """The dtype PyTorch gives a Python scalar standing alone (``torch.tensor(2.5)``)."""
    if isinstance(value, bool):
        return _dtype.bool_
    if isinstance(value, int):
        return _dtype.int64
    if isinstance(value, float):
        return _config.get_default_dtype()
    if isinstance(value, complex):
        return _config.get_default_complex_dtype()
    raise TypeError(f"expected a number, got {type(value).__name__}")


# -- promotion and broadcasting -------------------------------------------------------------


def promote_types(type1: _dtype.dtype, type2: _dtype.dtype) -> _dtype.dtype:
    """The smallest dtype to which both can be cast without losing category."""
    return _dtype.promote_types(type1, type2)


def can_cast(from_: _dtype.dtype, to: _dtype.dtype) -> bool:
    """Whether casting ``from_`` to ``to`` is allowed by PyTorch's casting rules."""
    return _dtype.can_cast(from_, to)


def result_type(*operands: Any) -> _dtype.dtype:
    """The dtype of an arithmetic op's result: dimensioned tensors, then zero-dim tensors, then
    Python scalars; a lower class only counts when its category is higher."""
    dim = zero = wrapped = None
    for o in operands:
        if isinstance(o, Tensor):
            if o._shape:
                dim = o._dtype if dim is None else _dtype.promote_types(dim, o._dtype)
            else:
                zero = o._dtype if zero is None else _dtype.promote_types(zero, o._dtype)
        else:
            try:
                d = _scalar_dtype(o)
            except TypeError:
                raise TypeError(f"result_type: expected Tensor or Number, got "
                                f"{type(o).__name__}") from None
            wrapped = d if wrapped is None else _dtype.promote_types(wrapped, d)
    out = _dtype.combine_categories(dim, _dtype.combine_categories(zero, wrapped))
    if out is None:
        raise TypeError("result_type expects at least one operand")
    return out


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape all ``shapes`` broadcast to; RuntimeError naming the clashing sizes."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if out[i] == 1:
                out[i] = n
            elif n != 1 and n != out[i]:
                raise RuntimeError(f"The size of tensor a ({out[i]}) must match the size of "
                                   f"tensor b ({n}) at non-singleton dimension {i}")
    return Size(out)


def _common_device(tensors: list[Tensor]) -> _device:
    dev = None
    weak = True
    for t in tensors:
        scalar = t._device.type == "cpu" and not t._shape
        if dev is None or (weak and not scalar):
            dev, weak = t._device, scalar
        elif t._device != dev and not scalar:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {dev} and {t._device}!")
    return dev if dev is not None else _storage._normalise("cpu")


def _operand(x: Any, dt: _dtype.dtype, dev: _device, shape: tuple[int, ...]) -> Tensor:
    """``x`` as a tensor of ``dt`` on ``dev``, broadcast (stride 0) to ``shape``."""
    if not isinstance(x, Tensor):
        x = scalar_tensor(x, dt, dev)
    else:
        if x._dtype is not dt:
            x = to_dtype(x, dt)
        if x._device != dev:
            x = to_device(x, dev)
    return x if x._shape == shape else x.expand(shape)


def scalar_tensor(value: Any, dt: _dtype.dtype, dev: _device) -> Tensor:
    """A 0-d tensor holding ``value`` (Scalars enter kernels as 0-d tensors)."""
    t = new_tensor((), dt, dev)
    P.fill_(t, value)
    return t


# -- creation ------------------------------------------------------------------------------


def empty(*size: Any, out: Tensor | None = None, dtype: _dtype.dtype | None = None,
          layout: Any = None, device: Any = None, requires_grad: bool = False,
          pin_memory: bool = False, memory_format: Any = None) -> Tensor:
    """An uninitialised tensor of ``size``."""
    shape = _shape_arg(size)
    _check_shape(shape)
    dt = _check_dtype(dtype) or _config.get_default_dtype()
    t = new_tensor(shape, dt, _device_of(device))
    return _finish(_into(out, t), requires_grad)


def empty_strided(size: Any, stride: Any, *, dtype: _dtype.dtype | None = None,
                  layout: Any = None, device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor with explicit strides (storage sized to fit them)."""
    shape, strides = _shape_arg(size), _shape_arg(stride)
    if len(shape) != len(strides):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(shape)} sizes, "
                           f"{len(strides)} strides")
    _check_shape(shape)
    dt = _check_dtype(dtype) or _config.get_default_dtype()
    dev = _device_of(device)
    extent = storage_extent(shape, strides)
    storage = _storage.allocate(extent * dt.itemsize, dev)
    return _finish(Tensor._make(storage, shape, strides, 0, dt, dev), requires_grad)


def full(size: Any, fill_value: Any, *, out: Tensor | None = None,
         dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
         requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value`` (dtype inferred from it by default)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    shape = _shape_arg((size,) if isinstance(size, int) else tuple(size))
    _check_shape(shape)
    dt = _check_dtype(dtype) or _scalar_dtype(fill_value)
    t = new_tensor(shape, dt, _device_of(device))
    P.fill_(t, fill_value)
    return _finish(_into(out, t), requires_grad)


def _filled(value: int, size: tuple[Any, ...], out: Tensor | None, dtype: Any, device: Any,
            requires_grad: bool) -> Tensor:
    shape = _shape_arg(size)
    _check_shape(shape)
    dt = _check_dtype(dtype) or _config.get_default_dtype()
    t = new_tensor(shape, dt, _device_of(device))
    P.fill_(t, value)
    return _finish(_into(out, t), requires_grad)


def zeros(*size: Any, out: Tensor | None = None, dtype: _dtype.dtype | None = None,
          layout: Any = None, device: Any = None, requires_grad: bool = False,
          pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` filled with 0."""
    return _filled(0, size, out, dtype, device, requires_grad)


def ones(*size: Any, out: Tensor | None = None, dtype: _dtype.dtype | None = None,
         layout: Any = None, device: Any = None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` filled with 1."""
    return _filled(1, size, out, dtype, device, requires_grad)


def _like(t: Tensor, dtype: Any, device: Any) -> tuple[_dtype.dtype, _device]:
    return (_check_dtype(dtype) or t._dtype,
            t._device if device is None else _storage._normalise(device))


def empty_like(input: Tensor, *, dtype: _dtype.dtype | None = None, layout: Any = None,
               device: Any = None, requires_grad: bool = False, memory_format: Any = None
               ) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return _finish(new_like(input, dt, dev, memory_format), requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: _dtype.dtype | None = None,
              layout: Any = None, device: Any = None, requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    t = new_like(input, dt, dev, memory_format)
    P.fill_(t, fill_value)
    return _finish(t, requires_grad)


def zeros_like(input: Tensor, **kwargs: Any) -> Tensor:
    return full_like(input, 0, **kwargs)


def ones_like(input: Tensor, **kwargs: Any) -> Tensor:
    return full_like(input, 1, **kwargs)


def _into(out: Tensor | None, result: Tensor) -> Tensor:
    """``out=`` handling: resize an empty ``out`` or require the result's shape, then copy."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"out must be a Tensor, not {type(out).__name__}")
    if not _dtype.can_cast(result._dtype, out._dtype):
        raise RuntimeError(f"result type {_dtype_name(result._dtype)} can't be cast to the "
                           f"desired output type {_dtype_name(out._dtype)}")
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
        out._fk = None  # the layout changed: no stale fast-path key
    copy_(out, result)
    return out


def _dtype_name(dt: _dtype.dtype) -> str:
    """PyTorch's ScalarType name, used in its error messages."""
    return _SCALAR_TYPE_NAMES[dt._name]


_SCALAR_TYPE_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
    "int64": "Long", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
    "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


# -- torch.tensor --------------------------------------------------------------------------


_SEQUENCES = (list, tuple, range)  # what torch.tensor() reads as a dimension


def _nested_shape(data: Any, dim: int = 0) -> tuple[int, ...]:
    if isinstance(data, _SEQUENCES):
        if not data:
            return (0,)
        inner = _nested_shape(data[0], dim + 1)
        for item in data[1:]:
            other = _nested_shape(item, dim + 1)
            if other != inner:
                got = other[0] if other else "a scalar"
                want = inner[0] if inner else "a scalar"
                raise ValueError(f"expected sequence of length {want} at dim {dim + 1} "
                                 f"(got {got})")
        return (len(data),) + inner
    if isinstance(data, Tensor):
        return tuple(data._shape)
    if isinstance(data, np.ndarray):
        return data.shape
    return ()


def _leaves(data: Any) -> Any:
    if isinstance(data, _SEQUENCES):
        for item in data:
            yield from _leaves(item)
    elif isinstance(data, Tensor):
        yield from _leaves(data.tolist())
    elif isinstance(data, np.ndarray):
        yield from _leaves(data.tolist())
    else:
        yield data


def _infer_dtype(data: Any) -> _dtype.dtype:
    if isinstance(data, np.ndarray):
        return _np_to_dtype(data.dtype)
    if isinstance(data, Tensor):
        return data._dtype
    # PyTorch promotes across the elements of a sequence; numpy scalars keep their dtype
    kind = None  # no leaves at all (``torch.tensor([])``): the default dtype
    for leaf in _leaves(data):
        if isinstance(leaf, np.generic):
            d = _np_to_dtype(leaf.dtype)
        elif isinstance(leaf, bool):
            d = _dtype.bool_
        elif isinstance(leaf, int):
            d = _dtype.int64
        elif isinstance(leaf, float):
            d = _config.get_default_dtype()
        elif isinstance(leaf, complex):
            d = _config.get_default_complex_dtype()
        else:
            raise TypeError(f"new(): invalid data type '{type(leaf).__name__}'")
        kind = d if kind is None else _dtype.promote_types(kind, d)
    return kind if kind is not None else _config.get_default_dtype()


def _np_to_dtype(npdt: np.dtype) -> _dtype.dtype:
    dt = _refs.FROM_NP.get(np.dtype(npdt))
    if dt is None:
        raise TypeError(f"can't convert np.ndarray of type numpy.{np.dtype(npdt).name}. The only "
                        "supported types are: float64, float32, float16, complex64, complex128, "
                        "int64, int32, int16, int8, uint8, and bool.")
    return dt


def _host_array(data: Any, dt: _dtype.dtype) -> np.ndarray:
    """``data`` as a numpy array holding ``dt``'s storage representation."""
    if isinstance(data, np.ndarray):
        src_dt = _np_to_dtype(data.dtype)
        return _refs.convert(data, src_dt, dt) if src_dt is not dt else data
    # out-of-range floats become inf quietly, as in PyTorch (numpy would warn)
    with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        for leaf in _leaves(data):
            _refs.check_scalar_fits(leaf, dt)
        if dt is _dtype.bfloat16:
            return _refs.f32_to_bf16(np.array(data, np.float32))
        if dt is _dtype.bool_:
            return np.array(data, dtype=object).astype(bool) if _has_non_bool(data) else \
                np.array(data, dtype=bool)
        src = np.array(data)
        if src.dtype.kind == "c" and not dt.is_complex:
            src = src.real
        return src.astype(_refs.NP_DTYPES[dt], casting="unsafe")


def _has_non_bool(data: Any) -> bool:
    return any(not isinstance(x, bool) for x in _leaves(data))


def tensor(data: Any, *, dtype: _dtype.dtype | None = None, device: Any = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested lists/tuples, an array or a
    tensor), with the dtype inferred as PyTorch does unless given."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=_config.external_stacklevel())
        dev = data._device if device is None else _storage._normalise(device)
        out = to_device(to_dtype(data, _check_dtype(dtype) or data._dtype, copy=True), dev)
        return _finish(out, requires_grad)
    if isinstance(data, (str, bytes, dict, set)) or data is None:
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        data = [x.tolist() if isinstance(x, Tensor) else x for x in data]
    shape = _nested_shape(data)
    dt = _check_dtype(dtype) or _infer_dtype(data)
    host = _host_array(data, dt).reshape(shape)
    dev = _device_of(device)
    return _finish(from_host(host, dt, dev), requires_grad)


def from_host(host: np.ndarray, dt: _dtype.dtype, dev: _device) -> Tensor:
    """A new tensor on ``dev`` holding the numpy array ``host`` (already in ``dt``'s storage
    representation)."""
    cpu = _storage._normalise("cpu")
    t = new_tensor(tuple(host.shape), dt, dev if dev.type == "cpu" else cpu)
    _refs.np_view(t)[...] = host
    return t if dev.type == "cpu" else to_device(t, dev)


def legacy_tensor_new(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    """``torch.Tensor(2, 3)`` (uninitialised float) or ``torch.Tensor([1, 2])`` (data)."""
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"Tensor(): unexpected keyword arguments {sorted(kwargs)}")
    if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):
        t = tensor(args[0], dtype=_config.get_default_dtype(), device=device)
    elif len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].detach()
    else:
        t = empty(*args, device=device)
    if cls is not Tensor:
        t = _rewrap(t, cls)
    return t


def _rewrap(t: Tensor, cls: type) -> Tensor:
    out = object.__new__(cls)
    for slot in Tensor.__slots__:
        if slot not in ("__dict__", "__weakref__"):
            setattr(out, slot, getattr(t, slot))
    return out


# -- copies across dtypes and devices ---------------------------------------------------------


def _host_copy(src: Tensor) -> Tensor:
    """A CPU tensor with ``src``'s values, shape, dtype and strides (a view if ``src`` already
    lives in host memory)."""
    st = src._storage
    size = src._dtype.itemsize
    cpu = _storage._normalise("cpu")
    if st._host is not None:
        if src._device.type == "cpu":
            return src
        # host-accessible device memory: view it in place
        host_st = _storage.UntypedStorage._from_handle(
            st._host, st._nbytes, cpu, _registry.runtime("cpu"))
        return Tensor._make(host_st, src._shape, src._stride, src._offset, src._dtype, cpu)
    if src.numel() == 0:
        return new_tensor(src._shape, src._dtype, cpu)
    # Copy the smallest byte span that covers every element, then view it with src's strides.
    span = storage_extent(src._shape, src._stride)
    raw = _storage.read_bytes(st, src._offset * size, span * size)
    host_st = _storage.allocate(span * size, cpu)
    host_st._host[:] = raw
    return Tensor._make(host_st, src._shape, src._stride, 0, src._dtype, cpu)


def copy_(dst: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast to ``dst``'s shape) into ``dst``, casting dtype and crossing
    devices as needed. In place; bumps ``dst``'s version."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    if src._shape != dst._shape:
        src = src.expand(dst._shape)
    if src._device == dst._device:
        P.copy_(dst, src)
    elif dst._device.type == "cpu" or dst._storage._host is not None:
        P.copy_(dst, _host_copy(src)) if dst._device.type == "cpu" else (
            P.copy_(_host_copy(dst), _host_copy(src)))
    else:
        # To a device: stage a contiguous host tensor of dst's dtype, upload it, and let the
        # device's own copy primitive place it if dst is strided.
        staged = new_tensor(dst._shape, dst._dtype, _storage._normalise("cpu"))
        P.copy_(staged, _host_copy(src))
        target = dst if dst.is_contiguous() else new_tensor(dst._shape, dst._dtype, dst._device)
        _storage.write_bytes(target._storage, target._offset * dst._dtype.itemsize,
                             _refs.np_view(staged).reshape(-1).view(np.uint8))
        if target is not dst:
            P.copy_(dst, target)
    dst._vc[0] += 1
    return dst


def to_device(t: Tensor, device: Any) -> Tensor:
    """``t`` on ``device`` (``t`` itself when it is already there)."""
    dev = device if isinstance(device, _device) and (
        device.index is not None or device.type in _registry.BUILTIN) else (
        _storage._normalise(device))
    if t._device == dev:
        return t
    out = copy_(new_tensor(t._shape, t._dtype, dev), t)
    out._vc[0] = 0  # a new tensor starts at version 0
    return out


def to_dtype(t: Tensor, dt: _dtype.dtype, copy: bool = False) -> Tensor:
    if t._dtype is dt and not copy:
        return t
    out = new_tensor(t._shape, dt, t._device)
    P.copy_(out, t)
    return out


_TO_KW = ("device", "dtype", "non_blocking", "copy", "memory_format")


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``to(dtype)``, ``to(device[, dtype])``, ``to(other)``, plus ``non_blocking``/``copy``."""
    unknown = set(kwargs) - set(_TO_KW)
    if unknown:
        raise TypeError(f"to() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    copy = kwargs.get("copy", False)
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        device, dtype = other._device, other._dtype
    elif rest and isinstance(rest[0], _dtype.dtype):
        dtype = rest.pop(0)
    elif rest and (isinstance(rest[0], (str, _device, int)) and not isinstance(rest[0], bool)):
        device = rest.pop(0)
        if rest and isinstance(rest[0], _dtype.dtype):
            dtype = rest.pop(0)
    if rest:  # trailing non_blocking, copy
        if not all(isinstance(x, bool) for x in rest) or len(rest) > 2:
            raise TypeError(f"to() received an invalid combination of arguments: "
                            f"{tuple(type(a).__name__ for a in args)}")
        if len(rest) == 2:
            copy = rest[1]
    dt = _check_dtype(dtype) or self._dtype
    dev = self._device if device is None else _storage._normalise(device)
    if dt is self._dtype and dev == self._device and not copy:
        return self
    out = new_like(self, dt, dev, kwargs.get("memory_format"))
    copy_(out, self)
    out._vc[0] = 0
    if self.requires_grad and (dt.is_floating_point or dt.is_complex):
        out.requires_grad = True  # autograd arrives with its own issue; keep the flag
    return out


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy with its own storage (keeping a dense layout's strides, as PyTorch does)."""
    out = new_like(input, input._dtype, input._device, memory_format)
    P.copy_(out, input)
    return out


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    if self.is_contiguous():
        return self
    return clone(self, memory_format=_layout.contiguous_format)


def fill_(self: Tensor, value: Any) -> Tensor:
    """Fill ``self`` with ``value`` (a number or a one-element tensor). In place."""
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.dim()} dimensions.")
        value = value.item()
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"fill_(): argument 'value' must be Number, not {type(value).__name__}")
    if isinstance(value, complex) and not self._dtype.is_complex:
        raise RuntimeError(f"value cannot be converted to type {self._dtype._name} without "
                           "overflow")
    P.fill_(self, value)
    self._vc[0] += 1
    return self


def zero_(self: Tensor) -> Tensor:
    return fill_(self, 0)


# -- arithmetic ----------------------------------------------------------------------------


def _binary(prim: _dispatch.Operator, a: Any, b: Any) -> Tensor:
    if not isinstance(a, Tensor):
        raise TypeError(f"{prim.name}(): argument 'input' must be Tensor, not "
                        f"{type(a).__name__}")
    if not isinstance(b, (Tensor, bool, int, float, complex)):
        raise TypeError(f"{prim.name}(): argument 'other' must be Tensor or Number, not "
                        f"{type(b).__name__}")
    dt = result_type(a, b)
    tensors = [a, b] if isinstance(b, Tensor) else [a]
    dev = _common_device(tensors)
    shape = broadcast_shapes(a._shape, b._shape) if isinstance(b, Tensor) else a._shape
    out = new_tensor(shape, dt, dev)
    prim(out, _operand(a, dt, dev, shape), _operand(b, dt, dev, shape))
    return out


def _apply_alpha(other: Any, alpha: Any, input: Tensor) -> Any:
    if alpha == 1 and not isinstance(alpha, float):
        return other
    if isinstance(alpha, float) and not (input._dtype.is_floating_point or input._dtype.is_complex):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if isinstance(other, Tensor):
        return _binary(P.mul, other, alpha)
    return other * alpha


def _add_kernel(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    return _binary(P.add, self, _apply_alpha(other, alpha, self))


def _mul_kernel(self: Tensor, other: Any) -> Tensor:
    return _binary(P.mul, self, other)


def _reduce_dims(dim: Any, ndim: int) -> list[int]:
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    wrapped = [wrap_dim(d, ndim) for d in dims]
    seen = set()
    for d in wrapped:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return sorted(wrapped) if dims or ndim == 0 else list(range(ndim))


def _sum_kernel(self: Tensor, dim: Any = None, keepdim: bool = False, *,
                dtype: _dtype.dtype | None = None) -> Tensor:
    dims = _reduce_dims(dim, self.ndim)
    if dtype is None:
        dtype = _dtype.int64 if self._dtype._category <= _dtype.INT else self._dtype
    src = to_dtype(self, _check_dtype(dtype))
    kept = tuple(1 if i in dims else s for i, s in enumerate(self._shape))
    out = new_tensor(kept, dtype, self._device)
    if self.ndim:
        P.sum(out, src, dims)
    else:
        P.copy_(out, src)
    if keepdim or not self.ndim:
        return out
    return out.view(tuple(s for i, s in enumerate(self._shape) if i not in dims))


def _define_aten() -> dict[str, _dispatch.Operator]:
    table = {
        "add.Tensor": ("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                       _add_kernel),
        "mul.Tensor": ("mul.Tensor(Tensor self, Tensor other) -> Tensor", _mul_kernel),
        "sum.dim_IntList": ("sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, "
                            "*, ScalarType? dtype=None) -> Tensor", _sum_kernel),
    }
    ops = {}
    for name, (schema, kernel) in table.items():
        op = _dispatch.get(f"aten::{name}") or _dispatch.define(f"aten::{name}", schema)
        op.register(_dispatch.COMPOSITE_EXPLICIT, kernel)
        ops[name.partition(".")[0]] = op
    return ops


ATEN = _define_aten()
_aten_add, _aten_mul, _aten_sum = ATEN["add"], ATEN["mul"], ATEN["sum"]


def add(input: Tensor, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """``input + alpha * other`` with broadcasting and type promotion."""
    return _into(out, _aten_add(input, other, alpha=alpha))


def mul(input: Tensor, other: Any, *, out: Tensor | None = None) -> Tensor:
    """``input * other`` with broadcasting and type promotion."""
    return _into(out, _aten_mul(input, other))


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *,
        dtype: _dtype.dtype | None = None, out: Tensor | None = None) -> Tensor:
    """Sum over ``dim`` (all dims by default); integer and bool inputs sum to int64."""
    if not isinstance(input, Tensor):
        raise TypeError(f"sum(): argument 'input' must be Tensor, not {type(input).__name__}")
    return _into(out, _aten_sum(input, dim, keepdim, dtype=dtype))


def _inplace(op: Any) -> Any:
    def method(self: Tensor, other: Any, **kwargs: Any) -> Tensor:
        result = op(self, other, **kwargs)
        if not _dtype.can_cast(result._dtype, self._dtype):
            raise RuntimeError(f"result type {_dtype_name(result._dtype)} can't be cast to the "
                               f"desired output type {_dtype_name(self._dtype)}")
        if result._shape != self._shape:
            raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the "
                               f"broadcast shape {list(result._shape)}")
        return copy_(self, result)

    return method


# -- host views ----------------------------------------------------------------------------


def numpy(self: Tensor, *, force: bool = False) -> np.ndarray:
    """A numpy array sharing memory with this CPU tensor."""
    if force:
        self = to_device(self.detach(), "cpu")
    if self._device.type != "cpu":
        raise TypeError(f"can't convert {self._device.type}:{self._device.index or 0} device type "
                        "tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
                        "first.")
    if self.requires_grad:
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
    n = self.numel()
    if n != 1:
        raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
    return _host_values(self).reshape(()).item()


def is_nonzero(input: Tensor) -> bool:
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(item(input))


def numel(input: Tensor) -> int:
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    return input._dtype.is_floating_point


def advanced_index(t: Tensor, index: tuple[Any, ...]) -> Tensor:
    raise IndexError("indexing with tensors, lists or booleans arrives with the tensor library "
                     "(only ints, slices, None and ... are supported yet)")


def view_dtype(t: Tensor, dt: _dtype.dtype) -> Tensor:
    if dt.itemsize != t._dtype.itemsize:
        raise RuntimeError("view(dtype) with a different element size is not supported yet")
    return Tensor._make(t._storage, t._shape, t._stride, t._offset, dt, t._device, t._vc,
                        t._base if t._base is not None else t)


# -- Tensor methods ------------------------------------------------------------------------


def _rsub_unsupported(self: Tensor, other: Any) -> Any:
    return NotImplemented


def _scalar_method(conv: type) -> Any:
    def method(self: Tensor) -> Any:
        return conv(item(self))

    return method


def _index(self: Tensor) -> int:
    if self._dtype._category > _dtype.INT or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(item(self))


def _binary_method(fn: Any, prim: str | None = None) -> Any:
    """``Tensor.__add__`` and friends. With ``prim``, two plain tensors of one interned layout
    (same shape, dtype and device, contiguous, no grad, no dispatch mode active) take the
    first fast tier: allocate from the layout and run the device's kernel directly. It gives
    exactly what the generic path gives: same dtype, same shape, the same kernel."""

    def method(self: Tensor, other: Any) -> Any:
        if not isinstance(other, (Tensor, bool, int, float, complex)):
            return NotImplemented
        return fn(self, other)

    if prim is None:
        return method
    state = _config.state

    def fast(self: Tensor, other: Any) -> Any:
        fk = self._fk
        if (fk is not None and other.__class__ is Tensor and other._fk is fk
                and self.__class__ is Tensor and not state.modes_active
                and not self.requires_grad and not other.requires_grad):
            out = _from_layout(fk)
            fk.kernel(prim)(out, self, other)
            return out
        return method(self, other)

    return fast


def _reflected(fn: Any) -> Any:
    def method(self: Tensor, other: Any) -> Any:
        if not isinstance(other, (bool, int, float, complex)):
            return NotImplemented
        return fn(self, other)

    return method


def _cast_method(dt: _dtype.dtype) -> Any:
    def method(self: Tensor, memory_format: Any = None) -> Tensor:
        return to(self, dt)

    return method


def _cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    return to(self, "cpu")


def _cuda(self: Tensor, device: Any = None, non_blocking: bool = False,
          memory_format: Any = None) -> Tensor:
    if device is None:
        return to(self, "cuda")
    return to(self, device if isinstance(device, (str, _device)) else _device("cuda", device))


def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    if dtype is None:
        return "torch." + _tensor._tensor_type(self)
    return to(self, dtype)


_METHODS: dict[str, Any] = {
    "add": add,
    "mul": mul,
    "multiply": mul,
    "sum": sum,
    "add_": _inplace(add),
    "mul_": _inplace(mul),
    "__add__": _binary_method(add, "add"),
    "__radd__": _reflected(add),
    "__iadd__": _inplace(add),
    "__mul__": _binary_method(mul, "mul"),
    "__rmul__": _reflected(mul),
    "__imul__": _inplace(mul),
    "copy_": copy_,
    "fill_": fill_,
    "zero_": zero_,
    "to": to,
    "cpu": _cpu,
    "cuda": _cuda,
    "type": _type,
    "clone": clone,
    "contiguous": contiguous,
    "numpy": numpy,
    "tolist": tolist,
    "item": item,
    "__bool__": is_nonzero,
    "__float__": _scalar_method(float),
    "__int__": _scalar_method(int),
    "__complex__": _scalar_method(complex),
    "__index__": _index,
    "new_empty": lambda self, size, **kw: empty(size, **{"dtype": self._dtype,
                                                         "device": self._device, **kw}),
    "new_zeros": lambda self, size, **kw: zeros(size, **{"dtype": self._dtype,
                                                         "device": self._device, **kw}),
    "new_ones": lambda self, size, **kw: ones(size, **{"dtype": self._dtype,
                                                       "device": self._device, **kw}),
    "new_full": lambda self, size, fill_value, **kw: full(
        size, fill_value, **{"dtype": self._dtype, "device": self._device, **kw}),
    "new_tensor": lambda self, data, **kw: tensor(data, **{"dtype": self._dtype,
                                                           "device": self._device, **kw}),
}
for _name, _dt in (("float", _dtype.float32), ("double", _dtype.float64),
                   ("half", _dtype.float16), ("bfloat16", _dtype.bfloat16),
                   ("int", _dtype.int32), ("long", _dtype.int64), ("short", _dtype.int16),
                   ("char", _dtype.int8), ("byte", _dtype.uint8), ("bool", _dtype.bool_)):
    _METHODS[_name] = _cast_method(_dt)

for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)

_tensor._F = sys.modules[__name__]
