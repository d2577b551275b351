"""The special functions ``torch.special`` has and ``torch.*`` lacks, as composites.

Each is written over differentiable elementwise ops, so autograd differentiates it and any
backend that has those ops runs it. Float inputs keep their dtype; integer and bool inputs
compute in the default float dtype, as PyTorch's special functions do. The series and expansions
are evaluated in float64 and rounded back, so float32 results are correctly rounded in practice
and float64 results carry the expansions' own error (1e-14 relative or better).

Branches are chosen with ``where`` after clamping each branch's input to its own domain, so the
branch not taken never produces inf or nan that would leak into gradients through ``where``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from .._core import (
    config as _config,
    dispatch as _dispatch,
    dtype as _dtype,
    grad_mode as _grad_mode,
    upcalls,
)
from .._core.tensor import Tensor

__all__ = ["i0", "igamma", "igammac", "mvlgamma", "polygamma", "sinc"]

_EULER = 0.5772156649015329
_LOG_PI = math.log(math.pi)


def _default_float() -> _dtype.dtype:
    from .._core import config as _config
    return _config.get_default_dtype()


def _as_tensor(x: Any) -> Tensor:
    if isinstance(x, Tensor):
        return x
    from .._aten.factories import tensor as _tensor
    return _tensor(x)


def _result_dtype(*xs: Tensor) -> _dtype.dtype:
    """The floating dtype of the result: the widest float input, else the default float."""
    floats = [x.dtype for x in xs if x.dtype.is_floating_point]
    if not floats:
        return _default_float()
    return max(floats, key=lambda d: d.itemsize)


def _wide(*tensors: Tensor) -> _dtype.dtype:
    """The dtype the functions compute in: float64, or float32 where a tensor's device has no
    double precision (as PyTorch's GPU kernels compute float32 special functions in float)."""
    from .._aten.elementwise import computes_float64

    if all(computes_float64(t._device) for t in tensors):
        return _dtype.float64
    return _dtype.float32


def _unary(fn: Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    """Run ``fn`` on the input in float64 (see :func:`_wide`) and return the result in the
    input's float dtype."""

    def apply(x: Any) -> Tensor:
        x = _as_tensor(x)
        out = _result_dtype(x)
        return fn(x.to(_wide(x))).to(out)

    return apply


def _binary(fn: Callable[[Tensor, Tensor], Tensor]) -> Callable[[Any, Any], Tensor]:
    def apply(a: Any, b: Any) -> Tensor:
        a, b = _as_tensor(a), _as_tensor(b)
        out = _result_dtype(a, b)
        wide = _wide(a, b)
        return fn(a.to(wide), b.to(wide)).to(out)

    return apply


def _first_argument_not_differentiable(derivative: str,
                                       fn: Callable[[Any, Any], Tensor]) -> Callable[..., Tensor]:
    """``fn`` whose result, when its first argument requires grad, raises on backward as
    PyTorch's does (it has no derivative for that argument: zeta's ``x``, igamma's ``a``)."""

    def apply(a: Any, b: Any) -> Tensor:
        result = fn(a, b)
        if isinstance(a, Tensor) and a.requires_grad and _config.is_grad_enabled():
            error = NotImplementedError(f"the derivative for '{derivative}' is not implemented.")
            return upcalls.not_differentiable(result, error, a, b)
        return result

    return apply


def _where(cond: Tensor, a: Any, b: Any) -> Tensor:
    from .._aten.elementwise import where
    return where(cond, a, b)


def _horner(coefficients: list[float], y: Tensor) -> Tensor:
    """sum c_k y^k for the coefficients c_0, c_1, ... (highest last)."""
    acc = y * 0.0 + coefficients[-1]
    for c in reversed(coefficients[:-1]):
        acc = acc * y + c
    return acc


# Tensor methods PyTorch has for these (x.i0(), x.polygamma(n), ...)
METHODS: dict[str, Any] = {}


# ---- elementary composites -----------------------------------------------------------------
def _sinc(x: Tensor) -> Tensor:
    # sin(pi x)/(pi x), 1 at 0; the safe denominator keeps the 0/0 out of the gradient
    zero = x == 0
    px = _where(zero, 1.0, x) * math.pi
    return _where(zero, 1.0, px.sin() / px)


def _entr(x: Tensor) -> Tensor:
    positive = x > 0
    safe = _where(positive, x, 1.0)
    inner = _where(x == 0, 0.0, -math.inf)
    return _where(positive, -safe * safe.log(), _where(x.isnan(), x, inner))


def _xlog1py(x: Tensor, y: Tensor) -> Tensor:
    # 0 where x is 0 (unless y is nan), as xlogy
    value = x * y.log1p()
    return _where((x == 0) & ~y.isnan(), 0.0, value)


def _ndtr(x: Tensor) -> Tensor:
    return (x * -math.sqrt(0.5)).erfc() * 0.5


def _erfcx(x: Tensor) -> Tensor:
    # exp(x^2) erfc(x): directly below 25 (where neither factor over- or underflows in float64),
    # by its asymptotic series above
    big = x > 25.0
    small_x = _where(big, 0.0, x)
    direct = (small_x * small_x).exp() * small_x.erfc()
    large_x = _where(big, x, 25.0)
    inv2 = (large_x * large_x * 2.0).reciprocal()
    series = _horner([1.0, -1.0, 3.0, -15.0, 105.0, -945.0, 10395.0], inv2)
    return _where(big, series / (large_x * math.sqrt(math.pi)), direct)


def _log_ndtr(x: Tensor) -> Tensor:
    # lower tail through erfcx (no underflow), upper tail through log1p (no rounding to 0)
    negative = x < 0
    t = _where(negative, x, 0.0) * -math.sqrt(0.5)
    lower = (_erfcx(t) * 0.5).log() - t * t
    upper = ((_where(negative, 0.0, x) * math.sqrt(0.5)).erfc() * -0.5).log1p()
    return _where(negative, lower, upper)


def _ndtri(p: Tensor) -> Tensor:
    # erfinv gives a start; Newton on log_ndtr (well scaled in both tails) polishes it
    inside = (p > 0) & (p < 1)
    q = _where(inside, p, 0.5)
    start = (q * 2.0 - 1.0).erfinv() * math.sqrt(2.0)
    # where 2p-1 rounded to -1 or 1, the tail approximation sqrt(-2 log p) is the start
    tail = (q.log() * -2.0).sqrt()
    upper_tail = ((1.0 - q).log() * -2.0).sqrt()
    start = _where(start.isinf() & (q < 0.5), -tail, start)
    start = _where(start.isinf(), upper_tail, start)
    x = start
    log_q = q.log()
    for _ in range(4):
        log_phi = x * x * -0.5 - 0.5 * math.log(2 * math.pi)
        lnd = _log_ndtr(x)
        # f = log ndtr(x) - log p, f' = phi(x)/ndtr(x)
        x = x - (lnd - log_q) / (log_phi - lnd).exp()
    edge = _where(p == 0, -math.inf, _where(p == 1, math.inf, math.nan))
    return _where(inside, x, edge)


def _spherical_j0(x: Tensor) -> Tensor:
    small = x.abs() < 0.5
    xs = _where(small, x, 0.0)
    y = xs * xs
    # sin(x)/x's Taylor series where the quotient would lose digits
    series = _horner([1.0, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880, -1 / 39916800,
                      1 / 6227020800], y)
    xl = _where(small, 1.0, x)
    return _where(small, series, _where(x.isinf(), 0.0, xl.sin() / xl))


# ---- gamma family -----------------------------------------------------------------------------
# Bernoulli numbers B_2, B_4, ... B_24 over (2j)!, for the Euler-Maclaurin tail of zeta
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730)
_ZETA_TERMS = 12
_EM_TAIL = tuple(b / math.factorial(2 * j + 2) for j, b in enumerate(_BERNOULLI))


def _zeta(x: Tensor, q: Tensor) -> Tensor:
    """Hurwitz zeta sum_k (k+q)^-x by Euler-Maclaurin summation after ``_ZETA_TERMS`` terms."""
    total = x * 0.0
    for k in range(_ZETA_TERMS):
        total = total + (q + k).pow(-x)
    a = q + _ZETA_TERMS
    total = total + a.pow(1.0 - x) / (x - 1.0) + a.pow(-x) * 0.5
    rising = x * 1.0          # x (x+1) ... (x+2j-2)
    power = a.pow(-x - 1.0)   # a^(-x-2j+1)
    inv_a2 = (a * a).reciprocal()
    for j, weight in enumerate(_EM_TAIL):
        total = total + rising * power * weight
        rising = rising * (x + 2 * j + 1) * (x + 2 * j + 2)
        power = power * inv_a2
    # the domain: x = 1 is the pole, x < 1 is outside; q a non-positive integer is a pole
    pole = (x == 1) | ((q <= 0) & (q == q.floor()))
    undefined = (x < 1) | ((q < 0) & (x != x.floor()))
    return _where(pole, math.inf, _where(undefined, math.nan, total))


def _polygamma(n: int, x: Tensor) -> Tensor:
    if n == 0:
        return x.digamma()
    sign = -1.0 if n % 2 == 0 else 1.0
    return _zeta(x * 0.0 + (n + 1), x) * (sign * math.factorial(n))


def _check_n(n: Any) -> int:
    if isinstance(n, Tensor):
        n = n.item()
    if int(n) != n or n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return int(n)


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The ``n``-th derivative of the digamma function of ``input``."""
    n = _check_n(n)
    result = _unary(lambda x: _polygamma(n, x))(input)
    return _write_out(result, out)


def mvlgamma(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _as_tensor(input)
    if not x.dtype.is_floating_point:
        raise RuntimeError("mvlgamma is not implemented for integral types")
    if bool((x <= (p - 1) / 2).any()):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    total = x.lgamma()
    for i in range(1, p):
        total = total + (x - i / 2).lgamma()
    return _write_out(total + p * (p - 1) / 4 * _LOG_PI, out)


# Iterations of the incomplete gamma's series and continued fraction: the series' terms fall
# below float64's ulp after about 10 sqrt(x) terms past x ~ a, the continued fraction converges
# in a few sqrt(a) steps; both are capped.
_IGAMMA_TERMS = 2000
_IGAMMA_CF_STEPS = 400


def _holds_values(t: Tensor) -> bool:
    """Whether ``t``'s values can be read: a meta tensor and a fake tensor (which carries its
    ``fake_mode``) hold none, and the series below only need a count that gives their shapes."""
    return t.device.type != "meta" and getattr(t, "fake_mode", None) is None


def _iterations(values: Tensor, base: int, per_root: float, cap: int) -> int:
    if not _holds_values(values):  # no values to size by: the shapes come out the same
        return base
    finite = values.abs()
    finite = _where(finite.isinf() | finite.isnan(), 0.0, finite)
    largest = float(finite.max().item()) if finite.numel() else 0.0
    return min(cap, base + int(per_root * math.sqrt(largest)))


def _igamma(a: Tensor, x: Tensor, upper: bool) -> Tensor:
    """Regularized incomplete gamma, lower P(a, x) or upper Q(a, x): P by its series below
    x = a + 1, Q by its continued fraction above; each side takes the other as 1 minus it, so the
    small one of the two is never the difference of nearly equal numbers."""
    use_series = x < a + 1
    xs = _where(use_series, x, 0.0)
    term = xs * 0.0 + 1.0
    total = term
    for k in range(1, _iterations(xs, 40, 10.0, _IGAMMA_TERMS)):
        term = term * xs / (a + k)
        total = total + term
    log_front = a * _where(xs > 0, xs, 1.0).log() - xs - (a + 1.0).lgamma()
    p = _where(xs > 0, total * log_front.exp(), 0.0)
    q = _igammac_cf(a, _where(use_series, a + 1.0, x))
    if upper:
        return _where(use_series, 1.0 - p, q)
    return _where(use_series, p, 1.0 - q)


def _igammac_cf(a: Tensor, x: Tensor) -> Tensor:
    # Lentz's evaluation of Q(a, x)'s continued fraction (valid for x >= a + 1)
    tiny = 1e-300
    b = x + 1.0 - a
    c = b * 0.0 + 1.0 / tiny
    d = b.reciprocal()
    h = d
    for i in range(1, _iterations(a, 40, 4.0, _IGAMMA_CF_STEPS)):
        an = (a - i) * float(i)
        b = b + 2.0
        d = an * d + b
        d = _where(d.abs() < tiny, tiny, d).reciprocal()
        c = b + an / c
        c = _where(c.abs() < tiny, tiny, c)
        h = h * d * c
    return (a * x.log() - x - a.lgamma()).exp() * h


def _igamma_checked(a: Tensor, x: Tensor, upper: bool) -> Tensor:
    value = _igamma(_where(a > 0, a, 1.0), _where(x > 0, x, 0.0), upper)
    # PyTorch's edges: a = 0 gives a step at x > 0, x = 0 gives 0 (1 for Q), negatives nan
    at_zero_a = _where(x > 0, 0.0 if upper else 1.0, math.nan)
    value = _where(a == 0, at_zero_a, value)
    value = _where((x == 0) & (a > 0), 1.0 if upper else 0.0, value)
    value = _where(x.isinf() & (x > 0) & (a > 0), 0.0 if upper else 1.0, value)
    return _where((a < 0) | (x < 0), math.nan, value)


# Operators of their own, as in PyTorch: a dispatch mode sees one aten::igamma, and autograd
# uses the derivative formula (autograd/_formulas/elementwise.py) instead of differentiating
# through the series' hundreds of ops.
_IGAMMA_OPS = _dispatch.define_aten({
    "igamma": ("igamma(Tensor self, Tensor other) -> Tensor",
               _binary(lambda a, x: _igamma_checked(a, x, False))),
    "igammac": ("igammac(Tensor self, Tensor other) -> Tensor",
                _binary(lambda a, x: _igamma_checked(a, x, True))),
})


def igamma(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The regularized lower incomplete gamma function P(input, other)."""
    return _write_out(_IGAMMA_OPS["igamma"](_as_tensor(input), _as_tensor(other)), out)


