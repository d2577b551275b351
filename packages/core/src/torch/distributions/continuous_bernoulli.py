"""``ContinuousBernoulli``: the normalised Bernoulli likelihood on [0, 1],
``C(p) p**x (1 - p)**(1 - x)`` (Loaiza-Ganem and Cunningham, 2019)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import (
    broadcast_all,
    check_probs_or_logits,
    clamp_probs,
    expand_probs_or_logits,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["ContinuousBernoulli"]


def _softplus(x: torch.Tensor) -> torch.Tensor:
    return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))


class ContinuousBernoulli(ExponentialFamily):
    """A continuous Bernoulli given ``probs`` or ``logits``. The closed forms cancel near
    ``probs = 1/2``; inside ``lims`` they are replaced by Taylor expansions around 1/2."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Any = None, logits: Any = None,
                 lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        check_probs_or_logits(probs, logits)
        if probs is not None:
            scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # Validate before clamping: the clamp would hide values outside [0, 1].
            if validate_args is not False and (validate_args or self._validate_args):
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            param = self.probs
        else:
            scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
            param = self.logits
        self._param = param
        self._lims = lims
        super().__init__(torch.Size() if scalar else param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        batch_shape = torch.Size(batch_shape)
        new._lims = self._lims
        expand_probs_or_logits(self, new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self) -> torch.Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> torch.Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> torch.Size:
        return self._param.size()

    def _outside_unstable_region(self) -> torch.Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> torch.Tensor:
        # probs where the closed forms are stable, and a harmless stand-in elsewhere.
        return torch.where(self._outside_unstable_region(), self.probs,
                           torch.full_like(self.probs, self._lims[0]))

    def _cont_bern_log_norm(self) -> torch.Tensor:
        """log C(p), with C(p) = log((1 - p) / p) / (1 - 2p) (= 2 at p = 1/2)."""
        cut = self._cut_probs()
        # Both factors share a sign; the absolute values keep the logs real.
        closed = (torch.log(torch.abs(torch.log1p(-cut) - torch.log(cut)))
                  - torch.log(torch.abs(1 - 2 * cut)))
        # With d = (p - 1/2)^2: log C = log 2 + 4/3 d + 104/45 d^2 + O(d^3).
        d = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * d) * d
        return torch.where(self._outside_unstable_region(), closed, taylor)

    @property
    def mean(self) -> torch.Tensor:
        cut = self._cut_probs()
        closed = cut / (2 * cut - 1) + 1 / (torch.log1p(-cut) - torch.log(cut))
        # With x = p - 1/2: mean = 1/2 + x/3 + 16 x^3 / 45 + O(x^5).
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return torch.where(self._outside_unstable_region(), closed, taylor)

    @property
    def variance(self) -> torch.Tensor:
        cut = self._cut_probs()
        closed = (cut * (cut - 1) / (1 - 2 * cut).pow(2)
                  + 1 / (torch.log1p(-cut) - torch.log(cut)).pow(2))
        # With d = (p - 1/2)^2: variance = 1/12 - d/15 + 128 d^2 / 945 + O(d^3).
        d = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * d) * d
        return torch.where(self._outside_unstable_region(), closed, taylor)

    @property
    def stddev(self) -> torch.Tensor:
        return self.variance.sqrt()

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def sample(self, sample_shape: Any = ()) -> torch.Tensor:
        with torch.no_grad():
            return self.rsample(sample_shape)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # x log p + (1 - x) log(1 - p) = x logits - softplus(logits)
        return value * logits - _softplus(logits) + self._cont_bern_log_norm()

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        closed = ((cut.pow(value) * (1 - cut).pow(1 - value) + cut - 1) / (2 * cut - 1))
        unbounded = torch.where(self._outside_unstable_region(), closed, value)
        return torch.where(value <= 0, torch.zeros_like(unbounded),
                           torch.where(value >= 1, torch.ones_like(unbounded), unbounded))

    def icdf(self, value: torch.Tensor) -> torch.Tensor:
        cut = self._cut_probs()
        closed = ((torch.log1p(-cut + value * (2 * cut - 1)) - torch.log1p(-cut))
                  / (torch.log(cut) - torch.log1p(-cut)))
        return torch.where(self._outside_unstable_region(), closed, value)

    def entropy(self) -> torch.Tensor:
        log_p0 = torch.log1p(-self.probs)
        log_p1 = torch.log(self.probs)
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0

    @property
    def _natural_params(self) -> tuple[torch.Tensor, ...]:
        return (self.logits,)

    def _log_normalizer(self, *natural_params: torch.Tensor) -> torch.Tensor:
        """log((e^eta - 1) / eta), by its expansion eta/2 + eta^2/24 - eta^4/2880 near 0."""
        eta = natural_params[0]
        outside = (eta <= self._lims[0] - 0.5) | (eta > self._lims[1] - 0.5)
        cut = torch.where(outside, eta, torch.full_like(eta, self._lims[0] - 0.5))
        closed = torch.log(torch.abs(torch.expm1(cut))) - torch.log(torch.abs(cut))
        taylor = 0.5 * eta + eta.pow(2) / 24.0 - eta.pow(4) / 2880.0
        return torch.where(outside, closed, taylor)
