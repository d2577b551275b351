"""``Kumaraswamy``: a Beta-like distribution on (0, 1) with a closed-form CDF, reparameterised
through its inverse CDF."""

from __future__ import annotations

import math
from typing import Any

import torch

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all

__all__ = ["Kumaraswamy"]


def _moment(a: torch.Tensor, b: torch.Tensor, n: int) -> torch.Tensor:
    """E[X^n] = b B(1 + n / a, b)."""
    shifted = 1 + n / a
    return b * torch.exp(torch.lgamma(shifted) + torch.lgamma(b) - torch.lgamma(shifted + b))


class Kumaraswamy(TransformedDistribution):
    """Density ``a b x**(a-1) (1 - x**a)**(b-1)`` on (0, 1), with ``a = concentration1``,
    ``b = concentration0``; samples are ``(1 - u**(1/b))**(1/a)`` for u uniform."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        zero = torch.zeros_like(self.concentration0)
        base_dist = Uniform(zero, torch.ones_like(self.concentration0))
        transforms = [PowerTransform(self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> torch.Tensor:
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> torch.Tensor:
        # ((a - 1) / (a b - 1))**(1 / a), defined for a, b >= 1 other than a = b = 1.
        a, b = self.concentration1, self.concentration0
        mode = ((a - 1) / (a * b - 1)).pow(a.reciprocal())
        return torch.where((a >= 1) & (b >= 1) & ((a > 1) | (b > 1)), mode, math.nan)

    @property
    def variance(self) -> torch.Tensor:
        a, b = self.concentration1, self.concentration0
        return _moment(a, b, 2) - _moment(a, b, 1).pow(2)

    def entropy(self) -> torch.Tensor:
        # (1 - 1/b) + (1 - 1/a) H_b - log(a b), with the harmonic number
        # H_b = digamma(b + 1) + Euler's gamma.
        a, b = self.concentration1, self.concentration0
        harmonic = torch.digamma(b + 1) + 0.5772156649015329
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic - torch.log(a * b)
