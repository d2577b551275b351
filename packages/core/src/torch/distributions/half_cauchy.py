"""``HalfCauchy``: the absolute value of a ``Cauchy(0, scale)``."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import torch

from . import constraints
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """|X| for X ~ Cauchy(0, ``scale``): density ``2 / (pi scale (1 + (x / scale)**2))`` on
    x >= 0."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        loc = 0.0 if isinstance(scale, Number) else torch.zeros_like(scale)
        base_dist = Cauchy(loc, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def scale(self) -> torch.Tensor:
        """The scale of the underlying Cauchy."""
        return self.base_dist.scale

    @property
    def mean(self) -> torch.Tensor:
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                          device=self.scale.device)

    @property
    def mode(self) -> torch.Tensor:
        return torch.zeros_like(self.scale)

    @property
    def variance(self) -> torch.Tensor:
        return self.base_dist.variance

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        value = torch.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: torch.Tensor) -> torch.Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> torch.Tensor:
        return self.base_dist.entropy() - math.log(2)
