"""``OneHotCategorical``: a categorical whose samples are one-hot vectors."""

from __future__ import annotations

from typing import Any

import torch

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """A categorical distribution over ``K`` categories, with events of shape ``(K,)``."""

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        super().__init__(self._categorical.batch_shape, param.size()[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> OneHotCategorical:
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = torch.Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self) -> torch.Tensor:
        return self._categorical._param

    @property
    def probs(self) -> torch.Tensor:
        """The normalised probabilities of the categories."""
        return self._categorical.probs

    @property
    def logits(self) -> torch.Tensor:
        """The normalised log probabilities of the categories."""
        return self._categorical.logits

    @property
    def mean(self) -> torch.Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> torch.Tensor:
        probs = self._categorical.probs
        return torch.zeros_like(probs).scatter(-1, probs.argmax(-1, keepdim=True), 1.0)

    @property
    def variance(self) -> torch.Tensor:
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self) -> torch.Size:
        return self._categorical.param_shape

    def sample(self, sample_shape: Any = ()) -> torch.Tensor:
        indices = self._categorical.sample(sample_shape)
        probs = self._categorical.probs
        shape = indices.shape + probs.shape[-1:]
        return torch.zeros(shape, dtype=probs.dtype, device=probs.device).scatter(
            -1, indices.unsqueeze(-1), 1.0)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> torch.Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> torch.Tensor:
        n = self.event_shape[0]
        probs = self._categorical.probs
        values = torch.eye(n, dtype=probs.dtype, device=probs.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A ``OneHotCategorical`` whose ``rsample`` passes gradients straight through: the value
    is the one-hot sample, the gradient that of ``probs``."""

    has_rsample = True

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
