"""Allocation: interned contiguous layouts (the fast paths' keys), new tensors on any
device, and the small argument checks every factory shares."""

from __future__ import annotations

from typing import Any

from . import (
    config as _config,
    dispatch as _dispatch,
    dtype as _dtype,
    layout as _layout,
    registry as _registry,
    storage as _storage,
)
from .device import INDEXLESS, device as _device
from .tensor import Size, Tensor, contiguous_strides


class _Prims:
    """``prims::<name>`` operators by attribute, resolved once."""

    def __getattr__(self, name: str) -> _dispatch.Operator:
        op = _dispatch.get(f"prims::{name}")
        if op is None:
            raise AttributeError(f"no primitive named {name!r}")
        setattr(self, name, op)
        return op


PRIMS = _Prims()  # the prims:: operators by attribute: PRIMS.add(out, a, b)


def _default_device() -> _device:
    return _config.get_default_device()


def device_of(device: Any) -> _device:
    """``device`` (the default device when None) as a normalised ``torch.device``."""
    if device is None:
        device = _config.get_default_device()
    if device.__class__ is _device and (device._index is not None
                                        or device._type in INDEXLESS):
        return device  # already normalised (every factory call comes through here)
    return _storage._normalise(device)


class Layout:
    """An interned contiguous (shape, dtype, device): what allocating such a tensor needs, and
    the fast paths' key. Tensors made by :func:`new_tensor` carry theirs in the
    ``_interned_layout`` slot, so "same layout" is one identity test (docs/architecture.md,
    "The op path")."""

    __slots__ = ("_epoch", "_kernels", "dcode", "device", "dtype", "fast", "fast_codes",
                 "fast_plans", "index", "meta", "meta2", "nbytes", "numel", "runtime", "shape",
                 "stride")

    def __init__(self, shape: tuple[int, ...], dt: _dtype.dtype, dev: _device) -> None:
        nbytes = _storage.contiguous_nbytes(shape, dt.itemsize)  # refuses overflowing sizes
        numel = nbytes // dt.itemsize
        self.shape = Size(shape)
        self.stride = contiguous_strides(shape)
        self.dtype = dt
        self.device = dev
        self.meta = (self.shape, dt, dev)  # what an autograd node keeps of an input
        self.meta2 = (self.meta, self.meta)  # ... of two inputs of this layout
        self.numel = numel
        self.nbytes = nbytes
        self.runtime = _registry.runtime(dev.type)
        self.index = dev.index or 0
        _registry.check_index(dev.type, self.index)  # once per layout, before the allocator
        self._kernels: dict[str, Any] = {}
        self._epoch = -1
        # The hot path's (torch._core.fast) backend entry points, when they serve this dtype, and
        # what the tiers decided for this layout (op codes, broadcast plans).
        fast = self.runtime.fast
        self.dcode = None if fast is None else fast.dtype_codes.get(dt)
        self.fast = None if self.dcode is None else fast
        self.fast_codes: dict[str, int] = {}
        self.fast_plans: dict[Any, Any] = {}

    def forget_fast(self) -> None:
        """Drop the tiers' decisions (a kernel registration may have changed them)."""
        self.fast_codes.clear()
        self.fast_plans.clear()

    def kernel(self, prim: str) -> Any:
        """The kernel this layout's device runs for primitive ``prim`` (cached until the next
        registration anywhere)."""
        if self._epoch != _dispatch.epoch:
            self._kernels.clear()
            self._epoch = _dispatch.epoch
        fn = self._kernels.get(prim)
        if fn is None:
            fn = self._kernels[prim] = getattr(PRIMS, prim).resolve(self.runtime.dispatch_key)
        return fn


_LAYOUTS: dict[Any, Layout] = {}


_MAX_LAYOUTS = 4096


def _forget_fast() -> None:
    for lay in list(_LAYOUTS.values()):
        lay.forget_fast()


_dispatch.on_invalidate.append(_forget_fast)


