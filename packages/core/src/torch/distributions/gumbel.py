"""``Gumbel``: the type-I extreme-value distribution with location ``loc`` and scale
``scale``."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Gumbel"]

EULER_GAMMA = 0.57721566490153286060


class Gumbel(Distribution):
    """A Gumbel distribution: density ``exp(-(z + exp(-z))) / scale`` with
    ``z = (x - loc) / scale``. PyTorch builds it as a transformed Uniform; here it is written
    out (same values)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(torch.Size() if scalar else self.loc.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        new = self._get_checked_instance(Gumbel, _instance)
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> torch.Tensor:
        return self.loc + self.scale * EULER_GAMMA

    @property
    def mode(self) -> torch.Tensor:
        return self.loc

    @property
    def stddev(self) -> torch.Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> torch.Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        info = torch.finfo(self.loc.dtype)
        # U in (0, 1) away from both ends, so both logarithms stay finite
        u = torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        u = u.clamp(min=info.tiny, max=1 - info.eps)
        return self.loc - self.scale * torch.log(-torch.log(u))

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -(z + torch.exp(-z)) - self.scale.log()

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return torch.exp(-torch.exp(-(value - self.loc) / self.scale))

    def icdf(self, value: torch.Tensor) -> torch.Tensor:
        return self.loc - self.scale * torch.log(-torch.log(value))

    def entropy(self) -> torch.Tensor:
        return self.scale.log() + (1 + EULER_GAMMA)
