"""``torch._standard_gamma``: samples of Gamma(alpha, 1) with implicit reparameterisation
gradients, the primitive Gamma, Beta and Dirichlet sampling builds on.

Sampling is composite over the Philox ``randn``/``rand`` ops, so every backend draws the same
numbers for a seed: Marsaglia and Tsang's squeeze-and-reject method, vectorised (each round draws
for every element and keeps the first accepted candidate; about 97% accept per round). Shapes
below one sample ``alpha + 1`` and scale by ``u ** (1 / alpha)``.

The gradient is implicit (Figurnov et al., 2018): holding the CDF value ``u = P(alpha, x)``
fixed, ``dx/dalpha = -(dP/dalpha) / density(x)``. ``dP/dalpha`` comes from the power series of
the regularised lower incomplete gamma function differentiated term by term, in float64; for
``alpha`` above ``_SERIES_LIMIT`` the Wilson-Hilferty cube-root normal approximation (accurate
there) is differentiated instead. The gradient is attached as ``x + (alpha - alpha.detach()) *
dx/dalpha``: the forward value is exactly ``x``, the first derivative is the implicit one
(second derivatives through the sample are not provided).
"""

from __future__ import annotations

import math

from .._core import config as _config
from .._core.generators import Generator
from .._core.tensor import Tensor
from .creation import arange
from .elementwise import wide_float
from .random import rand, randn
from .shape import cat

__all__ = ["_standard_gamma"]

_SERIES_LIMIT = 150.0
_GRID_ELEMENTS = 1 << 22
_TINY = {"float32": 1.1754943508222875e-38, "bfloat16": 1.1754943508222875e-38,
         "float16": 6.103515625e-05}
# Rejection rounds before giving up; the chance of an element failing them all is < 1e-100.
_MAX_ROUNDS = 64


def _marsaglia_tsang(alpha: Tensor, generator: Generator | None) -> Tensor:
    """Gamma(alpha, 1) samples for ``alpha >= 1`` (float64 in, float64 out)."""
    d = alpha - 1.0 / 3.0
    c = (9.0 * d).rsqrt()
    result = alpha.new_zeros(alpha.shape)
    pending = alpha.new_ones(alpha.shape).bool()
    for _ in range(_MAX_ROUNDS):
        z = randn(alpha.shape, dtype=alpha.dtype, device=alpha.device, generator=generator)
        u = rand(alpha.shape, dtype=alpha.dtype, device=alpha.device, generator=generator)
        v = (1.0 + c * z) ** 3
        safe_v = v.clamp(min=1e-300)
        accept = (v > 0) & (u.log() < 0.5 * z * z + d - d * safe_v + d * safe_v.log())
        take = pending & accept
        result = (d * safe_v).where(take, result)
        pending = pending & ~accept
        if not bool(pending.any()):
            break
    return result


def _sample(alpha: Tensor, generator: Generator | None) -> Tensor:
    boosted = alpha.lt(1.0)
    shape_for_sampling = (alpha + 1.0).where(boosted, alpha)
    x = _marsaglia_tsang(shape_for_sampling, generator)
    u = rand(alpha.shape, dtype=alpha.dtype, device=alpha.device, generator=generator)
    # The boost trick: Gamma(a) = Gamma(a + 1) * U ** (1 / a) for a < 1.
    shrink = (u.log() / alpha).exp()
    return (x * shrink).where(boosted, x)


def _series_dx_dalpha(alpha: Tensor, x: Tensor) -> Tensor:
    if x.numel() == 0:
        return x.clone()
    span = float((x - alpha).clamp(min=0).max()) + 9.0 * math.sqrt(float(x.max()) + 1.0)
    terms = int(span) + 12
    # The series is evaluated as a (chunk, terms) grid: bound its memory.
    flat_alpha, flat_x = alpha.reshape(-1), x.reshape(-1)
    step = max(1, _GRID_ELEMENTS // terms)
    parts = [_series_chunk(flat_alpha[i:i + step], flat_x[i:i + step], terms)
             for i in range(0, flat_x.numel(), step)]
    return (parts[0] if len(parts) == 1 else cat(parts)).reshape(x.shape)


def _series_chunk(alpha: Tensor, x: Tensor, terms: int) -> Tensor:
    # Term n of the series over the density is prod_{j<=n} x / (alpha + j), and its log
    # derivative log(x) - digamma(alpha + n + 1) = log(x) - digamma(alpha) - sum_{j<=n}
    # 1 / (alpha + j): running sums along the terms, so the grid needs no lgamma/digamma.
    log_x = x.log()
    a = alpha.unsqueeze(-1) + arange(terms, dtype=alpha.dtype, device=alpha.device)
    scaled = (log_x.unsqueeze(-1) - a.log()).cumsum(-1).exp()
    d_log_term = (log_x - alpha.digamma()).unsqueeze(-1) - a.reciprocal().cumsum(-1)
    return -(scaled * d_log_term).sum(-1)


def _wilson_hilferty_dx_dalpha(alpha: Tensor, x: Tensor) -> Tensor:
    root_alpha = alpha.sqrt()
    base = (x / alpha) ** (1.0 / 3.0)
    z = (base - 1.0 + 1.0 / (9.0 * alpha)) * 3.0 * root_alpha
    d_base = 1.0 / (9.0 * alpha * alpha) - z / (6.0 * alpha * root_alpha)
    return base ** 3 + 3.0 * alpha * base * base * d_base


def _dx_dalpha(alpha: Tensor, x: Tensor) -> Tensor:
    large = alpha.gt(_SERIES_LIMIT)
    tiny_x = x.clamp(min=1e-300)
    series = _series_dx_dalpha(alpha.clamp(max=_SERIES_LIMIT),
                               tiny_x.where(~large, alpha.new_ones(alpha.shape)))
    approx = _wilson_hilferty_dx_dalpha(alpha, tiny_x)
    grad = approx.where(large, series)
    # A finite gradient keeps 0 * grad at 0 in the forward value.
    return grad.nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)


def _standard_gamma(alpha: Tensor, generator: Generator | None = None) -> Tensor:
    """Samples of Gamma(``alpha``, 1), one per element of ``alpha``, of ``alpha``'s dtype.

    Differentiable in ``alpha`` by implicit reparameterisation (first order).

    :param generator: the Philox generator to draw from (the device's default when None).
    """
    # float64, or float32 on a device without double precision (as PyTorch's GPU sampler)
    plain = alpha.detach().to(wide_float(alpha.device))
    x = _sample(plain, generator).clamp(min=float.fromhex("0x1p-1074"))
    result = x.to(alpha.dtype)
    # Samples stay above the dtype's smallest normal number so that their logs are finite.
    result = result.clamp(min=_TINY.get(alpha.dtype.__repr__().split(".")[-1], 0.0))
    # The gradient series is costly: only build it when autograd will record the result.
    if not (alpha.requires_grad and _config.is_grad_enabled()):
        return result
    grad = _dx_dalpha(plain, x).to(alpha.dtype)
    return result + (alpha - alpha.detach()) * grad


METHODS: dict[str, object] = {}
