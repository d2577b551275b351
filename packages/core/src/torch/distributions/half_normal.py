"""``HalfNormal``: the absolute value of a ``Normal(0, scale)``."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(Distribution):
    """|X| for X ~ Normal(0, ``scale``): density ``2 N(x; 0, scale)`` on x >= 0.

    PyTorch builds it as a ``TransformedDistribution`` of that Normal through an absolute-value
    transform; here it is written out (same values, ``base_dist`` kept for code that reads it).
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        self.base_dist = Normal(0.0 if isinstance(scale, Number) else torch.zeros_like(scale),
                                scale, validate_args=False)
        self.scale = self.base_dist.scale
        batch_shape = torch.Size() if isinstance(scale, Number) else self.scale.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        batch_shape = torch.Size(batch_shape)
        new.base_dist = self.base_dist.expand(batch_shape)
        new.scale = new.base_dist.scale
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> torch.Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> torch.Tensor:
        return torch.zeros_like(self.scale)

    @property
    def variance(self) -> torch.Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        return self.base_dist.rsample(sample_shape).abs()

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
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
