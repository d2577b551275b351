"""``RelaxedOneHotCategorical`` (the Concrete / Gumbel-softmax distribution) and
``ExpRelaxedCategorical``, its log: continuous relaxations of a one-hot categorical at
``temperature``, with reparameterised samples."""

from __future__ import annotations

import math
from typing import Any

import torch

from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """``log_softmax((logits + G) / temperature)`` for G i.i.d. standard Gumbel: the log of a
    ``RelaxedOneHotCategorical`` sample."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ExpRelaxedCategorical:
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = torch.Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self) -> torch.Size:
        return self._categorical.param_shape

    @property
    def logits(self) -> torch.Tensor:
        """The normalised log probabilities of the categories."""
        return self._categorical.logits

    @property
    def probs(self) -> torch.Tensor:
        """The normalised probabilities of the categories."""
        return self._categorical.probs

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(torch.rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        # The ExpConcrete density over the log-simplex:
        # log (K-1)! + (K-1) log T + sum_k (s_k - logsumexp(s)), with s = logits - T value.
        temperature = torch.as_tensor(self.temperature, dtype=value.dtype, device=value.device)
        log_scale = math.lgamma(k) + (k - 1) * temperature.log()
        scores = self.logits - value * temperature
        scores = (scores - scores.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return scores + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """``exp`` of an ``ExpRelaxedCategorical``: points of the simplex that approach one-hot
    vectors as ``temperature`` goes to 0."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedOneHotCategorical:
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def temperature(self) -> Any:
        """The relaxation temperature."""
        return self.base_dist.temperature

    @property
    def logits(self) -> torch.Tensor:
        """The normalised log probabilities of the categories."""
        return self.base_dist.logits

    @property
    def probs(self) -> torch.Tensor:
        """The normalised probabilities of the categories."""
        return self.base_dist.probs
