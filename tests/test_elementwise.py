"""Elementwise math: values against numpy / Python's math module or against results recorded
from PyTorch 2.13, dtype rules, errors, operators, in-place forms, ``out=``, finfo/iinfo.

The op database (tests/test_opdb.py) covers every row across dtypes and layouts; the tests here
pin down semantics that need an independent oracle."""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest

import torch
from torch._core import dispatch as _dispatch

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I64, I32, I16, I8, U8, BOOL = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8,
                               torch.bool)


def t(values, dtype=None):
    return torch.tensor(values, dtype=dtype)


def same_nan(a, b):
    """Lists equal, NaN equal to NaN."""
    assert len(a) == len(b), (a, b)
    for x, y in zip(a, b):
        if isinstance(y, float) and math.isnan(y):
            assert isinstance(x, float) and math.isnan(x), (a, b)
        else:
            assert x == y, (a, b)


# -- unary values ------------------------------------------------------------------------

X = [0.3, 1.7, 2.5, 4.0, 0.05]
NUMPY_UNARY = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "reciprocal": lambda x: 1 / x, "rsqrt": lambda x: 1 / np.sqrt(x),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "square": np.square,
    "deg2rad": np.deg2rad, "rad2deg": np.rad2deg, "frac": lambda x: x - np.trunc(x),
}


@pytest.mark.parametrize("name", sorted(NUMPY_UNARY))
def test_unary_matches_numpy_in_float64(name):
    x = np.array(X)
    got = getattr(torch, name)(t(X, F64))
    assert got.dtype is F64
    np.testing.assert_allclose(np.array(got.tolist()), NUMPY_UNARY[name](x), rtol=1e-12)


@pytest.mark.parametrize("name", ["asin", "acos", "atanh"])
def test_inverse_trig_in_their_domain(name):
    x = [-0.9, -0.25, 0.0, 0.5, 0.99]
    fn = {"asin": math.asin, "acos": math.acos, "atanh": math.atanh}[name]
    got = getattr(torch, name)(t(x, F64)).tolist()
    np.testing.assert_allclose(got, [fn(v) for v in x], rtol=1e-12, atol=1e-15)


def test_acosh_and_out_of_domain_nan():
    assert torch.acosh(t([1.0, 3.0], F64)).tolist() == pytest.approx([0.0, math.acosh(3.0)])
    same_nan(torch.log(t([-1.0])).tolist(), [math.nan])
    same_nan(torch.sqrt(t([-4.0])).tolist(), [math.nan])


def test_float32_results_are_correctly_rounded():
    # float32(exp(1)) rounds to 2.7182817459106445 (PyTorch gives that value too)
    assert torch.exp(t([1.0])).item() == float(np.float32(math.e))
    assert torch.atan2(t([1.0]), t([1.0])).item() == float(np.float32(math.pi / 4))


def test_erf_erfc_lgamma_against_math():
    x = [-2.5, -0.5, 0.0, 0.3, 1.0, 3.5]
    np.testing.assert_allclose(torch.erf(t(x, F64)).tolist(), [math.erf(v) for v in x],
                               rtol=1e-14)
    np.testing.assert_allclose(torch.erfc(t(x, F64)).tolist(), [math.erfc(v) for v in x],
                               rtol=1e-14)
    y = [0.5, 1.0, 1.5, 7.25, -1.5, 30.0]
    np.testing.assert_allclose(torch.lgamma(t(y, F64)).tolist(), [math.lgamma(v) for v in y],
                               rtol=1e-14)


def test_lgamma_and_digamma_at_poles():
    # recorded from PyTorch 2.13 (float32): lgamma has +inf poles; digamma(0) = -inf and the
    # negative integers give NaN
    assert torch.lgamma(t([0.0, -1.0, -2.0])).tolist() == [math.inf] * 3
    same_nan(torch.digamma(t([0.0, -1.0, -2.0])).tolist(), [-math.inf, math.nan, math.nan])


def test_digamma_values():
    euler = 0.5772156649015329
    # psi(1) = -gamma, psi(1/2) = -gamma - 2 ln 2, psi(n + 1) = psi(n) + 1/n, reflection below 0
    x = t([1.0, 0.5, 4.0, 100.0, -1.5, 1e-8], F64)
    want = [-euler, -euler - 2 * math.log(2), -euler + 1 + 1 / 2 + 1 / 3,
            4.600161852738087, 0.7031566406452432, -1e8 - euler]
    np.testing.assert_allclose(torch.digamma(x).tolist(), want, rtol=1e-12)


