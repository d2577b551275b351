"""Reference kernels of the random group: Philox4x32-10 random bits (docs/architecture.md).

Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) maps a
128-bit counter and a 64-bit key to 128 random bits through ten rounds of two 32x32->64-bit
multiplications. Being counter-based, any element of the stream can be computed on its own:
every backend computes the same words for the same (seed, offset), in any order.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core.tensor import Tensor
from .common import np_view

# The round multipliers and the Weyl key increments of Philox4x32 (Random123's constants).
PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
ROUNDS = 10
_MASK32 = np.uint64(0xFFFFFFFF)


def philox4x32(counter: np.ndarray, key: tuple[int, int], rounds: int = ROUNDS) -> np.ndarray:
    """Philox4x32 on a batch of counters.

    :param counter: ``(n, 4)`` array of 32-bit words (any integer dtype), word 0 least
        significant.
    :param key: the two 32-bit key words ``(k0, k1)``.
    :returns: ``(n, 4)`` ``uint64`` array of the output words, each in ``[0, 2**32)``.
    """
    c = np.asarray(counter, dtype=np.uint64) & _MASK32
    c0, c1, c2, c3 = (c[:, i].copy() for i in range(4))
    k0, k1 = key[0] & 0xFFFFFFFF, key[1] & 0xFFFFFFFF
    m0, m1 = np.uint64(PHILOX_M0), np.uint64(PHILOX_M1)
    for r in range(rounds):
        # 32x32 -> 64-bit products are exact in uint64
        p0 = m0 * c0
        p1 = m1 * c2
        hi0, lo0 = p0 >> np.uint64(32), p0 & _MASK32
        hi1, lo1 = p1 >> np.uint64(32), p1 & _MASK32
        c0, c1, c2, c3 = (hi1 ^ c1 ^ np.uint64(k0), lo1, hi0 ^ c3 ^ np.uint64(k1), lo0)
        if r + 1 < rounds:
            k0 = (k0 + PHILOX_W0) & 0xFFFFFFFF
            k1 = (k1 + PHILOX_W1) & 0xFFFFFFFF
    return np.stack([c0, c1, c2, c3], axis=1)


def counters(offset: int, n: int) -> np.ndarray:
    """The ``(n, 4)`` counter words of counters ``offset, offset + 1, ...`` (128-bit, word 0
    least significant; ``offset`` is an unsigned 64-bit value and the carry goes to word 2)."""
    j = np.arange(n, dtype=np.uint64)
    low = np.uint64(offset & 0xFFFFFFFFFFFFFFFF) + j  # wraps modulo 2**64
    carry = (low < j).astype(np.uint64)
    out = np.zeros((n, 4), np.uint64)
    out[:, 0] = low & _MASK32
    out[:, 1] = low >> np.uint64(32)
    out[:, 2] = carry
    return out


def random_bits_(out: Tensor, seed: int, offset: int) -> None:
    """Element ``i`` of ``out`` (row-major) is lane ``i % 4`` of Philox4x32-10 at counter
    ``offset + i // 4`` with key ``seed`` (low word first)."""
    n = out.numel()
    if n == 0:
        return
    seed &= 0xFFFFFFFFFFFFFFFF
    words = philox4x32(counters(offset, (n + 3) // 4), (seed & 0xFFFFFFFF, seed >> 32))
    np_view(out)[...] = words.reshape(-1)[:n].astype(np.int64).reshape(out._shape)


KERNELS: dict[str, Callable[..., None]] = {"random_bits_": random_bits_}