def _interned(shape: tuple[int, ...], dt: _dtype.dtype, dev: _device) -> Layout | None:
    # The device by its fields: hashing them is C-level, device.__hash__ is a Python call
    # (and this runs for every tensor an op allocates).
    key = (shape, dt, dev._type, dev._index)
    try:
        lay = _LAYOUTS.get(key)
    except TypeError:  # symbolic sizes are not hashable: no interning
        return None
    if lay is None:
        if len(_LAYOUTS) >= _MAX_LAYOUTS:
            # Tensors and plans may still hold the evicted layouts, where a later kernel
            # registration's invalidation (_forget_fast) no longer reaches them: retire them,
            # so the tiers never use their cached decisions again.
            for old in _LAYOUTS.values():
                old.forget_fast()
                old.fast = None
            _LAYOUTS.clear()
        lay = _LAYOUTS[key] = Layout(shape, dt, dev)
    return lay


class Geometry:
    """A strided tensor's part of a plan signature — shape, strides, dtype, device — as one
    object, interned per value, so that a plan key holds it by identity (hashed and compared
    at C level). A tensor keeps it in its ``_geometry`` slot, valid only while the tensor's
    ``_shape``, ``_stride``, ``_dtype`` and ``_device`` are the very objects it holds: an
    in-place change of any of them (``set_``, ``resize_``, ``.data = ...``) assigns new
    objects, so a stale slot is never read as current."""

    __slots__ = ("contiguous", "device", "dtype", "shape", "stride")


_GEOMETRIES: dict[tuple[Any, ...], Geometry] = {}
_MAX_GEOMETRIES = 4096


