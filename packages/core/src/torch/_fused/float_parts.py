"""``frexp`` and ``ldexp``: floating-point numbers as mantissa times a power of two, and back.

``frexp`` gives a mantissa in [0.5, 1) (its sign the input's) and an int32 exponent with
``input = mantissa * 2 ** exponent``; zeros, infinities and NaN keep their value with exponent
0, as C's frexp. The exponent is found with ``log2`` in float64 and corrected by one where
rounding put it on the wrong side of a power of two; the scaling is done in two halves so that
subnormal inputs (whose 2 ** -exponent overflows) come out exact.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from .._aten.elementwise import where
from .._core import config as _config, dtype as _dtype, promotion as _promotion
from .._core.tensor import Tensor

__all__ = ["frexp", "ldexp"]

_FrexpResult = namedtuple("frexp", "mantissa exponent")  # type: ignore[misc]
_FrexpResult.__module__ = "torch.return_types"


def _times_power_of_two(x: Tensor, exponent: Tensor) -> Tensor:
    """x * 2 ** exponent without overflowing the power: two half-size steps (float64)."""
    half = (exponent / 2).floor()
    return x * (2.0 ** half) * (2.0 ** (exponent - half))


def frexp(input: Tensor, *, out: Any = None) -> Any:
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent``, |mantissa| in
    [0.5, 1) and an int32 exponent."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = input.to(_dtype.float64)
    finite = x.isfinite() & (x != 0)
    magnitude = where(finite, x.abs(), 1.0)
    exponent = magnitude.log2().floor() + 1
    mantissa = _times_power_of_two(magnitude, -exponent)
    # log2 rounded across a power of two: bring the mantissa back into [0.5, 1)
    exponent = where(mantissa >= 1, exponent + 1, where(mantissa < 0.5, exponent - 1, exponent))
    mantissa = _times_power_of_two(magnitude, -exponent)
    mantissa = where(finite, mantissa * x.sign(), x).to(input.dtype)
    exponent = where(finite, exponent, 0).to(_dtype.int32)
    if out is not None:
        out[0].copy_(mantissa)
        out[1].copy_(exponent)
        return _FrexpResult(out[0], out[1])
    return _FrexpResult(mantissa, exponent)


def ldexp(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``input * 2 ** other``, computed in the result's floating dtype (integers give the
    default floating dtype), the power applied in two halves so that a large exponent with a
    small mantissa does not overflow on the way."""
    dtype = _promotion.result_type(input, other)
    if not (dtype.is_floating_point or dtype.is_complex):
        dtype = _config.get_default_dtype()
    result = _times_power_of_two(input.to(dtype), other.to(dtype))
    return result if out is None else out.copy_(result)


METHODS = {"frexp": frexp, "ldexp": ldexp}
