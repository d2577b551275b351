"""``Beta``: a distribution on ``[0, 1]``, written as a two-category Dirichlet."""

from __future__ import annotations

from numbers import Number
from typing import Any

import torch

from . import constraints
from .dirichlet import Dirichlet
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(Distribution):
    """A beta distribution with shapes ``concentration1`` (alpha) and ``concentration0``
    (beta); sampling and densities go through a Dirichlet over ``(x, 1 - x)``."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any,
                 validate_args: bool | None = None) -> None:
        if isinstance(concentration1, Number) and isinstance(concentration0, Number):
            pair = torch.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            pair = torch.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(pair, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = torch.Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self) -> torch.Tensor:
        """The first shape parameter (alpha)."""
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> torch.Tensor:
        """The second shape parameter (beta)."""
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> torch.Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> torch.Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> torch.Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        pair = torch.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(pair)

    def entropy(self) -> torch.Tensor:
        return self._dirichlet.entropy()
