"""``Binomial``: the number of successes in ``total_count`` Bernoulli(``probs``) trials, given
``probs`` or ``logits``."""

from __future__ import annotations

from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .utils import (
    broadcast_all,
    check_probs_or_logits,
    expand_probs_or_logits,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["Binomial"]


def _softplus(x: torch.Tensor) -> torch.Tensor:
    return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))


class Binomial(Distribution):
    """P(k) = C(n, k) p**k (1 - p)**(n - k) for k = 0 .. n (``n = total_count``)."""

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
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

    def expand(self, batch_shape: Any, _instance: Any = None) -> Binomial:
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = torch.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        expand_probs_or_logits(self, new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> Any:
        return constraints.integer_interval(0, self.total_count)

    @lazy_property
    def logits(self) -> torch.Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> torch.Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self) -> torch.Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> torch.Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> torch.Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():  # the successes among the first total_count of max-count trials
            trials = int(self.total_count.max().item()) if self.total_count.numel() else 0
            if trials == 0:
                return torch.zeros(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = torch.rand(*shape, trials, dtype=self.probs.dtype, device=self.probs.device)
            hits = u < self.probs.expand(shape).unsqueeze(-1)
            counted = torch.arange(trials, device=u.device) < self.total_count.expand(
                shape).unsqueeze(-1)
            return (hits & counted).sum(-1).to(self.probs.dtype)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_choose = torch.lgamma(n + 1) - torch.lgamma(value + 1) - torch.lgamma(n - value + 1)
        # log p = logits - softplus(logits), log(1 - p) = -softplus(logits)
        return log_choose + value * logits - n * _softplus(logits)

    def enumerate_support(self, expand: bool = True) -> torch.Tensor:
        total = int(self.total_count.max().item())
        if not bool((self.total_count == total).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by "
                                      "`enumerate_support`.")
        values = torch.arange(total + 1, dtype=self.probs.dtype, device=self.probs.device)
        values = values.view((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1, *self.batch_shape)) if expand else values

    def entropy(self) -> torch.Tensor:
        values = self.enumerate_support(expand=False)
        log_prob = self.log_prob(values)
        return -(torch.exp(log_prob) * log_prob).sum(0)
