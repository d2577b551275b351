"""``Poisson``: counts of events arriving at ``rate``."""

from __future__ import annotations

from numbers import Number
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """P(k) = rate**k exp(-rate) / k! for k = 0, 1, 2, ..."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = torch.Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = torch.Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> torch.Tensor:
        return self.rate

    @property
    def mode(self) -> torch.Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> torch.Tensor:
        return self.rate

    def sample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.poisson(self.rate.expand(shape))

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return torch.xlogy(value, rate) - rate - torch.lgamma(value + 1)

    @property
    def _natural_params(self) -> tuple[torch.Tensor, ...]:
        return (torch.log(self.rate),)

    def _log_normalizer(self, *natural_params: torch.Tensor) -> torch.Tensor:
        return torch.exp(natural_params[0])
