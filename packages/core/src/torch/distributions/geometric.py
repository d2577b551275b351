"""``Geometric``: the number of failures before the first success of Bernoulli(``probs``)
trials (support 0, 1, 2, ...), given ``probs`` or ``logits``."""

from __future__ import annotations

from numbers import Number
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

__all__ = ["Geometric"]


class Geometric(Distribution):
    """P(k) = (1 - p)**k p for k = 0, 1, 2, ..."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        check_probs_or_logits(probs, logits)
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        shape = torch.Size() if isinstance(given, Number) else param.size()
        super().__init__(shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = torch.Size(batch_shape)
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
    def mean(self) -> torch.Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> torch.Tensor:
        return torch.zeros_like(self.probs)

    @property
    def variance(self) -> torch.Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = torch.finfo(self.probs.dtype).tiny
        with torch.no_grad():  # inverse CDF: floor(log U / log(1 - p)), U in (0, 1)
            u = torch.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
            return (u.clamp(min=tiny).log() / (-self.probs.expand(shape)).log1p()).floor()

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # k log(1 - p) is 0 (not NaN) for k = 0 when p = 1
        failures = torch.where((probs == 1) & (value == 0), 0.0, value * (-probs).log1p())
        return failures + probs.log()

    def entropy(self) -> torch.Tensor:
        # the Bernoulli entropy per trial over the expected number of trials: BCE(logits, p) / p
        logits, probs = self.logits, self.probs
        bce = logits.clamp(min=0) - logits * probs + torch.log1p(torch.exp(-logits.abs()))
        return bce / probs
