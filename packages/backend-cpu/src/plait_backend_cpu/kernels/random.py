"""Wrapper of the native Philox kernel: random_bits_."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import UNKNOWN_DTYPE, Kernel
from .reduce import pointers

_MASK64 = (1 << 64) - 1


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """``random_bits_`` (``out, seed, offset``)."""
    int64 = native.DTYPES.index("int64")

    def random_bits_(out: Any, seed: int, offset: int) -> None:
        (out_ptr,) = pointers("random_bits_", out)
        # seed and offset are unsigned 64-bit values, as the reference reads them. Any layout
        # runs natively (element i of the row-major order gets word i). Left to the reference
        # (never from core, which allocates a fresh int64 output): another dtype, an output
        # with repeated elements (stride 0, where the last write wins), more than 64 dims.
        native_ok = dtype_codes.get(out.dtype, UNKNOWN_DTYPE) == int64 and native.random_bits(
            tuple(out.shape), out_ptr, out.stride(), int(seed) & _MASK64, int(offset) & _MASK64
        )
        if not native_ok:
            reference("random_bits_")(out, seed, offset)

    return {"random_bits_": random_bits_}
