"""The host allocator of plait-backend-cpu, in the shape of ``torch.backends.hookspecs.Allocator``.

A handle is a ``_C.HostBlock``: it owns one 64-byte aligned block of the native size-class
allocator, and the block returns to the free list when the handle and every numpy view of it
(``host_buffer``) are gone. numpy views the memory without copies, so ``Tensor.numpy()``
shares it.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any


class HostAllocator:
    """Allocates host memory for the ``cpu`` device."""

    __slots__ = ("_allocate", "_host_view", "_native")

    def __init__(self, native: ModuleType) -> None:
        self._native = native
        self._allocate = native.allocate
        self._host_view = native.host_view

    def allocate(self, nbytes: int, device_index: int = 0) -> Any:
        """A block of ``nbytes`` (0 allowed) as a ``_C.HostBlock``.

        ``device_index`` is ignored: the host is one device.
        """
        if nbytes < 0:
            raise ValueError(f"cannot allocate a negative number of bytes ({nbytes})")
        return self._allocate(nbytes)

    def data_ptr(self, handle: Any) -> int:
        """The address of the block's first byte (a multiple of 64)."""
        return handle.ptr

    def host_buffer(self, handle: Any) -> Any:
        """A 1-d ``uint8`` numpy array over the block that keeps it alive."""
        return self._host_view(handle)

    def stats(self) -> dict[str, int]:
        """Allocated, peak and cached bytes, the cache limit, free-list hits and misses."""
        return self._native.allocator_stats()

    def empty_cache(self) -> None:
        """Return every cached block to the system."""
        self._native.empty_cache()
