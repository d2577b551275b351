"""``UntypedStorage``: a block of bytes owned by a device backend's allocator.

CPU memory is 64-byte-aligned host memory that numpy views without copying, which is what
makes ``Tensor.numpy()`` and ``torch.from_numpy`` share memory. Memory of other devices is an
opaque handle moved with the backend's copier.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import registry as _registry, upcalls
from .device import INDEXLESS, device as _device

_ALIGN = 64
_UNSET: Any = object()  # a storage's host view not made yet


class HostAllocator:
    """Core's reference CPU allocator (used when plait-backend-cpu is not loaded)."""

    def allocate(self, nbytes: int, device_index: int) -> np.ndarray:
        raw = np.empty(nbytes + _ALIGN, np.uint8)
        start = -raw.ctypes.data % _ALIGN
        return raw[start : start + nbytes]

    def data_ptr(self, handle: np.ndarray) -> int:
        return handle.ctypes.data

    def host_buffer(self, handle: np.ndarray) -> np.ndarray:
        return handle


class MetaAllocator:
    """The ``meta`` device has shapes and dtypes but no memory."""

    def allocate(self, nbytes: int, device_index: int) -> None:
        return None

    def data_ptr(self, handle: None) -> int:
        return 0

    def host_buffer(self, handle: None) -> None:
        return None


