"""``StudentT``: Student's t with ``df`` degrees of freedom, location and scale."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t; samples are ``loc + scale * N / sqrt(Chi2(df) / df)`` (reparameterised in
    all three parameters through ``torch._standard_gamma``)."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        scalar = all(isinstance(v, Number) for v in (df, loc, scale))
        super().__init__(torch.Size() if scalar else self.df.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = torch.Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> torch.Tensor:
        # Undefined (NaN) for df <= 1.
        return self.loc.clone().masked_fill(self.df <= 1, float("nan"))

    @property
    def mode(self) -> torch.Tensor:
        return self.loc

    @property
    def variance(self) -> torch.Tensor:
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        # Infinite for 1 < df <= 2, undefined for df <= 1.
        var = finite.masked_fill(self.df <= 2, float("inf"))
        return var.masked_fill(self.df <= 1, float("nan"))

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        x = torch.randn(shape, dtype=self.df.dtype, device=self.df.device)
        chi2 = 2.0 * torch._standard_gamma(0.5 * self.df.expand(shape))
        return self.loc + self.scale * x * torch.rsqrt(chi2 / self.df)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + torch.lgamma(0.5 * self.df) - torch.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * torch.log1p(y.pow(2) / self.df) - z

    def entropy(self) -> torch.Tensor:
        half_df = 0.5 * self.df
        half_df_plus = 0.5 * (self.df + 1.0)
        lbeta = torch.lgamma(half_df) + math.lgamma(0.5) - torch.lgamma(half_df_plus)
        return (self.scale.log() + half_df_plus * (torch.digamma(half_df_plus)
                                                   - torch.digamma(half_df))
                + 0.5 * self.df.log() + lbeta)
