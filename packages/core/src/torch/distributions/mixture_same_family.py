"""``MixtureSameFamily``: a mixture of ``K`` components of one family, the mixing weights a
``Categorical`` over the rightmost batch dimension of the components."""

from __future__ import annotations

from typing import Any

import torch

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """p(x) = sum_k pi_k p_k(x): ``mixture_distribution`` (a Categorical with batch shape B and
    K categories) weighs ``component_distribution`` (batch shape B + (K,))."""

    arg_constraints: dict[str, Any] = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of "
                             "torch.distributions.Distribution")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        mixture_batch = mixture_distribution.batch_shape
        component_batch = component_distribution.batch_shape
        if len(component_batch) < 1 or tuple(component_batch[:-1]) != tuple(mixture_batch):
            raise ValueError(f"`mixture_distribution.batch_shape` ({mixture_batch}) is not "
                             f"compatible with `component_distribution.batch_shape`"
                             f"({component_batch[:-1]})")
        count = mixture_distribution.logits.shape[-1]
        if component_batch[-1] != count:
            raise ValueError(f"`mixture_distribution component` ({count}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({component_batch[-1]})")
        self._num_component = count
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(mixture_batch, component_distribution.event_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MixtureSameFamily:
        batch_shape = torch.Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self) -> Any:
        # Checked against every component at once (parameters of shape batch + (K,)).
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _weights(self) -> torch.Tensor:
        """The mixing probabilities shaped to broadcast against per-component values."""
        probs = self._mixture_distribution.probs
        return probs.reshape(*probs.shape, *([1] * self._event_ndims))

    @property
    def mean(self) -> torch.Tensor:
        return (self._weights() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> torch.Tensor:
        # total variance: the mean of the variances plus the variance of the means
        weights, dim = self._weights(), -1 - self._event_ndims
        means = self._component_distribution.mean
        within = (weights * self._component_distribution.variance).sum(dim)
        between = (weights * (means - self.mean.unsqueeze(dim)).pow(2)).sum(dim)
        return within + between

    def _pad(self, x: torch.Tensor) -> torch.Tensor:
        return x.unsqueeze(-1 - self._event_ndims)  # a K axis for the components

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(x)
        per_component = self._component_distribution.log_prob(self._pad(x))  # (..., B, K)
        log_weights = torch.log_softmax(self._mixture_distribution.logits, dim=-1)
        return torch.logsumexp(per_component + log_weights, dim=-1)

    def cdf(self, x: torch.Tensor) -> torch.Tensor:
        per_component = self._component_distribution.cdf(self._pad(x))
        return (per_component * self._mixture_distribution.probs).sum(-1)

    def sample(self, sample_shape: Any = ()) -> torch.Tensor:
        with torch.no_grad():
            sample_shape = torch.Size(sample_shape)
            chosen = self._mixture_distribution.sample(sample_shape)  # S + B
            draws = self._component_distribution.sample(sample_shape)  # S + B + (K,) + E
            index = chosen.reshape(*chosen.shape, 1, *([1] * self._event_ndims))
            index = index.expand(*chosen.shape, 1, *self.event_shape)
            return draws.gather(len(chosen.shape), index).squeeze(len(chosen.shape))
