"""Invertible transforms between spaces, with the log of their Jacobian determinants:
the building blocks of ``TransformedDistribution``."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import torch

from . import constraints
from .utils import _sum_rightmost

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
           "Transform", "identity_transform"]


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


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more rightmost dims treated as
    one event (its log-Jacobian summed over them)."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> int | torch.Tensor:
        return self.base_transform.sign

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")


class ReshapeTransform(Transform):
    """Reshapes the rightmost ``in_shape`` dims to ``out_shape`` (volume preserving)."""

    bijective = True

    def __init__(self, in_shape: Any, out_shape: Any, cache_size: int = 0) -> None:
        self.in_shape = torch.Size(in_shape)
        self.out_shape = torch.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        batch_shape = x.shape[:x.dim() - len(self.in_shape)]
        return x.reshape(batch_shape + self.out_shape)

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        batch_shape = y.shape[:y.dim() - len(self.out_shape)]
        return y.reshape(batch_shape + self.in_shape)

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        batch_shape = x.shape[:x.dim() - len(self.in_shape)]
        return x.new_zeros(batch_shape)

    def forward_shape(self, shape: Any) -> Any:
        cut = len(shape) - len(self.in_shape)
        if cut < 0:
            raise ValueError("Too few dimensions on input")
        if tuple(shape[cut:]) != tuple(self.in_shape):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.in_shape}")
        return torch.Size(tuple(shape[:cut]) + tuple(self.out_shape))

    def inverse_shape(self, shape: Any) -> Any:
        cut = len(shape) - len(self.out_shape)
        if cut < 0:
            raise ValueError("Too few dimensions on input")
        if tuple(shape[cut:]) != tuple(self.out_shape):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.out_shape}")
        return torch.Size(tuple(shape[:cut]) + tuple(self.in_shape))


def _exp_diagonal(x: torch.Tensor, fn: Any) -> torch.Tensor:
    # The strictly lower triangle of x, with fn applied to its diagonal.
    return x.tril(-1) + torch.diag_embed(fn(x.diagonal(dim1=-2, dim2=-1)))


class LowerCholeskyTransform(Transform):
    """A square matrix to a lower-triangular one with positive diagonal: the strictly lower
    triangle is kept, the diagonal exponentiated, the upper triangle dropped."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        return _exp_diagonal(x, torch.exp)

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        return _exp_diagonal(y, torch.log)


