"""Activation layers and their ``nn.functional`` forms: values against numpy formulas,
gradients against finite differences (float64), PyTorch 2.13's gradients at the kinks and its
reprs (strings pasted from real PyTorch), in-place variants and errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad

import torch
import torch.nn as nn
import torch.nn.functional as F

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# name -> (torch function, numpy formula)
ELEMENTWISE = {
    "relu6": (F.relu6, lambda x: np.minimum(np.maximum(x, 0), 6)),
    "hardtanh": (lambda t: F.hardtanh(t, -2.0, 1.5), lambda x: np.clip(x, -2.0, 1.5)),
    "elu": (lambda t: F.elu(t, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x))),
    "selu": (F.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))),
    "celu": (lambda t: F.celu(t, 1.3),
             lambda x: np.maximum(x, 0) + np.minimum(0, 1.3 * np.expm1(x / 1.3))),
    "mish": (F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    "hardsigmoid": (F.hardsigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hardswish": (F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "softplus": (lambda t: F.softplus(t, 2.0, 5.0), lambda x: _softplus(x, 2.0, 5.0)),
    "softsign": (F.softsign, lambda x: x / (1 + np.abs(x))),
    "tanhshrink": (F.tanhshrink, lambda x: x - np.tanh(x)),
    "softshrink": (lambda t: F.softshrink(t, 1.0),
                   lambda x: np.where(x > 1, x - 1, np.where(x < -1, x + 1, 0))),
    "hardshrink": (lambda t: F.hardshrink(t, 1.0), lambda x: np.where(np.abs(x) > 1, x, 0)),
    "threshold": (lambda t: F.threshold(t, 1.0, -7.0), lambda x: np.where(x > 1, x, -7.0)),
    "logsigmoid": (F.logsigmoid, lambda x: np.log(_sigmoid(x))),
    "leaky_relu_": (lambda t: F.leaky_relu_(t.clone(), 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "rrelu_eval": (lambda t: F.rrelu(t, 0.1, 0.3),
                   lambda x: np.where(x > 0, x, 0.2 * x)),
    "prelu": (lambda t: F.prelu(t, torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=t.dtype)),
              lambda x: np.where(x > 0, x, x * np.array([0.1, 0.2, 0.3, 0.4])[:, None])),
    "softmin": (lambda t: F.softmin(t, 1), lambda x: _softmax(-x, 1)),
    "glu": (lambda t: F.glu(t, 1), lambda x: x[:, :2] * _sigmoid(x[:, 2:])),
}


def _sample(seed=0):
    x = np.random.default_rng(seed).standard_normal((3, 4, 5)) * 3
    return x


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_values_match_numpy(name, dtype):
    fn, ref = ELEMENTWISE[name]
    x = _sample()
    got = fn(torch.tensor(x, dtype=dtype))
    assert got.dtype == dtype
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    np.testing.assert_allclose(got.numpy(), ref(x), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_values_on_transposed_and_empty_input(name):
    fn, ref = ELEMENTWISE[name]
    x = _sample(1)
    t = torch.tensor(x.transpose(1, 0, 2).copy()).transpose(0, 1)  # strided view, shape (3,4,5)
    np.testing.assert_allclose(fn(t).numpy(), ref(x), rtol=1e-12, atol=1e-12)
    assert fn(torch.zeros(0, 4, 2, dtype=torch.float64)).shape[0] == 0


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_gradients_match_finite_differences(name):
    fn, _ = ELEMENTWISE[name]
    # keep clear of the kinks (|x| in {0, 1, 3, 6} and the thresholds) where FD is undefined
    x = torch.tensor([[-4.3, -2.6, -0.7, 0.4], [0.8, 1.7, 2.2, 6.9]], dtype=torch.float64)
    x = torch.stack([x, x.flip(1) * 0.9, -x])  # (3, 2, 4)
    if name == "prelu":
        x = x.transpose(1, 2)  # 4 channels on dim 1
    if name == "glu":
        x = x.transpose(1, 2)  # an even dim 1
    check_grad(fn, x, atol=1e-6)


@pytest.mark.parametrize("name", ["elu", "selu", "celu", "mish", "softplus", "logsigmoid",
                                  "softsign", "glu", "softmin", "hardswish"])
def test_second_derivatives_match_finite_differences(name):
    fn, _ = ELEMENTWISE[name]
    x = torch.tensor([[-2.6, -0.7, 0.4, 1.7], [0.8, -1.3, 2.2, 0.3]], dtype=torch.float64)
    check_gradgrad(fn, x.t() if name in ("glu", "softmin") else x, atol=1e-5, rtol=1e-4)


# Gradients at -3, -1, 0, 1, 2, 3, 6 printed by PyTorch 2.13 (float64, sum of outputs).
KINK_GRADS = {
    "hardswish": (F.hardswish, [0.0, 1 / 6, 0.5, 5 / 6, 7 / 6, 1.0, 1.0]),
    "relu6": (F.relu6, [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0]),
    "hardtanh": (F.hardtanh, [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]),
    "softshrink": (lambda t: F.softshrink(t, 1.0), [1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]),
    "hardshrink": (lambda t: F.hardshrink(t, 1.0), [1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]),
    "threshold": (lambda t: F.threshold(t, 1.0, 0.0), [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]),
    "softplus": (lambda t: F.softplus(t, 1, 2),
                 [0.04742587317756679, 0.2689414213699951, 0.5, 0.7310585786300049,
                  0.8807970779778824, 1.0, 1.0]),
    "elu": (F.elu, [0.049787068367863944, 0.36787944117144233, 1.0, 1.0, 1.0, 1.0, 1.0]),
    "logsigmoid": (F.logsigmoid,
                   [0.9525741268224333, 0.7310585786300049, 0.5, 0.2689414213699951,
                    0.11920292202211755, 0.04742587317756679, 0.0024726231566347748]),
    "prelu": (lambda t: F.prelu(t, torch.tensor(0.25, dtype=t.dtype)),
              [0.25, 0.25, 0.25, 1.0, 1.0, 1.0, 1.0]),
    "selu": (F.selu, [0.08753061208026487, 0.646768603034814, 1.7580993408473766,
                      SELU_SCALE, SELU_SCALE, SELU_SCALE, SELU_SCALE]),
    "mish": (F.mish, [-0.09339311453232084, 0.059216755877395014, 0.6, 1.0490362200997922,
                      1.0693179342794896, 1.0211069109294435, 1.00013414050621]),
}


@pytest.mark.parametrize("name", sorted(KINK_GRADS))
def test_gradients_at_kinks_match_pytorch(name):
    fn, want = KINK_GRADS[name]
    x = torch.tensor([-3.0, -1.0, 0.0, 1.0, 2.0, 3.0, 6.0], dtype=torch.float64,
                     requires_grad=True)
    (g,) = torch.autograd.grad(fn(x).sum(), x)
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-12, atol=1e-12)


def test_large_inputs_stay_finite():
    x = torch.tensor([-1000.0, -50.0, 50.0, 1000.0], dtype=torch.float64, requires_grad=True)
    for fn in (F.elu, F.selu, F.celu, F.softplus, F.logsigmoid, F.mish):
        out = fn(x)
        (g,) = torch.autograd.grad(out.sum(), x)
        assert bool(torch.isfinite(out).all()) and bool(torch.isfinite(g).all()), fn
    np.testing.assert_allclose(F.logsigmoid(x).detach().numpy(), [-1000.0, -50.0, -0.0, -0.0],
                               atol=1e-20)


def test_nan_propagates():
    x = torch.tensor([math.nan, 1.0])
    for fn in (F.relu6, F.hardtanh, F.softshrink, F.hardshrink, F.elu, F.hardsigmoid):
        assert math.isnan(float(fn(x)[0])), fn
    assert math.isnan(float(F.threshold(x, 0.5, 0.0)[0]))


INPLACE = [
    ("elu_", lambda t: F.elu_(t, 0.5), lambda t: F.elu(t, 0.5)),
    ("hardtanh_", lambda t: F.hardtanh_(t, -0.5, 0.5), lambda t: F.hardtanh(t, -0.5, 0.5)),
    ("leaky_relu_", lambda t: F.leaky_relu_(t, 0.3), lambda t: F.leaky_relu(t, 0.3)),
    ("threshold_", lambda t: F.threshold_(t, 0.2, 9.0), lambda t: F.threshold(t, 0.2, 9.0)),
    ("celu_", lambda t: F.celu_(t, 2.0), lambda t: F.celu(t, 2.0)),
    ("selu_", F.selu_, F.selu),
    ("rrelu_", lambda t: F.rrelu_(t, 0.1, 0.2), lambda t: F.rrelu(t, 0.1, 0.2)),
    ("relu6 inplace", lambda t: F.relu6(t, inplace=True), F.relu6),
    ("hardswish inplace", lambda t: F.hardswish(t, inplace=True), F.hardswish),
    ("hardsigmoid inplace", lambda t: F.hardsigmoid(t, inplace=True), F.hardsigmoid),
    ("mish inplace", lambda t: F.mish(t, inplace=True), F.mish),
]


@pytest.mark.parametrize(("name", "inplace", "outplace"), INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_variants_write_into_the_input_and_keep_autograd(name, inplace, outplace):
    base = torch.tensor(_sample(2))
    want = outplace(base)
    x = base.clone()
    assert inplace(x) is x
    torch.testing.assert_close(x, want)
    leaf = base.clone().requires_grad_(True)
    y = leaf * 1
    inplace(y)
    (g,) = torch.autograd.grad(y.sum(), leaf)
    leaf2 = base.clone().requires_grad_(True)
    (g2,) = torch.autograd.grad(outplace(leaf2).sum(), leaf2)
    torch.testing.assert_close(g, g2)


def test_rrelu_training_draws_slopes_in_range():
    x = -torch.ones(2000, dtype=torch.float64)
    slopes = -F.rrelu(x, 0.1, 0.3, training=True)
    assert float(slopes.min()) >= 0.1 and float(slopes.max()) <= 0.3
    assert float(slopes.std()) > 0.03  # really random, not the mean slope
    assert bool((F.rrelu(-x, 0.1, 0.3, training=True) == 1).all())  # positives unchanged
    m = nn.RReLU(0.1, 0.3)
    assert float(m(x)[0]) != float(m(x)[1]) or float(m(x)[2]) != float(m(x)[3])
    m.eval()
    np.testing.assert_allclose(m(x).numpy(), -0.2)


def test_prelu_module_parameters_and_gradient():
    m = nn.PReLU(3, init=0.1)
    assert m.weight.shape == (3,) and bool((m.weight == 0.1).all())
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    x = torch.tensor([[[-1.0, 2.0], [-3.0, -4.0], [5.0, -6.0]]])  # (1, 3, 2)
    out = m(x)
    np.testing.assert_allclose(out.detach().numpy(), [[[-0.1, 2.0], [-0.3, -0.4], [5.0, -0.6]]],
                               rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), [-1.0, -7.0, -6.0])
    shared = nn.PReLU()
    assert shared(torch.tensor([-2.0])).item() == pytest.approx(-0.5)


def test_modules_call_their_functions():
    x = torch.tensor(_sample(3))
    pairs = [
        (nn.ReLU6(), F.relu6(x)), (nn.Hardtanh(-2, 3), F.hardtanh(x, -2, 3)),
        (nn.ELU(0.5), F.elu(x, 0.5)), (nn.SELU(), F.selu(x)), (nn.CELU(2.0), F.celu(x, 2.0)),
        (nn.Mish(), F.mish(x)), (nn.Hardsigmoid(), F.hardsigmoid(x)),
        (nn.Hardswish(), F.hardswish(x)), (nn.Softplus(2, 10), F.softplus(x, 2, 10)),
        (nn.Softsign(), F.softsign(x)), (nn.Tanhshrink(), F.tanhshrink(x)),
        (nn.Softshrink(0.3), F.softshrink(x, 0.3)), (nn.Hardshrink(1), F.hardshrink(x, 1)),
        (nn.Threshold(0.1, 20), F.threshold(x, 0.1, 20)), (nn.LogSigmoid(), F.logsigmoid(x)),
        (nn.Softmin(1), F.softmin(x, 1)), (nn.GLU(1), F.glu(x, 1)),
        (nn.Softmax2d(), F.softmax(x, 0)), (nn.LeakyReLU(0.2), F.leaky_relu(x, 0.2)),
    ]
    for module, want in pairs:
        torch.testing.assert_close(module(x), want, msg=repr(module))
    np.testing.assert_allclose(nn.Softmax2d()(x.unsqueeze(0)).sum(1).numpy(), 1.0)
    y = x.clone()
    assert nn.LeakyReLU(0.2, inplace=True)(y) is y
    torch.testing.assert_close(y, F.leaky_relu(x, 0.2))


REPRS = [
    ("ReLU6()", "ReLU6()"), ("ReLU6(inplace=True)", "ReLU6(inplace=True)"),
    ("PReLU()", "PReLU(num_parameters=1)"), ("PReLU(3, init=0.1)", "PReLU(num_parameters=3)"),
    ("RReLU()", "RReLU(lower=0.125, upper=0.3333333333333333)"),
    ("RReLU(0.1, 0.3, inplace=True)", "RReLU(lower=0.1, upper=0.3, inplace=True)"),
    ("ELU()", "ELU(alpha=1.0)"), ("ELU(alpha=0.5, inplace=True)", "ELU(alpha=0.5, inplace=True)"),
    ("SELU()", "SELU()"), ("SELU(inplace=True)", "SELU(inplace=True)"),
    ("CELU()", "CELU(alpha=1.0)"), ("CELU(2.0, True)", "CELU(alpha=2.0, inplace=True)"),
    ("Mish()", "Mish()"), ("Mish(inplace=True)", "Mish(inplace=True)"),
    ("Hardsigmoid()", "Hardsigmoid()"), ("Hardsigmoid(True)", "Hardsigmoid()"),
    ("Hardtanh()", "Hardtanh(min_val=-1.0, max_val=1.0)"),
    ("Hardtanh(-2, 3, True)", "Hardtanh(min_val=-2, max_val=3, inplace=True)"),
    ("Hardswish()", "Hardswish()"), ("Hardswish(True)", "Hardswish()"),
    ("Softplus()", "Softplus(beta=1.0, threshold=20.0)"),
    ("Softplus(2, 10)", "Softplus(beta=2, threshold=10)"),
    ("Softsign()", "Softsign()"), ("Tanhshrink()", "Tanhshrink()"),
    ("Softshrink()", "Softshrink(0.5)"), ("Softshrink(0.3)", "Softshrink(0.3)"),
    ("Hardshrink()", "Hardshrink(0.5)"), ("Hardshrink(1)", "Hardshrink(1)"),
    ("Threshold(0.1, 20)", "Threshold(threshold=0.1, value=20)"),
    ("Threshold(0.1, 20, True)", "Threshold(threshold=0.1, value=20, inplace=True)"),
    ("LogSigmoid()", "LogSigmoid()"), ("Softmin()", "Softmin(dim=None)"),
    ("Softmin(1)", "Softmin(dim=1)"), ("Softmax2d()", "Softmax2d()"), ("GLU()", "GLU(dim=-1)"),
    ("GLU(0)", "GLU(dim=0)"), ("Softmax()", "Softmax(dim=None)"),
    ("LogSoftmax()", "LogSoftmax(dim=None)"), ("Sigmoid()", "Sigmoid()"), ("Tanh()", "Tanh()"),
    ("SiLU(True)", "SiLU(inplace=True)"),
    ("LeakyReLU(0.2, True)", "LeakyReLU(negative_slope=0.2, inplace=True)"),
]


@pytest.mark.parametrize(("expr", "text"), REPRS, ids=[r[0] for r in REPRS])
def test_reprs_match_pytorch(expr, text):
    assert repr(eval("nn." + expr)) == text


ERRORS = [
    (lambda: F.glu(torch.ones(3)), RuntimeError, "Halving dimension must be even"),
    (lambda: F.glu(torch.tensor(1.0)), RuntimeError, "glu does not support scalars"),
    (lambda: F.prelu(torch.ones(2, 3), torch.ones(2)), RuntimeError,
     "Found parameter numbers = 2 and channel size = 3"),
    (lambda: F.prelu(torch.ones(3), torch.ones(3)), RuntimeError, "channel size = 1"),
    (lambda: nn.Softmax2d()(torch.ones(2)), ValueError, "expected input to be 3D or 4D, got 1D"),
    (lambda: F.hardtanh(torch.ones(2), 2, 1), ValueError, "min_val cannot be greater"),
    (lambda: F.celu(torch.ones(2), 0.0), RuntimeError, "alpha cannot be 0 for CELU"),
    (lambda: F.rrelu(torch.ones(2), 0.5, 0.1, training=True), RuntimeError,
     "Lower bound should be less than or equal to the upper bound"),
    (lambda: F.softshrink(torch.ones(2), -1.0), RuntimeError, "lambda must be"),
]


@pytest.mark.parametrize(("call", "error", "match"), ERRORS, ids=[e[2] for e in ERRORS])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_softmin_implicit_dim_warns_and_dtype_casts():
    x = torch.tensor([[1.0, 2.0], [3.0, 5.0]])
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        out = F.softmin(x)
    torch.testing.assert_close(out, F.softmin(x, 1))
    assert F.softmin(x, 0, dtype=torch.float64).dtype == torch.float64
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.Softmin(1)(x)


def test_hardtanh_deprecated_argument_names():
    with pytest.warns(FutureWarning, match="min_value"):
        m = nn.Hardtanh(min_value=-3.0)
    assert m.min_val == -3.0
    with pytest.raises(AssertionError, match=r"max_val \(1.0\) must be greater than min_val"):
        nn.Hardtanh(1.0, 1.0)
