"""Host memory that several processes map: the segments that shared CPU storages live in.

A storage moved into shared memory (``share_memory_()``, or on its way through a
``torch.multiprocessing`` queue) lives in a *segment*: an ``mmap`` of a file that exists only in
memory. The two sharing strategies differ in how another process finds that file, and in who
frees it:

- ``file_descriptor`` (the default): an anonymous memory file (``memfd_create``); processes pass
  its descriptor along (``SCM_RIGHTS``, through :mod:`multiprocessing`'s own machinery). The
  kernel frees the memory when the last descriptor is closed and the last mapping is gone, so
  nothing can leak, whichever process exits first and however. Each shared storage holds one
  descriptor in every process that maps it.
- ``file_system``: a named file under ``/dev/shm``; processes pass its name. No descriptor
  stays open, but the file must be removed by hand: its first bytes hold a count of the
  processes that map it, changed under a file lock, and the last one to let go removes the
  file. A process killed by a signal never lets go (its file stays in ``/dev/shm``), and the
  sender must keep the tensor alive until the receiver has mapped it.

A segment is the base of the numpy arrays over it (the storages' host memory), so they keep it
mapped, and a finaliser unmaps it and releases the descriptor or the count once no array views
it.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import secrets
import struct
import tempfile
import weakref
from typing import Any

import numpy as np

from .._core import storage as _storage, upcalls

__all__ = ["attach_fd", "attach_name", "is_shared", "new_segment", "segment_of",
           "share_storage_", "storage_over"]

# file_system segments: the count of mapping processes sits before the data; 64 bytes keep the
# data 64-byte aligned, as the CPU allocator's blocks are.
_HEADER = 64
_COUNT = struct.Struct("<q")


class Segment:
    """One shared segment mapped into this process (numpy arrays over it keep it mapped: it is
    their base). ``fd`` is its descriptor (``file_descriptor``; -1 otherwise), ``name`` its path
    (``file_system``; None otherwise), ``data_address`` the address of its first data byte.

    Mapped with the C library's ``mmap`` rather than Python's, which would hold a second
    descriptor of the file for each segment (PyTorch's one descriptor per storage already
    meets the limit on open files in programs that share many)."""

    __slots__ = ("__weakref__", "address", "data_address", "data_offset", "fd", "key", "length",
                 "name")

    @property
    def __array_interface__(self) -> dict[str, Any]:
        return {"data": (self.address, False), "shape": (self.length,), "typestr": "|u1",
                "version": 3}

    def bytes(self, offset: int, nbytes: int) -> np.ndarray:
        """A ``uint8`` array over ``nbytes`` data bytes from ``offset`` (it keeps the segment
        mapped)."""
        start = self.data_offset + offset
        return np.asarray(self)[start : start + nbytes]


def _libc() -> Any:
    global _LIBC
    if _LIBC is None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long)
        libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
        _LIBC = libc
    return _LIBC


_LIBC: Any = None
_MAP_FAILED = 2**64 - 1  # (void *) -1


# The segments mapped here, by identity of the memory (inode, or path): a storage that comes
# back, or comes twice, maps onto the same segment and the same storage object (two tensors
# sent over one storage stay views of one storage on arrival).
_segments: weakref.WeakValueDictionary[Any, Segment] = weakref.WeakValueDictionary()
_storages: weakref.WeakValueDictionary[Any, Any] = weakref.WeakValueDictionary()


def _map(fd: int, length: int, data_offset: int, key: Any) -> Segment:
    address = _libc().mmap(None, length, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED,
                           fd, 0)
    if address is None or address == _MAP_FAILED:
        import ctypes

        errno = ctypes.get_errno()
        raise RuntimeError(f"mapping {length} bytes of shared memory failed: "
                           f"{os.strerror(errno)}")
    segment = Segment()
    segment.address, segment.length = address, length
    segment.data_offset = data_offset
    segment.data_address = address + data_offset
    segment.key = key
    _segments[key] = segment
    return segment


def _unmap(address: int, length: int, fd: int) -> None:
    _libc().munmap(address, length)
    if fd >= 0:
        os.close(fd)


def _shm_dir() -> str:
    return "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()


def _anonymous_file() -> int:
    """A descriptor of a memory file that has no name (freed with its last descriptor)."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("plait-storage", os.MFD_CLOEXEC)
    # (elsewhere: a file under the shared-memory folder, removed at once, which is the same)
    path = os.path.join(_shm_dir(), f"plait_{os.getpid()}_{secrets.token_hex(8)}")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.unlink(path)
    return fd


def _inode(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return (info.st_dev, info.st_ino)


def new_segment(nbytes: int, strategy: str) -> Segment:
    """A fresh segment with room for ``nbytes`` bytes, for ``strategy``."""
    length = max(1, nbytes)  # (mmap cannot map nothing)
    if strategy == "file_system":
        path = os.path.join(_shm_dir(), f"plait_{os.getpid()}_{secrets.token_hex(8)}")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, _HEADER + length)
            os.pwrite(fd, _COUNT.pack(1), 0)
            segment = _map(fd, _HEADER + length, _HEADER, path)
        finally:
            os.close(fd)  # the name finds it; no descriptor is held (the point of file_system)
        segment.fd, segment.name = -1, path
        weakref.finalize(segment, _release_name, segment.address, segment.length, path)
        return segment
    fd = _anonymous_file()
    try:
        os.ftruncate(fd, length)
    except BaseException:
        os.close(fd)
        raise
    return _owned_mapping(fd, length, _inode(fd))


