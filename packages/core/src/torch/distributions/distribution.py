"""``Distribution``: the base class every distribution builds on: shapes, argument and sample
validation, ``expand`` and the derived ``stddev`` / ``sample`` / ``perplexity``."""

from __future__ import annotations

from typing import Any

import torch

from . import constraints
from .utils import lazy_property, tensor_text

__all__ = ["Distribution"]


class Distribution:
    """A probability distribution over events of ``event_shape``, batched over ``batch_shape``."""

    has_rsample = False
    has_enumerate_support = False
    # PyTorch validates by default unless Python runs with -O.
    _validate_args = __debug__
    arg_constraints: dict[str, constraints.Constraint] = {}
    support: Any = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument and sample validation on or off for distributions made from now on.

        :raises ValueError: ``value`` is not a bool.
        """
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (),
                 event_shape: Any = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = torch.Size(batch_shape)
        self._event_shape = torch.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self) -> None:
        for name, constraint in self.arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            # A lazily derived parameter (probs from logits) is valid by construction.
            if name not in self.__dict__ and isinstance(getattr(type(self), name, None),
                                                         lazy_property):
                continue
            value = getattr(self, name)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {name} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                    f"{constraint!r}, but found invalid values:\n{tensor_text(value)}")

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """A view of this distribution with its parameters broadcast to ``batch_shape``."""
        raise NotImplementedError

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    @property
    def batch_shape(self) -> torch.Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> torch.Size:
        """The shape of one sample (without batching)."""
        return self._event_shape

    @property
    def mean(self) -> torch.Tensor:
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self) -> torch.Tensor:
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> torch.Tensor:
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self) -> torch.Tensor:
        """The standard deviation: the square root of the variance."""
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = ()) -> torch.Tensor:
        """A sample of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        """A reparameterised sample: gradients flow back to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> torch.Tensor:
        """``n`` samples (the deprecated spelling of ``sample((n,))``)."""
        return self.sample(torch.Size((n,)))

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        """The log of the density (or mass) at ``value``."""
        raise NotImplementedError

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value: torch.Tensor) -> torch.Tensor:
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> torch.Tensor:
        """All values of a discrete support, along a new leftmost dimension."""
        raise NotImplementedError

    def entropy(self) -> torch.Tensor:
        """The entropy, batched over ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self) -> torch.Tensor:
        """``exp(entropy)``."""
        return torch.exp(self.entropy())

    def _extended_shape(self, sample_shape: Any = ()) -> torch.Size:
        return torch.Size(tuple(sample_shape) + tuple(self._batch_shape)
                          + tuple(self._event_shape))

    def _validate_sample(self, value: Any) -> None:
        if not isinstance(value, torch.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual = value.size()
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        support = self.support
        if support is None or constraints.is_dependent(support):
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{tensor_text(value)}")

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        parts = []
        for name in names:
            value = self.__dict__[name]
            shown = (tensor_text(value) if value.numel() == 1 else value.size())
            parts.append(f"{name}: {shown}")
        return f"{self.__class__.__name__}({', '.join(parts)})"
