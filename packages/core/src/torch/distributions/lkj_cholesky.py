"""``LKJCholesky``: the LKJ distribution over correlation matrices, on their lower Cholesky
factors (Lewandowski, Kurowicka and Joe, 2009)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import torch

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """Cholesky factors ``L`` of ``dim x dim`` correlation matrices with density proportional
    to ``det(L L^T) ** (concentration - 1)``; ``concentration = 1`` is uniform over correlation
    matrices. Samples come from the onion method."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = (torch.Size() if isinstance(concentration, Number)
                       else self.concentration.size())
        # Row k > 0 of the factor has squared off-diagonal norm y_k ~ Beta(k / 2, b_k) with
        # b_k = concentration + (dim - 2) / 2 - (k - 1) / 2; row 0 has none (its Beta is a
        # placeholder that the sampler multiplies by zero).
        rows = torch.arange(dim, dtype=self.concentration.dtype,
                            device=self.concentration.device)
        first = torch.where(rows > 0, rows / 2, torch.full_like(rows, 0.5))
        second = (self.concentration.unsqueeze(-1) + 0.5 * (dim - 2)
                  - 0.5 * (rows - 1).clamp(min=0))
        self._beta = Beta(first.expand(second.shape), second)
        super().__init__(batch_shape, torch.Size((dim, dim)), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = torch.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            normal = torch.randn(shape, dtype=y.dtype, device=y.device).tril(-1)
            norm = normal.norm(dim=-1, keepdim=True)
            # Row 0 has no off-diagonal entries (norm 0): its direction is left at zero.
            direction = torch.where(norm > 0, normal / norm.clamp(min=torch.finfo(y.dtype).tiny),
                                    torch.zeros_like(normal))
            w = y.sqrt() * direction
            diagonal = (1 - w.pow(2).sum(-1)).clamp(min=torch.finfo(y.dtype).tiny).sqrt()
            return w + torch.diag_embed(diagonal)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        d = self.dim
        eta = self.concentration
        # The density of L: prod_{i=2..d} L_ii ** (d - i + 2 (eta - 1)) (i 1-based).
        diagonal = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        i = torch.arange(2, d + 1, dtype=value.dtype, device=value.device)
        exponents = 2 * (eta.unsqueeze(-1) - 1) + d - i
        unnormalised = (exponents * diagonal.log()).sum(-1)
        # log normaliser: (d - 1) d / 4 log(pi)
        #   + sum_{j=1}^{d-1} lgamma(eta + (d - 1) / 2 - j / 2) - (d - 1) lgamma(eta + (d-1)/2)
        alpha = eta + 0.5 * (d - 1)
        j = torch.arange(1, d, dtype=value.dtype, device=value.device)
        log_normaliser = (0.25 * (d - 1) * d * math.log(math.pi)
                          + torch.lgamma(alpha.unsqueeze(-1) - 0.5 * j).sum(-1)
                          - (d - 1) * torch.lgamma(alpha))
        return unnormalised - log_normaliser
