"""``torch.finfo`` and ``torch.iinfo``: the numerical limits of floating and integer dtypes.

Pure Python (no numpy), so the facade can serve them without loading the op surface. The values
are exact: IEEE formats described by their exponent and mantissa widths.
"""

from __future__ import annotations

import math
from typing import Any

from . import config as _config, dtype as _dtype

# name -> (bits, mantissa bits, exponent bits) of the floating formats
_FLOAT_FORMATS = {
    "float16": (16, 10, 5),
    "bfloat16": (16, 7, 8),
    "float32": (32, 23, 8),
    "float64": (64, 52, 11),
}

# The 8-bit formats are not IEEE-shaped (the "fn" ones have no infinities, "uz" no negative
# zero, e8m0 no sign): their limits as PyTorch reports them, name -> (eps, max, min, tiny).
_FLOAT8_LIMITS = {
    "float8_e4m3fn": (2.0 ** -3, 448.0, -448.0, 2.0 ** -6),
    "float8_e4m3fnuz": (2.0 ** -3, 240.0, -240.0, 2.0 ** -7),
    "float8_e5m2": (2.0 ** -2, 57344.0, -57344.0, 2.0 ** -14),
    "float8_e5m2fnuz": (2.0 ** -3, 57344.0, -57344.0, 2.0 ** -15),
    "float8_e8m0fnu": (1.0, 2.0 ** 127, 2.0 ** -127, 2.0 ** -127),
}


def _dtype_arg(type: Any, fname: str) -> _dtype.dtype:
    if type is None:
        return _config.get_default_dtype()
    if not isinstance(type, _dtype.dtype):
        raise TypeError(f"{fname}(): argument 'type' (position 1) must be torch.dtype, not "
                        f"{builtin_type(type).__name__}")
    return type


builtin_type = type


class finfo:
    """The limits of a floating dtype (complex dtypes report their real part's).

    :ivar bits: the number of bits the dtype occupies.
    :ivar eps: the difference between 1.0 and the next representable number.
    :ivar max: the largest finite value; ``min`` is its negation.
    :ivar tiny: the smallest positive normal number (also ``smallest_normal``).
    :ivar resolution: ``10 ** -precision``, the decimal resolution.
    :ivar dtype: the dtype's name (``"float32"``).
    """

    bits: int
    eps: float
    max: float
    min: float
    tiny: float
    smallest_normal: float
    resolution: float
    dtype: str

    def __init__(self, type: _dtype.dtype | None = None) -> None:
        dt = _dtype_arg(type, "finfo").to_real()
        if dt._name in _FLOAT8_LIMITS:
            self.eps, self.max, self.min, self.tiny = _FLOAT8_LIMITS[dt._name]
            self.smallest_normal = self.tiny
            self.bits, self.dtype = 8, dt._name
            self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))
            return
        if dt._name not in _FLOAT_FORMATS:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        bits, mantissa, exponent = _FLOAT_FORMATS[dt._name]
        max_exponent = (1 << (exponent - 1)) - 1
        self.bits = bits
        self.eps = 2.0 ** -mantissa
        self.max = (2.0 - 2.0 ** -mantissa) * 2.0 ** max_exponent
        self.min = -self.max
        self.tiny = self.smallest_normal = 2.0 ** (1 - max_exponent)
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))
        self.dtype = dt._name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The limits of an integer dtype.

    :ivar bits: the number of bits the dtype occupies.
    :ivar min: the smallest value; ``max`` the largest.
    :ivar dtype: the dtype's name (``"int64"``).
    """

    bits: int
    min: int
    max: int
    dtype: str

    def __init__(self, type: _dtype.dtype) -> None:
        dt = _dtype_arg(type, "iinfo")
        if dt is _dtype.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if dt._category != _dtype.INT or dt._name in _dtype.NAMED_ONLY:  # int1..uint7 too
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        self.bits = 8 * dt.itemsize
        self.min = -(1 << (self.bits - 1)) if dt.is_signed else 0
        self.max = (1 << (self.bits - 1)) - 1 if dt.is_signed else (1 << self.bits) - 1
        self.dtype = dt._name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


finfo.__module__ = "torch"
iinfo.__module__ = "torch"
