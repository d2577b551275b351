"""Device memory and byte copies of plait-backend-cuda, in the shapes of
``torch.backends.hookspecs.Allocator`` and ``Copier``.

A handle is a ``_C.DeviceBuffer``: one ``cudaMalloc`` block, freed by ``cudaFree`` when the
handle is collected. (A caching allocator with streams comes with the CUDA kernels.)
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np


def _host_address(array: np.ndarray, writable: bool) -> int:
    if array.dtype != np.uint8 or array.ndim != 1 or not array.flags.c_contiguous:
        raise ValueError("host side of a CUDA copy must be a contiguous 1-d uint8 array")
    if writable and not array.flags.writeable:
        raise ValueError("host destination of a CUDA copy is read-only")
    return array.__array_interface__["data"][0]


def _check_range(what: str, handle: Any, offset: int, nbytes: int) -> None:
    if offset < 0 or offset + nbytes > handle.nbytes:
        raise IndexError(
            f"CUDA copy {what} [{offset}, {offset + nbytes}) is outside the block of "
            f"{handle.nbytes} bytes"
        )


class DeviceAllocator:
    """``cudaMalloc``/``cudaFree`` per block, on the requested device."""

    __slots__ = ("_native",)

    def __init__(self, native: ModuleType) -> None:
        self._native = native

    def allocate(self, nbytes: int, device_index: int) -> Any:
        if nbytes < 0:
            raise ValueError(f"cannot allocate a negative number of bytes ({nbytes})")
        return self._native.DeviceBuffer(nbytes, device_index)

    def data_ptr(self, handle: Any) -> int:
        return handle.ptr

    def host_buffer(self, handle: Any) -> None:
        return None  # device memory: core goes through the copier


class DeviceCopier:
    """Synchronous ``cudaMemcpy`` between host arrays and device blocks."""

    __slots__ = ("_native",)

    def __init__(self, native: ModuleType) -> None:
        self._native = native

    def to_device(self, dst: Any, dst_offset: int, src: np.ndarray) -> None:
        _check_range("destination", dst, dst_offset, src.nbytes)
        if src.nbytes:
            self._native.memcpy_h2d(dst.ptr + dst_offset, _host_address(src, False), src.nbytes)

    def to_host(self, dst: np.ndarray, src: Any, src_offset: int) -> None:
        _check_range("source", src, src_offset, dst.nbytes)
        if dst.nbytes:
            self._native.memcpy_d2h(_host_address(dst, True), src.ptr + src_offset, dst.nbytes)

    def device_to_device(
        self, dst: Any, dst_offset: int, src: Any, src_offset: int, nbytes: int
    ) -> None:
        _check_range("destination", dst, dst_offset, nbytes)
        _check_range("source", src, src_offset, nbytes)
        if nbytes:
            self._native.memcpy_d2d(dst.ptr + dst_offset, src.ptr + src_offset, nbytes)
