"""What every reference kernel shares: numpy views of host tensors, bfloat16 bits, PyTorch's
casting rules."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._core import config as _config, dtype as _dtype
from .._core.tensor import Tensor

NP_DTYPES: dict[_dtype.dtype, np.dtype] = {d: np.dtype(d._np) for d in _dtype.DTYPES.values()}
FROM_NP: dict[np.dtype, _dtype.dtype] = {
    np.dtype(d._np): d for d in _dtype.DTYPES.values() if d is not _dtype.bfloat16
}


def np_view(t: Tensor) -> np.ndarray:
    """A writable numpy view of a host tensor's memory (bfloat16 shows as its uint16 bits)."""
    size = t._dtype.itemsize
    host = t._storage._host
    if host is None:
        raise RuntimeError(f"tensor on device '{t._device}' has no host-visible memory")
    if any(n == 0 for n in t._shape):  # nothing to view; the offset may lie past the buffer
        return np.empty(t._shape, NP_DTYPES[t._dtype])
    return np.ndarray(t._shape, NP_DTYPES[t._dtype], host, t._offset * size,
                      tuple(s * size for s in t._stride))


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to bfloat16 bits, to nearest even; NaN stays NaN."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32) if x.flags.c_contiguous else np.ascontiguousarray(x).view(np.uint32)
    rounded = ((bits + (0x7FFF + ((bits >> 16) & 1))) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), rounded)


def load(t: Tensor, widen_half: bool = False) -> np.ndarray:
    """The values of ``t`` in a dtype numpy computes in (bfloat16 -> float32; float16 too when
    ``widen_half``, for reductions that must accumulate in float32)."""
    v = np_view(t)
    if t._dtype is _dtype.bfloat16:
        return bf16_to_f32(v)
    if widen_half and t._dtype is _dtype.float16:
        return v.astype(np.float32)
    return v


def store(out: Tensor, values: Any) -> None:
    """Write ``values`` into ``out``, rounding to its dtype."""
    view = np_view(out)
    if out._dtype is _dtype.bfloat16:
        view[...] = f32_to_bf16(np.asarray(values, np.float32))
    else:
        view[...] = values


def convert(values: np.ndarray, src: _dtype.dtype, dst: _dtype.dtype) -> np.ndarray:
    """Cast with PyTorch's rules: nonzero -> True, floats truncate toward zero into integers,
    complex -> real keeps the real part (with PyTorch's warning)."""
    if src is _dtype.bfloat16:
        values, src = bf16_to_f32(values), _dtype.float32
    if dst is _dtype.bool_:
        return values != 0
    if src.is_complex and not dst.is_complex:
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=_config.external_stacklevel())
        values = values.real
    if dst is _dtype.bfloat16:
        return f32_to_bf16(values.astype(np.float32))
    with np.errstate(invalid="ignore", over="ignore"):
        return values.astype(NP_DTYPES[dst], casting="unsafe")


def check_scalar_fits(value: Any, dt: _dtype.dtype) -> None:
    """PyTorch refuses Python integers that overflow an integer dtype."""
    if dt._category == _dtype.INT and isinstance(value, int) and not isinstance(value, bool):
        info = np.iinfo(NP_DTYPES[dt])
        if not info.min <= value <= info.max:
            raise RuntimeError(f"value cannot be converted to type {dt._name} without overflow")
