"""Invertible transforms between spaces, with the log of their Jacobian determinants:
the building blocks of ``TransformedDistribution``."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import torch

from . import constraints

__all__ = ["AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform",
           "PowerTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StickBreakingTransform", "TanhTransform", "Transform", "identity_transform"]


def _sum_rightmost(value: torch.Tensor, dims: int) -> torch.Tensor:
    return value.reshape(value.shape[:value.dim() - dims] + (-1,)).sum(-1) if dims else value


class Transform:
    """An invertible map ``y = f(x)``; ``inv`` is the inverse map, and
    ``log_abs_det_jacobian(x, y)`` the log of ``|df/dx|`` per event.

    :param cache_size: 0 (no cache) or 1 (remember the latest ``x``/``y`` pair, so inverting a
        sample returns the exact ``x`` it came from).
    """

    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y: tuple[Any, Any] = (None, None)
        self._inv: Transform | None = None

    @property
    def event_dim(self) -> int:
        """Event dims of the domain and codomain (they agree for these transforms)."""
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform (``inv.inv`` is this transform)."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self) -> int | torch.Tensor:
        """The sign of the Jacobian determinant, for bijective transforms."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with the given cache size."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y: torch.Tensor) -> torch.Tensor:
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """``log |dy/dx|`` at ``x`` (with ``y = self(x)``)."""
        raise NotImplementedError

    def forward_shape(self, shape: Any) -> Any:
        """The output shape for an input of ``shape``."""
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        """The input shape for an output of ``shape``."""
        return shape

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform, sharing its cache."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self) -> int | torch.Tensor:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: Any) -> Any:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """``parts`` applied left to right, as one transform."""

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # The domain must be wide enough for every later part's events.
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(part.bijective for part in self.parts)

    @property
    def sign(self) -> int | torch.Tensor:
        sign: Any = 1
        for part in self.parts:
            sign = sign * part.sign
        return sign

    @property
    def inv(self) -> Transform:
        if self._inv is None:
            inverse = ComposeTransform([part.inv for part in reversed(self.parts)])
            inverse._inv = self
            self._inv = inverse
        return self._inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if not self.parts:
            return torch.zeros_like(x)
        # Each part's term is summed over the dims that are events of the whole composition.
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, x_in, y_out in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(x_in, y_out),
                                        event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def forward_shape(self, shape: Any) -> Any:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        inner = ",\n    ".join(repr(part) for part in self.parts)
        return f"{self.__class__.__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class ExpTransform(Transform):
    """``y = exp(x)``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        return x.exp()

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``; the inverse is the logit (clamped inside ``(0, 1)``)."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        finfo = torch.finfo(x.dtype)
        return torch.sigmoid(x).clamp(min=finfo.tiny, max=1.0 - finfo.eps)

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        finfo = torch.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        # log sigmoid'(x) = -softplus(-x) - softplus(x), written stably.
        return -_softplus(-x) - _softplus(x)


def _softplus(x: torch.Tensor) -> torch.Tensor:
    return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))


class TanhTransform(Transform):
    """``y = tanh(x)``; the inverse is ``atanh``."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        return x.tanh()

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        return torch.atanh(y)

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)), stable for large |x|.
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


class AffineTransform(Transform):
    """``y = loc + scale * x``, with events of ``event_dim`` rightmost dims."""

    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:
        if self._event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self._event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:
        if self._event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self._event_dim)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(mine, Number) and isinstance(theirs, Number):
                if mine != theirs:
                    return False
            elif not bool((torch.as_tensor(mine) == torch.as_tensor(theirs)).all()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self) -> int | torch.Tensor:
        if isinstance(self.scale, Number):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        scale = self.scale
        if isinstance(scale, Number):
            result = torch.full_like(x, math.log(abs(scale)))
        else:
            result = torch.abs(scale).log()
        if self._event_dim:
            result_size = result.size()[:result.dim() - self._event_dim] + (-1,)
            result = result.view(result_size).sum(-1)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape: Any) -> Any:
        return torch.broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                      getattr(self.scale, "shape", ()))

    def inverse_shape(self, shape: Any) -> Any:
        return torch.broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                      getattr(self.scale, "shape", ()))


class AbsTransform(Transform):
    """``y = |x|`` (not bijective: the inverse picks the non-negative root)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        return x.abs()

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        return y


class PowerTransform(Transform):
    """``y = x ** exponent`` on positive ``x``."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = _broadcast_params(exponent)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PowerTransform) and bool(
            (self.exponent == other.exponent).all())

    __hash__ = object.__hash__

    @property
    def sign(self) -> int | torch.Tensor:
        return self.exponent.sign()

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        # dy/dx = exponent * y / x
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape: Any) -> Any:
        return torch.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def inverse_shape(self, shape: Any) -> Any:
        return torch.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))


def _broadcast_params(*values: Any) -> tuple[torch.Tensor, ...]:
    # Numbers become 0-d tensors so that the transforms can treat all parameters alike.
    return tuple(v if isinstance(v, torch.Tensor) else torch.tensor(float(v)) for v in values)


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``; the inverse is ``x = y + log(1 - exp(-y))``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        return _softplus(x)

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        return y + torch.log(-torch.expm1(-y))

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        # d softplus / dx = sigmoid(x); log sigmoid(x) = -softplus(-x)
        return -_softplus(-x)


class SoftmaxTransform(Transform):
    """``y = softmax(x)`` over the last dim (not bijective: the inverse is ``log y`` up to a
    constant, so it has no log-Jacobian)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        shifted = (x - x.max(-1, keepdim=True)[0]).exp()
        return shifted / shifted.sum(-1, keepdim=True)

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        return y.log()

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


class StickBreakingTransform(Transform):
    """A bijection from ``R^(K-1)`` to the ``K``-simplex: each coordinate takes a sigmoid
    fraction of the stick left over, offset so that ``x = 0`` maps to the uniform point."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _offset_log(x: torch.Tensor) -> torch.Tensor:
        # log(K - 1 - i) for coordinate i, so that x = 0 breaks the stick evenly.
        remaining = x.shape[-1] + 1 - torch.ones_like(x).cumsum(-1)
        return remaining.log()

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        fraction = torch.sigmoid(x - self._offset_log(x))
        left = (1 - fraction).cumprod(-1)
        ones = torch.ones_like(x[..., :1])
        return torch.cat([fraction, ones], -1) * torch.cat([ones, left], -1)

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        head = y[..., :-1]
        finfo = torch.finfo(y.dtype)
        left = (1 - head.cumsum(-1)).clamp(min=finfo.tiny)
        stick = torch.cat([torch.ones_like(head[..., :1]), left[..., :-1]], -1)
        fraction = (head / stick).clamp(min=finfo.tiny, max=1 - finfo.eps)
        return fraction.log() - (-fraction).log1p() + self._offset_log(head)

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        # The Jacobian is triangular: dy_i/dx_i = f_i (1 - f_i) * stick_i, with
        # f_i (1 - f_i) = sigmoid'(z_i) and y_i = f_i stick_i, so its log is
        # log y_i - softplus(z_i) (as log(1 - f_i) = -softplus(z_i)).
        z = x - self._offset_log(x)
        return (y[..., :-1].log() - _softplus(z)).sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] - 1,)