class UntypedStorage:
    """Bytes on a device. ``UntypedStorage(n, device=...)`` allocates ``n`` bytes."""

    # (_pinned: set only on the copies Tensor.pin_memory makes; read with a default)
    __slots__ = ("__weakref__", "_device", "_handle", "_hostbuf", "_nbytes", "_pinned", "_ptr",
                 "_runtime")

    def __init__(self, size: int = 0, *, device: Any = None) -> None:
        if size < 0:
            raise RuntimeError(f"Storage size must be non-negative, got {size}")
        dev = _normalise(device if device is not None else "cpu")
        runtime = _registry.runtime(dev.type)
        _registry.check_index(dev.type, dev.index or 0)
        self._setup(allocate_handle(runtime, int(size), dev), int(size), dev, runtime)

    @classmethod
    def from_file(cls, filename: str, shared: bool = False, nbytes: int = 0) -> UntypedStorage:
        """A CPU storage over ``filename``'s first ``nbytes`` bytes, memory-mapped.

        :param shared: write changes through to the file (and create or extend it to
            ``nbytes``); otherwise the mapping is private (copy-on-write) and the file must
            hold at least ``nbytes`` bytes.
        :raises RuntimeError: a private mapping of a file shorter than ``nbytes``.
        """
        import os

        nbytes = int(nbytes)
        size = os.path.getsize(filename) if os.path.exists(filename) else 0
        if shared and size < nbytes:
            with open(filename, "ab") as f:  # a shared mapping may grow its file
                f.truncate(nbytes)
        elif size < nbytes:
            raise RuntimeError(f"file <{filename}> size <{size}> is smaller than the required "
                               f"mapping size <{nbytes}>")
        if nbytes == 0:
            return wrap_host(np.empty(0, dtype=np.uint8))
        mapping = np.memmap(filename, dtype=np.uint8, mode="r+" if shared else "c",
                            shape=(nbytes,))
        return wrap_host(mapping)

    @classmethod
    def _from_handle(cls, handle: Any, nbytes: int, dev: _device, runtime: Any) -> UntypedStorage:
        self = object.__new__(cls)
        self._setup(handle, nbytes, dev, runtime)
        return self

    def _setup(self, handle: Any, nbytes: int, dev: _device, runtime: Any) -> None:
        self._handle = handle
        self._nbytes = nbytes
        self._device = dev
        self._runtime = runtime
        self._ptr = runtime.allocator.data_ptr(handle)
        self._hostbuf = _UNSET

    @property
    def _host(self) -> np.ndarray | None:
        """The bytes as a host ``uint8`` array (memory the host can address), else None.
        Made on first use: most storages (every eager op's output) never need one."""
        buf = self._hostbuf
        if buf is _UNSET:
            raw = self._runtime.allocator.host_buffer(self._handle)
            buf = None if raw is None else (
                raw if isinstance(raw, np.ndarray) else np.frombuffer(raw, np.uint8))
            self._hostbuf = buf
        return buf

    @_host.setter
    def _host(self, buf: np.ndarray | None) -> None:
        self._hostbuf = buf

    @property
    def device(self) -> _device:
        return self._device

    def nbytes(self) -> int:
        return self._nbytes

    def size(self) -> int:
        return self._nbytes

    def __len__(self) -> int:
        return self._nbytes

    def data_ptr(self) -> int:
        return self._ptr

    def element_size(self) -> int:
        return 1

    def tolist(self) -> list[int]:
        return read_bytes(self, 0, self._nbytes).tolist()

    def __getitem__(self, i: int | slice) -> Any:
        """A byte's value, or for a slice (step 1) a storage over those bytes, sharing them."""
        if isinstance(i, slice):
            return self._byte_range(i)
        return int(read_bytes(self, self._byte_index(i), 1)[0])

    def __setitem__(self, i: int | slice, value: int) -> None:
        """Set a byte, or every byte of a slice, to ``value``."""
        if isinstance(i, slice):
            target = self._byte_range(i)
            write_bytes(target, 0, np.full(target._nbytes, value, np.uint8))
            return
        write_bytes(self, self._byte_index(i), np.array([value], np.uint8))

    def _byte_index(self, i: Any) -> int:
        if not isinstance(i, int):
            raise TypeError(f"can't index a torch.UntypedStorage with {type(i).__name__}")
        if not -self._nbytes <= i < self._nbytes:
            raise IndexError(f"index {i} out of range for storage of size {self._nbytes}")
        return i % self._nbytes

    def _byte_range(self, key: slice) -> UntypedStorage:
        start, stop, step = key.indices(self._nbytes)
        if step != 1:
            raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 is "
                               "supported")
        if self._device.type == "meta":
            raise NotImplementedError("Not available for 'meta' device type")
        if self._device.type != "cpu" or self._host is None:
            # a sub-storage of device memory needs the backend to alias a byte range
            raise NotImplementedError(f"slicing a {self._device.type} storage is not supported")
        return wrap_host(self._host[start : max(start, stop)])

    def share_memory_(self) -> UntypedStorage:
        """Move a CPU storage's bytes into shared memory (in place; every tensor over it
        follows), so that other processes can map them; storages of other devices are left as
        they are (as PyTorch leaves CUDA ones). See ``torch.multiprocessing``."""
        return upcalls.share_storage(self)

    def is_shared(self) -> bool:
        """Whether the bytes are in shared memory."""
        return upcalls.storage_is_shared(self)

    def is_pinned(self, device: Any = None) -> bool:
        """Whether the bytes are pinned host memory for an accelerator's transfers (the
        storage of a tensor :meth:`Tensor.pin_memory` made)."""
        return getattr(self, "_pinned", False)

    @classmethod
    def _new_shared(cls, size: int, *, device: Any = None) -> UntypedStorage:
        """A new CPU storage of ``size`` bytes in shared memory."""
        if device is not None and _normalise(device).type != "cpu":
            return cls(size, device=device)
        return upcalls.new_shared_storage(int(size))

    def untyped(self) -> UntypedStorage:
        """This storage (PyTorch's typed storages answer their untyped one; this is one)."""
        return self

    def cpu(self) -> UntypedStorage:
        if self._device.type == "cpu":
            return self
        out = UntypedStorage(self._nbytes)
        out._host[:] = read_bytes(self, 0, self._nbytes)
        return out

    def __repr__(self) -> str:
        body = " " + "\n ".join(str(b) for b in self.tolist()) if self._host is not None else ""
        return (f"{body}\n[torch.storage.UntypedStorage(device={self._device}) "
                f"of size {self._nbytes}]")


    def __reduce__(self) -> tuple[Any, ...]:
        # Plain pickle (copy, multiprocessing): a torch.save archive read back by the restricted
        # loader, never the raw slots (a handle with a byte count chosen by the pickle).
        return upcalls.reduce_storage(self)

    def __setstate__(self, state: Any) -> None:
        # A pickle's BUILD would otherwise set the slots (a byte count larger than the memory)
        import pickle

        raise pickle.UnpicklingError("a storage is restored from its bytes only; a pickle "
                                     "cannot set its fields")


# PyTorch's own module for the class: checkpoints name it torch.storage.UntypedStorage.
UntypedStorage.__module__ = "torch.storage"


def _normalise(dev: Any) -> _device:
    """Give accelerator devices an index (``cuda`` -> ``cuda:0``); cpu and meta keep none."""
    d = dev if isinstance(dev, _device) else _device(dev)
    if d._index is None and d._type not in INDEXLESS:
        _registry.runtime(d.type)  # raises the backend's own error before we ask for an index
        mod = _registry.device_module(d.type)
        idx = mod.current_device() if mod is not None and hasattr(mod, "current_device") else 0
        d = _device(d.type, idx)
    return d


