"""``torch.testing.make_tensor``: random test tensors with PyTorch's ranges per dtype.

Values are drawn with numpy from a stream keyed by the default generator's seed and offset, and
the offset advances with every call, so ``torch.manual_seed(s)`` makes a sequence of calls
reproducible (the values are not PyTorch's: its generator differs).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core import dtype as _dtype, generators as _random, layout as _layout
from .._core.tensor import Tensor
from .._refs.common import bf16_to_f32, f32_to_bf16

__all__ = ["make_tensor"]

# dtype name -> smallest positive normal number (finfo.tiny), for exclude_zero
_TINY = {
    "float16": 2.0 ** -14,
    "bfloat16": 2.0 ** -126,
    "float32": 2.0 ** -126,
    "float64": 2.0 ** -1022,
    "complex64": 2.0 ** -126,
    "complex128": 2.0 ** -1022,
}
# dtype name -> largest finite value (finfo.max) for floating and complex types
_FMAX = {
    "float16": 65504.0,
    "bfloat16": float.fromhex("0x1.fep127"),
    "float32": float(np.finfo(np.float32).max),
    "float64": float(np.finfo(np.float64).max),
    "complex64": float(np.finfo(np.float32).max),
    "complex128": float(np.finfo(np.float64).max),
}


def _shape_of(shape: tuple[Any, ...]) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _rng(numel: int) -> np.random.Generator:
    """A numpy generator for this call: keyed by the default generator's (seed, offset), whose
    offset then moves past the values drawn."""
    # as many Philox counters as a random op drawing two 32-bit words per value would take
    seed, offset = _random.default_generator._reserve((max(numel, 1) * 2 + 3) // 4)
    return np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFF, seed >> 32, offset]))


def _bounds(dt: _dtype.dtype, low: float | None, high: float | None) -> tuple[float, float]:
    """``[low, high)`` for ``dt``: the defaults of PyTorch's table, clamped to the dtype."""
    if dt._category == _dtype.INT:
        info = np.iinfo(np.dtype(dt._np))
        lo_default = -9 if dt.is_signed else 0
        hi_default, lo_min, hi_max = 10, int(info.min), int(info.max)
    else:
        fmax = _FMAX[dt._name]
        lo_default, hi_default, lo_min, hi_max = -9, 9, -fmax, fmax
    low = lo_default if low is None else low
    high = hi_default if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if dt._category == _dtype.INT:
        # fractional limits round up: [2.5, 5.5) holds 3, 4 and 5
        low, high = math.ceil(low), math.ceil(high)
    return max(low, lo_min), min(high, hi_max)


def make_tensor(*shape: int | Sequence[int], dtype: _dtype.dtype, device: Any,
                low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format: Any = None) -> Tensor:
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)``.

    Default ranges (PyTorch's): bool ``[0, 2)``, uint8 ``[0, 10)``, signed integers
    ``[-9, 10)``, floating and complex types ``[-9, 9)`` (real and imaginary parts alike).
    Limits outside the dtype's finite range are clamped to it; fractional integer limits round
    up.

    :param shape: the sizes, as ints or one sequence.
    :param dtype: the dtype of the result.
    :param device: the device of the result.
    :param low: inclusive lower limit (ignored for bool).
    :param high: exclusive upper limit (ignored for bool).
    :param requires_grad: whether the result requires grad (floating and complex only).
    :param noncontiguous: return a non-contiguous view (when the tensor has 2+ elements).
    :param exclude_zero: replace zeros by 1 (integers, bool) or the dtype's smallest normal
        number (floating; both parts for complex).
    :param memory_format: the memory format of the result (not with ``noncontiguous``).
    :raises ValueError: for ``low >= high``, a NaN limit, ``requires_grad`` with an integral
        dtype, or both ``noncontiguous`` and ``memory_format``.
    :raises TypeError: for an unsupported dtype.
    """
    import torch

    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor().")
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    if requires_grad and dtype._category <= _dtype.INT:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    sizes = _shape_of(shape)
    numel = math.prod(sizes)
    if dtype is _dtype.bool_:
        if low is not None and high is not None and low >= high:
            raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
        values: np.ndarray = _rng(numel).integers(0, 2, sizes).astype(bool)
    else:
        lo, hi = _bounds(dtype, low, high)
        floating = dtype._category >= _dtype.FLOAT
        if lo == hi and floating:
            warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                          "complex types is deprecated since 2.1 and will be removed in 2.3. "
                          "Use `torch.full(...)` instead.", FutureWarning, stacklevel=2)
            values = np.full(sizes, lo, np.float64)
            if dtype.is_complex:
                values = values + 1j * values
        elif lo >= hi:
            raise ValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
        elif floating:
            rng = _rng(numel)
            values = rng.uniform(lo, hi, sizes)
            if dtype.is_complex:
                values = values + 1j * rng.uniform(lo, hi, sizes)
        else:
            values = _rng(numel).integers(lo, hi, sizes, endpoint=False)
    values = _rounded(values, dtype)
    if exclude_zero:
        tiny = _TINY.get(dtype._name, 1)
        replacement = complex(tiny, tiny) if dtype.is_complex else tiny
        if dtype is _dtype.bool_:
            replacement = True
        values = np.where(values == 0, replacement, values)
    result = _place(torch, values, sizes, dtype, device, noncontiguous, memory_format)
    if requires_grad:
        result.requires_grad_(True)
    return result


def _rounded(values: np.ndarray, dtype: _dtype.dtype) -> np.ndarray:
    """``values`` rounded to ``dtype`` (bfloat16 as float32 values), so that ``exclude_zero``
    sees the zeros the narrow types produce."""
    if dtype is _dtype.bfloat16:
        return bf16_to_f32(f32_to_bf16(values.astype(np.float32)))
    if dtype is _dtype.bool_:
        return values
    with np.errstate(over="ignore"):
        return values.astype(np.dtype(dtype._np))


def _place(torch: Any, values: np.ndarray, sizes: tuple[int, ...], dtype: _dtype.dtype,
           device: Any, noncontiguous: bool, memory_format: Any) -> Tensor:
    """``values`` as a tensor on ``device`` with the requested layout."""
    if noncontiguous and values.size > 1:
        # every other element of a tensor twice as wide in its last dim
        wide = np.repeat(values, 2, axis=-1)
        return torch.tensor(wide, dtype=dtype, device=device)[..., ::2]
    if memory_format in (_layout.channels_last, _layout.channels_last_3d):
        ndim = 4 if memory_format is _layout.channels_last else 5
        if len(sizes) != ndim:
            raise RuntimeError(f"required rank {ndim} tensor to use {memory_format} format")
        # allocate as (N, spatial..., C) and permute back: channels-last strides
        order = (0, *range(2, ndim), 1)
        stored = torch.tensor(np.ascontiguousarray(values.transpose(order)), dtype=dtype,
                              device=device)
        inverse = tuple(order.index(d) for d in range(ndim))
        return stored.permute(inverse)
    return torch.tensor(values, dtype=dtype, device=device)