def attach_fd(fd: int, length: int) -> Segment:
    """The segment behind ``fd`` (a descriptor this process now owns), mapped here once."""
    key = _inode(fd)
    segment = _segments.get(key)
    if segment is not None:
        os.close(fd)  # already mapped here, with a descriptor of its own
        return segment
    return _owned_mapping(fd, length, key)


def _owned_mapping(fd: int, length: int, key: tuple[int, int]) -> Segment:
    """``fd``'s memory mapped here as a segment that owns the descriptor (closed, with the
    mapping, when the segment goes; closed at once if the mapping fails)."""
    try:
        segment = _map(fd, length, 0, key)
    except BaseException:
        os.close(fd)
        raise
    segment.fd, segment.name = fd, None
    weakref.finalize(segment, _unmap, segment.address, length, fd)
    return segment


def attach_name(path: str, length: int) -> Segment:
    """The ``file_system`` segment at ``path``, mapped here once (counted as one more user)."""
    segment = _segments.get(path)
    if segment is not None:
        return segment
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        raise RuntimeError(f"shared memory {path} is gone: with the file_system sharing "
                           "strategy the sender must keep the tensor alive until it has been "
                           "received") from None
    try:
        if _add(fd, 1) <= 1:  # it had no user left: it is being removed
            raise RuntimeError(f"shared memory {path} was released before it was received")
        segment = _map(fd, length, _HEADER, path)
    finally:
        os.close(fd)
    segment.fd, segment.name = -1, path
    weakref.finalize(segment, _release_name, segment.address, length, path)
    return segment


def _add(fd: int, delta: int) -> int:
    """Add ``delta`` to a ``file_system`` segment's count of users, under the file's lock;
    the new count."""
    fcntl.lockf(fd, fcntl.LOCK_EX)
    try:
        (count,) = _COUNT.unpack(os.pread(fd, _COUNT.size, 0))
        count += delta
        os.pwrite(fd, _COUNT.pack(count), 0)
        return count
    finally:
        fcntl.lockf(fd, fcntl.LOCK_UN)


def _release_name(address: int, length: int, path: str) -> None:
    """This process no longer maps ``path``: unmap it, count one user less, and remove the
    file when it was the last."""
    _unmap(address, length, -1)
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return
    try:
        if _add(fd, -1) <= 0:
            os.unlink(path)
    finally:
        os.close(fd)


def segment_of(storage: Any) -> Segment | None:
    """The shared segment a CPU storage's bytes lie in, or None (the chain of numpy bases from
    the storage's host array leads to it)."""
    owner = storage._handle
    while owner is not None:
        if isinstance(owner, Segment):
            return owner
        if isinstance(owner, np.ndarray):
            owner = owner.base
        else:
            return None
    return None


def is_shared(storage: Any) -> bool:
    """Whether ``storage``'s bytes are in shared memory."""
    return storage.device.type == "cpu" and segment_of(storage) is not None


def share_storage_(storage: Any, strategy: str | None = None) -> Any:
    """Move a CPU storage's bytes into a fresh shared segment, in place (every tensor over it
    sees the moved bytes); nothing to do when they are there already. Storages of other devices
    are left as they are, as PyTorch leaves CUDA storages."""
    if storage.device.type != "cpu" or segment_of(storage) is not None:
        return storage
    if strategy is None:
        from . import get_sharing_strategy

        strategy = get_sharing_strategy()
    nbytes = storage.nbytes()
    segment = new_segment(nbytes, strategy)
    host = segment.bytes(0, nbytes)
    host[:] = _storage.read_bytes(storage, 0, nbytes)
    # (as storage.grow swaps an enlarged block in: the storage object stays, its memory moves)
    storage._handle = host
    storage._hostbuf = host
    storage._ptr = int(host.ctypes.data) if nbytes else 0
    _storages[(segment.key, 0, nbytes)] = storage
    return storage


def new_shared(nbytes: int) -> Any:
    """A new CPU storage of ``nbytes`` in shared memory (``UntypedStorage._new_shared``)."""
    from . import get_sharing_strategy

    segment = new_segment(nbytes, get_sharing_strategy())
    storage = _storage.wrap_host(segment.bytes(0, nbytes))
    _storages[(segment.key, 0, nbytes)] = storage
    return storage


def storage_over(segment: Segment, offset: int, nbytes: int) -> Any:
    """The storage over ``nbytes`` bytes at ``offset`` in ``segment``: the one this process
    already has there, else a new one."""
    key = (segment.key, offset, nbytes)
    storage = _storages.get(key)
    if storage is None:
        storage = _storages[key] = _storage.wrap_host(segment.bytes(offset, nbytes))
    return storage


upcalls.install(share_storage=share_storage_, storage_is_shared=is_shared,
                new_shared_storage=new_shared)
