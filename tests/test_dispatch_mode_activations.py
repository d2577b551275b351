"""The activations that are ``aten::`` operators of their own in PyTorch reach those operators
(forward and ``*_backward``) under a dispatch mode, with PyTorch's values, gradients, second
derivatives, and meta/fake results.

The expected call lists are PyTorch's operator names (native_functions.yaml, and the backward
that derivatives.yaml names for each), written in PyTorch's ``str(func)`` form
``aten.<name>.<overload>``; running the same calls under a TorchDispatchMode in real PyTorch
2.13 (CPU) gives the same lists (``F.selu`` reaches ``aten::elu``, ``F.relu6`` ``aten::hardtanh``,
``F.logsigmoid`` ``aten::log_sigmoid_forward``, ``F.celu``'s backward ``aten::elu_backward``).
The expected values come from numpy formulas of each activation's definition.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from dispatch_recording import CallNames

import torch
import torch.nn.functional as F

# F call -> (forward operators, backward operators)
CASES: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], list[str], list[str]]] = {
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), ["aten.leaky_relu.default"],
                   ["aten.leaky_relu_backward.default"]),
    "elu": (lambda x: F.elu(x, 1.5), ["aten.elu.default"], ["aten.elu_backward.default"]),
    "selu": (F.selu, ["aten.elu.default"], ["aten.elu_backward.default"]),
    "celu": (lambda x: F.celu(x, 2.0), ["aten.celu.default"], ["aten.elu_backward.default"]),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 0.7), ["aten.hardtanh.default"],
                 ["aten.hardtanh_backward.default"]),
    "relu6": (lambda x: F.relu6(x * 8), ["aten.mul.Tensor", "aten.hardtanh.default"],
              ["aten.hardtanh_backward.default", "aten.mul.Tensor"]),
    "softplus": (lambda x: F.softplus(x, 2.0, 1.5), ["aten.softplus.default"],
                 ["aten.softplus_backward.default"]),
    "hardsigmoid": (F.hardsigmoid, ["aten.hardsigmoid.default"],
                    ["aten.hardsigmoid_backward.default"]),
    "hardswish": (F.hardswish, ["aten.hardswish.default"], ["aten.hardswish_backward.default"]),
    "mish": (F.mish, ["aten.mish.default"], ["aten.mish_backward.default"]),
    "logsigmoid": (F.logsigmoid, ["aten.log_sigmoid_forward.default"],
                   ["aten.log_sigmoid_backward.default"]),
    "softshrink": (lambda x: F.softshrink(x, 0.3), ["aten.softshrink.default"],
                   ["aten.softshrink_backward.default"]),
    "hardshrink": (lambda x: F.hardshrink(x, 0.3), ["aten.hardshrink.default"],
                   ["aten.hardshrink_backward.default"]),
    "threshold": (lambda x: F.threshold(x, 0.1, 2.0), ["aten.threshold.default"],
                  ["aten.threshold_backward.default"]),
    "glu": (F.glu, ["aten.glu.default"], ["aten.glu_backward.default"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_forward_and_backward_reach_pytorchs_operators(name: str) -> None:
    fn, forward, backward = CASES[name]
    x = torch.randn(3, 4, requires_grad=True)
    with CallNames() as recorder:
        y = fn(x)
    assert recorder.names == forward
    grad = torch.ones(y.shape)
    with CallNames() as recorder:
        torch.autograd.grad(y, x, grad)
    assert recorder.names == backward


# points on both sides of every kink, the kinks themselves, and large magnitudes
POINTS = np.array([-30.0, -3.0, -1.0, -0.5, -0.3, 0.0, 0.1, 0.3, 0.5, 0.75, 1.0, 3.0, 25.0])


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.tanh(0.5 * x))


def _softplus(x: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    z = beta * x
    soft = (np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))) / beta
    return np.where(z > threshold, x, soft)


SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

# F call -> (numpy forward, numpy derivative) from each activation's definition; at a kink the
# derivative is PyTorch's documented side (leaky/elu: the negative side at 0; hardtanh,
# shrinks, threshold: zero at the bounds; hardswish: 0 at -3, 1 at 3)
_Formula = Callable[[np.ndarray], np.ndarray]
REFERENCE: dict[str, tuple[_Formula, _Formula]] = {
    "leaky_relu": (lambda x: np.where(x > 0, x, 0.2 * x), lambda x: np.where(x > 0, 1.0, 0.2)),
    "elu": (lambda x: np.where(x > 0, x, 1.5 * np.expm1(np.minimum(x, 0))),
            lambda x: np.where(x > 0, 1.0, 1.5 * np.exp(np.minimum(x, 0)))),
    "selu": (lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0))),
             lambda x: SELU_SCALE * np.where(x > 0, 1.0, SELU_ALPHA * np.exp(np.minimum(x, 0)))),
    "celu": (lambda x: np.where(x > 0, x, 2.0 * np.expm1(np.minimum(x, 0) / 2.0)),
             lambda x: np.where(x > 0, 1.0, np.exp(np.minimum(x, 0) / 2.0))),
    "hardtanh": (lambda x: np.clip(x, -0.5, 0.7),
                 lambda x: np.where((x > -0.5) & (x < 0.7), 1.0, 0.0)),
    "softplus": (lambda x: _softplus(x, 2.0, 1.5),
                 lambda x: np.where(2.0 * x > 1.5, 1.0, _sigmoid(2.0 * x))),
    "hardsigmoid": (lambda x: np.clip(x + 3, 0, 6) / 6,
                    lambda x: np.where((x > -3) & (x < 3), 1 / 6, 0.0)),
    "hardswish": (lambda x: x * np.clip(x + 3, 0, 6) / 6,
                  lambda x: np.where(x <= -3, 0.0, np.where(x < 3, x / 3 + 0.5, 1.0))),
    "mish": (lambda x: x * np.tanh(_softplus(x)),
             lambda x: np.tanh(_softplus(x)) + x * _sigmoid(x) * (1 - np.tanh(_softplus(x)) ** 2)),
    "logsigmoid": (lambda x: np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))),
                   lambda x: _sigmoid(-x)),
    "softshrink": (lambda x: np.where(x > 0.3, x - 0.3, np.where(x < -0.3, x + 0.3, 0.0)),
                   lambda x: np.where(np.abs(x) <= 0.3, 0.0, 1.0)),
    "hardshrink": (lambda x: np.where(np.abs(x) <= 0.3, 0.0, x),
                   lambda x: np.where(np.abs(x) <= 0.3, 0.0, 1.0)),
    "threshold": (lambda x: np.where(x <= 0.1, 2.0, x), lambda x: np.where(x <= 0.1, 0.0, 1.0)),
}


@pytest.mark.parametrize("name", list(REFERENCE))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_values_and_first_derivative_match_the_definition(name: str, dtype: torch.dtype) -> None:
    fn = CASES[name][0]
    forward, derivative = REFERENCE[name]
    x = torch.tensor(POINTS, dtype=dtype, requires_grad=True)
    y = fn(x)
    g, = torch.autograd.grad(y.sum(), x)
    assert y.dtype == dtype and g.dtype == dtype
    tol = 1e-12 if dtype == torch.float64 else 1e-6
    np.testing.assert_allclose(y.detach().double().numpy(), forward(POINTS), rtol=tol, atol=tol)
    if name == "hardsigmoid":  # PyTorch's kernel uses a float32 1/6 even in float64
        tol = 1e-7
    np.testing.assert_allclose(g.double().numpy(), derivative(POINTS), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", list(CASES))
def test_nan_passes_through(name: str) -> None:
    fn = CASES[name][0]  # (threshold: NaN <= threshold is false, so NaN is kept)
    y = fn(torch.tensor([math.nan, 1.0]))
    assert math.isnan(y[0].item())


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck_and_gradgradcheck(name: str) -> None:
    fn = CASES[name][0]
    # (hardsigmoid: PyTorch has no derivative of hardsigmoid_backward; here it is its exact
    # value, zero)
    # away from every kink (within gradcheck's step) of the functions above
    x = torch.tensor([[-4.0, -2.2, -1.1, -0.4], [-0.2, 0.05, 0.21, 0.45],
                      [0.6, 1.3, 2.4, 4.5]], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(fn, (x,))
    assert torch.autograd.gradgradcheck(fn, (x,))


def test_second_derivatives_at_the_kinks_are_pytorchs() -> None:
    # elu: the first derivative at 0 is the negative side's, the second the positive side's
    # (0); softplus: the second derivative is zero from beta * x == threshold on
    x = torch.tensor([-0.5, 0.0, 0.5], dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(F.elu(x, 2.0).sum(), x, create_graph=True)
    g2, = torch.autograd.grad(g.sum(), x)
    assert g.tolist() == pytest.approx([2.0 * math.exp(-0.5), 2.0, 1.0])
    assert g2.tolist() == pytest.approx([2.0 * math.exp(-0.5), 0.0, 0.0])
    x = torch.tensor([0.25, 0.75, 1.0], dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(F.softplus(x, 2.0, 1.5).sum(), x, create_graph=True)
    g2, = torch.autograd.grad(g.sum(), x)
    s = 1 / (1 + math.exp(-0.5))
    assert g2.tolist() == pytest.approx([2.0 * s * (1 - s), 0.0, 0.0])


@pytest.mark.parametrize("name", list(CASES))
def test_meta_gives_shape_and_dtype(name: str) -> None:
    fn = CASES[name][0]
    expected = fn(torch.zeros(2, 5, 4)).shape  # (glu halves the last dim)
    for dtype in (torch.float32, torch.float64, torch.float16):
        x = torch.empty(2, 5, 4, dtype=dtype, device="meta")
        y = fn(x)
        assert y.device.type == "meta" and y.shape == expected and y.dtype == dtype


def test_hardtanh_and_threshold_on_integers_keep_the_dtype() -> None:
    # PyTorch reads the limits as the tensor's element type (truncated), and refuses bool and
    # negative limits for unsigned tensors
    x = torch.arange(-3, 4)
    assert torch.ops.aten.hardtanh.default(x).tolist() == [-1, -1, -1, 0, 1, 1, 1]
    y = torch.ops.aten.hardtanh.default(x, -0.5, 1.5)
    assert y.dtype == torch.int64 and y.tolist() == [0, 0, 0, 0, 1, 1, 1]
    y = torch.ops.aten.threshold.default(x, 0.5, 2.5)
    assert y.dtype == torch.int64 and y.tolist() == [2, 2, 2, 2, 1, 2, 3]
    with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
        torch.ops.aten.hardtanh.default(torch.tensor([True, False]))
    with pytest.raises(RuntimeError, match="unsigned type with negative limits"):
        torch.ops.aten.hardtanh.default(torch.arange(3, dtype=torch.uint8))


def test_log_sigmoid_forward_returns_pytorchs_buffer() -> None:
    # the CPU buffer is exp(-|x|), as in PyTorch
    x = torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64)
    out, buffer = torch.ops.aten.log_sigmoid_forward.default(x)
    np.testing.assert_allclose(buffer.numpy(), np.exp(-np.abs([-1.0, 0.0, 2.0])))
    np.testing.assert_allclose(out.numpy(), -np.log1p(np.exp(-np.array([-1.0, 0.0, 2.0]))))


@pytest.mark.parametrize("op, args", [
    ("leaky_relu", ()), ("elu", ()), ("softplus", ()), ("hardsigmoid", ()),
    ("hardswish", ()), ("mish", ()), ("softshrink", ()), ("hardshrink", ()),
])
def test_integer_inputs_are_refused(op: str, args: tuple[Any, ...]) -> None:
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        getattr(torch.ops.aten, op).default(torch.arange(3), *args)


def test_schemas_have_pytorchs_arguments_and_defaults() -> None:
    aten = torch.ops.aten
    x = torch.tensor([-2.0, 0.5])
    # defaults: negative_slope 0.01, alpha/scale/input_scale 1, min/max -1/1, beta 1 and
    # threshold 20, lambd 0.5, celu alpha 1
    assert aten.leaky_relu.default(x).tolist() == pytest.approx([-0.02, 0.5])
    assert aten.elu.default(x, scale=2.0).tolist() == pytest.approx([2 * math.expm1(-2), 1.0])
    assert aten.elu.default(x, input_scale=0.5).tolist() == pytest.approx([math.expm1(-1), 0.5])
    assert aten.hardtanh.default(x).tolist() == pytest.approx([-1.0, 0.5])
    assert aten.softplus.default(torch.tensor([30.0]), threshold=40).item() == pytest.approx(30)
    assert aten.softshrink.default(x).tolist() == pytest.approx([-1.5, 0.0])
    assert aten.hardshrink.default(x, lambd=1.0).tolist() == pytest.approx([-2.0, 0.0])
    assert aten.celu.default(x).tolist() == pytest.approx([math.expm1(-2), 0.5])
    g = torch.ones(2)
    assert aten.leaky_relu_backward.default(g, x, 0.1, False).tolist() == pytest.approx(
        [0.1, 1.0])
    assert aten.elu_backward.default(g, 1.0, 1.0, 1.0, False, x).tolist() == pytest.approx(
        [math.exp(-2), 1.0])
    # is_result: the gradient from the forward's result y = exp(x) - 1 is y + 1
    y = aten.elu.default(x)
    assert aten.elu_backward.default(g, 1.0, 1.0, 1.0, True, y).tolist() == pytest.approx(
        [math.exp(-2), 1.0])
    assert aten.hardshrink_backward.default(g, x, lambd=0.5).tolist() == [1.0, 0.0]


# PyTorch's schemas, as native_functions.yaml writes them
SCHEMAS = [
    "leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
    "leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, "
    "bool self_is_result) -> Tensor",
    "elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
    "elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, "
    "bool is_result, Tensor self_or_result) -> Tensor",
    "celu(Tensor self, Scalar alpha=1.) -> Tensor",
    "hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
    "hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor",
    "softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
    "softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor",
    "hardsigmoid(Tensor self) -> Tensor",
    "hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor",
    "hardswish(Tensor self) -> Tensor",
    "hardswish_backward(Tensor grad_output, Tensor self) -> Tensor",
    "mish(Tensor self) -> Tensor",
    "mish_backward(Tensor grad_output, Tensor self) -> Tensor",
    "log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)",
    "log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor",
    "softshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
    "softshrink_backward(Tensor grad_output, Tensor self, Scalar lambd) -> Tensor",
    "hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
    "hardshrink_backward(Tensor grad_out, Tensor self, Scalar lambd) -> Tensor",
    "threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
    "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
    "glu(Tensor self, int dim=-1) -> Tensor",
    "glu_backward(Tensor grad_output, Tensor self, int dim) -> Tensor",
]


def _normalized_schema(text: str) -> str:
    # "aten::" prefix optional; a float default may print as "1." or "1.0"
    return re.sub(r"(\d)\.(?=[,)])", r"\1.0", text.removeprefix("aten::"))


@pytest.mark.parametrize("schema", SCHEMAS, ids=[s.partition("(")[0] for s in SCHEMAS])
def test_operator_schema_is_pytorchs(schema: str) -> None:
    op = getattr(torch.ops.aten, schema.partition("(")[0]).default
    printed = str(getattr(op, "_schema", None) or op.schema)
    assert _normalized_schema(printed) == _normalized_schema(schema)


def test_fake_tensor_mode_runs_forward_and_backward() -> None:
    from torch._subclasses import FakeTensorMode

    expected = {name: fn(torch.zeros(3, 4)).shape for name, (fn, _f, _b) in CASES.items()}
    with FakeTensorMode():
        x = torch.empty(3, 4, requires_grad=True)
        for name, (fn, _forward, _backward) in CASES.items():
            y = fn(x)
            g, = torch.autograd.grad(y.sum(), x)
            assert y.shape == expected[name] and g.shape == (3, 4), name


@pytest.mark.parametrize("name", list(CASES))
def test_vmap_has_a_batching_rule_and_matches_the_loop(name: str) -> None:
    import warnings

    from torch.func import grad, vmap

    fn = CASES[name][0]
    x = torch.randn(5, 3, 4, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the per-sample fallback warns of its performance
        batched = vmap(fn)(x)
        batched_grad = vmap(grad(lambda t: fn(t).sum()))(x)
    torch.testing.assert_close(batched, torch.stack([fn(s) for s in x]))
    torch.testing.assert_close(batched_grad,
                               torch.stack([grad(lambda t: fn(t).sum())(s) for s in x]))


def test_glu_matches_its_definition_and_refuses_odd_halves() -> None:
    values = np.linspace(-2.0, 2.5, 24).reshape(2, 4, 3)
    x = torch.tensor(values, requires_grad=True)
    y = F.glu(x, 1)
    a, b = values[:, :2], values[:, 2:]
    s = 1 / (1 + np.exp(-b))
    np.testing.assert_allclose(y.detach().numpy(), a * s, rtol=1e-12)
    g, = torch.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(g.numpy(), np.concatenate([s, a * s * (1 - s)], 1), rtol=1e-12)
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(x, -1)
    with pytest.raises(RuntimeError, match="does not support scalars"):
        F.glu(torch.tensor(1.0))
