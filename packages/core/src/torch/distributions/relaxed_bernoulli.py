"""``RelaxedBernoulli`` (the binary Concrete distribution) and ``LogitRelaxedBernoulli``, its
logit: continuous relaxations of a Bernoulli at ``temperature``, with reparameterised samples."""

from __future__ import annotations

from numbers import Number
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import (
    broadcast_all,
    check_probs_or_logits,
    clamp_probs,
    expand_probs_or_logits,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


def _softplus(x: torch.Tensor) -> torch.Tensor:
    return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))


class LogitRelaxedBernoulli(Distribution):
    """``(logits + L) / temperature`` for L standard logistic: the logit of a
    ``RelaxedBernoulli`` sample."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self.temperature = temperature
        check_probs_or_logits(probs, logits)
        if probs is not None:
            scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            param = self.probs
        else:
            scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
            param = self.logits
        self._param = param
        batch_shape = torch.Size() if scalar else param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogitRelaxedBernoulli:
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = torch.Size(batch_shape)
        new.temperature = self.temperature
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

    has_rsample = True

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(torch.rand(shape, dtype=probs.dtype, device=probs.device))
        logistic = u.log() - (-u).log1p()
        return (logistic + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # The logistic density is symmetric: f(z) = exp(d) / (1 + exp(d))**2 with
        # d = logits - temperature * value, times the Jacobian `temperature`.
        diff = logits - value * self.temperature
        temperature = torch.as_tensor(self.temperature, dtype=diff.dtype, device=diff.device)
        return temperature.log() + diff - 2 * _softplus(diff)


class RelaxedBernoulli(TransformedDistribution):
    """``sigmoid`` of a ``LogitRelaxedBernoulli``: values in (0, 1) that approach a Bernoulli
    as ``temperature`` goes to 0."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedBernoulli:
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def temperature(self) -> Any:
        """The relaxation temperature."""
        return self.base_dist.temperature

    @property
    def logits(self) -> torch.Tensor:
        """The log-odds of the underlying Bernoulli."""
        return self.base_dist.logits

    @property
    def probs(self) -> torch.Tensor:
        """The success probability of the underlying Bernoulli."""
        return self.base_dist.probs
