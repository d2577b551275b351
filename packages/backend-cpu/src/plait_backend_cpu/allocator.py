"""The host allocator of plait-backend-cpu, in the shape of ``torch.backends.hookspecs.Allocator``.

A handle is a ``_C.HostBlock``: it owns one 64-byte aligned block of the native size-class
allocator, and the block returns to the free list when the handle and every numpy view of it
(``host_buffer``) are gone. numpy views the memory without copies, so ``Tensor.numpy()``
shares it.
"""

from __future__ import annotations

import operator
from types import ModuleType
from typing import Any


class HostAllocator:
    """Allocates host memory for the ``cpu`` device.

    ``allocate(nbytes, device_index=0)`` gives a block of ``nbytes`` (0 allowed) as a
    ``_C.HostBlock`` (``device_index`` is ignored: the host is one device; a negative size
    raises ``ValueError``), and ``data_ptr(handle)`` the address of its first byte (a multiple
    of 64). Both are native callables, not methods: every tensor made on the host calls them,
    and a Python method costs a frame per call.
    """

    __slots__ = ("_host_view", "_native", "allocate")

    # (an attrgetter is no descriptor: the instance's data_ptr is this C callable itself)
    data_ptr = operator.attrgetter("ptr")

    def __init__(self, native: ModuleType) -> None:
        self._native = native
        self.allocate = native.allocate
        self._host_view = native.host_view

    def host_buffer(self, handle: Any) -> Any:
        """A 1-d ``uint8`` numpy array over the block that keeps it alive."""
        return self._host_view(handle)

    def stats(self) -> dict[str, int]:
        """Allocated, peak and cached bytes, the cache limit, free-list hits and misses."""
        return self._native.allocator_stats()

    def empty_cache(self) -> None:
        """Return every cached block to the system."""
        self._native.empty_cache()