def test_erfinv_inverts_erf_and_handles_the_ends():
    y = [-0.999999, -0.7, -1e-9, 0.0, 0.2, 0.5, 0.9999]
    x = torch.erfinv(t(y, F64)).tolist()
    np.testing.assert_allclose([math.erf(v) for v in x], y, rtol=1e-13, atol=1e-16)
    same_nan(torch.erfinv(t([1.0, -1.0, 1.5, math.nan])).tolist(),
             [math.inf, -math.inf, math.nan, math.nan])


def test_sign_and_sgn_like_pytorch():
    # recorded: sign(NaN) and sign(-0.0) are 0, bool stays bool
    x = t([-3.0, -0.0, 0.0, 2.0, math.nan])
    assert torch.sign(x).tolist() == [-1.0, 0.0, 0.0, 1.0, 0.0]
    assert torch.sgn(t([-3, 0, 7])).tolist() == [-1, 0, 1]
    assert torch.sign(t([True, False])).dtype is BOOL


def test_round_half_to_even_and_decimals():
    assert torch.round(t([0.5, 1.5, 2.5, -0.5, -1.5])).tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]
    # recorded from PyTorch 2.13
    assert torch.round(t([1234.5678]), decimals=2).item() == 1234.5699462890625
    assert torch.round(t([1234.5678, 15.0]), decimals=-1).tolist() == [1230.0, 20.0]
    assert torch.round(t([3, -2])).dtype is I64
    with pytest.raises(NotImplementedError, match="Long"):
        torch.round(t([3, -2]), decimals=1)


def test_half_and_bfloat16_compute_in_float32():
    # recorded from PyTorch 2.13
    assert torch.exp(t([1.0], BF16)).tolist() == [2.71875]
    assert torch.sigmoid(t([1.5, -2.5], F16)).tolist() == [0.8173828125, 0.07586669921875]
    assert torch.lerp(t([1.5, -2.5], F16), torch.zeros(2, dtype=F16), 0.3).tolist() == [
        1.0498046875, -1.75]


@pytest.mark.parametrize(("name", "dtype", "expected"), [
    ("sqrt", I64, F32), ("exp", BOOL, F32), ("sin", U8, F32), ("sigmoid", I32, F32),
    ("exp", F16, F16), ("log", BF16, BF16), ("abs", I8, I8), ("neg", U8, U8),
    ("floor", I64, I64), ("ceil", U8, U8), ("trunc", I16, I16), ("sign", BOOL, BOOL),
    ("square", BOOL, I64), ("square", I8, I8), ("isnan", I64, BOOL), ("isinf", F32, BOOL),
    ("logical_not", F32, BOOL), ("bitwise_not", BOOL, BOOL), ("angle", I64, F32),
    ("deg2rad", I64, F32), ("signbit", I32, BOOL), ("nan_to_num", I64, I64),
    ("reciprocal", I64, F32), ("erfinv", I64, F32), ("positive", I8, I8),
])
def test_unary_result_dtypes(name, dtype, expected):
    assert getattr(torch, name)(t([1, 0, 1], dtype)).dtype is expected


def test_int_inputs_of_float_functions_use_the_default_dtype():
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.sqrt(t([4, 9])).dtype is F64
        assert torch.div(t([1]), 2).dtype is F64
    finally:
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda: torch.abs(t([True])), NotImplementedError, "Bool"),
    (lambda: torch.neg(t([True])), RuntimeError, "Negation"),
    (lambda: -t([True]), RuntimeError, "Negation"),
    (lambda: +t([True]), RuntimeError, r"The `\+` operator"),
    (lambda: torch.floor(t([True])), NotImplementedError, "Bool"),
    (lambda: torch.frac(t([1])), NotImplementedError, "Long"),
    (lambda: torch.bitwise_not(t([1.0])), NotImplementedError, "Float"),
    (lambda: ~t([1.0]), TypeError, "only implemented on integer and Boolean"),
    (lambda: torch.imag(t([1.0])), RuntimeError, "non-complex"),
    (lambda: torch.exp([1.0]), TypeError, "must be Tensor"),
])
def test_unary_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_special_value_predicates():
    x = t([1.0, math.inf, -math.inf, math.nan, -0.0])
    assert torch.isnan(x).tolist() == [False, False, False, True, False]
    assert torch.isinf(x).tolist() == [False, True, True, False, False]
    assert torch.isposinf(x).tolist() == [False, True, False, False, False]
    assert torch.isneginf(x).tolist() == [False, False, True, False, False]
    assert torch.isfinite(x).tolist() == [True, False, False, False, True]
    assert torch.signbit(x).tolist() == [False, False, True, False, True]
    assert torch.isreal(x).tolist() == [True] * 5
    assert torch.isfinite(t([1, 2])).tolist() == [True, True]


