"""``torch.quasirandom.SobolEngine``: Sobol' low-discrepancy sequences, plain or scrambled.

A point's coordinate in dimension ``d`` is the XOR of the direction numbers ``V[d][j]`` for the
bits ``j`` set in the Gray code of its index (Antonov and Saleev's ordering), read as a binary
fraction of ``MAXBIT`` bits. Direction numbers come from Joe and Kuo's table of primitive
polynomials and initial values (dimensions up to 21201), which this module reads from SciPy's
installed copy (``scipy/stats/_sobol_direction_numbers.npz``) rather than shipping a second one:
``pip install scipy`` where it is missing. Scrambling is Owen's linear matrix scramble with a
digital shift: a random lower-triangular binary matrix (unit diagonal) applied to each
dimension's direction numbers, and a random shift XORed into every point; it keeps the
sequence's (t, s)-net structure. Points come out in the same order as PyTorch's and SciPy's
unscrambled sequences (the first is all zeros).
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import numpy as np

import torch

__all__ = ["SobolEngine"]

_TABLE = "_sobol_direction_numbers.npz"
_direction_table: tuple[np.ndarray, np.ndarray] | None = None


def _joe_kuo_table() -> tuple[np.ndarray, np.ndarray]:
    """(primitive polynomials, initial direction values) for every supported dimension."""
    global _direction_table
    if _direction_table is None:
        spec = importlib.util.find_spec("scipy")
        path = None
        if spec is not None and spec.submodule_search_locations:
            for root in spec.submodule_search_locations:
                candidate = os.path.join(root, "stats", _TABLE)
                if os.path.exists(candidate):
                    path = candidate
                    break
        if path is None:
            raise ImportError("torch.quasirandom.SobolEngine reads Joe and Kuo's Sobol' "
                              "direction numbers from SciPy's copy of the table, and SciPy is "
                              "not installed: pip install scipy")
        with np.load(path) as table:
            _direction_table = (table["poly"].astype(np.int64),
                                table["vinit"].astype(np.int64))
    return _direction_table


def _direction_numbers(dimension: int, bits: int) -> np.ndarray:
    """(dimension, bits) int64: V[d][j], the j-th direction number of dimension d, as an
    integer of ``bits`` bits (the most significant bit is 1/2)."""
    poly, vinit = _joe_kuo_table()
    m = np.zeros((dimension, bits), dtype=np.int64)
    m[0, :] = 1  # the first dimension: van der Corput's sequence
    for d in range(1, dimension):
        p = int(poly[d])
        degree = p.bit_length() - 1
        m[d, :degree] = vinit[d, :degree]
        for j in range(degree, bits):
            # m_j = 2^s m_{j-s} ^ m_{j-s} ^ sum_k 2^k a_k m_{j-k}, a_k the polynomial's
            # inner coefficients (bit s - k of p)
            value = (m[d, j - degree] << degree) ^ m[d, j - degree]
            for k in range(1, degree):
                if (p >> (degree - k)) & 1:
                    value ^= m[d, j - k] << k
            m[d, j] = value
    shifts = np.arange(bits - 1, -1, -1, dtype=np.int64)
    return m << shifts


def _scramble(directions: np.ndarray, bits: int, generator: torch.Generator
              ) -> tuple[np.ndarray, np.ndarray]:
    """Owen's linear matrix scramble and a digital shift, drawn from ``generator``: the
    scrambled direction numbers and the shift (one integer per dimension)."""
    dimension = directions.shape[0]
    lower = torch.randint(2, (dimension, bits, bits), generator=generator).numpy()
    lower = np.tril(lower.astype(np.int64), -1) + np.eye(bits, dtype=np.int64)
    shift_bits = torch.randint(2, (dimension, bits), generator=generator).numpy()
    weights = 1 << np.arange(bits - 1, -1, -1, dtype=np.int64)  # row r: bit of value 2^-(r+1)
    shift = (shift_bits.astype(np.int64) * weights).sum(axis=1)
    # bit r of a scrambled number: XOR over c <= r of L[r, c] * bit c of the original
    original = (directions[:, :, None] >> (bits - 1 - np.arange(bits))) & 1  # (d, j, c)
    scrambled_bits = np.einsum("drc,djc->djr", lower, original) & 1
    return (scrambled_bits * weights).sum(axis=2), shift


class SobolEngine:
    """``SobolEngine(dimension, scramble=False, seed=None)``: draws points of the Sobol'
    sequence in ``[0, 1)^dimension``; ``seed`` fixes the scramble."""

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension: int, scramble: bool = False, seed: int | None = None) -> None:
        if not 1 <= dimension <= self.MAXDIM:
            raise ValueError("Supported range of dimensionality for SobolEngine is "
                             f"[1, {self.MAXDIM}]")
        self.dimension = dimension
        self.scramble = scramble
        self.seed = seed
        self._directions = _direction_numbers(dimension, self.MAXBIT)
        self._shift = np.zeros(dimension, dtype=np.int64)
        if scramble:
            generator = torch.Generator()
            if seed is not None:
                generator.manual_seed(seed)
            else:
                generator.seed()
            self._directions, self._shift = _scramble(self._directions, self.MAXBIT,
                                                      generator)
        self.num_generated = 0

    def _points(self, start: int, count: int) -> np.ndarray:
        """Points ``start .. start + count - 1`` as integers of MAXBIT bits."""
        index = np.arange(start, start + count, dtype=np.int64)
        gray = index ^ (index >> 1)
        points = np.broadcast_to(self._shift, (count, self.dimension)).copy()
        for j in range(self.MAXBIT):
            chosen = ((gray >> j) & 1).astype(bool)
            if chosen.any():
                points[chosen] ^= self._directions[:, j]
        return points

    def draw(self, n: int = 1, out: torch.Tensor | None = None,
             dtype: torch.dtype | None = None) -> torch.Tensor:
        """The next ``n`` points, an ``(n, dimension)`` tensor (of ``dtype``, by default
        ``torch.get_default_dtype()``)."""
        if dtype is None:
            dtype = torch.get_default_dtype()
        values = self._points(self.num_generated, n) / float(1 << self.MAXBIT)
        result = torch.from_numpy(values).to(dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m: int, out: torch.Tensor | None = None,
                   dtype: torch.dtype | None = None) -> torch.Tensor:
        """The next ``2 ** m`` points, keeping the total drawn a power of 2 (the sequence's
        balance properties need it)."""
        n = 2 ** m
        total = self.num_generated + n
        if total & (total - 1):
            raise ValueError("The balance properties of Sobol' points require n to be a power "
                             f"of 2. {self.num_generated} points have been previously "
                             f"generated, then: n={self.num_generated}+2**{m}={total}. If you "
                             "still want to do this, please use 'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self) -> SobolEngine:
        """Start the sequence again from its first point."""
        self.num_generated = 0
        return self

    def fast_forward(self, n: int) -> SobolEngine:
        """Skip the next ``n`` points."""
        self.num_generated += n
        return self

    def __repr__(self) -> str:
        fields = [f"dimension={self.dimension}"]
        if self.scramble:
            fields.append("scramble=True")
        if self.seed is not None:
            fields.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(fields)})"

    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__)
