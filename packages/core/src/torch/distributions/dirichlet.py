"""``Dirichlet``: a distribution over the probability simplex, with ``concentration`` > 0."""

from __future__ import annotations

from typing import Any

import torch

from . import constraints
from .distribution import Distribution

__all__ = ["Dirichlet"]


class Dirichlet(Distribution):
    """A Dirichlet distribution; samples are normalised gamma draws (reparameterised)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: torch.Tensor,
                 validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = torch.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        gammas = torch._standard_gamma(self.concentration.expand(shape))
        finfo = torch.finfo(gammas.dtype)
        # Strictly inside (0, 1), so that Beta's log(1 - x) stays finite too.
        return (gammas / gammas.sum(-1, keepdim=True)).clamp(min=finfo.tiny,
                                                             max=1 - finfo.eps / 2)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration - 1.0, value).sum(-1)
                + torch.lgamma(self.concentration.sum(-1))
                - torch.lgamma(self.concentration).sum(-1))

    @property
    def mean(self) -> torch.Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> torch.Tensor:
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, keepdim=True)
        # Where every concentration is below one the density peaks at the vertices; PyTorch
        # picks one through argmax of the (NaN) ratio above: the first vertex.
        below = (self.concentration < 1).all(dim=-1)
        vertex = torch.zeros_like(mode).scatter(-1, mode.argmax(dim=-1, keepdim=True), 1.0)
        return torch.where(below.unsqueeze(-1), vertex, mode)

    @property
    def variance(self) -> torch.Tensor:
        total = self.concentration.sum(-1, keepdim=True)
        return (self.concentration * (total - self.concentration)
                / (total.pow(2) * (total + 1)))

    def entropy(self) -> torch.Tensor:
        k = self.concentration.size(-1)
        total = self.concentration.sum(-1)
        return (torch.lgamma(self.concentration).sum(-1) - torch.lgamma(total)
                - (k - total) * torch.digamma(total)
                - ((self.concentration - 1.0) * torch.digamma(self.concentration)).sum(-1))