class PositiveDefiniteTransform(Transform):
    """A square matrix to a positive definite one, ``L L^T`` with ``L`` from
    ``LowerCholeskyTransform``."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        lower = _exp_diagonal(x, torch.exp)
        return lower @ lower.mT

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        return _exp_diagonal(torch.linalg.cholesky(y), torch.log)


def _strict_lower_flat_index(n: int, device: Any) -> torch.Tensor:
    """Flat positions ``i * n + j`` of the strictly lower triangle, row by row."""
    rows, cols = torch.tril_indices(n, n, offset=-1, device=device)
    return rows * n + cols


def _triangle_size(count: int) -> int:
    # count = n (n - 1) / 2  ->  n
    n = round((0.25 + 2 * count) ** 0.5 + 0.5)
    if n * (n - 1) // 2 != count:
        raise ValueError("Incorrect size: the vector length must be n (n - 1) / 2")
    return n


class CorrCholeskyTransform(Transform):
    """A vector of ``n (n - 1) / 2`` reals to the Cholesky factor of an ``n x n`` correlation
    matrix: ``tanh`` maps each entry into (-1, 1), and each row of the factor takes those
    fractions of the unit norm left over by the entries before it (stick breaking), the
    diagonal receiving the rest."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        n = _triangle_size(x.shape[-1])
        eps = torch.finfo(x.dtype).eps
        z = torch.tanh(x).clamp(min=-1 + eps, max=1 - eps)
        flat = torch.zeros(x.shape[:-1] + (n * n,), dtype=x.dtype, device=x.device)
        index = _strict_lower_flat_index(n, x.device).expand(x.shape)
        z_matrix = flat.scatter(-1, index, z).reshape(x.shape[:-1] + (n, n))
        z_matrix = z_matrix + torch.eye(n, dtype=x.dtype, device=x.device)
        # Row i, column j keeps the fraction z_ij of what prod_{k<j} (1 - z_ik^2) leaves.
        left = (1 - z_matrix.pow(2)).sqrt().cumprod(-1)
        left = torch.cat([torch.ones_like(left[..., :1]), left[..., :-1]], -1)
        return z_matrix * left

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        n = y.shape[-1]
        used = y.pow(2).cumsum(-1)
        left = torch.cat([torch.ones_like(used[..., :1]), 1 - used[..., :-1]], -1).sqrt()
        z = (y / left).reshape(y.shape[:-2] + (n * n,))
        index = _strict_lower_flat_index(n, y.device)
        z = z.index_select(-1, index)
        eps = torch.finfo(y.dtype).eps
        return torch.atanh(z.clamp(min=-1 + eps, max=1 - eps))

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        # The Jacobian is triangular in the row-major order: d y_ij / d z_ij is the norm left,
        # sqrt(1 - sum_{k<j} y_ik^2), and dz/dx = 1 - tanh(x)^2.
        n = y.shape[-1]
        left = 1 - y.pow(2).cumsum(-1)  # left[i, m] = 1 - sum_{k<=m} y_ik^2
        rows, cols = torch.tril_indices(n, n, offset=-2, device=y.device)
        left = left.reshape(y.shape[:-2] + (n * n,)).index_select(-1, rows * n + cols)
        stick_breaking = 0.5 * left.log().sum(-1)
        tanh_part = 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))
        return stick_breaking + tanh_part.sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = _triangle_size(shape[-1])
        return torch.Size(tuple(shape[:-1]) + (n, n))

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("A matrix must be square")
        n = shape[-1]
        return torch.Size(tuple(shape[:-2]) + (n * (n - 1) // 2,))


class CatTransform(Transform):
    """Transforms ``tseq`` applied to consecutive pieces of dimension ``dim`` of sizes
    ``lengths`` (1 each by default), the results concatenated."""

    def __init__(self, tseq: Any, dim: int = 0, lengths: Any = None,
                 cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("tseq must be a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("lengths must have one entry per transform")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        """The size of dimension ``dim`` that the pieces cover."""
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, value: torch.Tensor) -> list[tuple[Transform, torch.Tensor]]:
        if not -value.dim() <= self.dim < value.dim():
            raise ValueError(f"dim {self.dim} is out of range for {value.dim()} dims")
        if value.size(self.dim) != self.length:
            raise ValueError(f"Expected size {self.length} along dim {self.dim}, got "
                             f"{value.size(self.dim)}")
        pieces, start = [], 0
        for transform, length in zip(self.transforms, self.lengths):
            pieces.append((transform, value.narrow(self.dim, start, length)))
            start += length
        return pieces

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([t(piece) for t, piece in self._pieces(x)], dim=self.dim)

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        return torch.cat([t.inv(piece) for t, piece in self._pieces(y)], dim=self.dim)

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        terms = []
        for (t, x_piece), (_, y_piece) in zip(self._pieces(x), self._pieces(y)):
            term = t.log_abs_det_jacobian(x_piece, y_piece)
            terms.append(_sum_rightmost(term, self.event_dim - t.event_dim))
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim += self.event_dim
        # Pieces cut along a batch dim are concatenated; along an event dim they are summed.
        if dim < 0:
            return torch.cat(terms, dim=dim)
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Transforms ``tseq`` applied to the slices of dimension ``dim``, the results stacked."""

    def __init__(self, tseq: Any, dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("tseq must be a sequence of Transforms")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, value: torch.Tensor) -> list[torch.Tensor]:
        if not -value.dim() <= self.dim < value.dim():
            raise ValueError(f"dim {self.dim} is out of range for {value.dim()} dims")
        if value.size(self.dim) != len(self.transforms):
            raise ValueError(f"Expected {len(self.transforms)} slices along dim {self.dim}, "
                             f"got {value.size(self.dim)}")
        return [value.select(self.dim, i) for i in range(value.size(self.dim))]

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        return torch.stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y))],
                           self.dim)

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        terms = [t.log_abs_det_jacobian(xs, ys)
                 for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y))]
        return torch.stack(terms, self.dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``: a univariate distribution's support onto (0, 1); the
    log-Jacobian is the log density."""

    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self.distribution.support

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x: torch.Tensor) -> torch.Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: torch.Tensor) -> torch.Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.distribution.log_prob(x)
