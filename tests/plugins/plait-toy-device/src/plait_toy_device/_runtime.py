"""The "native" side of the toy device: memory, copies and a few kernels, all numpy.

Kernels are given only ``add``, ``copy_`` and ``fill_``; every other primitive reaches the toy
device through core's CPU fallback. ``CALLS`` counts kernel calls so tests can tell them apart.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

CALLS: Counter[str] = Counter()
SYNCS: list[int] = []
ALLOCATIONS: list[tuple[int, int]] = []  # (nbytes, device index)


class Block:
    """Toy device memory: deliberately not a buffer, so only the copier can reach it."""

    __slots__ = ("index", "mem")

    def __init__(self, nbytes: int, index: int) -> None:
        self.mem = np.zeros(nbytes, np.uint8)
        self.index = index


class Allocator:
    def allocate(self, nbytes: int, device_index: int) -> Block:
        ALLOCATIONS.append((nbytes, device_index))
        return Block(nbytes, device_index)

    def data_ptr(self, handle: Block) -> int:
        return int(handle.mem.ctypes.data)

    def host_buffer(self, handle: Block) -> None:
        return None


class Copier:
    def to_device(self, dst: Block, dst_offset: int, src: np.ndarray) -> None:
        CALLS["to_device"] += 1
        dst.mem[dst_offset : dst_offset + src.size] = src

    def to_host(self, dst: np.ndarray, src: Block, src_offset: int) -> None:
        CALLS["to_host"] += 1
        dst[:] = src.mem[src_offset : src_offset + dst.size]

    def device_to_device(self, dst: Block, dst_offset: int, src: Block, src_offset: int,
                         nbytes: int) -> None:
        dst.mem[dst_offset : dst_offset + nbytes] = src.mem[src_offset : src_offset + nbytes]


def _np_dtype(t: Any) -> np.dtype:
    name = str(t.dtype).removeprefix("torch.")
    if name == "bfloat16":
        raise TypeError("the toy device has no bfloat16 kernels")
    return np.dtype(name)


def _view(t: Any) -> np.ndarray:
    dt = _np_dtype(t)
    block = t.untyped_storage()._handle
    size = dt.itemsize
    return np.ndarray(tuple(t.shape), dt, block.mem, t.storage_offset() * size,
                      tuple(s * size for s in t.stride()))


def add(out: Any, a: Any, b: Any) -> None:
    CALLS["add"] += 1
    np.add(_view(a), _view(b), out=_view(out))


def copy_(out: Any, src: Any) -> None:
    CALLS["copy_"] += 1
    values = _view(src)
    _view(out)[...] = values != 0 if out.dtype.__repr__() == "torch.bool" else values


def fill_(out: Any, value: Any) -> None:
    CALLS["fill_"] += 1
    _view(out)[...] = value


KERNELS = {"add": add, "copy_": copy_, "fill_": fill_}
