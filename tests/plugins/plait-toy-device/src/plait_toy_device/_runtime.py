"""The "native" side of the toy device: memory, copies and a few kernels, all numpy.

Written against the public backend contract only (``torch.backends.contract``), as a vendor
would from ``docs/backend-guide.md``. Kernels are given for ``add``, ``copy_`` and ``fill_``;
each declines what it does not take (bfloat16), and every other primitive reaches the toy
device through core's CPU fallback. ``CALLS`` counts kernel calls so tests can tell the paths
apart.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from torch.backends import contract

CALLS: Counter[str] = Counter()
SYNCS: list[int] = []
ALLOCATIONS: list[tuple[int, int]] = []  # (nbytes, device index)

# numpy has no bfloat16: kernels decline arithmetic on it and the CPU fallback serves those
# calls. A copy between two bfloat16 tensors is a move of 16-bit words, which the toy does
# itself (the CPU fallback needs that copy to bring its results back).
_NUMPY_DTYPES = {name: np.dtype(name) for name in contract.DTYPE_NAMES if name != "bfloat16"}
_WORDS = {"bfloat16": np.dtype(np.uint16)}


class Block:
    """Toy device memory: deliberately not a buffer, so only the copier can reach it."""

    __slots__ = ("index", "mem")

    def __init__(self, nbytes: int, index: int) -> None:
        self.mem = np.zeros(nbytes, np.uint8)
        self.index = index


class Allocator:
    """``contract.Allocator``: one numpy byte array per block."""

    def allocate(self, nbytes: int, device_index: int) -> Block:
        ALLOCATIONS.append((nbytes, device_index))
        return Block(nbytes, device_index)

    def data_ptr(self, handle: Block) -> int:
        return int(handle.mem.ctypes.data)

    def host_buffer(self, handle: Block) -> None:
        return None  # the host cannot address toy memory: core copies through the Copier


class Copier:
    """``contract.Copier``: byte copies between host arrays and blocks."""

    def to_device(self, dst: Block, dst_offset: int, src: np.ndarray) -> None:
        CALLS["to_device"] += 1
        dst.mem[dst_offset : dst_offset + src.size] = src

    def to_host(self, dst: np.ndarray, src: Block, src_offset: int) -> None:
        CALLS["to_host"] += 1
        dst[:] = src.mem[src_offset : src_offset + dst.size]

    def device_to_device(self, dst: Block, dst_offset: int, src: Block, src_offset: int,
                         nbytes: int) -> None:
        dst.mem[dst_offset : dst_offset + nbytes] = src.mem[src_offset : src_offset + nbytes]


def synchronize(index: int) -> None:
    """Toy kernels run synchronously: only record that core asked."""
    SYNCS.append(index)


def _view(t: Any, raw: bool = False) -> np.ndarray:
    """A numpy view of a toy tensor (its block, at its byte offset, with its strides);
    ``raw``: bfloat16 as its 16-bit words, for moves that need no arithmetic."""
    name = str(t.dtype).removeprefix("torch.")
    dt = _NUMPY_DTYPES.get(name) or (_WORDS.get(name) if raw else None)
    if dt is None:
        raise contract.Decline  # before anything is written: the CPU fallback serves the call
    block, offset = contract.memory(t)
    return np.ndarray(tuple(t.shape), dt, block.mem, offset,
                      tuple(s * dt.itemsize for s in t.stride()))


@contract.may_decline
def add(out: Any, a: Any, b: Any) -> None:
    """``add(Tensor(a!) out, Tensor a, Tensor b)``: operands share out's dtype and shape."""
    views = _view(out), _view(a), _view(b)
    CALLS["add"] += 1
    np.add(views[1], views[2], out=views[0])


@contract.may_decline
def copy_(out: Any, src: Any) -> None:
    """``copy_(Tensor(a!) out, Tensor src)``: casting, on one device."""
    same = out.dtype == src.dtype
    dst, values = _view(out, raw=same), _view(src, raw=same)
    CALLS["copy_"] += 1
    dst[...] = values != 0 if out.dtype == contract.dtype("bool") else values


@contract.may_decline
def fill_(out: Any, value: Any) -> None:
    """``fill_(Tensor(a!) out, Scalar value)``."""
    dst = _view(out)
    CALLS["fill_"] += 1
    dst[...] = value


KERNELS = {"add": add, "copy_": copy_, "fill_": fill_}
