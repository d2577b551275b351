"""``NegativeBinomial``: the number of successes before ``total_count`` failures, each trial
succeeding with probability ``probs``."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import (
    broadcast_all,
    check_probs_or_logits,
    expand_probs_or_logits,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """P(k) = C(k + r - 1, k) p**k (1 - p)**r for k = 0, 1, ... (``r = total_count``,
    ``p = probs``), given ``probs`` or ``logits``."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        check_probs_or_logits(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
            param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
            param = self.logits
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = torch.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        expand_probs_or_logits(self, new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self) -> torch.Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> torch.Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> torch.Size:
        return self.total_count.size()

    @property
    def mean(self) -> torch.Tensor:
        return self.total_count * torch.exp(self.logits)

    @property
    def mode(self) -> torch.Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> torch.Tensor:
        return self.mean / torch.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self) -> Gamma:
        # The mixing distribution of the Poisson rate: Gamma(r, (1 - p) / p).
        return Gamma(concentration=self.total_count, rate=torch.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape: Any = ()) -> torch.Tensor:
        with torch.no_grad():
            return torch.poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = (self.total_count * F.logsigmoid(-self.logits)
                            + value * F.logsigmoid(self.logits))
        # log C(k + r - 1, k); the r = k = 0 case is a point mass at 0 (log C = 0).
        log_choose = (torch.lgamma(self.total_count + value) - torch.lgamma(1.0 + value)
                      - torch.lgamma(self.total_count))
        log_choose = torch.where(self.total_count + value == 0, 0.0, log_choose)
        return log_unnormalized + log_choose
