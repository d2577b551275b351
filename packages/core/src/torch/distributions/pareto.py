"""``Pareto``: the power law with minimum ``scale`` and tail index ``alpha``."""

from __future__ import annotations

from numbers import Number
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(Distribution):
    """Density ``alpha scale**alpha / x**(alpha + 1)`` on x >= scale. PyTorch builds it as a
    transformed Exponential; here it is written out (same values)."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    has_rsample = True

    def __init__(self, scale: Any, alpha: Any, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        scalar = isinstance(scale, Number) and isinstance(alpha, Number)
        super().__init__(torch.Size() if scalar else self.scale.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Pareto:
        new = self._get_checked_instance(Pareto, _instance)
        batch_shape = torch.Size(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self) -> torch.Tensor:
        a = self.alpha.clamp(min=1)  # infinite for alpha <= 1
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> torch.Tensor:
        return self.scale

    @property
    def variance(self) -> torch.Tensor:
        a = self.alpha.clamp(min=2)  # infinite for alpha <= 2
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        # scale exp(E / alpha) with E ~ Exponential(1)
        u = torch.rand(shape, dtype=self.scale.dtype, device=self.scale.device)
        e = -torch.log1p(-u.clamp(max=1 - torch.finfo(u.dtype).eps))
        return self.scale * torch.exp(e / self.alpha)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.alpha.log() + self.alpha * self.scale.log() - (self.alpha + 1) * value.log()

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (self.scale / value).pow(self.alpha)

    def icdf(self, value: torch.Tensor) -> torch.Tensor:
        return self.scale * (1 - value).pow(-self.alpha.reciprocal())

    def entropy(self) -> torch.Tensor:
        return (self.scale / self.alpha).log() + self.alpha.reciprocal() + 1
