"""Derivatives of the elementwise ops (torch/autograd/_formulas/elementwise.py).

First derivatives are checked against central differences in float64, second derivatives
against central differences of the first (computed with ``create_graph=True``), and the
conventions where a derivative is undefined (ties, bounds, zeros, NaN) against values taken
from PyTorch 2.13.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest

import torch

F64 = torch.float64
SHAPE = (2, 3)


# -- sample inputs --------------------------------------------------------------------------


def uniform(low: float, high: float, shape: Sequence[int] = SHAPE, seed: int = 0) -> list[Any]:
    """A nested list of ``shape`` with values drawn uniformly from ``[low, high]``."""
    rng = random.Random(f"{low},{high},{shape},{seed}")
    n = math.prod(shape)
    flat = [rng.uniform(low, high) for _ in range(n)]
    return torch.tensor(flat, dtype=F64).reshape(tuple(shape)).tolist()


def away_from_zero(shape: Sequence[int] = SHAPE, seed: int = 0) -> list[Any]:
    """Values with magnitudes in ``[0.3, 2]`` and random signs (no kinks of abs or sign)."""
    rng = random.Random(f"away,{shape},{seed}")
    flat = [rng.choice((-1, 1)) * rng.uniform(0.3, 2.0) for _ in range(math.prod(shape))]
    return torch.tensor(flat, dtype=F64).reshape(tuple(shape)).tolist()


def leaf(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=F64, requires_grad=True)


# -- finite differences ---------------------------------------------------------------------


def _perturbed(x: torch.Tensor, k: int, delta: float) -> torch.Tensor:
    flat = x.detach().reshape(-1).tolist()
    flat[k] += delta
    return torch.tensor(flat, dtype=x.dtype).reshape(tuple(x.shape))


def numerical_grads(scalar_fn: Callable[..., float], inputs: Sequence[torch.Tensor],
                    eps: float = 1e-6) -> list[list[float]]:
    """Central differences of ``scalar_fn(*inputs)`` with respect to every element."""
    grads = []
    for i, x in enumerate(inputs):
        g = []
        for k in range(x.numel()):
            plus, minus = list(inputs), list(inputs)
            plus[i], minus[i] = _perturbed(x, k, eps), _perturbed(x, k, -eps)
            g.append((scalar_fn(*plus) - scalar_fn(*minus)) / (2 * eps))
        grads.append(g)
    return grads


def cotangent(out: torch.Tensor, seed: int = 1) -> torch.Tensor:
    """A fixed random weighting of the outputs, so every output element counts differently."""
    return torch.tensor(uniform(0.5, 1.5, tuple(out.shape) or (1,), seed), dtype=F64).reshape(
        tuple(out.shape))


def first_grads(fn: Callable[..., torch.Tensor], inputs: Sequence[torch.Tensor],
                create_graph: bool = False) -> list[torch.Tensor]:
    """d/d inputs of ``sum(fn(*inputs) * v)`` by autograd (zeros for an unused input)."""
    inputs = [x if x.requires_grad else x.detach().requires_grad_() for x in inputs]
    out = fn(*inputs)
    v = cotangent(out)
    grads = torch.autograd.grad(out, inputs, grad_outputs=v, create_graph=create_graph,
                                allow_unused=True)
    return [torch.zeros_like(x) if g is None else g for x, g in zip(inputs, grads)]


def assert_close_lists(actual: Any, expected: Any, rtol: float = 1e-6,
                       atol: float = 1e-6) -> None:
    a = torch.tensor(actual, dtype=F64).reshape(-1).tolist()
    e = torch.tensor(expected, dtype=F64).reshape(-1).tolist()
    assert len(a) == len(e)
    for x, y in zip(a, e):
        if math.isnan(y):
            assert math.isnan(x), (actual, expected)
        elif math.isinf(y):
            assert x == y, (actual, expected)
        else:
            assert abs(x - y) <= atol + rtol * abs(y), (actual, expected)


def check_first(fn: Callable[..., torch.Tensor], inputs: Sequence[torch.Tensor]) -> None:
    analytic = first_grads(fn, inputs)
    for x, g in zip(inputs, analytic):
        assert tuple(g.shape) == tuple(x.shape)
        assert g.dtype == x.dtype

    def scalar(*xs: torch.Tensor) -> float:
        out = fn(*xs)
        return (out * cotangent(out)).sum().item()

    numeric = numerical_grads(scalar, [x.detach() for x in inputs])
    for g, n in zip(analytic, numeric):
        assert_close_lists(g.tolist(), n, rtol=1e-5, atol=1e-6)


def check_second(fn: Callable[..., torch.Tensor], inputs: Sequence[torch.Tensor]) -> None:
    """d/d inputs of ``sum(first_grads * w)`` against central differences of it."""
    weights = [torch.tensor(uniform(0.5, 1.5, tuple(x.shape), seed=7 + i), dtype=F64)
               for i, x in enumerate(inputs)]

    def weighted(grads: Sequence[torch.Tensor]) -> torch.Tensor:
        total = torch.zeros((), dtype=F64)
        for g, w in zip(grads, weights):
            total = total + (g * w).sum()
        return total

    leaves = [x.detach().requires_grad_() for x in inputs]
    h = weighted(first_grads(fn, leaves, create_graph=True))
    if h.requires_grad:
        analytic = torch.autograd.grad(h, leaves, allow_unused=True)
        analytic = [torch.zeros_like(x) if g is None else g for x, g in zip(leaves, analytic)]
    else:  # the first derivative does not depend on the inputs
        analytic = [torch.zeros_like(x) for x in leaves]

    def scalar(*xs: torch.Tensor) -> float:
        return weighted(first_grads(fn, xs)).item()

    numeric = numerical_grads(scalar, [x.detach() for x in inputs], eps=1e-5)
    for g, n in zip(analytic, numeric):
        assert_close_lists(g.tolist(), n, rtol=1e-4, atol=1e-5)


# -- the rows: (id, function of the tensors, sample values per tensor) ----------------------

UNARY = [
    ("abs", torch.abs, away_from_zero()),
    ("neg", torch.neg, uniform(-2, 2)),
    ("sign", torch.sign, away_from_zero()),
    ("sgn", torch.sgn, away_from_zero()),
    ("floor", torch.floor, uniform(-3, 3)),
    ("ceil", torch.ceil, uniform(-3, 3)),
    ("trunc", torch.trunc, uniform(-3, 3)),
    ("exp", torch.exp, uniform(-2, 2)),
    ("exp2", torch.exp2, uniform(-2, 2)),
    ("expm1", torch.expm1, uniform(-2, 2)),
    ("log", torch.log, uniform(0.2, 3)),
    ("log2", torch.log2, uniform(0.2, 3)),
    ("log10", torch.log10, uniform(0.2, 3)),
    ("log1p", torch.log1p, uniform(-0.7, 3)),
    ("sqrt", torch.sqrt, uniform(0.2, 3)),
    ("rsqrt", torch.rsqrt, uniform(0.2, 3)),
    ("reciprocal", torch.reciprocal, away_from_zero()),
    ("sin", torch.sin, uniform(-3, 3)),
    ("cos", torch.cos, uniform(-3, 3)),
    ("tan", torch.tan, uniform(-1.2, 1.2)),
    ("asin", torch.asin, uniform(-0.9, 0.9)),
    ("acos", torch.acos, uniform(-0.9, 0.9)),
    ("atan", torch.atan, uniform(-3, 3)),
    ("sinh", torch.sinh, uniform(-2, 2)),
    ("cosh", torch.cosh, uniform(-2, 2)),
    ("tanh", torch.tanh, uniform(-2, 2)),
    ("asinh", torch.asinh, uniform(-3, 3)),
    ("acosh", torch.acosh, uniform(1.2, 4)),
    ("atanh", torch.atanh, uniform(-0.9, 0.9)),
    ("erf", torch.erf, uniform(-2, 2)),
    ("erfc", torch.erfc, uniform(-2, 2)),
    ("erfinv", torch.erfinv, uniform(-0.9, 0.9)),
    ("lgamma", torch.lgamma, uniform(0.2, 6)),
    ("lgamma_negative", torch.lgamma, uniform(-2.8, -2.2)),
    ("digamma", torch.digamma, uniform(0.2, 6)),
    ("digamma_negative", torch.digamma, uniform(-1.8, -1.2)),
    # composites (CompositeImplicitAutograd): through their decomposition
    ("sigmoid", torch.sigmoid, uniform(-4, 4)),
    ("logit", torch.logit, uniform(0.1, 0.9)),
    ("logit_eps", lambda x: torch.logit(x, 0.2), uniform(0.05, 0.95)),
    ("square", torch.square, uniform(-2, 2)),
    ("frac", torch.frac, uniform(-3, 3)),
    ("round", torch.round, uniform(-3, 3)),
    ("deg2rad", torch.deg2rad, uniform(-90, 90)),
    ("rad2deg", torch.rad2deg, uniform(-2, 2)),
    ("positive", torch.positive, uniform(-2, 2)),
    ("method_chain", lambda x: (x.exp() * x.sin()).sqrt(), uniform(0.2, 2)),
]

BINARY = [
    ("add", torch.add, [uniform(-2, 2), uniform(-2, 2, (3,))]),
    ("add_alpha", lambda a, b: torch.add(a, b, alpha=2.5), [uniform(-2, 2), uniform(-2, 2)]),
    ("mul", torch.mul, [uniform(-2, 2), uniform(-2, 2, (2, 1))]),
    ("sub", torch.sub, [uniform(-2, 2), uniform(-2, 2, (3,))]),
    ("sub_alpha", lambda a, b: torch.sub(a, b, alpha=-1.5), [uniform(-2, 2), uniform(-2, 2)]),
    ("rsub", lambda a: torch.rsub(a, 3.0, alpha=2), [uniform(-2, 2)]),
    ("rsub_operator", lambda a: 2 - a, [uniform(-2, 2)]),
    ("div", torch.div, [uniform(-2, 2), away_from_zero((3,))]),
    ("div_number_self", lambda b: 2.0 / b, [away_from_zero()]),
    ("div_number_other", lambda a: a / 4.0, [uniform(-2, 2)]),
    ("div_floor", lambda a, b: torch.div(a, b, rounding_mode="floor"),
     [uniform(-5, 5), away_from_zero()]),
    ("div_trunc", lambda a, b: torch.div(a, b, rounding_mode="trunc"),
     [uniform(-5, 5), away_from_zero()]),
    ("pow", torch.pow, [uniform(0.3, 2), uniform(-2, 2)]),
    ("pow_broadcast", torch.pow, [uniform(0.3, 2, (2, 1)), uniform(-2, 2, (3,))]),
    ("pow_scalar_exponent", lambda a: torch.pow(a, 3), [uniform(-2, 2)]),
    ("pow_fractional_exponent", lambda a: a ** 2.5, [uniform(0.3, 2)]),
    ("pow_negative_exponent", lambda a: a ** -2, [away_from_zero()]),
    ("pow_number_base", lambda e: torch.pow(2.5, e), [uniform(-2, 2)]),
    ("pow_number_base_reflected", lambda e: 0.5 ** e, [uniform(-2, 2)]),
    ("remainder", torch.remainder, [uniform(-5, 5), away_from_zero()]),
    ("fmod", torch.fmod, [uniform(-5, 5), away_from_zero()]),
    ("maximum", torch.maximum, [uniform(-2, 2), uniform(-2, 2, seed=3)]),
    ("minimum", torch.minimum, [uniform(-2, 2), uniform(-2, 2, (3,), seed=3)]),
    ("fmax", torch.fmax, [uniform(-2, 2), uniform(-2, 2, seed=3)]),
    ("fmin", torch.fmin, [uniform(-2, 2), uniform(-2, 2, seed=3)]),
    ("atan2", torch.atan2, [uniform(-2, 2), uniform(-2, 2, seed=3)]),
    ("hypot", torch.hypot, [uniform(-2, 2), uniform(-2, 2, (3,), seed=3)]),
    ("copysign", torch.copysign, [away_from_zero(), away_from_zero(seed=3)]),
    ("nextafter", torch.nextafter, [uniform(-2, 2), uniform(-2, 2, seed=3)]),
    ("clamp_numbers", lambda a: torch.clamp(a, -1, 1), [uniform(-2, 2)]),
    ("clamp_min_only", lambda a: torch.clamp(a, min=-0.5), [uniform(-2, 2)]),
    ("clamp_max_only", lambda a: torch.clamp(a, max=0.5), [uniform(-2, 2)]),
    ("clamp_tensors", torch.clamp,
     [uniform(-2, 2), uniform(-1.5, 0, seed=3), uniform(0, 1.5, (3,), seed=4)]),
    ("clamp_min", torch.clamp_min, [uniform(-2, 2), uniform(-2, 2, seed=3)]),
    ("clamp_max", torch.clamp_max, [uniform(-2, 2), uniform(-2, 2, seed=3)]),
    ("clamp_min_number", lambda a: torch.clamp_min(a, 0.1), [uniform(-2, 2)]),
    ("clamp_max_number", lambda a: torch.clamp_max(a, 0.1), [uniform(-2, 2)]),
    ("where", lambda a, b: torch.where(a > 0, a * b, b.exp()),
     [uniform(-2, 2), uniform(-2, 2, (3,), seed=3)]),
    ("where_number", lambda a: torch.where(a > 0, a, 0.0), [uniform(-2, 2)]),
    # composites (CompositeImplicitAutograd): through their decomposition
    ("xlogy", torch.xlogy, [uniform(-2, 2), uniform(0.2, 3, seed=3)]),
    ("logaddexp", torch.logaddexp, [uniform(-2, 2), uniform(-2, 2, seed=3)]),
    ("logaddexp2", torch.logaddexp2, [uniform(-2, 2), uniform(-2, 2, seed=3)]),
    ("lerp", torch.lerp, [uniform(-2, 2), uniform(-2, 2, seed=3), uniform(0, 1, seed=4)]),
    ("lerp_number", lambda a, b: torch.lerp(a, b, 0.7), [uniform(-2, 2), uniform(-2, 2, seed=3)]),
    ("addcmul", lambda a, b, c: torch.addcmul(a, b, c, value=0.5),
     [uniform(-2, 2), uniform(-2, 2, (3,), seed=3), uniform(-2, 2, (2, 1), seed=4)]),
    ("addcdiv", lambda a, b, c: torch.addcdiv(a, b, c, value=2),
     [uniform(-2, 2), uniform(-2, 2, seed=3), away_from_zero(seed=4)]),
    ("float_power", torch.float_power, [uniform(0.3, 2), uniform(-2, 2, seed=3)]),
    ("float_power_number_exponent", lambda a: torch.float_power(a, 3), [uniform(-2, 2)]),
]

def _as_param(row: Any, unary: bool) -> Any:
    name, fn, values = row
    return pytest.param(name, fn, [values] if unary else values, id=name)


ROWS = [_as_param(r, True) for r in UNARY] + [_as_param(r, False) for r in BINARY]


@pytest.mark.parametrize(("name", "fn", "values"), ROWS)
def test_first_derivative(name: str, fn: Callable[..., torch.Tensor], values: list[Any]) -> None:
    check_first(fn, [leaf(v) for v in values])


@pytest.mark.parametrize(("name", "fn", "values"), ROWS)
def test_second_derivative(name: str, fn: Callable[..., torch.Tensor], values: list[Any]) -> None:
    check_second(fn, [leaf(v) for v in values])


@pytest.mark.parametrize("name", ["exp", "sin", "tanh", "lgamma", "sqrt", "reciprocal"])
def test_third_derivative(name: str) -> None:
    fn = getattr(torch, name)
    x = leaf([0.7, 1.3, 2.1])
    (g1,) = torch.autograd.grad(fn(x).sum(), x, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = torch.autograd.grad(g2.sum(), x)

    def second(*xs: torch.Tensor) -> float:
        y = xs[0].detach().requires_grad_()
        (d1,) = torch.autograd.grad(fn(y).sum(), y, create_graph=True)
        (d2,) = torch.autograd.grad(d1.sum(), y)
        return d2.sum().item()

    # the elements do not interact, so d/dx_k of sum(f''(x)) is f'''(x_k)
    (numeric,) = numerical_grads(second, [x.detach()], eps=1e-5)
    assert_close_lists(g3.tolist(), numeric, rtol=1e-4, atol=1e-5)


# -- conventions where the derivative is undefined, with PyTorch 2.13's values --------------

NAN, INF = math.nan, math.inf

CONVENTIONS = [
    ("abs_at_zero", torch.abs, [[-1.0, 0.0, 2.0]], [[-1.0, 0.0, 1.0]]),
    ("sign_zero", torch.sign, [[0.0, 1.0]], [[0.0, 0.0]]),
    ("maximum_ties_and_nan", torch.maximum, [[1.0, NAN, 1.0, 2.0], [1.0, 1.0, NAN, 1.0]],
     [[0.5, 1.0, 1.0, 1.0], [0.5, 1.0, 1.0, 0.0]]),
    ("minimum_ties_and_nan", torch.minimum, [[1.0, NAN, 1.0, 2.0], [1.0, 1.0, NAN, 1.0]],
     [[0.5, 1.0, 1.0, 0.0], [0.5, 1.0, 1.0, 1.0]]),
    ("fmax_ties_and_nan", torch.fmax,
     [[1.0, NAN, 1.0, 2.0, NAN], [1.0, 1.0, NAN, 1.0, NAN]],
     [[1.0, 0.0, 1.0, 1.0, 1.0], [0.0, 1.0, 0.0, 0.0, 0.0]]),
    ("fmin_ties_and_nan", torch.fmin,
     [[1.0, NAN, 1.0, 2.0, NAN], [1.0, 1.0, NAN, 1.0, NAN]],
     [[1.0, 0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0, 0.0]]),
    ("clamp_tensor_bounds", torch.clamp,
     [[0.0, 1.0, 2.0, 3.0, 5.0, NAN], [1.0, 1.0, 1.0, 4.0, 1.0, 1.0],
      [3.0, 3.0, 3.0, 2.0, 3.0, 3.0]],
     [[0.0, 1.0, 1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
      [0.0, 0.0, 0.0, 1.0, 1.0, 0.0]]),
    ("clamp_min_tensor_bound", torch.clamp_min, [[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]],
     [[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]),
    ("clamp_max_tensor_bound", torch.clamp_max, [[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]],
     [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
    ("clamp_at_bounds", lambda x: torch.clamp(x, 1, 3), [[0.0, 1.0, 2.0, 3.0, 5.0, NAN]],
     [[0.0, 1.0, 1.0, 1.0, 0.0, 0.0]]),
    ("clamp_min_above_max", lambda x: torch.clamp(x, 3, 1), [[0.0, 1.0, 2.0, 3.0, 5.0]],
     [[0.0, 0.0, 0.0, 0.0, 0.0]]),
    ("atan2_origin_and_underflow", torch.atan2, [[1e-200, 0.0, 3.0], [1e-200, 1.0, 0.0]],
     [[0.0, 1.0, 0.0], [0.0, 0.0, -1 / 3]]),
    ("hypot_origin", torch.hypot, [[0.0], [0.0]], [[NAN], [NAN]]),
    ("copysign_zero", torch.copysign, [[-1.0, 0.0, 2.0, 0.0], [1.0, -1.0, -2.0, 1.0]],
     [[-1.0, 0.0, -1.0, 0.0], [0.0, 0.0, 0.0, 0.0]]),
    ("pow_zero_base", torch.pow, [[0.0, 0.0, 0.0, 2.0, -2.0], [0.0, 1.0, -1.0, 0.5, 2.0]],
     [[0.0, 1.0, -INF, 0.3535533905932738, -4.0], [0.0, 0.0, -INF, 0.9802581434685472, NAN]]),
    ("pow_number_base_zero", lambda e: torch.pow(0.0, e), [[0.0, 1.0, -1.0]], [[0.0, 0.0, -INF]]),
    ("pow_number_base_negative", lambda e: torch.pow(-2.0, e), [[0.0, 1.0, -1.0]],
     [[NAN, NAN, NAN]]),
    ("pow_zero_exponent", lambda x: torch.pow(x, 0.0), [[0.0, 1.0]], [[0.0, 0.0]]),
    ("pow_half_at_zero", lambda x: torch.pow(x, 0.5), [[0.0, 1.0]], [[INF, 0.5]]),
    ("pow_minus_one_at_zero", lambda x: x ** -1, [[0.0]], [[-INF]]),
    ("remainder", torch.remainder, [[5.0, -5.0], [3.0, 3.0]], [[1.0, 1.0], [-1.0, 2.0]]),
    ("fmod", torch.fmod, [[5.0, -5.0], [3.0, 3.0]], [[1.0, 1.0], [-1.0, 1.0]]),
    ("div_floor", lambda a, b: torch.div(a, b, rounding_mode="floor"), [[5.0, -5.0], [3.0, 3.0]],
     [[0.0, 0.0], [0.0, 0.0]]),
    ("sqrt_at_zero", torch.sqrt, [[0.0]], [[INF]]),
    ("log_at_zero", torch.log, [[0.0]], [[INF]]),
    ("rsqrt_at_zero", torch.rsqrt, [[0.0]], [[-INF]]),
    ("acosh_at_one", torch.acosh, [[1.0]], [[INF]]),
    ("asin_at_one", torch.asin, [[1.0]], [[INF]]),
    ("erfinv", torch.erfinv, [[1.0, 0.5]], [[INF, 1.1125848189719496]]),
    ("digamma_poles", torch.digamma, [[-2.5, 0.3, 1.0, 7.0, 0.0, -1.0]],
     [[9.53924664493752, 12.245364544940365, 1.6449340668482264, 0.1535451779624394, INF,
       6.580790147320947e+32]]),
    ("where", lambda a, b: torch.where(a > 0, a, b), [[1.0, -1.0], [2.0, 3.0]],
     [[1.0, 0.0], [0.0, 1.0]]),
    ("nextafter", lambda a, b: torch.nextafter(a, b), [[1.0, 3.0], [2.0, 2.0]],
     [[1.0, 1.0], [0.0, 0.0]]),
    ("rsub_alpha", lambda x: torch.rsub(x, 2, alpha=3), [[1.0]], [[-3.0]]),
    ("sub_alpha", lambda x, y: torch.sub(x, y, alpha=3), [[1.0], [1.0]], [[1.0], [-3.0]]),
    ("add_alpha", lambda x, y: torch.add(x, y, alpha=3), [[1.0], [1.0]], [[1.0], [3.0]]),
    ("sigmoid_saturated", torch.sigmoid, [[-1000.0, 1000.0]], [[0.0, 0.0]]),
    ("logit_eps", lambda x: torch.logit(x, 0.1), [[0.05, 0.1, 0.5, 0.9, 0.95, NAN]],
     [[0.0, 11.111111111111109, 4.0, 11.111111111111112, 0.0, NAN]]),
    ("logit_ends", torch.logit, [[0.0, 1.0, 0.5, -0.1]], [[INF, INF, 4.0, NAN]]),
    ("xlogy_zero", torch.xlogy, [[0.0, 0.0, 0.0, 1.0], [2.0, 0.0, -1.0, 0.0]],
     [[math.log(2.0), 0.0, 0.0, -INF], [0.0, NAN, 0.0, INF]]),
    # a Python-number ``other`` (xlogy.Scalar_Other): log(other), masked at 0 only if other <= 0
    ("xlogy_number_other", lambda x: torch.xlogy(x, 2.0), [[0.0, 1.5]],
     [[math.log(2.0), math.log(2.0)]]),
    ("xlogy_nonpositive_number_other", lambda x: torch.xlogy(x, -1.0), [[0.0, 1.5]],
     [[0.0, NAN]]),
    ("logaddexp_infinities", torch.logaddexp, [[1.0, INF], [1.0, INF]],
     [[0.5, NAN], [0.5, NAN]]),
    ("lerp", torch.lerp, [[1.0, 2.0], [3.0, 5.0], [0.2, 0.7]],
     [[0.8, 0.3], [0.2, 0.7], [2.0, 3.0]]),
    ("frac", torch.frac, [[1.5]], [[1.0]]),
    ("round", torch.round, [[1.5]], [[0.0]]),
    ("round_decimals", lambda x: torch.round(x, decimals=1), [[1.55]], [[0.0]]),
]


@pytest.mark.parametrize(("name", "fn", "values", "expected"), CONVENTIONS,
                         ids=[r[0] for r in CONVENTIONS])
def test_pytorch_conventions(name: str, fn: Callable[..., torch.Tensor], values: list[Any],
                             expected: list[Any]) -> None:
    inputs = [leaf(v) for v in values]
    fn(*inputs).sum().backward()
    for x, e in zip(inputs, expected):
        assert x.grad is not None
        assert_close_lists(x.grad.tolist(), e, rtol=1e-9, atol=0.0)


def test_trigamma_composite_is_accurate() -> None:
    # digamma' = polygamma(1, x): known closed forms at 1, 1/2 and 1/4 (Catalan's constant G)
    x = leaf([1.0, 0.5, 0.25, 30.0])
    torch.digamma(x).sum().backward()
    catalan = 0.915965594177219015
    expected = [math.pi ** 2 / 6, math.pi ** 2 / 2, math.pi ** 2 + 8 * catalan,
                0.03389506035774027]
    assert_close_lists(x.grad.tolist(), expected, rtol=1e-13, atol=0.0)


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                                "logical_xor"])
def test_comparisons_are_not_differentiable(op: str) -> None:
    x = leaf([1.0, 2.0])
    y = getattr(torch, op)(x, torch.tensor([2.0, 2.0], dtype=F64))
    assert not y.requires_grad
    assert y.grad_fn is None


@pytest.mark.parametrize("fn", [torch.isnan, torch.logical_not, torch.isinf, torch.isfinite,
                                torch.signbit])
def test_predicates_are_not_differentiable(fn: Callable[..., torch.Tensor]) -> None:
    y = fn(leaf([1.0, NAN]))
    assert not y.requires_grad


def test_rounding_ops_record_zero_gradients() -> None:
    # as PyTorch: floor & co. are in the graph (grad_fn set) and give zeros, not None
    x = leaf([1.5, -2.5])
    for fn in (torch.floor, torch.ceil, torch.trunc, torch.sign):
        y = fn(x)
        assert y.requires_grad
        (g,) = torch.autograd.grad(y.sum(), x)
        assert g.tolist() == [0.0, 0.0]


def test_float32_gradients_keep_dtype() -> None:
    x = torch.tensor([0.5, 1.5], requires_grad=True)
    y = torch.tensor([2.0, 3.0], requires_grad=True)
    (torch.atan2(x, y) + torch.pow(x, y) + torch.hypot(x, y).exp()).sum().backward()
    assert x.grad.dtype == torch.float32 and y.grad.dtype == torch.float32


def test_float_power_gradient_comes_back_in_input_dtype() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.float_power(x, 2)
    assert y.dtype == F64
    y.sum().backward()
    assert x.grad.dtype == torch.float32 and x.grad.tolist() == [2.0, 4.0]


def test_mixed_dtypes_cast_back() -> None:
    # float32 * float64 -> float64; the float32 input's gradient comes back as float32
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], dtype=F64, requires_grad=True)
    torch.mul(a, b).sum().backward()
    assert a.grad.dtype == torch.float32 and a.grad.tolist() == [3.0, 4.0]
    assert b.grad.dtype == F64 and b.grad.tolist() == [1.0, 2.0]


def test_integer_operands_get_no_gradient() -> None:
    x = leaf([1.0, 2.0])
    n = torch.tensor([2, 3])
    (x * n + x ** n + torch.where(n > 2, x, n)).sum().backward()
    assert x.grad.tolist() == [2.0 + 2.0 + 0.0, 3.0 + 12.0 + 1.0]


def test_cast_to_integer_or_bool_does_not_require_grad() -> None:
    # only floating and complex tensors carry gradients: a cast (or copy_) into an integer or
    # bool tensor is not recorded
    x = leaf([1.5, -2.5])
    for dt in (torch.int64, torch.int8, torch.uint8, torch.bool):
        y = x.to(dt)
        assert not y.requires_grad and y.grad_fn is None
    dst = torch.zeros(2, dtype=torch.int32)
    dst.copy_(x)
    assert not dst.requires_grad and dst.grad_fn is None
    assert x.to(torch.float32).grad_fn.name() == "ToCopyBackward0"  # as in PyTorch


def test_angle_of_real_special_values_has_zero_grad() -> None:
    # PyTorch 2.13: the gradient of angle on real input is zero everywhere, NaN included
    inf, nan = math.inf, math.nan
    x = torch.tensor([0.0, -0.0, 1.5, -2.5, inf, -inf, nan], dtype=torch.float64,
                     requires_grad=True)
    y = torch.angle(x)
    assert y.requires_grad
    assert y[:6].tolist() == [0.0, 0.0, 0.0, math.pi, 0.0, math.pi] and math.isnan(y[6].item())
    (y * torch.arange(1.0, 8.0, dtype=torch.float64)).sum().backward()
    assert x.grad.tolist() == [0.0] * 7


def test_relu_backward_selects_like_threshold_backward():
    # PyTorch 2.13: a gradient at a result <= 0 is exactly 0 (not grad * 0, which is -0.0 for
    # a negative and NaN for an infinite gradient); a NaN result passes the gradient.
    x = torch.tensor([-1.0, 0.0, 2.0, math.nan, -3.0], requires_grad=True)
    torch.relu(x).backward(torch.tensor([-3.0, math.inf, 4.0, 5.0, math.nan]))
    got = x.grad.tolist()
    assert got[:4] == [0.0, 0.0, 4.0, 5.0] and got[4] == 0.0
    assert math.copysign(1.0, got[0]) == 1.0


def test_complex_products_and_quotients_take_the_conjugate_gradient():
    # L = sum(Re(a*b) + Im(a*b)): the incoming gradient is 1+1j, and PyTorch's convention gives
    # dL/da = (1+1j) * conj(b): (1+1j)(3+1j) = 2+4j, (1+1j)(2-0.5j) = 2.5+1.5j (by hand).
    a = torch.tensor([1 + 2j, -0.5 + 1j], dtype=torch.complex64, requires_grad=True)
    b = torch.tensor([3 - 1j, 2 + 0.5j], dtype=torch.complex64, requires_grad=True)
    torch.view_as_real(a * b).sum().backward()
    assert a.grad.tolist() == [2 + 4j, 2.5 + 1.5j]
    assert b.grad.tolist() == [(1 + 1j) * (1 - 2j), (1 + 1j) * (-0.5 - 1j)]  # conj(a)
    a.grad = None
    torch.view_as_real(a / 2).sum().backward()  # a real divisor: (1+1j) / 2
    assert a.grad.tolist() == [0.5 + 0.5j, 0.5 + 0.5j]
