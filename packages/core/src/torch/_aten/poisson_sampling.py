"""``torch.poisson``: one sample of Poisson(rate) per element of a tensor of rates.

Sampling is composite over the Philox ``rand`` op (as ``_standard_gamma``), so every backend
draws the same numbers for a seed, vectorised in rounds: each round draws for every element
still pending. Small rates (below ``_SMALL_RATE``) count uniforms until their running product
falls below ``exp(-rate)`` (Knuth's method); larger rates use Hörmann's transformed rejection
with squeeze (PTRS, 1993), which accepts about nine candidates in ten. The computation runs in
float64 and the counts are returned in the rates' dtype.

As in PyTorch the sample's derivative with respect to the rate is zero.
"""

from __future__ import annotations

from .._core import config as _config
from .._core.generators import Generator
from .._core.tensor import Tensor
from .elementwise import wide_float
from .no_data import has_no_data
from .random import rand

__all__ = ["poisson"]

_SMALL_RATE = 10.0
# Rejection rounds before giving up; the chance of an element failing them all is < 1e-60.
_MAX_ROUNDS = 64


def _knuth(rate: Tensor, generator: Generator | None) -> Tensor:
    """Counts for rates below ``_SMALL_RATE``: the number of uniforms multiplied before the
    product falls below ``exp(-rate)``."""
    threshold = (-rate).exp()
    count = rate.new_zeros(rate.shape)
    product = rate.new_ones(rate.shape)
    pending = rate.gt(0.0)
    while bool(pending.any()):
        product = product * rand(rate.shape, dtype=rate.dtype, device=rate.device,
                                 generator=generator)
        pending = pending & product.gt(threshold)
        count = count + pending.to(rate.dtype)
    return count


def _log_factorial(k: Tensor) -> Tensor:
    """``log(k!)`` for integer-valued ``k >= 0`` (lgamma(k + 1))."""
    return (k + 1.0).lgamma()


def _ptrs(rate: Tensor, generator: Generator | None) -> Tensor:
    """Counts for rates of at least ``_SMALL_RATE`` by transformed rejection (Hörmann)."""
    root = rate.sqrt()
    log_rate = rate.log()
    b = 0.931 + 2.53 * root
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2.0)
    result = rate.new_zeros(rate.shape)
    pending = rate.new_ones(rate.shape).bool()
    for _ in range(_MAX_ROUNDS):
        u = rand(rate.shape, dtype=rate.dtype, device=rate.device, generator=generator) - 0.5
        v = rand(rate.shape, dtype=rate.dtype, device=rate.device, generator=generator)
        us = 0.5 - u.abs()
        k = ((2.0 * a / us + b) * u + rate + 0.43).floor()
        squeeze = us.ge(0.07) & v.le(v_r)
        rejected = k.lt(0.0) | (us.lt(0.013) & v.gt(us))
        log_accept = (v.log() + inv_alpha.log() - (a / (us * us) + b).log()).le(
            -rate + k * log_rate - _log_factorial(k.clamp(min=0.0)))
        accept = squeeze | (~rejected & log_accept)
        result = k.where(pending & accept, result)
        pending = pending & ~accept
        if not bool(pending.any()):
            break
    return result


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """A sample of Poisson(``rate``) for each rate in ``input`` (non-negative), as a tensor of
    ``input``'s dtype and shape.

    :param generator: the Philox generator to draw from (the device's default when None).
    """
    if not (input.dtype.is_floating_point):
        names = {"torch.int64": "Long", "torch.int32": "Int", "torch.int16": "Short",
                 "torch.int8": "Char", "torch.uint8": "Byte", "torch.bool": "Bool"}
        name = names.get(repr(input.dtype), repr(input.dtype).removeprefix("torch."))
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{name}'")
    if has_no_data(input):  # meta or fake: the layout only
        return input.new_empty(input.shape)
    rate = input.detach().to(wide_float(input.device))  # (float32 on a device without fp64)
    # NaN fails the comparison too, as in PyTorch
    if rate.numel() and not bool(rate.ge(0.0).all()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    small = rate.lt(_SMALL_RATE)
    counts = _knuth(rate.where(small, 0.0), generator)
    large = ~small
    if bool(large.any()):
        counts = _ptrs(rate.where(large, _SMALL_RATE), generator).where(large, counts)
    result = counts.to(input.dtype)
    if input.requires_grad and _config.is_grad_enabled():
        # PyTorch's derivative of poisson is zero: keep the graph, pass no gradient
        return result + (input - input.detach()) * 0.0
    return result


METHODS: dict[str, object] = {}
