"""``ExponentialFamily``: the base class for distributions of the form
``p(x) = h(x) exp(<theta, t(x)> - F(theta))``, whose entropy (and KL divergence between two
members of one family) follows from the log normalizer ``F``."""

from __future__ import annotations

import torch

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution in an exponential family. Subclasses give ``_natural_params`` (the
    tuple ``theta``), ``_log_normalizer(*theta)`` and ``_mean_carrier_measure`` (``E[log h(x)]``).
    """

    @property
    def _natural_params(self) -> tuple[torch.Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> torch.Tensor | float:
        raise NotImplementedError

    def entropy(self) -> torch.Tensor:
        """``H = F(theta) - <theta, grad F(theta)> - E[log h(x)]``, with ``grad F`` (the mean of
        the sufficient statistics) taken by autograd."""
        entropy = -self._mean_carrier_measure
        thetas = [theta.detach().requires_grad_() for theta in self._natural_params]
        log_normalizer = self._log_normalizer(*thetas)
        grads = torch.autograd.grad(log_normalizer.sum(), thetas, create_graph=True)
        entropy = entropy + log_normalizer
        for theta, grad in zip(thetas, grads):
            entropy = entropy - (theta * grad).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return entropy