def test_nan_to_num_defaults_to_the_dtype_limits():
    x = t([math.nan, math.inf, -math.inf, 2.0], F16)
    assert torch.nan_to_num(x).tolist() == [0.0, 65504.0, -65504.0, 2.0]
    y = torch.nan_to_num(t([math.nan, math.inf, -math.inf]), nan=1.0, posinf=2.0, neginf=-3.0)
    assert y.tolist() == [1.0, 2.0, -3.0]


def test_logit_with_and_without_eps():
    x = [0.2, 0.5, 0.9]
    np.testing.assert_allclose(torch.logit(t(x, F64)).tolist(),
                               [math.log(v / (1 - v)) for v in x], rtol=1e-12)
    clamped = torch.logit(t([0.0, 1.0], F64), eps=0.1).tolist()
    np.testing.assert_allclose(clamped, [math.log(1 / 9), math.log(9)], rtol=1e-12)
    # float32 clamps at its own rounding of 1 - eps, as PyTorch's kernel does: 1 - 1e-6 is
    # 0.99999899 there, whose logit is 13.8023 (the float64 bound's is 13.8155)
    high = float(np.float32(1) - np.float32(1e-6))
    edge = torch.logit(t([1.0, 0.9999995], F32), eps=1e-6).tolist()
    np.testing.assert_allclose(edge, [math.log(high / (1 - high))] * 2, rtol=1e-6)
    assert abs(edge[0] - 13.8155) > 0.01


def test_angle_real_imag_for_real_tensors():
    same_nan(torch.angle(t([-2.0, 3.0, math.nan])).tolist(), [float(np.float32(math.pi)), 0.0,
                                                             math.nan])
    x = t([1.0, 2.0])
    assert torch.real(x) is x and x.real is x


# -- binary values -----------------------------------------------------------------------

A = [7, -7, 7, -7, 0, 5]
B = [2, 2, -2, -2, 3, 5]


