"""Derivative formulas: elementwise (``torch._aten.elementwise`` and ``torch._aten.arith``).

Every rule is written in differentiable ``torch`` ops, so it can itself be differentiated, and
follows PyTorch's conventions where the derivative is not defined: ``abs`` and ``sign`` give 0
at 0, ``maximum``/``minimum`` split the gradient evenly on ties, ``fmax``/``fmin`` give it all
to ``self``, ``clamp`` passes it where ``min <= x <= max``, ``0 ** 0`` has no gradient, and the
rounding ops (``floor``, ``div`` with a rounding mode...) have a zero gradient. Comparisons,
logical and bitwise ops have none at all.

Arguments that are Python numbers get ``None``; the engine sums each gradient down to its
input's shape and casts it to the input's dtype, so rules return broadcast-shaped gradients.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from ..._aten import activations as _activations, complex_views as _complex, elementwise as _ew
from ..._aten.factories import zeros_like
from ..._core import dtype as _dtype, op_tables as _op_tables
from ..._core.tensor import Tensor
from ..._fused import activations as _act
from . import CROSS, derivative

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# -- reading ctx --------------------------------------------------------------------------


def _param(ctx: Any, index: int, name: str, default: Any = None) -> Any:
    """The argument at positional ``index`` or keyword ``name`` of the call."""
    if index < len(ctx.args):
        return ctx.args[index]
    return ctx.kwargs.get(name, default)


def _wants(ctx: Any, index: int) -> bool:
    """Whether positional argument ``index`` is a tensor that needs a gradient (without
    unpacking it: a rule that does not read an input must not trip its version check)."""
    needs = ctx._needs  # worked out by the first read (binary rules ask twice)
    if needs is None:
        needs = ctx.needs_input_grad
    return index < len(needs) and needs[index] is True


def _safe_denominator(x: Tensor) -> Tensor:
    """``x`` with its zeros replaced by ones, for a quotient whose zero-denominator entries are
    masked afterwards: the masked branch then has a finite derivative, so a second derivative
    does not pick up ``0 * inf = nan`` from it."""
    return _ew.where(x == 0, 1.0, x)


# -- unary ops: d/dx as a function of (x, result, grad) ------------------------------------

UnaryRule = Callable[[Tensor, Tensor, Tensor], Tensor]


def _trigamma(x: Tensor) -> Tensor:
    """The derivative of digamma (``polygamma(1, x)``), composed of differentiable ops.

    Below 1/2 the reflection ``ψ1(x) = π²/sin²(πx) - ψ1(1 - x)`` moves the argument up; the
    recurrence ``ψ1(z) = 1/z² + ψ1(z + 1)`` then moves it past 10, where the asymptotic
    series ``1/z + 1/(2z²) + Σ B₂ₖ/z²ᵏ⁺¹`` is exact to double precision with seven terms.
    Poles (0, -1, -2...) give ``inf`` or a huge value, as PyTorch's.
    """
    reflect = x < 0.5
    z = _ew.where(reflect, 1 - x, x)
    total = zeros_like(z)
    for _ in range(10):
        total = total + (z * z).reciprocal()
        z = z + 1
    w = (z * z).reciprocal()
    # Bernoulli numbers B2..B14: 1/6, -1/30, 1/42, -1/30, 5/66, -691/2730, 7/6
    tail = w * (1 / 6 + w * (-1 / 30 + w * (1 / 42 + w * (-1 / 30 + w * (
        5 / 66 + w * (-691 / 2730 + w * (7 / 6)))))))
    total = total + (1 + 0.5 / z + tail) / z
    # evaluate the reflection on 1/2 where it is not used, so its derivative stays finite
    sin = _ew.sin(math.pi * _ew.where(reflect, x, 0.5))
    return _ew.where(reflect, (math.pi ** 2) / (sin * sin) - total, total)


def _sgn_backward(x: Tensor, y: Tensor, g: Tensor) -> Tensor:
    """The gradient of ``sgn(z) = z / |z|``: ``(g - Re(conj(g) sgn(z)) sgn(z)) / |z|`` (the
    part of ``g`` along the unit circle's tangent, over the radius); zero at 0 and for real
    inputs, where the sign is piecewise constant."""
    if not x._dtype.is_complex:
        return zeros_like(g)
    radius = x.abs()
    tangent = (g - _complex.real(_complex.conj(g) * y) * y) / radius
    return _ew.where(radius == 0, 0.0, tangent)


def _zero(x: Tensor, y: Tensor, g: Tensor) -> Tensor:
    # piecewise constant: PyTorch returns zeros, not "no gradient"
    return zeros_like(g)


# Names a row's derivative expression may use besides x, y and g.
_EXPRESSION_NAMES: dict[str, Any] = {
    "LN2": _LN2, "LN10": _LN10, "TWO_OVER_SQRT_PI": _TWO_OVER_SQRT_PI,
    "SQRT_PI": math.sqrt(math.pi), "trigamma": _trigamma,
    # the backward ops of sigmoid and tanh (one kernel each instead of three ops)
    "sigmoid_backward": _act.sigmoid_backward, "tanh_backward": _act.tanh_backward,
    "sgn_backward": _sgn_backward,
}


def _compiled(name: str, expression: str) -> UnaryRule:
    """The table row's derivative ``expression`` (in x, y, g) as a function, compiled once."""
    fn: UnaryRule = eval(f"lambda x, y, g: {expression}", dict(_EXPRESSION_NAMES))
    fn.__name__ = f"d_{name}"
    return fn


# The unary rules, from the pointwise op table's rows: a piecewise constant op gets zeros, an
# expression is compiled; the ops whose rows say "rule" are written further down.
UNARY: dict[str, UnaryRule] = {
    row.aten: _zero if row.grad == _op_tables.ZERO else _compiled(row.name, row.grad)
    for row in _op_tables.POINTWISE
    if row.kind == "unary" and row.grad not in (_op_tables.NONE, _op_tables.RULE)
}


# Rows whose expression is not ``g`` times a holomorphic derivative (abs's ``g * x.sgn()`` is
# already PyTorch's complex gradient; sgn's zero is the real case's), or whose backward kernel
# conjugates itself (sigmoid_backward, tanh_backward).
_NOT_HOLOMORPHIC = frozenset(("abs", "sgn", "sigmoid", "tanh"))


def _unary_rule(fn: UnaryRule, holomorphic: bool) -> Callable[[Any, Tensor], tuple[Tensor | None]]:
    def rule(ctx: Any, grad: Tensor) -> tuple[Tensor | None]:
        if not _wants(ctx, 0):
            return (None,)
        if holomorphic and grad._dtype in _COMPLEX:  # (a set: the property is a call)
            # PyTorch's complex gradient is g * conj(f'(z)) = conj(conj(g) * f'(z)); the
            # expressions are written g * f'(z), linear in g
            return (_complex.conj(fn(ctx.args[0], ctx.result, _complex.conj(grad))),)
        return (fn(ctx.args[0], ctx.result, grad),)

    rule.__name__ = fn.__name__
    return rule


def _reads(expression: str) -> tuple[bool, bool]:
    """Whether a row's derivative expression reads ``x`` (the input) and ``y`` (the result):
    a node keeps only what its rule reads (``tanh`` keeps its result, ``sin`` its input)."""
    return (re.search(r"\bx\b", expression) is not None,
            re.search(r"\by\b", expression) is not None)


# aten name -> (keeps the input, keeps the result), for derivative(args=..., result=...)
_UNARY_SAVES: dict[str, tuple[bool, bool]] = {
    row.aten: (False, False) if row.grad == _op_tables.ZERO else _reads(row.grad)
    for row in _op_tables.POINTWISE if row.aten in UNARY
}

for _name, _fn in UNARY.items():
    _keeps_x, _keeps_y = _UNARY_SAVES[_name]
    derivative(f"aten::{_name}", args=_keeps_x, result=_keeps_y)(
        _unary_rule(_fn, _name not in _NOT_HOLOMORPHIC))


# -- ops without a derivative: bool or integer results -------------------------------------

NOT_DIFFERENTIABLE = tuple(row.aten for row in _op_tables.POINTWISE
                           if row.grad == _op_tables.NONE) + tuple(
    # the comparisons' overloads for a number operand (torch._aten.elementwise)
    f"{row.name}.Scalar" for row in _op_tables.POINTWISE
    if row.kind == "compare" and row.number_other)


@derivative(*(f"aten::{name}" for name in NOT_DIFFERENTIABLE))
def _not_differentiable(ctx: Any, grad: Tensor) -> tuple[None, ...]:
    return (None,) * len(ctx.args)


# -- arithmetic ------------------------------------------------------------------------------


def _times(grad: Tensor, alpha: Any) -> Tensor:
    """``grad * alpha``, skipping the multiplication for the common ``alpha=1``."""
    return grad if alpha == 1 and not isinstance(alpha, float) else grad * alpha


@derivative("aten::add.Tensor", args=False, result=False)
def _add(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    alpha = ctx.kwargs.get("alpha", 1)
    return (grad if _wants(ctx, 0) else None,
            _times(grad, alpha) if _wants(ctx, 1) else None)


_COMPLEX = frozenset(d for d in _dtype.DTYPES.values() if d.is_complex)


def _conj(x: Any) -> Any:
    """``x`` conjugated when it is a complex tensor: PyTorch's complex gradients are the
    conjugate Wirtinger form, so a product's rule multiplies by the other factor's conjugate."""
    if isinstance(x, complex):  # a Python complex factor (z * (1 + 2j))
        return x.conjugate()
    # (a set lookup: the dtype's property is a call, and every product's backward asks)
    return _complex.conj_physical(x) if isinstance(x, Tensor) and x._dtype in _COMPLEX else x


@derivative("aten::mul.Tensor", args=CROSS, result=False)
def _mul(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    self, other = ctx.args[:2]
    return (grad * _conj(other) if _wants(ctx, 0) else None,
            grad * _conj(self) if _wants(ctx, 1) else None)


@derivative("aten::sub.Tensor", args=False, result=False)
def _sub(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    alpha = ctx.kwargs.get("alpha", 1)
    return (grad if _wants(ctx, 0) else None,
            _times(grad, -alpha) if _wants(ctx, 1) else None)


@derivative("aten::rsub.Scalar", args=False, result=False)
def _rsub(ctx: Any, grad: Tensor) -> tuple[Tensor | None, None, None]:
    # other - alpha * self
    alpha = _param(ctx, 2, "alpha", 1)
    return (_times(grad, -alpha) if _wants(ctx, 0) else None, None, None)


@derivative("aten::div.Tensor_mode", "aten::div.Tensor", result=False)
def _div(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    self, other = ctx.args[:2]
    if ctx.kwargs.get("rounding_mode") is not None:
        # rounded quotients are piecewise constant
        zero = zeros_like(grad)
        return (zero if _wants(ctx, 0) else None, zero if _wants(ctx, 1) else None)
    return (grad / _conj(other) if _wants(ctx, 0) else None,
            -grad * _conj((self / other) / other) if _wants(ctx, 1) else None)


def _pow_self(grad: Tensor, self: Tensor, exponent: Any) -> Tensor:
    if not isinstance(exponent, Tensor):
        if exponent == 0:
            return zeros_like(grad)
        return grad * _conj(exponent * self.pow(exponent - 1))
    # x ** 0 is 1 everywhere, 0 ** 0 included: no gradient even where x ** -1 is infinite
    return _ew.where(exponent == 0, 0.0, grad * _conj(exponent * self.pow(exponent - 1)))


def _pow_exponent(grad: Tensor, self: Any, exponent: Tensor, result: Tensor) -> Tensor:
    if not isinstance(self, Tensor):
        log_base = math.log(self) if self > 0 else (-math.inf if self == 0 else math.nan)
        if self == 0:
            # 0 ** e is 0 for every e > 0 (and 1 at e = 0): flat from the right
            return _ew.where(exponent >= 0, 0.0, grad * (result * log_base))
        return grad * (result * log_base)
    if result._dtype.is_complex:  # no order to test: d/de x ** e = x ** e log(x), conjugated
        return grad * _conj(_ew.where(self == 0, 0.0, result * self.to(result.dtype).log()))
    flat = _ew.logical_and(self == 0, exponent >= 0)
    return grad * _ew.where(flat, 0.0, result * self.to(result.dtype).log())


@derivative("aten::pow.Tensor_Tensor", "aten::pow.Tensor_Scalar", "aten::pow.Scalar")
def _pow(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    self, exponent = ctx.args[:2]
    return (_pow_self(grad, self, exponent) if _wants(ctx, 0) else None,
            _pow_exponent(grad, self, exponent, ctx.result) if _wants(ctx, 1) else None)


@derivative("aten::remainder.Tensor")
def _remainder(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    # self - floor(self / other) * other
    self, other = ctx.args[:2]
    return (grad if _wants(ctx, 0) else None,
            -grad * _ew.div(self, other, rounding_mode="floor") if _wants(ctx, 1) else None)


@derivative("aten::fmod.Tensor")
def _fmod(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    # self - trunc(self / other) * other
    self, other = ctx.args[:2]
    return (grad if _wants(ctx, 0) else None,
            -grad * _ew.div(self, other, rounding_mode="trunc") if _wants(ctx, 1) else None)


# -- binary math ---------------------------------------------------------------------------


def _extremum_rule(is_max: bool) -> Callable[[Any, Tensor], tuple[Tensor | None, ...]]:
    """maximum / minimum: ties share the gradient evenly; where a NaN is involved neither side
    is masked (both get all of it), as in PyTorch."""

    def rule(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        self, other = ctx.args[:2]
        shared = _ew.where(self == other, grad / 2, grad)
        self_loses, other_loses = ((self < other, self > other) if is_max
                                   else (self > other, self < other))
        return (_ew.where(self_loses, 0.0, shared) if _wants(ctx, 0) else None,
                _ew.where(other_loses, 0.0, shared) if _wants(ctx, 1) else None)

    return rule


def _nan_ignoring_extremum_rule(is_max: bool) -> Callable[[Any, Tensor], tuple[Any, ...]]:
    """fmax / fmin: self wins ties, and wherever other is NaN (these ops ignore NaN)."""

    def rule(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        self, other = ctx.args[:2]
        wins = self >= other if is_max else self <= other
        self_wins = _ew.logical_or(wins, other.isnan())
        return (_ew.where(self_wins, grad, 0.0) if _wants(ctx, 0) else None,
                _ew.where(self_wins, 0.0, grad) if _wants(ctx, 1) else None)

    return rule


derivative("aten::maximum.Tensor")(_extremum_rule(is_max=True))
derivative("aten::minimum.Tensor")(_extremum_rule(is_max=False))
derivative("aten::fmax.Tensor")(_nan_ignoring_extremum_rule(is_max=True))
derivative("aten::fmin.Tensor")(_nan_ignoring_extremum_rule(is_max=False))


@derivative("aten::atan2.Tensor")
def _atan2(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    self, other = ctx.args[:2]
    norm = self * self + other * other
    # at the origin (or where the squares underflow) PyTorch gives 0, not inf * 0
    recip = _ew.where(norm == 0, 0.0, _safe_denominator(norm).reciprocal())
    return (grad * other * recip if _wants(ctx, 0) else None,
            grad * -self * recip if _wants(ctx, 1) else None)


@derivative("aten::hypot.Tensor")
def _hypot(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    self, other = ctx.args[:2]
    return (grad * self / ctx.result if _wants(ctx, 0) else None,
            grad * other / ctx.result if _wants(ctx, 1) else None)


@derivative("aten::copysign.Tensor")
def _copysign(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    self = ctx.args[0]
    self_grad = None
    if _wants(ctx, 0):
        # result / self is +-1, and 0 at self == 0
        ratio = _ew.where(self == 0, 0.0, ctx.result / _safe_denominator(self))
        self_grad = grad * ratio
    return (self_grad, zeros_like(grad) if _wants(ctx, 1) else None)


@derivative("aten::nextafter.Tensor")
def _nextafter(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    # the result differs from self by one ulp: PyTorch passes the gradient through to self
    return (grad if _wants(ctx, 0) else None,
            zeros_like(grad) if _wants(ctx, 1) else None)


# -- clamp and where -----------------------------------------------------------------------


def _clamp_grads(ctx: Any, grad: Tensor, low: Any, high: Any,
                 positions: tuple[int | None, int | None]) -> list[Tensor | None]:
    """Gradients of ``clamp(self, low, high)`` for self and the bounds (either may be None).

    self gets the gradient where ``low <= self <= high`` (NaN: nowhere); a bound gets it where
    it is the result: ``low`` where ``self < low`` unless ``low > high`` (then ``high`` wins),
    ``high`` where ``self > high`` or ``high < low``.
    """
    self = ctx.args[0]
    inside = None
    if low is not None:
        inside = self >= low
    if high is not None:
        below_high = self <= high
        inside = below_high if inside is None else _ew.logical_and(inside, below_high)
    grads: list[Tensor | None] = [_ew.where(inside, grad, 0.0) if _wants(ctx, 0) else None]
    low_at, high_at = positions
    if low_at is not None:
        low_grad = None
        if _wants(ctx, low_at):
            picks = self < low
            if high is not None:
                picks = _ew.logical_and(picks, low < high)
            low_grad = _ew.where(picks, grad, 0.0)
        grads.append(low_grad)
    if high_at is not None:
        high_grad = None
        if _wants(ctx, high_at):
            picks = self > high
            if low is not None:
                picks = _ew.logical_or(picks, high < low)
            high_grad = _ew.where(picks, grad, 0.0)
        grads.append(high_grad)
    return grads


@derivative("aten::clamp", result=False)
def _clamp(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    low, high = _param(ctx, 1, "min"), _param(ctx, 2, "max")
    grads = _clamp_grads(ctx, grad, low, high, (1, 2))
    return tuple(grads[:len(ctx.args)])


@derivative("aten::clamp.Tensor", result=False)
def _clamp_tensor(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    return _clamp(ctx, grad)


@derivative("aten::clamp_min", result=False)
def _clamp_min(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    grads = _clamp_grads(ctx, grad, _param(ctx, 1, "min"), None, (1, None))
    return tuple(grads[:len(ctx.args)])


@derivative("aten::clamp_max", result=False)
def _clamp_max(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    grads = _clamp_grads(ctx, grad, None, _param(ctx, 1, "max"), (None, 1))
    return tuple(grads[:len(ctx.args)])


# addcmul, addcdiv and lerp differentiate by these rules rather than through their composites
# (a backend may override them with a fused kernel, as the CPU's does): PyTorch's formulas and
# node names (AddcmulBackward0...). The in-place forms share them: the node keeps `self` as it
# was before the write.


@derivative("aten::addcmul", "aten::addcmul_", result=False)
def _addcmul(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    _, tensor1, tensor2 = ctx.args[:3]
    value = ctx.kwargs.get("value", 1)
    return (grad if _wants(ctx, 0) else None,
            grad * _conj(tensor2 * value) if _wants(ctx, 1) else None,
            grad * _conj(tensor1 * value) if _wants(ctx, 2) else None)


@derivative("aten::addcdiv", "aten::addcdiv_", result=False)
def _addcdiv(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    _, tensor1, tensor2 = ctx.args[:3]
    value = ctx.kwargs.get("value", 1)
    return (grad if _wants(ctx, 0) else None,
            grad * _conj(value / tensor2) if _wants(ctx, 1) else None,
            -grad * _conj(value * tensor1 / (tensor2 * tensor2)) if _wants(ctx, 2) else None)


@derivative("aten::lerp.Tensor", "aten::lerp_.Tensor", "aten::lerp.Scalar", "aten::lerp_.Scalar",
            result=False)
def _lerp(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    self, end, weight = ctx.args[:3]
    return (grad * _conj(1 - weight) if _wants(ctx, 0) else None,
            grad * _conj(weight) if _wants(ctx, 1) else None,
            grad * _conj(end - self) if _wants(ctx, 2) else None)


@derivative("aten::where.self", args=(0,), result=False)  # (as PyTorch's WhereBackward0)
def _where(ctx: Any, grad: Tensor) -> tuple[None, Tensor | None, Tensor | None]:
    condition = ctx.args[0]
    return (None,
            _ew.where(condition, grad, 0.0) if _wants(ctx, 1) else None,
            _ew.where(condition, 0.0, grad) if _wants(ctx, 2) else None)


# -- activations and their backward ops (torch/_fused/activations.py) -----------------------
# Each backward op has a rule of its own, so that a double backward (create_graph=True)
# differentiates it: in the gradient it is linear (the same op on the new gradient), in the
# saved value it is the second derivative.


@derivative("aten::sigmoid_backward")
def _sigmoid_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    g, y = ctx.args
    if y._dtype.is_complex:
        # g conj(y (1 - y)) is holomorphic in g and antiholomorphic in y: the conjugates fall
        # on the other side (PyTorch's convention for the second derivative)
        return (grad * (y * (1 - y)) if _wants(ctx, 0) else None,
                _conj(grad * _conj(g) * (1 - 2 * y)) if _wants(ctx, 1) else None)
    # d/dy of g y (1 - y) is g (1 - 2y)
    return (_act.sigmoid_backward(grad, y) if _wants(ctx, 0) else None,
            grad * (g * (1 - 2 * y)) if _wants(ctx, 1) else None)


@derivative("aten::tanh_backward")
def _tanh_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    g, y = ctx.args
    if y._dtype.is_complex:  # as sigmoid_backward's: g conj(1 - y^2)
        return (grad * (1 - y * y) if _wants(ctx, 0) else None,
                _conj(grad * _conj(g) * (-2 * y)) if _wants(ctx, 1) else None)
    # d/dy of g (1 - y^2) is -2 g y
    return (_act.tanh_backward(grad, y) if _wants(ctx, 0) else None,
            grad * (-2 * g * y) if _wants(ctx, 1) else None)


@derivative("aten::gelu", result=False)
def _gelu(ctx: Any, grad: Tensor) -> tuple[Tensor | None]:
    if not _wants(ctx, 0):
        return (None,)
    return (_act.gelu_backward(grad, ctx.args[0], _param(ctx, 1, "approximate", "none")),)


def _gelu_second_derivative(x: Tensor, approximate: str) -> Tensor:
    """d^2 gelu / dx^2, in differentiable ops."""
    if approximate == "none":  # phi(x) (2 - x^2), phi the standard normal density
        return _act._INV_SQRT_2PI * _ew.exp(-0.5 * (x * x)) * (2 - x * x)
    # with t = tanh(u), u = k (x + c x^3), u' = k (1 + 3 c x^2), u'' = 6 k c x:
    # (1 - t^2) (u' + 0.5 x (u'' - 2 t u'^2))
    k, c = _act._SQRT_2_OVER_PI, _act._CUBIC
    x2 = x * x
    t = _ew.tanh(k * (x + c * (x2 * x)))
    du = k * (1 + 3 * c * x2)
    return (1 - t * t) * (du + 0.5 * x * (6 * k * c * x - 2 * t * (du * du)))


@derivative("aten::silu", result=False)
def _silu(ctx: Any, grad: Tensor) -> tuple[Tensor | None]:
    # PyTorch's silu_backward: g s (1 + x (1 - s)), s = sigmoid(x), in differentiable ops
    if not _wants(ctx, 0):
        return (None,)
    x = ctx.args[0]
    s = _ew.sigmoid(x)
    return (grad * (s * (1 + x * (1 - s))),)


@derivative("aten::gelu_backward", result=False)
def _gelu_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    g, x = ctx.args
    approximate = _param(ctx, 2, "approximate", "none")
    return (_act.gelu_backward(grad, x, approximate) if _wants(ctx, 0) else None,
            grad * g * _gelu_second_derivative(x, approximate) if _wants(ctx, 1) else None)


# -- composites with a formula of their own ------------------------------------------------
# These ops are CompositeImplicitAutograd: without a rule they differentiate through their
# decomposition, which loses to PyTorch's formula where the decomposition saturates or masks:
# logit and xlogy mask the wrong points, and round/float_power run their primitive directly
# (no graph at all).


@derivative("aten::logit")
def _logit(ctx: Any, grad: Tensor) -> tuple[Tensor | None, None]:
    if not _wants(ctx, 0):
        return (None, None)
    x = ctx.args[0]
    eps = _param(ctx, 1, "eps")
    dlogit = grad / (x * (1 - x))
    if eps is None or eps < 0:
        # outside [0, 1] logit is NaN, and so is its gradient
        outside = _ew.logical_or(x < 0, x > 1)
        return (_ew.where(outside, math.nan, dlogit), None)
    # clamped to [eps, 1 - eps]: flat outside (NaN stays NaN)
    outside = _ew.logical_or(x < eps, x > 1 - eps)
    return (_ew.where(outside, 0.0, dlogit), None)


@derivative("aten::xlogy.Tensor")
def _xlogy(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    self, other = ctx.args[:2]
    self_grad = other_grad = None
    if _wants(ctx, 0):
        # d/dx x*log(y) = log(y); PyTorch zeroes it where x == 0 and y <= 0 (log(y) undefined)
        self_grad = _ew.xlogy(grad, other)
        if isinstance(other, Tensor):
            undefined = _ew.logical_and(self == 0, other <= 0)
            self_grad = _ew.where(undefined, 0.0, self_grad)
        elif other <= 0:  # a Python number (xlogy.Scalar_Other)
            self_grad = _ew.where(self == 0, 0.0, self_grad)
    if _wants(ctx, 1):
        other_grad = grad * self / other
    return (self_grad, other_grad)


def _incomplete_gamma_rule(name: str, sign: float) -> Callable[..., Any]:
    """The rule of ``aten::igamma`` (``sign`` 1) or ``aten::igammac`` (-1): with respect to
    ``other`` (x) the integrand, ``x^(a-1) e^-x / Gamma(a)``; PyTorch has none with respect to
    ``self`` (a) and raises, as this does."""

    def rule(ctx: Any, grad: Tensor) -> tuple[None, Tensor | None]:
        if _wants(ctx, 0):
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        if not _wants(ctx, 1):
            return (None, None)
        a, x = ctx.args[:2]
        density = ((a - 1) * x.log() - x - a.lgamma()).exp()
        return (None, grad * density if sign > 0 else -grad * density)

    return rule


derivative("aten::igamma", result=False)(_incomplete_gamma_rule("igamma", 1.0))
derivative("aten::igammac", result=False)(_incomplete_gamma_rule("igammac", -1.0))


@derivative("aten::logaddexp")
def _logaddexp(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    self, other = ctx.args[:2]
    return (grad / (1 + (other - self).exp()) if _wants(ctx, 0) else None,
            grad / (1 + (self - other).exp()) if _wants(ctx, 1) else None)


@derivative("aten::logaddexp2")
def _logaddexp2(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    self, other = ctx.args[:2]
    return (grad / (1 + (other - self).exp2()) if _wants(ctx, 0) else None,
            grad / (1 + (self - other).exp2()) if _wants(ctx, 1) else None)


@derivative("aten::round.decimals")
def _round(ctx: Any, grad: Tensor) -> tuple[Tensor | None]:
    return (zeros_like(grad) if _wants(ctx, 0) else None,)


@derivative("aten::float_power.Tensor_Tensor")
def _float_power(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    # pow computed in double precision: differentiate the double-precision pow
    result = ctx.result
    self, exponent = (a.to(result.dtype) if isinstance(a, Tensor) else a for a in ctx.args[:2])
    return (_pow_self(grad, self, exponent) if _wants(ctx, 0) else None,
            _pow_exponent(grad, self, exponent, result) if _wants(ctx, 1) else None)


@derivative("aten::relu", "aten::relu_", args=False)
def _relu(ctx: Any, grad: Tensor) -> Tensor:
    # PyTorch's operator (a dispatch mode sees aten::threshold_backward): no gradient where the
    # result is <= 0 (0 included); a NaN result passes the gradient through. One select, not a
    # mask cast to grad's dtype and a product (two more passes over a big activation, and
    # -0.0 / NaN where grad is negative / infinite: threshold_backward writes 0)
    return _activations.ATEN["threshold_backward"](grad, ctx.result, 0)