def igammac(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The regularized upper incomplete gamma function Q(input, other)."""
    return _write_out(_IGAMMA_OPS["igammac"](_as_tensor(input), _as_tensor(other)), out)


# ---- modified Bessel functions ----------------------------------------------------------------
_SERIES_LIMIT = 20.0  # power series below |x| = 20, the large-argument expansion above
_SERIES_TERMS = 60
_ASYMPTOTIC_TERMS = 30
_I0_SERIES = [1.0 / math.factorial(k) ** 2 for k in range(_SERIES_TERMS)]
_I1_SERIES = [1.0 / (math.factorial(k) * math.factorial(k + 1)) for k in range(_SERIES_TERMS)]


def _asymptotic(order: int, alternate: bool) -> list[float]:
    """The coefficients of 1/x^k in the large-x expansion of I_order (alternate) or K_order."""
    coefficients, c = [1.0], 1.0
    for k in range(1, _ASYMPTOTIC_TERMS):
        c *= (4 * order * order - (2 * k - 1) ** 2) / (k * 8)
        coefficients.append(-c if alternate and k % 2 else c)
    return coefficients


_I0_ASYMPTOTIC = [c * (-1) ** k for k, c in enumerate(_asymptotic(0, False))]
_I1_ASYMPTOTIC = [c * (-1) ** k for k, c in enumerate(_asymptotic(1, False))]


def _scaled_i(x: Tensor, order: int) -> Tensor:
    """I_order(x) exp(-|x|) (I_0 is even, I_1 odd)."""
    small = x.abs() <= _SERIES_LIMIT
    xs = _where(small, x, 0.0)
    y = xs * xs * 0.25
    if order == 0:
        series = _horner(_I0_SERIES, y)
    else:
        # the signed x, not |x| times sign(x), so the gradient at 0 is I_1'(0) = 1/2
        series = _horner(_I1_SERIES, y) * xs * 0.5
    series = series * (-xs.abs()).exp()
    xl = _where(small, _SERIES_LIMIT, x.abs())
    table = _I0_ASYMPTOTIC if order == 0 else _I1_ASYMPTOTIC
    large = _horner(table, xl.reciprocal()) / (xl * (2 * math.pi)).sqrt()
    if order == 1:
        large = large * x.sign()
    return _where(small, series, large)


def _i0e(x: Tensor) -> Tensor:
    return _scaled_i(x, 0)


def _i1e(x: Tensor) -> Tensor:
    return _scaled_i(x, 1)


def _i0(x: Tensor) -> Tensor:
    return _scaled_i(x, 0) * x.abs().exp()


def _i1(x: Tensor) -> Tensor:
    return _scaled_i(x, 1) * x.abs().exp()


def i0(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The zeroth-order modified Bessel function of the first kind."""
    return _write_out(_unary(_i0)(input), out)


_K_SMALL = 2.0            # series below, quadrature above
# The integrand exp(-x (cosh t - 1)) is below exp(-40) once x t^2 / 2 > 40, so the nodes span
# [0, sqrt(80 / x)]; 33 of them make the trapezoid rule exact to float64 for every x > 2.
_K_SPAN = 80.0
_K_NODES = 33
_HARMONIC = [sum(1.0 / j for j in range(1, k + 1)) for k in range(_SERIES_TERMS)]


def _scaled_k(x: Tensor, order: int) -> Tensor:
    """K_order(x) exp(x) for x > 0: the small-x series, or the trapezoid rule on
    integral_0^inf exp(-x (cosh t - 1)) cosh(order t) dt."""
    small = x <= _K_SMALL
    xs = _where(small, x, 1.0)
    y = xs * xs * 0.25
    log_half = (xs * 0.5).log()
    if order == 0:
        harmonic = _horner([h / math.factorial(k) ** 2 for k, h in enumerate(_HARMONIC)], y)
        series = harmonic - (log_half + _EULER) * _horner(_I0_SERIES, y)
    else:
        # psi(k+1) + psi(k+2) = 2 H_k + 1/(k+1) - 2 gamma
        psi_sum = [(2 * h + 1.0 / (k + 1) - 2 * _EULER) * c
                   for k, (c, h) in enumerate(zip(_I1_SERIES, _HARMONIC, strict=True))]
        i1 = _horner(_I1_SERIES, y) * xs * 0.5
        series = xs.reciprocal() + log_half * i1 - xs * 0.25 * _horner(psi_sum, y)
    series = series * xs.exp()
    xl = _where(small, 1.0 + _K_SMALL, x)
    step = (xl.reciprocal() * _K_SPAN).sqrt() / (_K_NODES - 1)
    quadrature = xl * 0.0
    for j in range(_K_NODES):
        t = step * float(j)
        weight = (t * float(order)).cosh() * (0.5 if j == 0 else 1.0)
        quadrature = quadrature + (xl * (1.0 - t.cosh())).exp() * weight
    quadrature = quadrature * step
    value = _where(small, series, quadrature)
    edge = _where(x == 0, math.inf, _where(x.isinf(), 0.0, math.nan))
    return _where((x > 0) & ~x.isinf(), value, edge)


def _k0e(x: Tensor) -> Tensor:
    return _scaled_k(x, 0)


def _k1e(x: Tensor) -> Tensor:
    return _scaled_k(x, 1)


def _k0(x: Tensor) -> Tensor:
    return _scaled_k(x, 0) * (-x).exp()


def _k1(x: Tensor) -> Tensor:
    return _scaled_k(x, 1) * (-x).exp()


def _write_out(result: Tensor, out: Tensor | None) -> Tensor:
    if out is None:
        return result
    return out.copy_(result) if out.shape == result.shape else out.resize_(result.shape).copy_(
        result)


def sinc(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The normalized sinc function sin(pi x) / (pi x), 1 at 0."""
    return _write_out(_unary(_sinc)(input), out)


# name -> (unary composite) for torch.special's functions of one tensor
UNARY: dict[str, Callable[[Tensor], Tensor]] = {
    "entr": _entr, "ndtr": _ndtr, "log_ndtr": _log_ndtr, "ndtri": _ndtri, "erfcx": _erfcx,
    "i0e": _i0e, "i1": _i1, "i1e": _i1e, "spherical_bessel_j0": _spherical_j0,
    "modified_bessel_i0": _i0, "modified_bessel_i1": _i1, "modified_bessel_k0": _k0,
    "modified_bessel_k1": _k1, "scaled_modified_bessel_k0": _k0e,
    "scaled_modified_bessel_k1": _k1e,
}
# name -> composite for torch.special's functions of two tensors
BINARY: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "xlog1py": _xlog1py, "zeta": _zeta,
}


# Functions of two tensors PyTorch differentiates in the second only (the error it raises names
# the derivative): a backward through a first argument that requires grad raises as there.
FIRST_ARGUMENT_NOT_DIFFERENTIABLE = {"zeta": "zeta"}

# Functions PyTorch gives no gradient: their results do not require grad there, so here they
# are computed without recording (which also spares autograd their long series).
NO_GRADIENT = frozenset({
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "spherical_bessel_j0",
})


def _without_grad(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def apply(*args: Any) -> Tensor:
        with _grad_mode.no_grad():
            return fn(*args)

    return apply


def unary(name: str) -> Callable[..., Tensor]:
    """The public function for the composite ``UNARY[name]``."""
    apply = _unary(UNARY[name])
    if name in NO_GRADIENT:
        apply = _without_grad(apply)

    def special(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        return _write_out(apply(input), out)

    special.__name__ = special.__qualname__ = name
    special.__doc__ = f"torch.special.{name} of ``input``, elementwise."
    return special


def binary(name: str) -> Callable[..., Tensor]:
    """The public function for the composite ``BINARY[name]``."""
    apply = _binary(BINARY[name])
    if name in FIRST_ARGUMENT_NOT_DIFFERENTIABLE:
        apply = _first_argument_not_differentiable(FIRST_ARGUMENT_NOT_DIFFERENTIABLE[name], apply)

    def special(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
        return _write_out(apply(input, other), out)

    special.__name__ = special.__qualname__ = name
    special.__doc__ = f"torch.special.{name} of ``input`` and ``other``, elementwise."
    return special


# ---- Bessel functions of the first and second kind -----------------------------------------
# Below |x| = 25 from Bessel's integral J_m(x) = 1/pi integral_0^pi cos(m t - x sin t) dt by the
# trapezoid rule, exact to rounding for an even periodic integrand with enough nodes; Y_0 and
# Y_1 from Neumann's series Y_0 = 2/pi (log(x/2) + gamma) J_0 - 4/pi sum (-1)^k J_2k / k (and
# its derivative), whose J_2k share the same nodes. Above 25, Hankel's expansions.
_BESSEL_LIMIT = 25.0
_BESSEL_NODES = 97        # trapezoid nodes on [0, pi]: exact for J_m with m < 2*96 - 25 - 40
_NEUMANN_TERMS = 45       # J_2k(x) for x <= 25 is below 1e-17 past k = 45
_HANKEL_TERMS = 24


def _trapezoid_nodes() -> list[tuple[float, float]]:
    h = math.pi / (_BESSEL_NODES - 1)
    return [(j * h, h * (0.5 if j in (0, _BESSEL_NODES - 1) else 1.0) / math.pi)
            for j in range(_BESSEL_NODES)]


def _neumann_weights(t: float) -> tuple[float, float]:
    """sum_k (-1)^k cos(2kt)/k and sum_k (-1)^k sin(2kt)/k for k = 1.._NEUMANN_TERMS."""
    c = sum((-1) ** k * math.cos(2 * k * t) / k for k in range(1, _NEUMANN_TERMS + 1))
    s = sum((-1) ** k * math.sin(2 * k * t) / k for k in range(1, _NEUMANN_TERMS + 1))
    return c, s


@functools.cache
def _bessel_table() -> list[tuple[float, float, float, float]]:
    """(node, weight, Neumann cosine sum, Neumann sine sum) per node; built on first use, as
    its few thousand trigonometric calls would cost ``import torch`` milliseconds."""
    return [(t, w, *_neumann_weights(t)) for t, w in _trapezoid_nodes()]


def _bessel_small(x: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """J_0, J_1, Y_0, Y_1 at |x| <= 25 (Y's only meaningful for x > 0)."""
    j0 = j1 = n0 = n1 = x * 0.0
    for t, w, c, s in _bessel_table():
        phase = x * math.sin(t)
        cos_p, sin_p = phase.cos(), phase.sin()
        j0 = j0 + cos_p * w
        # cos(t - phase) = cos t cos p + sin t sin p; the first term integrates to exactly 0
        # (odd about pi/2), so J_1 keeps only the second and is exactly 0 at x = 0
        j1 = j1 + sin_p * (w * math.sin(t))
        # sum_k (-1)^k/k cos(2kt - phase), and sum_k (-1)^k/k sin(2kt - phase) sin t
        n0 = n0 + (cos_p * c + sin_p * s) * w
        n1 = n1 + (cos_p * s - sin_p * c) * (w * math.sin(t))
    positive = _where(x > 0, x, 1.0)
    log_term = (positive * 0.5).log() + _EULER
    y0 = j0 * log_term * (2 / math.pi) - n0 * (4 / math.pi)
    # Y_1 = -Y_0'; J_2k' = (1/pi) integral sin(2kt - x sin t) sin t dt
    y1 = (log_term * j1 - j0 / positive) * (2 / math.pi) + n1 * (4 / math.pi)
    return j0, j1, y0, y1


def _hankel(order: int) -> tuple[list[float], list[float]]:
    """The even (P) and odd (Q) coefficients of Hankel's expansion, in powers of 1/x^2."""
    a = [1.0]
    for k in range(1, 2 * _HANKEL_TERMS):
        a.append(a[-1] * (4 * order * order - (2 * k - 1) ** 2) / (k * 8))
    p = [a[2 * k] * (-1) ** k for k in range(_HANKEL_TERMS)]
    q = [a[2 * k + 1] * (-1) ** k for k in range(_HANKEL_TERMS)]
    return p, q


_HANKEL = {0: _hankel(0), 1: _hankel(1)}


def _bessel_large(x: Tensor, order: int, second_kind: bool) -> Tensor:
    p_coeffs, q_coeffs = _HANKEL[order]
    inv2 = (x * x).reciprocal()
    p = _horner(p_coeffs, inv2)
    q = _horner(q_coeffs, inv2) / x
    chi = x - (2 * order + 1) * math.pi / 4
    scale = (x * math.pi).reciprocal().sqrt() * math.sqrt(2.0)
    if second_kind:
        return (p * chi.sin() + q * chi.cos()) * scale
    return (p * chi.cos() - q * chi.sin()) * scale


def _bessel(x: Tensor, order: int, second_kind: bool) -> Tensor:
    ax = x.abs()
    small = ax <= _BESSEL_LIMIT
    j0, j1, y0, y1 = _bessel_small(_where(small, x, 0.0))
    near = (y0, y1)[order] if second_kind else (j0, j1)[order]
    large_x = _where(small, _BESSEL_LIMIT + 1.0, ax)
    far = _bessel_large(large_x, order, second_kind)
    if not second_kind and order == 1:
        far = far * x.sign()  # J_1 is odd, J_0 even
    value = _where(small, near, far)
    if not second_kind:
        return _where(x.isinf(), 0.0, value)
    edge = _where(x == 0, -math.inf, _where(x.isinf() & (x > 0), 0.0, math.nan))
    return _where((x > 0) & ~x.isinf(), value, edge)


UNARY.update({
    "bessel_j0": lambda x: _bessel(x, 0, False), "bessel_j1": lambda x: _bessel(x, 1, False),
    "bessel_y0": lambda x: _bessel(x, 0, True), "bessel_y1": lambda x: _bessel(x, 1, True),
})


# ---- Airy function Ai --------------------------------------------------------------------------
# Maclaurin series on [-8, 2] (it loses at most ~6 digits to cancellation there), above 2
# Ai(x) = sqrt(x/3)/pi K_1/3(zeta) with zeta = 2/3 x^1.5 by the cosh quadrature, below -8 the
# oscillating large-argument expansion.
_AIRY_LOW, _AIRY_HIGH = -8.0, 2.0
_AIRY_TERMS = 60
_AI0 = 1.0 / (3 ** (2 / 3) * math.gamma(2 / 3))    # Ai(0)
_AI0_PRIME = 1.0 / (3 ** (1 / 3) * math.gamma(1 / 3))  # -Ai'(0)


def _airy_series_coefficients() -> tuple[list[float], list[float]]:
    # f = sum x^3k / (3k)! prod_{j<k} (3j+1), g = sum x^(3k+1) / (3k+1)! prod_{j<k} (3j+2)
    f, g = [1.0], [1.0]
    for k in range(1, _AIRY_TERMS):
        f.append(f[-1] / ((3 * k - 1) * (3 * k)))
        g.append(g[-1] / ((3 * k) * (3 * k + 1)))
    return f, g


_AIRY_F, _AIRY_G = _airy_series_coefficients()


def _airy_u() -> list[float]:
    # u_k of the large-argument expansion: u_k = Gamma(3k+1/2) / (54^k k! Gamma(k+1/2))
    return [math.exp(math.lgamma(3 * k + 0.5) - k * math.log(54) - math.lgamma(k + 1)
                     - math.lgamma(k + 0.5)) for k in range(12)]


_AIRY_U = _airy_u()


def _airy_ai(x: Tensor) -> Tensor:
    middle = (x >= _AIRY_LOW) & (x <= _AIRY_HIGH)
    xm = _where(middle, x, 0.0)
    cube = xm * xm * xm
    series = _horner(_AIRY_F, cube) * _AI0 - _horner(_AIRY_G, cube) * xm * _AI0_PRIME
    # x > 2: the modified Bessel function of order 1/3 (scaled), from its cosh integral
    xh = _where(x > _AIRY_HIGH, x, _AIRY_HIGH + 1.0)
    zeta = xh.pow(1.5) * (2 / 3)
    step = (zeta.reciprocal() * _K_SPAN).sqrt() / (2 * _K_NODES - 2)
    quadrature = zeta * 0.0
    for j in range(2 * _K_NODES - 1):
        t = step * float(j)
        weight = (t * (1 / 3)).cosh() * (0.5 if j == 0 else 1.0)
        quadrature = quadrature + (zeta * (1.0 - t.cosh())).exp() * weight
    high = quadrature * step * (xh / 3).sqrt() / math.pi * (-zeta).exp()
    # x < -8: pi^-1/2 |x|^-1/4 (sin(zeta + pi/4) P - cos(zeta + pi/4) Q)
    xl = _where(x < _AIRY_LOW, -x, -_AIRY_LOW + 1.0)
    zl = xl.pow(1.5) * (2 / 3)
    inv2 = (zl * zl).reciprocal()
    p = _horner([u * (-1) ** k for k, u in enumerate(_AIRY_U[0::2])], inv2)
    q = _horner([u * (-1) ** k for k, u in enumerate(_AIRY_U[1::2])], inv2) / zl
    angle = zl + math.pi / 4
    low = (angle.sin() * p - angle.cos() * q) / (xl.pow(0.25) * math.sqrt(math.pi))
    value = _where(middle, series, _where(x > _AIRY_HIGH, high, low))
    return _where(x.isinf(), 0.0, value)


UNARY["airy_ai"] = _airy_ai


# ---- orthogonal polynomials -------------------------------------------------------------------
# name -> (P_0 and P_1 of x, the step P_{k+1} from x, k, P_k, P_{k-1}); shifted Chebyshev
# polynomials are the plain ones of 2x - 1.
_Step = Callable[[Tensor, int, Tensor, Tensor], Tensor]
_POLYNOMIALS: dict[str, tuple[Callable[[Tensor], Tensor], _Step]] = {
    "chebyshev_polynomial_t": (lambda x: x, lambda x, k, p, q: x * 2.0 * p - q),
    "chebyshev_polynomial_u": (lambda x: x * 2.0, lambda x, k, p, q: x * 2.0 * p - q),
    "chebyshev_polynomial_v": (lambda x: x * 2.0 - 1.0, lambda x, k, p, q: x * 2.0 * p - q),
    "chebyshev_polynomial_w": (lambda x: x * 2.0 + 1.0, lambda x, k, p, q: x * 2.0 * p - q),
    "hermite_polynomial_h": (lambda x: x * 2.0, lambda x, k, p, q: x * 2.0 * p - q * (2.0 * k)),
    "hermite_polynomial_he": (lambda x: x, lambda x, k, p, q: x * p - q * float(k)),
    "laguerre_polynomial_l": (lambda x: 1.0 - x,
                              lambda x, k, p, q: ((2.0 * k + 1.0 - x) * p - q * k) / (k + 1)),
    "legendre_polynomial_p": (lambda x: x,
                              lambda x, k, p, q: (x * (2.0 * k + 1.0) * p - q * k) / (k + 1)),
}
POLYNOMIALS = tuple(_POLYNOMIALS) + tuple(f"shifted_{name}" for name in _POLYNOMIALS
                                          if name.startswith("chebyshev"))


def _polynomial(name: str, x: Tensor, n: Tensor) -> Tensor:
    """P_n(x) by the three-term recurrence; n < 0 gives 0, as PyTorch's."""
    if name.startswith("shifted_"):
        name, x = name.removeprefix("shifted_"), x * 2.0 - 1.0
    first, step = _POLYNOMIALS[name]
    top = int(n.max().item()) if n.numel() and _holds_values(n) else 0
    previous, current = x * 0.0 + 1.0, first(x)
    result = _where(n == 0, previous, x * 0.0)
    result = _where(n == 1, current, result)
    for k in range(1, top):
        previous, current = current, step(x, k, current, previous)
        result = _where(n == k + 1, current, result)
    return result


def polynomial(name: str) -> Callable[..., Tensor]:
    """The public function for the polynomial family ``name``: ``f(input, n, *, out=None)``."""

    def special(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
        x, order = _as_tensor(input), _as_tensor(n)
        dt = _result_dtype(x, order)
        with _grad_mode.no_grad():  # PyTorch's polynomials have no gradient
            wide = _wide(x, order)
            value = _polynomial(name, x.to(wide), order.to(wide))
        return _write_out(value.to(dt), out)

    special.__name__ = special.__qualname__ = name
    special.__doc__ = f"torch.special.{name}: the degree-``n`` polynomial at ``input``."
    return special


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return polygamma(n, self)


METHODS.update({"i0": i0, "sinc": sinc, "mvlgamma": mvlgamma, "igamma": igamma,
                "igammac": igammac, "polygamma": _polygamma_method})