def test_integer_floor_division_and_remainder_follow_python():
    a, b = t(A), t(B)
    assert (a // b).tolist() == [x // y for x, y in zip(A, B)]
    assert (a % b).tolist() == [x % y for x, y in zip(A, B)]
    assert torch.div(a, b, rounding_mode="floor").tolist() == [x // y for x, y in zip(A, B)]


def test_integer_trunc_division_and_fmod_follow_c():
    a, b = t(A), t(B)
    assert torch.div(a, b, rounding_mode="trunc").tolist() == [int(x / y) for x, y in zip(A, B)]
    assert torch.fmod(a, b).tolist() == [int(math.fmod(x, y)) for x, y in zip(A, B)]


def test_float_floor_division_and_remainder_follow_python():
    a = [7.5, -7.5, 7.5, -7.5, 0.1, 1e-3]
    b = [2.0, 2.0, -2.0, -2.0, 0.01, 3.0]
    assert (t(a, F64) // t(b, F64)).tolist() == [x // y for x, y in zip(a, b)]
    assert (t(a, F64) % t(b, F64)).tolist() == [x % y for x, y in zip(a, b)]
    assert torch.fmod(t(a, F64), t(b, F64)).tolist() == [math.fmod(x, y) for x, y in zip(a, b)]
    # division by zero in floats: inf and NaN, no error
    same_nan(torch.div(t([1.0, 0.0]), 0.0, rounding_mode="floor").tolist(), [math.inf, math.nan])


@pytest.mark.parametrize("fn", [
    lambda a, b: a // b, lambda a, b: a % b, lambda a, b: torch.fmod(a, b),
    lambda a, b: torch.div(a, b, rounding_mode="trunc"),
])
def test_integer_division_by_zero_raises(fn):
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(t([3, -2]), t([1, 0]))


def test_true_division_of_integers_is_float():
    assert (t([3, -2]) / 2).tolist() == [1.5, -1.0]
    assert torch.div(t([1, -1]), t([0, 0])).tolist() == [math.inf, -math.inf]
    # recorded: number / tensor is reciprocal(tensor) * number
    assert (3 / t([7.0])).item() == 0.4285714626312256


def test_integer_overflow_wraps():
    assert (t([100], I8) << 2).tolist() == [-112]
    assert (t([5], I16) ** 10).tolist() == [761]
    assert (t([250], U8) + 10).tolist() == [4]
    assert (t([1], U8) + 300).tolist() == [45]  # recorded: the number wraps too
    assert (t([3, 250], U8) - 5).tolist() == [254, 245]


def test_shifts_out_of_range():
    # recorded from PyTorch 2.13
    assert (t([3, -2]) << 64).tolist() == [0, 0]
    assert (t([3, -2]) >> 70).tolist() == [0, -1]
    assert (t([3, -2]) << -1).tolist() == [0, 0]
    assert (t([3, -2]) >> -1).tolist() == [0, -1]
    assert (t([-8]) >> 3).tolist() == [-1]
    assert (t([3, 250], U8) >> 9).tolist() == [0, 0]
    assert (t([3, 250], U8) << 7).tolist() == [128, 0]
    assert (t([-100], I8) >> 9).tolist() == [-1]
    assert (2 << t([3, -2])).tolist() == [16, 0]


def test_integer_powers():
    assert (t([1, -1, 2, 0, -1]) ** t([-1, -3, -2, -1, -2])).tolist() == [1, -1, 0, 0, 1]
    assert (2 ** t([3, 0, 5])).tolist() == [8, 1, 32]
    assert torch.pow(2, t([3, -2])).dtype is I64
    with pytest.raises(RuntimeError, match="negative integer powers"):
        t([2, 3]) ** -1
    assert (t([True, False]) ** 2).tolist() == [1, 0]
    with pytest.raises(NotImplementedError, match="Bool"):
        t([True]) ** t([True])


def test_float_power_is_double():
    got = torch.float_power(t([2, 3]), 0.5)
    assert got.dtype is F64 and got.tolist() == [math.sqrt(2), math.sqrt(3)]
    with pytest.raises(RuntimeError, match="requires dtype Double"):
        t([1.0]).float_power_(2)
    x = t([2.0], F64)
    assert x.float_power_(2) is x and x.tolist() == [4.0]


@pytest.mark.parametrize(("name", "fn"), [
    ("maximum", np.maximum), ("minimum", np.minimum), ("fmax", np.fmax), ("fmin", np.fmin),
    ("atan2", np.arctan2), ("hypot", np.hypot), ("copysign", np.copysign),
    ("nextafter", np.nextafter), ("logaddexp", np.logaddexp), ("logaddexp2", np.logaddexp2),
])
def test_float_binary_against_numpy(name, fn):
    a = [1.0, -2.0, math.nan, 0.0, math.inf, 3.0, -math.inf]
    b = [0.5, 4.0, 1.0, -0.0, math.inf, math.nan, -math.inf]
    got = getattr(torch, name)(t(a, F64), t(b, F64)).tolist()
    with np.errstate(all="ignore"):
        want = fn(np.array(a), np.array(b)).tolist()
    np.testing.assert_allclose(got, want, rtol=1e-13)
    if name == "copysign":
        assert [math.copysign(1, v) for v in got] == [math.copysign(1, v) for v in want]


def test_nextafter_in_bfloat16_steps_one_bfloat16_unit():
    x = torch.nextafter(t([1.0, 1.0, 0.0, -2.0], BF16), t([2.0, 0.0, -1.0, -2.0], BF16))
    assert x.tolist() == [1.0078125, 0.99609375, -9.183549615799121e-41, -2.0]


def test_xlogy():
    got = torch.xlogy(t([0.0, 0.0, 2.0, 3.0], F64), t([0.0, math.nan, 0.5, 4.0], F64)).tolist()
    same_nan(got, [0.0, math.nan, 2 * math.log(0.5), 3 * math.log(4.0)])
    assert torch.xlogy(2, t([1.0, math.e], F64)).tolist() == pytest.approx([0.0, 2.0])
    assert torch.xlogy(t([1, 2]), t([1, 1])).dtype is F32


@pytest.mark.parametrize(("a", "b", "expected"), [
    (t([1, 2]), t([1.0, 2.0]), F32), (t([1], I32), 2.5, F32), (t([1], U8), t([1], I8), I16),
    (t([1.0], F16), t([1.0], BF16), F32), (t([True]), 3, I64), (t([1.0], F16), 1.0, F16),
    (t([1], I16), True, I16), (t([1.0], F16), t(2.0, F64), F16), (t([1], I8), t([2]), I64),
])
def test_binary_promotion(a, b, expected):
    assert torch.mul(a, b).dtype is expected
    assert torch.remainder(a, b).dtype is expected if expected is not BOOL else True
    assert (a == b).dtype is BOOL


def test_sub_and_rsub():
    assert torch.sub(t([5, 5]), t([1, 2]), alpha=2).tolist() == [3, 1]
    assert torch.rsub(t([1.0, 2.0]), 2, alpha=3).tolist() == [-1.0, -4.0]
    assert (10 - t([1, 2])).tolist() == [9, 8]
    assert torch.sub(2, t([3, -2])).tolist() == [-1, 4]
    with pytest.raises(RuntimeError, match="two bool tensors"):
        t([True]) - t([False])
    with pytest.raises(RuntimeError, match="with a bool tensor"):
        1 - t([True])
    with pytest.raises(RuntimeError, match="alpha must not be a floating"):
        torch.sub(t([1]), 1, alpha=1.5)
    with pytest.raises(RuntimeError, match="Boolean alpha"):
        torch.sub(t([1.0]), 1, alpha=True)


def test_bitwise_and_logical_ops():
    a, b = t([12, 10, -1]), t([10, 6, 5])
    assert (a & b).tolist() == [8, 2, 5]
    assert (a | b).tolist() == [14, 14, -1]
    assert (a ^ b).tolist() == [6, 12, -6]
    assert (~a).tolist() == [-13, -11, 0]
    assert (t([True, False]) & t([True, True])).tolist() == [True, False]
    assert (2 & t([3, 4])).tolist() == [2, 0]
    with pytest.raises(NotImplementedError, match="Float"):
        t([1.0]) & 1
    x, y = t([0.0, 0.5, math.nan, 0.0]), t([0, 0, 0, 3])
    assert torch.logical_and(x, y).tolist() == [False, False, False, False]
    assert torch.logical_or(x, y).tolist() == [False, True, True, True]
    assert torch.logical_xor(x, y).tolist() == [False, True, True, True]
    assert torch.logical_not(x).tolist() == [True, False, False, True]
    with pytest.raises(TypeError, match="must be Tensor"):
        torch.logical_xor(x, 0)


def test_comparisons_and_their_aliases():
    a, b = t([1, 2, 3]), t([2.5, 2.0, 1.0])
    assert (a < b).tolist() == [True, False, False]
    assert (a <= b).tolist() == [True, True, False]
    assert (a > 2.5).tolist() == [False, False, True]
    assert (2 < a).tolist() == [False, False, True]
    assert (a == b).tolist() == [False, True, False]
    assert (a != b).tolist() == [True, False, True]
    for alias, name in (("greater", "gt"), ("less", "lt"), ("greater_equal", "ge"),
                        ("less_equal", "le"), ("not_equal", "ne")):
        assert getattr(torch, alias)(a, b).tolist() == getattr(torch, name)(a, b).tolist()
    nan = t([math.nan])
    assert (nan == nan).tolist() == [False] and (nan != nan).tolist() == [True]


def test_eq_with_non_numbers_and_hash():
    x = t([1, 2])
    assert (x == None) is False  # noqa: E711 - the operator itself is under test
    assert (x == "a") is False
    with pytest.raises(TypeError):
        x < None  # noqa: B015
    assert len({x, t([1, 2])}) == 2  # __eq__ returning a tensor keeps identity hashing


def test_isclose_allclose_equal():
    a = t([1.0, math.nan, math.inf, 1.0])
    b = t([1.0 + 1e-6, math.nan, math.inf, 1.1])
    assert torch.isclose(a, b).tolist() == [True, False, True, False]
    assert torch.isclose(a, b, equal_nan=True).tolist() == [True, True, True, False]
    assert torch.isclose(a, b, rtol=0.2).tolist() == [True, False, True, True]
    assert torch.isclose(t([1, 5]), t([3, 4]), atol=1.5, rtol=0).tolist() == [False, True]
    assert torch.isclose(t([1, 5, 200], U8), t([3, 4, 100], U8), atol=2, rtol=0).tolist() == [
        True, True, False]
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        torch.isclose(t([1.0]), t([1.0], F64))
    assert torch.allclose(t([1.0, 2.0]), t([1.0, 2.0 + 1e-7])) is True
    assert torch.allclose(t([1.0, 2.0]), t([1.0, 2.1])) is False
    assert torch.equal(t([1, 2]), t([1.0, 2.0], F64)) is True
    assert torch.equal(t([1, 2]), t([1, 2, 3])) is False
    assert torch.equal(t([math.nan]), t([math.nan])) is False


# -- clamp, lerp, addcmul, addcdiv, where --------------------------------------------------


def test_clamp():
    x = t([-3.0, 0.5, 4.0, math.nan])
    same_nan(torch.clamp(x, -1, 1).tolist(), [-1.0, 0.5, 1.0, math.nan])
    same_nan(torch.clamp(x, min=0).tolist(), [0.0, 0.5, 4.0, math.nan])
    same_nan(x.clip(max=0).tolist(), [-3.0, 0.0, 0.0, math.nan])
    assert torch.clamp(t([1, 5]), 3, 2).tolist() == [2, 2]  # min > max gives max
    assert torch.clamp(t([3, -2]), 0.5).tolist() == [3.0, 0.5]  # promotes to float
    assert torch.clamp(t([True, False]), 0, 1).dtype is I64
    same_nan(torch.clamp(t([1.0, 2.0]), max=math.nan).tolist(), [math.nan, math.nan])
    bounds = torch.clamp(t([[0.0, 5.0]]), t([1.0, 1.0]), t([[2.0], [4.0]]))
    assert bounds.tolist() == [[1.0, 2.0], [1.0, 4.0]]
    assert torch.clamp_min(t([3, -2]), 0).tolist() == [3, 0]
    assert torch.clamp_max(t([3, -2]), 0).tolist() == [0, -2]
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        torch.clamp(x)
    y = t([1, 5])
    assert y.clamp_(2, 4) is y and y.tolist() == [2, 4]
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        t([1, 5]).clamp_(0.5)


def test_lerp():
    start, end = t([0.0, 10.0], F64), t([10.0, 20.0], F64)
    assert torch.lerp(start, end, 0.25).tolist() == [2.5, 12.5]
    assert torch.lerp(start, end, 1.0).tolist() == [10.0, 20.0]  # exact at the end
    assert torch.lerp(start, end, t([0.0, 1.0], F64)).tolist() == [0.0, 20.0]
    with pytest.raises(RuntimeError, match="expected dtype float for `end` but got dtype "
                                           "double"):
        torch.lerp(t([1.0]), t([1.0], F64), 0.5)
    with pytest.raises(NotImplementedError, match="Long"):
        torch.lerp(t([1]), t([2]), 0.5)


def test_addcmul_addcdiv():
    x, a, b = t([1.0, 2.0]), t([2.0, 3.0]), t([4.0, 0.5])
    assert torch.addcmul(x, a, b, value=0.5).tolist() == [5.0, 2.75]
    assert torch.addcdiv(x, a, b, value=2).tolist() == [2.0, 14.0]
    # recorded: an integer result truncates value first
    assert torch.addcmul(t([3, -2]), t([3, -2]), t([3, -2]), value=2.5).tolist() == [21, 6]
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        torch.addcdiv(t([1]), t([1]), t([1]))
    assert x.addcmul_(a, b) is x and x.tolist() == [9.0, 3.5]


def test_where():
    cond = t([True, False, True])
    assert torch.where(cond, t([1, 2, 3]), t([7, 8, 9])).tolist() == [1, 8, 3]
    assert torch.where(cond, 1.0, 0.0).dtype is F32
    assert torch.where(cond, 1, 0).dtype is I64
    assert torch.where(cond, t([1, 2, 3]), 1.5).tolist() == [1.0, 1.5, 3.0]
    assert torch.where(cond, t([1.0, 2.0, 3.0], F16), 1.0).dtype is F16
    assert torch.where(t([[True], [False]]), t([1, 2]), t(0)).tolist() == [[1, 2], [0, 0]]
    assert t([1.0, 2.0, 3.0]).where(cond, 0.0).tolist() == [1.0, 0.0, 3.0]
    with pytest.raises(RuntimeError, match="boolean tensor, but got a tensor with dtype Long"):
        torch.where(t([1, 0]), 1, 0)
    with pytest.warns(UserWarning, match="uint8 condition"):
        assert torch.where(t([1, 0], U8), 1, 0).tolist() == [1, 0]
    bf = torch.where(cond, t([1.5, 2.5, 3.5], BF16), t([0.0, -1.0, 0.0], BF16))
    assert bf.dtype is BF16 and bf.tolist() == [1.5, -1.0, 3.5]


def test_where_with_one_argument_is_nonzero():
    # torch.where(condition) is nonzero(condition, as_tuple=True): one index tensor per dim
    (only,) = torch.where(t([True, False, True]))
    assert only.dtype is torch.int64 and only.tolist() == [0, 2]
    rows, cols = torch.where(t([[0, 3], [5, 0]]))
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]


# -- operators, in-place, out= -------------------------------------------------------------


@pytest.mark.parametrize(("op", "a", "b"), [
    (operator.sub, [5, 7], [2, 3]), (operator.truediv, [5, 7], [2, 4]),
    (operator.floordiv, [5, -7], [2, 2]), (operator.mod, [5, -7], [3, 3]),
    (operator.pow, [2, 3], [3, 2]), (operator.and_, [6, 5], [3, 3]),
    (operator.or_, [6, 5], [3, 3]), (operator.xor, [6, 5], [3, 3]),
    (operator.lshift, [1, 3], [2, 1]), (operator.rshift, [16, 7], [2, 1]),
])
def test_operators_match_python_on_ints(op, a, b):
    assert op(t(a), t(b)).tolist() == [op(x, y) for x, y in zip(a, b)]
    assert op(t(a), b[0]).tolist() == [op(x, b[0]) for x in a]
    assert op(a[0], t(b)).tolist() == [op(a[0], y) for y in b]  # reflected


@pytest.mark.parametrize(("op", "method"), [
    (operator.isub, "__isub__"), (operator.itruediv, "__itruediv__"),
    (operator.ifloordiv, "__ifloordiv__"), (operator.imod, "__imod__"),
    (operator.ipow, "__ipow__"),
])
def test_inplace_operators_keep_the_tensor(op, method):
    x = t([6.0, 9.0])
    before = x._version
    y = op(x, 2)
    assert y is x and x._version > before
    assert x.tolist() == [getattr(float, method.replace("__i", "__"))(v, 2.0) for v in (6.0, 9.0)]


def test_unary_operators():
    x = t([-1.5, 2.0])
    assert (-x).tolist() == [1.5, -2.0]
    assert (+x).tolist() == [-1.5, 2.0]
    assert abs(x).tolist() == [1.5, 2.0]
    assert (~t([0, 5])).tolist() == [-1, -6]


def test_inplace_methods_and_their_errors():
    x = t([1.0, 4.0])
    assert x.sqrt_() is x and x.tolist() == [1.0, 2.0]
    view = torch.zeros(2, 4)[:, ::2]
    view.add_(1).exp_()
    e32 = float(np.float32(math.e))
    assert view.tolist() == [[e32, e32]] * 2 and not view.is_contiguous()
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        t([3, 4]).div_(2)
    with pytest.raises(RuntimeError, match=r"output with shape \[2\] doesn't match the "
                                           r"broadcast shape \[2, 2\]"):
        t([1.0, 2.0]).sub_(torch.ones(2, 2))
    i = t([5, -7])
    assert i.floor_divide_(2) is i and i.tolist() == [2, -4]
    b = t([1.0, 5.0])
    assert b.lt_(3).tolist() == [1.0, 0.0] and b.dtype is F32
    assert torch.abs_(t([-1.0])).tolist() == [1.0]


def test_out_argument():
    out = torch.empty(2)
    assert torch.exp(t([0.0, 1.0]), out=out) is out
    assert out.tolist() == [1.0, float(np.float32(math.e))]
    out64 = torch.empty(0, dtype=F64)
    torch.sub(t([3, 4]), 1, out=out64)
    assert out64.tolist() == [2.0, 3.0] and out64.dtype is F64
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.sqrt(t([4.0]), out=torch.empty(1, dtype=I64))
    cmp_out = torch.empty(2, dtype=BOOL)
    assert torch.lt(t([1, 5]), 3, out=cmp_out) is cmp_out and cmp_out.tolist() == [True, False]


# -- the dispatcher, the primitives ----------------------------------------------------------


def test_public_ops_run_through_aten_operators():
    seen = []

    class Recorder:
        def __torch_dispatch__(self, func, types, args, kwargs):
            seen.append(func.qualname)
            return func(*args, **kwargs)

    _dispatch.push_mode(Recorder())
    try:
        x = t([1.0, 2.0])
        torch.exp(x)
        x - 1
        torch.clamp(x, 0, 1)
        torch.sigmoid(x)
    finally:
        _dispatch.pop_mode()
    # torch.tensor hands its tensor to the mode through lift_fresh, as in PyTorch
    assert seen[:4] == ["aten::lift_fresh", "aten::exp", "aten::sub.Tensor", "aten::clamp"]
    assert "aten::sigmoid" in seen
    assert torch.ops.aten.div.Tensor_mode(t([7]), t([2]), rounding_mode="floor").tolist() == [3]


def test_reference_kernels_handle_strides_and_bfloat16():
    from torch._core.alloc import PRIMS

    src = t([[1.0, 2.0, 3.0, 4.0]] * 2, BF16)[:, ::2]  # (2, 2), strided
    out = torch.empty(2, 2, dtype=BF16)
    PRIMS.exp(out, src)
    want = np.exp(np.array([[1.0, 3.0]] * 2))
    np.testing.assert_allclose(np.array(out.float().tolist()), want, rtol=1e-2)
    empty = torch.empty(0, 3)
    PRIMS.lgamma(torch.empty(0, 3), empty)  # zero-size: nothing to do, nothing raised


def test_meta_tensors_get_shapes_and_dtypes():
    a = torch.empty(3, 1, device="meta", dtype=I32)
    b = torch.empty(4, device="meta")
    for result, shape, dtype in [(a - b, (3, 4), F32), (torch.sqrt(a), (3, 1), F32),
                                 (a < b, (3, 4), BOOL), (torch.where(a > 0, a, 1.5), (3, 1), F32)]:
        assert result.device.type == "meta"
        assert (tuple(result.shape), result.dtype) == (shape, dtype)


# -- finfo, iinfo --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [F16, F32, F64])
def test_finfo_matches_numpy(dtype):
    info, ref = torch.finfo(dtype), np.finfo(np.dtype(str(dtype).removeprefix("torch.")))
    assert (info.bits, info.eps, info.max, info.min, info.tiny) == (
        ref.bits, float(ref.eps), float(ref.max), float(ref.min), float(ref.tiny))
    assert info.smallest_normal == info.tiny and info.resolution == 10.0 ** -ref.precision


def test_finfo_bfloat16_default_and_repr():
    info = torch.finfo(BF16)
    assert (info.bits, info.eps, info.max, info.tiny) == (16, 2.0 ** -7, 3.3895313892515355e+38,
                                                          2.0 ** -126)
    assert torch.finfo().dtype == "float32" and torch.finfo(torch.complex128).dtype == "float64"
    # recorded from PyTorch 2.13
    assert repr(torch.finfo(F16)) == (
        "finfo(resolution=0.001, min=-65504, max=65504, eps=0.000976562, "
        "smallest_normal=6.10352e-05, tiny=6.10352e-05, dtype=float16)")
    with pytest.raises(TypeError, match="requires a floating point input type"):
        torch.finfo(I32)


@pytest.mark.parametrize("dtype", [U8, I8, I16, I32, I64])
def test_iinfo_matches_numpy(dtype):
    info, ref = torch.iinfo(dtype), np.iinfo(np.dtype(str(dtype).removeprefix("torch.")))
    assert (info.bits, info.min, info.max, info.dtype) == (ref.bits, ref.min, ref.max,
                                                           str(ref.dtype))


def test_iinfo_errors_and_repr():
    assert repr(torch.iinfo(I32)) == "iinfo(min=-2.14748e+09, max=2.14748e+09, dtype=int32)"
    with pytest.raises(TypeError, match=r"torch\.bool is not supported"):
        torch.iinfo(BOOL)
    with pytest.raises(TypeError, match="requires an integer input type"):
        torch.iinfo(F32)
