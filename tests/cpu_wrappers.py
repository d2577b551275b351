"""What the tests of plait-backend-cpu's kernel wrappers share: the dtype and layout tables, a
wrapper table whose reference records the cases left to it, and numpy <-> tensor helpers.
Import it after ``pytest.importorskip("plait_backend_cpu._C")``."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from plait_backend_cpu import _C as C
from plait_backend_cpu.kernels import make_kernels

import torch
from torch._refs import CPU_KERNELS

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float32, torch.float64, torch.float16, torch.bfloat16]
LAYOUTS = ["contiguous", "transposed", "broadcast", "sliced"]


class Native:
    """The backend's wrappers, with a reference that records the cases left to it."""

    def __init__(self) -> None:
        self.fallbacks: list[str] = []
        codes = {getattr(torch, name): code for code, name in enumerate(C.DTYPES)}
        self.table = make_kernels(C, codes, self._reference)

    def _reference(self, name: str):
        self.fallbacks.append(name)
        return CPU_KERNELS[name]

    def __getattr__(self, name: str):
        return self.table[name]

    @staticmethod
    def fresh() -> Native:
        """A new table (a fixture body: every test sees its own fallback record)."""
        return Native()


def thread_count() -> Iterator[Callable[[int], None]]:
    """A fixture body: yields ``set_num_threads`` and restores the thread count after."""
    before = C.get_num_threads()
    yield C.set_num_threads
    C.set_num_threads(before)


def np_dtype(dtype) -> np.dtype:
    return np.dtype("float32") if dtype is torch.bfloat16 else np.dtype(str(dtype).split(".")[1])


def tensor(values: np.ndarray, dtype) -> torch.Tensor:
    """A contiguous Plait tensor of ``values`` converted to ``dtype`` (0-d stays 0-d)."""
    # np.array, not np.ascontiguousarray: that one turns a 0-d array into a 1-d one
    if dtype is torch.bfloat16:
        return torch.from_numpy(np.array(values, np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.array(values, np_dtype(dtype)))
