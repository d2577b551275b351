"""``Weibull``: scale ``scale`` (lambda) and shape ``concentration`` (k)."""

from __future__ import annotations

from numbers import Number
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Weibull"]

EULER_GAMMA = 0.57721566490153286060


class Weibull(Distribution):
    """Density ``(k / lambda) (x / lambda)**(k - 1) exp(-(x / lambda)**k)`` on x > 0. PyTorch
    builds it as a transformed Exponential; here it is written out (same values)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale: Any, concentration: Any,
                 validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        scalar = isinstance(scale, Number) and isinstance(concentration, Number)
        super().__init__(torch.Size() if scalar else self.scale.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Weibull:
        new = self._get_checked_instance(Weibull, _instance)
        batch_shape = torch.Size(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> torch.Tensor:
        return self.scale * torch.exp(torch.lgamma(1 + self.concentration.reciprocal()))

    @property
    def mode(self) -> torch.Tensor:
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self) -> torch.Tensor:
        k = self.concentration
        return self.scale.pow(2) * (torch.exp(torch.lgamma(1 + 2 / k))
                                    - torch.exp(2 * torch.lgamma(1 + 1 / k)))

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        # an Exponential(1) draw E: lambda E**(1/k)
        u = torch.rand(shape, dtype=self.scale.dtype, device=self.scale.device)
        e = -torch.log1p(-u.clamp(max=1 - torch.finfo(u.dtype).eps))
        return self.scale * e.pow(self.concentration.reciprocal())

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        k, lam = self.concentration, self.scale
        z = value / lam
        return torch.log(k / lam) + (k - 1) * z.log() - z.pow(k)

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -torch.expm1(-(value / self.scale).pow(self.concentration))

    def icdf(self, value: torch.Tensor) -> torch.Tensor:
        return self.scale * (-torch.log1p(-value)).pow(self.concentration.reciprocal())

    def entropy(self) -> torch.Tensor:
        k = self.concentration
        return EULER_GAMMA * (1 - 1 / k) + torch.log(self.scale / k) + 1
