"""``Categorical``: one of ``K`` categories, with probabilities or logits over the last dim."""

from __future__ import annotations

from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .utils import (
    check_probs_or_logits,
    expand_probs_or_logits,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["Categorical"]


class Categorical(Distribution):
    """A categorical distribution given exactly one of ``probs`` (normalised here) and
    ``logits`` (normalised with ``logsumexp``)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        check_probs_or_logits(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else torch.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = torch.Size(batch_shape)
        param_shape = batch_shape + torch.Size((self._num_events,))
        expand_probs_or_logits(self, new, param_shape)
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> torch.Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> torch.Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> torch.Size:
        return self._param.size()

    @property
    def mean(self) -> torch.Tensor:
        return torch.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype,
                          device=self.probs.device)

    @property
    def mode(self) -> torch.Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> torch.Tensor:
        return torch.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype,
                          device=self.probs.device)

    def sample(self, sample_shape: Any = ()) -> torch.Tensor:
        sample_shape = torch.Size(sample_shape)
        count = 1
        for size in sample_shape:
            count *= size
        probs_2d = self.probs.reshape(-1, self._num_events)
        with torch.no_grad():
            samples_2d = torch.multinomial(probs_2d, count, True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = torch.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        # Impossible categories have logits of -inf; clamp so that 0 * -inf counts as 0.
        min_real = torch.finfo(self.logits.dtype).min
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> torch.Tensor:
        values = torch.arange(self._num_events, dtype=torch.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