def wrap_host(buffer: np.ndarray) -> UntypedStorage:
    """A CPU storage over existing host memory (a 1-d ``uint8`` numpy array, possibly a view
    of other memory such as a user's array or an ``np.memmap``); it keeps ``buffer`` alive and
    shares its bytes (``torch.from_numpy``, ``torch.load(mmap=True)``)."""
    if buffer.dtype != np.uint8 or buffer.ndim != 1:
        raise TypeError("wrap_host expects a 1-d uint8 array")
    self = object.__new__(UntypedStorage)
    self._handle = buffer
    self._nbytes = int(buffer.size)
    self._device = _normalise("cpu")
    self._runtime = _registry.runtime("cpu")
    self._ptr = int(buffer.ctypes.data) if buffer.size else 0
    self._host = buffer
    return self


def allocate(nbytes: int, dev: _device) -> UntypedStorage:
    """A new storage of ``nbytes`` on ``dev`` (which must already be normalised)."""
    runtime = _registry.runtime(dev.type)
    _registry.check_index(dev.type, dev.index or 0)
    handle = allocate_handle(runtime, nbytes, dev)
    return UntypedStorage._from_handle(handle, nbytes, dev, runtime)


_STORAGE_MAX = 2**63 - 1  # bytes: what a signed 64-bit size holds, PyTorch's limit too


def grow(storage: UntypedStorage, nbytes: int) -> None:
    """Enlarge ``storage`` in place to ``nbytes`` (its bytes kept, the new ones
    uninitialised), as ``Tensor.resize_`` does: every tensor over it sees the new memory."""
    fresh = allocate(nbytes, storage._device)
    write_bytes(fresh, 0, read_bytes(storage, 0, storage._nbytes))
    storage._setup(fresh._handle, nbytes, storage._device, storage._runtime)


def contiguous_nbytes(shape: tuple[int, ...], itemsize: int) -> int:
    """The bytes of a contiguous tensor of ``shape``; PyTorch's RuntimeError when the product
    overflows 64 bits (in the order of the sizes, as PyTorch multiplies them), before an
    allocator sees a number it cannot take."""
    n = 1
    overflowed = False
    for s in shape:
        n *= s
        overflowed = overflowed or n >= 2**64
    n *= itemsize
    if overflowed or n > _STORAGE_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    return n


def _size_text(nbytes: int) -> str:
    """``nbytes`` as PyTorch's allocator messages write it (``20.00 MiB``)."""
    size, unit = float(nbytes), "bytes"
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if size < 1024 or unit == "EiB":
            break
        size /= 1024
    return f"{nbytes} bytes" if unit == "bytes" else f"{size:.2f} {unit}"


class OutOfMemoryError(RuntimeError):
    """A device allocation failed (``torch.OutOfMemoryError``, ``torch.cuda.OutOfMemoryError``):
    core raises it, so it is core's class, which the facade names."""

    __module__ = "torch"


class AcceleratorError(RuntimeError):
    """An accelerator reported an error (``torch.AcceleratorError``): a device-side assert, a
    failed launch; backends raise it so that programs can catch it apart from other errors."""

    __module__ = "torch"


def allocate_handle(runtime: Any, nbytes: int, dev: _device) -> Any:
    """``runtime``'s allocation of ``nbytes``; running out of memory is a RuntimeError, as in
    PyTorch, whatever the allocator raised: on an accelerator ``torch.OutOfMemoryError`` saying
    "out of memory" (programs catch it, or test the text, to retry with smaller batches)."""
    try:
        if nbytes > _STORAGE_MAX:
            raise MemoryError(nbytes)
        return runtime.allocator.allocate(nbytes, dev.index or 0)
    except MemoryError as exc:
        detail = f"can't allocate memory: you tried to allocate {nbytes} bytes."
        if dev.type == "cpu":
            raise RuntimeError(f"cpu: {detail}") from exc
        raise OutOfMemoryError(f"{dev.type.upper()} out of memory. Tried to allocate "
                               f"{_size_text(nbytes)} on {dev.type}:{dev.index or 0} "
                               f"({detail})") from exc


def read_bytes(storage: UntypedStorage, offset: int, nbytes: int) -> np.ndarray:
    """A host ``uint8`` array with ``nbytes`` bytes of ``storage`` from ``offset`` (a view for
    host memory, a copy otherwise)."""
    if storage._host is not None:
        return storage._host[offset : offset + nbytes]
    if storage._device.type == "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    out = np.empty(nbytes, np.uint8)
    if nbytes:
        storage._runtime.copier.to_host(out, storage._handle, offset)
    return out


def write_bytes(storage: UntypedStorage, offset: int, src: np.ndarray) -> None:
    """Copy the contiguous host ``uint8`` array ``src`` into ``storage`` at ``offset``."""
    if storage._host is not None:
        storage._host[offset : offset + src.size] = src
        return
    if storage._device.type == "meta":
        return
    if src.size:
        storage._runtime.copier.to_device(storage._handle, offset, np.ascontiguousarray(src))
