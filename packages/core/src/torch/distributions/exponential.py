"""``Exponential``: waiting times with rate ``rate``."""

from __future__ import annotations

from numbers import Number
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(Distribution):
    """An exponential distribution with density ``rate * exp(-rate * x)`` on ``x >= 0``."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        shape = torch.Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Exponential:
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = torch.Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> torch.Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> torch.Tensor:
        return torch.zeros_like(self.rate)

    @property
    def stddev(self) -> torch.Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> torch.Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        # 1 - U lies in (0, 1], so its log is finite.
        u = torch.rand(shape, dtype=self.rate.dtype, device=self.rate.device)
        return -torch.log1p(-u) / self.rate

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - torch.exp(-self.rate * value)

    def icdf(self, value: torch.Tensor) -> torch.Tensor:
        return -torch.log1p(-value) / self.rate

    def entropy(self) -> torch.Tensor:
        return 1.0 - torch.log(self.rate)
