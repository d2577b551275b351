"""``GeneralizedPareto``: the limit distribution of threshold exceedances, with location,
scale and shape ``concentration``."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Survival function ``(1 + c z)**(-1/c)`` (``exp(-z)`` at ``c = 0``), with
    ``z = (x - loc) / scale`` and ``c = concentration``; the support is ``[loc, inf)`` for
    ``c >= 0`` and ``[loc, loc - scale / c]`` for ``c < 0``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(torch.Size() if scalar else self.loc.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        upper = torch.where(self.concentration < 0, self.loc - self.scale / self.concentration,
                            math.inf)
        return constraints.interval(self.loc, upper)

    def _safe_concentration(self) -> torch.Tensor:
        # The c = 0 formulas are taken by torch.where; keep the other branch finite there.
        c = self.concentration
        return torch.where(c == 0, torch.ones_like(c), c)

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        c = self.concentration
        safe = self._safe_concentration()
        log_density = torch.where(c == 0, -z, -(1 + 1 / safe) * torch.log1p(safe * z))
        inside = (z >= 0) & ((c >= 0) | (z <= -1 / safe))
        return torch.where(inside, log_density - self.scale.log(), -math.inf)

    def log_survival_function(self, value: torch.Tensor) -> torch.Tensor:
        """``log P(X > value)``."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        safe = self._safe_concentration()
        return torch.where(self.concentration == 0, -z, -torch.log1p(safe * z) / safe)

    def log_cdf(self, value: torch.Tensor) -> torch.Tensor:
        """``log P(X <= value)``."""
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        return -torch.expm1(self.log_survival_function(value))

    def icdf(self, value: torch.Tensor) -> torch.Tensor:
        log_survival = torch.log1p(-value)
        safe = self._safe_concentration()
        z = torch.where(self.concentration == 0, -log_survival,
                        torch.expm1(-safe * log_survival) / safe)
        return self.loc + self.scale * z

    @property
    def mean(self) -> torch.Tensor:
        c = self.concentration
        return torch.where(c < 1, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self) -> torch.Tensor:
        c = self.concentration
        variance = self.scale.pow(2) / ((1 - c).pow(2) * (1 - 2 * c))
        return torch.where(c < 0.5, variance, math.nan)

    @property
    def mode(self) -> torch.Tensor:
        return self.loc

    def entropy(self) -> torch.Tensor:
        return self.scale.log() + self.concentration + 1
