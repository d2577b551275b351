"""``Bernoulli``: a coin that shows 1 with probability ``probs`` (or ``sigmoid(logits)``)."""

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

__all__ = ["Bernoulli"]


class Bernoulli(Distribution):
    """A Bernoulli distribution given exactly one of ``probs`` and ``logits``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        check_probs_or_logits(probs, logits)
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        shape = torch.Size() if isinstance(given, Number) else param.size()
        super().__init__(shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Bernoulli:
        new = self._get_checked_instance(Bernoulli, _instance)
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
    def param_shape(self) -> torch.Size:
        return self._param.size()

    @property
    def mean(self) -> torch.Tensor:
        return self.probs

    @property
    def mode(self) -> torch.Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))

    @property
    def variance(self) -> torch.Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.bernoulli(self.probs.expand(shape))

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # -BCE with logits, written stably: value * logits - softplus(logits).
        softplus = logits.clamp(min=0) + torch.log1p(torch.exp(-logits.abs()))
        return value * logits - softplus

    def entropy(self) -> torch.Tensor:
        logits, probs = broadcast_all(self.logits, self.probs)
        softplus = logits.clamp(min=0) + torch.log1p(torch.exp(-logits.abs()))
        return softplus - probs * logits

    def enumerate_support(self, expand: bool = True) -> torch.Tensor:
        values = torch.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
