"""``InverseGamma``: the reciprocal of a ``Gamma(concentration, rate)`` variable."""

from __future__ import annotations

import math
from typing import Any

import torch

from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(``concentration``, ``rate``): density
    ``rate**a / Gamma(a) x**(-a - 1) exp(-rate / x)`` on x > 0 (``a = concentration``)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any,
                 validate_args: bool | None = None) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        minus_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(minus_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> InverseGamma:
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def concentration(self) -> torch.Tensor:
        """The shape ``a`` of the underlying Gamma."""
        return self.base_dist.concentration

    @property
    def rate(self) -> torch.Tensor:
        """The rate of the underlying Gamma (the scale of this distribution)."""
        return self.base_dist.rate

    @property
    def mean(self) -> torch.Tensor:
        mean = self.rate / (self.concentration - 1)
        return torch.where(self.concentration > 1, mean, math.inf)

    @property
    def mode(self) -> torch.Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> torch.Tensor:
        a = self.concentration
        variance = self.rate.pow(2) / ((a - 1).pow(2) * (a - 2))
        return torch.where(a > 2, variance, math.inf)

    def entropy(self) -> torch.Tensor:
        a = self.concentration
        return a + self.rate.log() + torch.lgamma(a) - (1 + a) * torch.digamma(a)
