"""``Multinomial``: counts per category over ``total_count`` independent categorical draws."""

from __future__ import annotations

from typing import Any

import torch

from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """P(x) = n! / prod(x_k!) prod(p_k ** x_k) over count vectors ``x`` summing to ``n``
    (``total_count``). ``log_prob`` does not need ``total_count`` (it reads ``n`` from the
    value), so ``total_count`` may be left at 1 when only densities are wanted."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = torch.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new.probs,
                                 validate_args=False)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> torch.Tensor:
        """The normalised log probabilities of the categories."""
        return self._categorical.logits

    @property
    def probs(self) -> torch.Tensor:
        """The normalised probabilities of the categories."""
        return self._categorical.probs

    @property
    def param_shape(self) -> torch.Size:
        return self._categorical.param_shape

    @property
    def mean(self) -> torch.Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> torch.Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> torch.Tensor:
        sample_shape = torch.Size(sample_shape)
        with torch.no_grad():
            draws = self._categorical.sample(torch.Size((self.total_count,)) + sample_shape)
            # (n, *sample, *batch) -> (*sample, *batch, n), then count each category.
            draws = draws.permute(*range(1, draws.dim()), 0)
            counts = torch.zeros(self._extended_shape(sample_shape), dtype=self.probs.dtype,
                                 device=self.probs.device)
            return counts.scatter_add(-1, draws, torch.ones_like(draws, dtype=counts.dtype))

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # A category with probability 0 and count 0 contributes 0 (not 0 * -inf).
        logits = torch.where((value == 0) & (logits == -float("inf")), 0.0, logits)
        log_factorial_n = torch.lgamma(value.sum(-1) + 1)
        log_factorial_xs = torch.lgamma(value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self) -> torch.Tensor:
        # H = -log n! - n sum_k p_k log p_k + sum_k E[log x_k!], with x_k ~ Binomial(n, p_k).
        n = torch.tensor(float(self.total_count), dtype=self.probs.dtype)
        support = self._binomial.enumerate_support(expand=False)  # (n + 1, 1, ..., 1)
        support = support.unsqueeze(-1) if support.dim() == 1 else support
        support = support.reshape((support.shape[0],) + (1,) * (self.probs.dim()))
        binomial_probs = self._binomial.log_prob(support).exp()
        expected_log_factorials = (binomial_probs * torch.lgamma(support + 1)).sum([0, -1])
        return (self._categorical.entropy() * n + expected_log_factorials
                - torch.lgamma(n + 1))
