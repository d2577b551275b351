"""Device memory and byte copies of plait-backend-xpu, in the shapes of
``torch.backends.hookspecs.Allocator`` and ``Copier``.

A handle is a ``_C.Buffer``: an OpenCL buffer from the native caching allocator (free lists by
size class, per device), returned to the cache when the handle is collected. Views are element
offsets into it (``contract.memory``), never sub-buffers, so any offset works.

Uploads are non-blocking: the in-order queue runs every later kernel and read after them, and
the native side keeps the host array alive until the copy is done. Downloads block, since the
host reads the array right after.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from . import losses


class DeviceAllocator:
    """``Allocator`` over ``_C.Buffer``."""

    __slots__ = ("_native",)

    def __init__(self, native: ModuleType) -> None:
        self._native = native

    def allocate(self, nbytes: int, device_index: int) -> Any:
        """A block of ``nbytes`` on ``xpu:<device_index>``; MemoryError when the device is full."""
        if nbytes < 0:
            raise ValueError(f"cannot allocate a negative number of bytes ({nbytes})")
        return self._native.Buffer(nbytes, device_index)

    def data_ptr(self, handle: Any) -> int:
        """The block's stand-in address (OpenCL buffers have none; unique per block)."""
        return handle.ptr

    def host_buffer(self, handle: Any) -> None:
        """Device memory: core goes through the copier."""
        return None


class DeviceCopier:
    """``Copier`` over the queue of the buffer's device."""

    __slots__ = ("_native",)

    def __init__(self, native: ModuleType) -> None:
        self._native = native

    def to_device(self, dst: Any, dst_offset: int, src: np.ndarray) -> None:
        """Queue the upload of ``src`` (uint8, contiguous) into ``dst`` at ``dst_offset``."""
        self._native.write(dst, dst_offset, src, non_blocking=True)

    def to_host(self, dst: np.ndarray, src: Any, src_offset: int) -> None:
        """Fill ``dst`` (uint8, contiguous, writable) from ``src`` at ``src_offset``; blocks.
        First raises the error of a deferred check that failed (:mod:`.losses`)."""
        if losses._pending:
            losses.raise_pending()
        self._native.read(dst, src, src_offset)

    def device_to_device(
        self, dst: Any, dst_offset: int, src: Any, src_offset: int, nbytes: int
    ) -> None:
        """Queue a copy on one device; between two devices it goes through the host."""
        self._native.copy(dst, dst_offset, src, src_offset, nbytes)