def _row_major(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    """``Tensor.is_contiguous()`` of these sizes and strides (a geometry's, worked out once)."""
    if 0 in shape:
        return True  # an empty tensor is contiguous whatever its strides, as in PyTorch
    expected = 1
    for size, step in zip(reversed(shape), reversed(stride)):
        if size != 1:
            if step != expected:
                return False
            expected *= size
    return True


def adopt_geometry(t: Tensor) -> Geometry | None:
    """The interned geometry of ``t``, which ``t`` takes on: its slot holds it, and its shape,
    strides and device become the (equal) objects the geometry holds, so the slot is current.
    None for symbolic sizes (they do not hash)."""
    dev = t._device
    key = (t._shape, t._stride, t._dtype, dev._type, dev._index)
    try:
        geo = _GEOMETRIES.get(key)
    except TypeError:
        return None
    if geo is None:
        if len(_GEOMETRIES) >= _MAX_GEOMETRIES:
            _GEOMETRIES.clear()  # (tensors keep theirs: a geometry stays exact once made)
        geo = _new(Geometry)
        shape = t._shape
        geo.shape = shape if shape.__class__ is Size else Size(shape)
        geo.stride, geo.dtype, geo.device = t._stride, t._dtype, dev
        geo.contiguous = _row_major(shape, t._stride)
        _GEOMETRIES[key] = geo
    t._shape, t._stride, t._device = geo.shape, geo.stride, geo.device
    t._geometry = geo
    return geo


def from_layout(lay: Layout) -> Tensor:
    """A new tensor of layout ``lay``: ``UntypedStorage._from_handle`` and ``Tensor._make``
    written out, since every op's output comes through here (two Python calls less)."""
    rt = lay.runtime
    alloc = rt.allocator
    try:
        handle = alloc.allocate(lay.nbytes, lay.index)
    except MemoryError:
        handle = _storage.allocate_handle(rt, lay.nbytes, lay.device)  # the RuntimeError
    st = _new(_Storage)
    st._handle = handle
    st._nbytes = lay.nbytes
    st._device = lay.device
    st._runtime = rt
    st._ptr = alloc.data_ptr(handle)
    st._hostbuf = _storage._UNSET
    t = _new(Tensor)
    t._storage = st
    t._shape = lay.shape
    t._stride = lay.stride
    t._offset = 0
    t._dtype = lay.dtype
    t._device = lay.device
    t._vc = [0]
    t._base = None
    t._grad = None
    t.grad_fn = None
    t._requires_grad = False
    t._interned_layout = lay
    t._geometry = None
    if _state.inference_active and _config.is_inference_mode_enabled():
        t.__dict__["_inference"] = True  # made in inference mode: an inference tensor
    return t


_new = object.__new__
_Storage = _storage.UntypedStorage
_state = _config.state


def _in_mode() -> bool:
    """Whether a dispatch mode is active on this thread (one of its handlers is not running)."""
    return bool(getattr(_dispatch._local, "modes", None))


def _mode_empty(shape: tuple[int, ...], strides: tuple[int, ...] | None, dt: _dtype.dtype,
                dev: _device) -> Tensor:
    """Allocate through ``aten::empty``/``aten::empty_strided`` so the active dispatch mode
    sees the new tensor made (a fake mode makes it fake, as PyTorch's modes see every
    allocation an op makes)."""
    if strides is None:
        return _dispatch.get("aten::empty.memory_format")(shape, dtype=dt, device=dev)
    return _dispatch.get("aten::empty_strided")(shape, strides, dtype=dt, device=dev)


def new_tensor(shape: tuple[int, ...], dt: _dtype.dtype, dev: _device) -> Tensor:
    """An uninitialised contiguous tensor (``dev`` already normalised); inside a dispatch
    mode, one that mode made."""
    if _state.modes_active and _in_mode():  # one attribute read when no mode is active
        return _mode_empty(shape, None, dt, dev)
    lay = _interned(shape, dt, dev)
    if lay is not None:
        return from_layout(lay)
    storage = _storage.allocate(_storage.contiguous_nbytes(shape, dt.itemsize), dev)
    return Tensor._make(storage, shape, contiguous_strides(shape), 0, dt, dev)


def kernel_output(shape: Any, dtype: Any, device: Any) -> Tensor:
    """An uninitialised contiguous tensor of ``shape`` (a sequence of ints), ``dtype`` and
    ``device`` (a ``torch.device`` or its name): a kernel's output (``torch.backends.contract
    .empty``). A shape tuple on a device with its index resolves its layout in one lookup;
    anything else is normalised first."""
    if not _state.modes_active:
        try:
            lay = _LAYOUTS.get((shape, dtype, device._type, device._index))
        except (TypeError, AttributeError):  # a list, a device name
            lay = None
        if lay is not None:
            return from_layout(lay)
    return new_tensor(tuple(map(int, shape)), dtype, _storage._normalise(device))


def outputs_allocator(specs: Any) -> Any:
    """A callable that allocates one uninitialised contiguous tensor per ``(shape, dtype,
    device)`` of ``specs`` and returns ``(tensors, data pointers)``, two tuples in the order
    of ``specs`` (``torch.backends.contract.allocator``). The layouts are resolved here, once:
    a planned kernel allocates its outputs in one call, with the addresses it hands to native
    code, instead of a layout lookup, an allocation call and a ``data_ptr`` call per output.
    Inside a dispatch mode the tensors come from the mode, as :func:`kernel_output`'s do."""
    full = [(tuple(map(int, shape)), dt, _storage._normalise(dev)) for shape, dt, dev in specs]
    lays = tuple(_interned(*spec) for spec in full)

    def through_modes() -> tuple[tuple[Tensor, ...], tuple[int, ...]]:
        outs = tuple(new_tensor(*spec) for spec in full)
        return outs, tuple(t.data_ptr() for t in outs)

    if None in lays:  # symbolic sizes: no interned layouts
        return through_modes
    state = _state
    inference = _config.is_inference_mode_enabled
    # (device, runtime, allocate, data_ptr, nbytes, index, shape, stride, dtype) per layout:
    # what from_layout reads of a layout, read once (a layout's fields never change)
    parts = tuple((lay.device, lay.runtime, lay.runtime.allocator.allocate,
                   lay.runtime.allocator.data_ptr, lay.nbytes, lay.index, lay.shape, lay.stride,
                   lay.dtype, lay) for lay in lays)

    def allocate() -> tuple[tuple[Tensor, ...], tuple[int, ...]]:
        if state.modes_active and _in_mode():
            return through_modes()
        outs = []
        ptrs = []
        for dev, rt, new_block, address, nbytes, index, shape, stride, dt, lay in parts:
            try:
                handle = new_block(nbytes, index)
            except MemoryError:
                handle = _storage.allocate_handle(rt, nbytes, dev)  # the RuntimeError
            # from_layout's objects, written out (one frame for every output)
            st = _new(_Storage)
            st._handle = handle
            st._nbytes = nbytes
            st._device = dev
            st._runtime = rt
            st._ptr = ptr = address(handle)
            st._hostbuf = _storage._UNSET
            t = _new(Tensor)
            t._storage = st
            t._shape = shape
            t._stride = stride
            t._offset = 0
            t._dtype = dt
            t._device = dev
            t._vc = [0]
            t._base = None
            t._grad = None
            t.grad_fn = None
            t._requires_grad = False
            t._interned_layout = lay
            t._geometry = None
            if state.inference_active and inference():
                t.__dict__["_inference"] = True
            outs.append(t)
            ptrs.append(ptr)
        return tuple(outs), tuple(ptrs)

    if len(parts) != 1:
        return allocate
    ((dev, rt, new_block, address, nbytes, index, shape, stride, dt, lay),) = parts

    def allocate_one() -> tuple[tuple[Tensor, ...], tuple[int, ...]]:
        # allocate() for one output (most planned kernels), without its loop and lists
        if state.modes_active and _in_mode():
            return through_modes()
        try:
            handle = new_block(nbytes, index)
        except MemoryError:
            handle = _storage.allocate_handle(rt, nbytes, dev)  # the RuntimeError
        st = _new(_Storage)
        st._handle = handle
        st._nbytes = nbytes
        st._device = dev
        st._runtime = rt
        st._ptr = ptr = address(handle)
        st._hostbuf = _storage._UNSET
        t = _new(Tensor)
        t._storage = st
        t._shape = shape
        t._stride = stride
        t._offset = 0
        t._dtype = dt
        t._device = dev
        t._vc = [0]
        t._base = None
        t._grad = None
        t.grad_fn = None
        t._requires_grad = False
        t._interned_layout = lay
        t._geometry = None
        if state.inference_active and inference():
            t.__dict__["_inference"] = True
        return (t,), (ptr,)

    return allocate_one


def constant_tensor(shape: tuple[int, ...], dt: _dtype.dtype, dev: _device) -> Tensor:
    """An uninitialised contiguous tensor that no dispatch mode sees: the buffer a factory
    fills with given data before ``aten::lift_fresh`` hands it to the modes (as PyTorch
    builds ``torch.tensor``'s constant below them)."""
    lay = _interned(shape, dt, dev)
    if lay is not None:
        return from_layout(lay)
    storage = _storage.allocate(_storage.contiguous_nbytes(shape, dt.itemsize), dev)
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
    strides: Any = None
    if (memory_format in (None, _layout.preserve_format)
            and src._stride != contiguous_strides(src._shape)
            and _is_non_overlapping_and_dense(src)):
        strides = src._stride
    elif memory_format in _layout.CHANNELS_LAST_ORDER:
        strides = _layout.format_strides(src._shape, memory_format)
    if strides is None:
        return new_tensor(src._shape, dt, dev)
    if _state.modes_active and _in_mode():
        return _mode_empty(src._shape, strides, dt, dev)
    storage = _storage.allocate(src.numel() * dt.itemsize, dev)
    return Tensor._make(storage, src._shape, strides, 0, dt, dev)


def check_shape(shape: tuple[int, ...]) -> None:
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")


def finish_factory(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


# dtypes known by name only (float8, complex32, sub-byte and quantized integers): no kernel,
# conversion or printing serves them, so no tensor of them is made
_NAMED_ONLY = frozenset(_dtype.NAMED_ONLY.values())


def check_dtype(dtype: Any) -> _dtype.dtype | None:
    """``dtype`` checked as a tensor's element type (None passes through)."""
    if dtype is None:
        return dtype
    if isinstance(dtype, type) and dtype in _dtype.PYTHON_TYPES:
        return _dtype.PYTHON_TYPES[dtype]
    if isinstance(dtype, _dtype.dtype):
        if dtype in _NAMED_ONLY:
            raise NotImplementedError(
                f"{dtype} tensors are not supported by Plait yet: the dtype exists by name "
                "(for code that refers to it), but no kernel, conversion or printing serves it")
        return dtype
    raise TypeError(f"dtype must be torch.dtype, not {type(dtype).__name__}")


def scalar_tensor(value: Any, dt: _dtype.dtype, dev: _device) -> Tensor:
    """A 0-d tensor holding ``value`` (Scalars enter kernels as 0-d tensors)."""
    t = new_tensor((), dt, dev)
    PRIMS.fill_(t, value)
    return t
