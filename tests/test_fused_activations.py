"""GELU and the backward ops of sigmoid and tanh as single operators (``aten::gelu``,
``aten::gelu_backward``, ``aten::sigmoid_backward``, ``aten::tanh_backward``): values against
float64 formulas written here (``math.erf``), first and second derivatives by finite
differences, PyTorch's errors, dtypes and layouts, the meta and toy devices, that the public
functions and the derivatives go through these operators, and the fused CPU kernels of
plait-backend-cpu against core's composites."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad

import torch
import torch.nn.functional as F
from torch import nn
from torch._core import dispatch as _dispatch
from torch.utils._python_dispatch import TorchDispatchMode

A = torch.ops.aten
F64 = torch.float64
MODES = ("none", "tanh")
DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16)
K = math.sqrt(2 / math.pi)
C = 0.044715


# -- float64 references, written from the definitions ------------------------------------------


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def gelu_ref(x: np.ndarray, mode: str) -> np.ndarray:
    if mode == "none":  # x Phi(x)
        return x * 0.5 * (1 + _erf(x / math.sqrt(2)))
    return 0.5 * x * (1 + np.tanh(K * (x + C * x ** 3)))


def gelu_grad_ref(x: np.ndarray, mode: str) -> np.ndarray:
    if mode == "none":  # Phi(x) + x phi(x)
        return 0.5 * (1 + _erf(x / math.sqrt(2))) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    t = np.tanh(K * (x + C * x ** 3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * K * (1 + 3 * C * x * x)


def _tol(dtype: torch.dtype) -> dict[str, float]:
    if dtype == F64:
        return {"atol": 1e-13, "rtol": 1e-12}
    if dtype == torch.float32:
        # 1 + erf(x / sqrt 2) and 1 + tanh(u) cancel for negative x: a few float32 ulps of 1
        # times |x| (PyTorch's float32 kernels are off by up to 1e-6 against float64 there)
        return {"atol": 1.5e-6, "rtol": 1e-5}
    return {"atol": 1e-2, "rtol": 1e-2}  # a float32 result rounded once to 8 or 11 bits


def _values(shape: tuple[int, ...], dtype: torch.dtype = torch.float32, scale: float = 3.0,
            seed: int = 0) -> torch.Tensor:
    values = np.random.default_rng(seed).standard_normal(shape) * scale
    return torch.tensor(values.tolist(), dtype=F64).reshape(shape).to(dtype)


def _np(t: torch.Tensor) -> np.ndarray:
    return np.array(t.detach().to(F64).tolist(), dtype=np.float64).reshape(tuple(t.shape))


def _close(got: torch.Tensor, expected: np.ndarray, dtype: torch.dtype) -> None:
    assert got.dtype == dtype and tuple(got.shape) == expected.shape
    # the reference of a 16-bit input: the float64 formula of its (exact) float64 value
    np.testing.assert_allclose(_np(got), expected, **_tol(dtype))


# -- values -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_gelu_values(mode: str, dtype: torch.dtype) -> None:
    x = _values((37, 41), dtype)  # odd sizes: vector loops have tails
    specials = torch.tensor([0.0, -0.0, 1e-30, -1e-30, 8.0, -8.0, 30.0, -30.0], dtype=dtype)
    for t in (x, specials):
        _close(F.gelu(t, approximate=mode), gelu_ref(_np(t), mode), dtype)
        _close(A.gelu(t, approximate=mode), gelu_ref(_np(t), mode), dtype)
    if dtype == torch.float32:
        # a large grid, so that the threaded path runs too
        big = torch.linspace(-10, 10, 200_001)
        _close(F.gelu(big, approximate=mode), gelu_ref(_np(big), mode), dtype)


@pytest.mark.parametrize("mode", MODES)
def test_gelu_of_inf_and_nan(mode: str) -> None:
    for dtype in (torch.float32, F64):
        y = F.gelu(torch.tensor([math.inf, -math.inf, math.nan], dtype=dtype), approximate=mode)
        assert y[0].item() == math.inf
        assert y[1].item() == 0.0 or math.isnan(y[1].item())  # -inf * 0 (PyTorch gives nan)
        assert math.isnan(y[2].item())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_gelu_backward_values(mode: str, dtype: torch.dtype) -> None:
    x = _values((13, 29), dtype, seed=1)
    g = _values((13, 29), dtype, scale=1.0, seed=2)
    expected = _np(g) * gelu_grad_ref(_np(x), mode)
    _close(A.gelu_backward(g, x, approximate=mode), expected, dtype)
    leaf = x.clone().requires_grad_(True)
    F.gelu(leaf, approximate=mode).backward(g)
    _close(leaf.grad, expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sigmoid_and_tanh_backward_values(dtype: torch.dtype) -> None:
    g = _values((9, 33), dtype, seed=3)
    y_sig = torch.tensor(np.random.default_rng(4).random((9, 33)).tolist()).to(dtype)
    y_tanh = (y_sig.to(F64) * 2 - 1).to(dtype)
    _close(A.sigmoid_backward(g, y_sig), _np(g) * _np(y_sig) * (1 - _np(y_sig)), dtype)
    _close(A.tanh_backward(g, y_tanh), _np(g) * (1 - _np(y_tanh) ** 2), dtype)
    # through autograd: the derivative is taken from the forward's result, in its dtype (so
    # a bfloat16 sigmoid that rounded to 1 has a zero gradient, as in PyTorch)
    x = _values((9, 33), dtype, seed=5).requires_grad_(True)
    y = torch.sigmoid(x)
    y.backward(g)
    _close(x.grad, _np(g) * _np(y) * (1 - _np(y)), dtype)
    x.grad = None
    y = torch.tanh(x)
    y.backward(g)
    _close(x.grad, _np(g) * (1 - _np(y) ** 2), dtype)


def test_backward_ops_promote_and_broadcast() -> None:
    g = torch.tensor([[1.0], [2.0]])  # float32 (2, 1)
    y = torch.tensor([0.25, 0.5, 0.75], dtype=F64)
    out = A.sigmoid_backward(g, y)
    assert out.dtype == F64 and out.shape == (2, 3)
    np.testing.assert_allclose(_np(out), _np(g) * _np(y) * (1 - _np(y)), rtol=1e-15)
    out = A.tanh_backward(g, y)
    np.testing.assert_allclose(_np(out), _np(g) * (1 - _np(y) ** 2), rtol=1e-15)
    # gelu_backward promotes as well (the composite serves mixed dtypes)
    out = A.gelu_backward(torch.ones(3), y)
    assert out.dtype == F64
    np.testing.assert_allclose(_np(out), gelu_grad_ref(_np(y), "none"), rtol=1e-13)


def test_backward_ops_of_complex_take_the_conjugate() -> None:
    g = torch.tensor([1 + 2j, -0.5 + 1j], dtype=torch.complex128)
    y = torch.tensor([0.3 + 0.4j, -0.2 + 0.1j], dtype=torch.complex128)
    gn, yn = np.array([1 + 2j, -0.5 + 1j]), np.array([0.3 + 0.4j, -0.2 + 0.1j])
    got = np.array(A.sigmoid_backward(g, y).tolist())
    np.testing.assert_allclose(got, gn * np.conj((1 - yn) * yn), rtol=1e-14)
    got = np.array(A.tanh_backward(g, y).tolist())
    np.testing.assert_allclose(got, gn * np.conj(1 - yn * yn), rtol=1e-14)


# -- layouts and devices ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_non_contiguous_inputs(mode: str) -> None:
    base = _values((8, 12), seed=6)
    g_base = _values((12, 8), scale=1.0, seed=7)
    for x in (base.t(), base[:, ::3], base.unsqueeze(0).expand(3, 8, 12)):
        _close(F.gelu(x, approximate=mode), gelu_ref(_np(x), mode), torch.float32)
    x, g = base.t(), g_base
    _close(A.gelu_backward(g, x, approximate=mode), _np(g) * gelu_grad_ref(_np(x), mode),
           torch.float32)
    _close(A.gelu_backward(g.t().contiguous().t(), x.contiguous(), approximate=mode),
           _np(g) * gelu_grad_ref(_np(x), mode), torch.float32)
    y = torch.sigmoid(base).t()
    _close(A.sigmoid_backward(g, y), _np(g) * _np(y) * (1 - _np(y)), torch.float32)


def test_empty_and_zero_dim() -> None:
    for mode in MODES:
        assert F.gelu(torch.empty(0, 3), approximate=mode).shape == (0, 3)
        assert A.gelu_backward(torch.empty(0), torch.empty(0), approximate=mode).shape == (0,)
        y = F.gelu(torch.tensor(1.5, dtype=F64), approximate=mode)
        assert y.shape == () and y.item() == pytest.approx(gelu_ref(np.array(1.5), mode))


@pytest.mark.parametrize("dtype", (torch.float32, torch.bfloat16), ids=str)
def test_meta_device_shapes(dtype: torch.dtype) -> None:
    x = torch.empty(4, 7, dtype=dtype, device="meta")
    for mode in MODES:
        y = F.gelu(x, approximate=mode)
        assert (y.device.type, y.shape, y.dtype) == ("meta", (4, 7), dtype)
        gi = A.gelu_backward(x, x, approximate=mode)
        assert (gi.device.type, gi.shape, gi.dtype) == ("meta", (4, 7), dtype)
    out = A.sigmoid_backward(torch.empty(4, 1, dtype=dtype, device="meta"), x)
    assert (out.device.type, out.shape, out.dtype) == ("meta", (4, 7), dtype)
    out = A.tanh_backward(x, x)
    assert (out.device.type, out.shape, out.dtype) == ("meta", (4, 7), dtype)


def _toy_installed() -> bool:
    from torch._core import registry

    return "toy" in registry.installed()


@pytest.mark.skipif(not _toy_installed(), reason="the toy plugin is not installed")
def test_toy_device_runs_the_composites() -> None:
    x = _values((5, 6), seed=8)
    g = _values((5, 6), scale=1.0, seed=9)
    for mode in MODES:
        y = F.gelu(x.to("toy"), approximate=mode)
        assert y.device.type == "toy"
        _close(y.cpu(), gelu_ref(_np(x), mode), torch.float32)
        gi = A.gelu_backward(g.to("toy"), x.to("toy"), approximate=mode)
        _close(gi.cpu(), _np(g) * gelu_grad_ref(_np(x), mode), torch.float32)
    s = torch.sigmoid(x)
    out = A.sigmoid_backward(g.to("toy"), s.to("toy"))
    assert out.device.type == "toy"
    _close(out.cpu(), _np(g) * _np(s) * (1 - _np(s)), torch.float32)


# -- errors, as PyTorch raises them --------------------------------------------------------------


def test_bad_approximate_raises() -> None:
    x = torch.randn(3)
    message = "approximate argument must be either none or tanh"
    with pytest.raises(RuntimeError, match=message):
        F.gelu(x, approximate="erf")
    with pytest.raises(RuntimeError, match=message):
        A.gelu(x, approximate="Tanh")
    with pytest.raises(RuntimeError, match=message):
        A.gelu_backward(x, x, approximate="exact")
    with pytest.raises(RuntimeError, match=message):
        nn.GELU(approximate="sigmoid")(x)


def test_integer_inputs_raise() -> None:
    ints = torch.tensor([1, 2])
    with pytest.raises(NotImplementedError, match='"GeluKernelImpl" not implemented for \'Long\''):
        F.gelu(ints)
    with pytest.raises(NotImplementedError, match="sigmoid_backward_cpu"):
        A.sigmoid_backward(ints, ints)
    with pytest.raises(NotImplementedError, match="tanh_backward_cpu"):
        A.tanh_backward(ints, ints)


def test_shapes_that_do_not_broadcast_raise() -> None:
    with pytest.raises(RuntimeError, match="must match"):
        A.tanh_backward(torch.ones(2), torch.ones(3))


def test_backward_ops_are_not_public_functions() -> None:
    # PyTorch has them as aten operators only
    for name in ("gelu", "gelu_backward", "sigmoid_backward", "tanh_backward"):
        assert not hasattr(torch, name), name
        assert not hasattr(torch.Tensor, name), name


# -- derivatives ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_gelu_first_and_second_derivatives(mode: str) -> None:
    x = _values((3, 4), F64, seed=10)
    check_grad(lambda t: F.gelu(t, approximate=mode), x)
    check_gradgrad(lambda t: F.gelu(t, approximate=mode), x)
    g = _values((3, 4), F64, scale=1.0, seed=11)
    check_grad(lambda a, b: A.gelu_backward(a, b, approximate=mode), g, x)
    check_gradgrad(lambda a, b: A.gelu_backward(a, b, approximate=mode), g, x)


def test_sigmoid_and_tanh_first_and_second_derivatives() -> None:
    x = _values((3, 4), F64, seed=12)
    for fn in (torch.sigmoid, torch.tanh):
        check_grad(fn, x)
        check_gradgrad(fn, x)
    g = _values((3, 4), F64, scale=1.0, seed=13)
    y = torch.tensor(np.random.default_rng(14).random((3, 4)).tolist(), dtype=F64)
    for op in (A.sigmoid_backward, A.tanh_backward):
        check_grad(op, g, y)
        check_gradgrad(op, g, y)


@pytest.mark.parametrize("mode", MODES)
def test_gradcheck_and_gradgradcheck(mode: str) -> None:
    x = _values((5,), F64, seed=15).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda t: F.gelu(t, approximate=mode), (x,))
    assert torch.autograd.gradgradcheck(lambda t: F.gelu(t, approximate=mode), (x,))
    for fn in (torch.sigmoid, torch.tanh):
        assert torch.autograd.gradcheck(fn, (x,))
        assert torch.autograd.gradgradcheck(fn, (x,))


# -- the public functions run the operators ------------------------------------------------------


class OpLog(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list[Any] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


# the ops the composites (and the old decompositions) run
ELEMENTWISE = (A.erf.default, A.tanh.default, A.exp.default, A.mul.Tensor, A.sub.Tensor,
               A.add.Tensor, A.rsub.Scalar)


@pytest.mark.parametrize("mode", MODES)
def test_gelu_is_one_operator_forward_and_backward(mode: str) -> None:
    x = torch.randn(4, 5, requires_grad=True)
    with OpLog() as log:
        y = nn.GELU(approximate=mode)(x)
    assert log.ops == [A.gelu.default]
    assert type(y.grad_fn).__name__ == "GeluBackward0"
    with OpLog() as log:
        y.backward(torch.ones(4, 5))
    assert A.gelu_backward.default in log.ops
    assert not set(log.ops) & set(ELEMENTWISE)


def test_sigmoid_and_tanh_backward_run_their_operators() -> None:
    for fn, op in ((torch.sigmoid, A.sigmoid_backward.default),
                   (torch.tanh, A.tanh_backward.default)):
        x = torch.randn(4, 5, requires_grad=True)  # (a fresh leaf: no gradient to add to)
        y = fn(x)
        with OpLog() as log:
            y.backward(torch.ones(4, 5))
        assert op in log.ops
        assert not set(log.ops) & set(ELEMENTWISE)


# -- the fused CPU kernels against core's composites ---------------------------------------------


def _cpu_kernel(qualname: str) -> Any:
    torch.zeros(1)  # the CPU backend registers its kernels with its first tensor
    kernel = _dispatch.get(qualname).kernels.get("CPU")
    if kernel is None:
        pytest.skip("plait-backend-cpu's fused gelu kernels are not installed")
    return kernel


def _composite(qualname: str) -> Any:
    return _dispatch.get(qualname).kernels["CompositeExplicitAutograd"]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_fused_cpu_kernels_match_the_composites(mode: str, dtype: torch.dtype) -> None:
    fused_fwd, fused_bwd = _cpu_kernel("aten::gelu"), _cpu_kernel("aten::gelu_backward")
    x = _values((3, 70_001), dtype, seed=16)  # above the threading grain, with a tail
    g = _values((3, 70_001), dtype, scale=1.0, seed=17)
    tol = _tol(dtype)
    if dtype == torch.float32:
        # each is off from the float64 value by up to |g| 1e-6 where 1 + tanh(u) cancels
        # (PyTorch's kernel too), not always in the same direction
        tol = {**tol, "atol": 5e-6}
    np.testing.assert_allclose(_np(fused_fwd(x, approximate=mode)),
                               _np(_composite("aten::gelu")(x, approximate=mode)), **tol)
    np.testing.assert_allclose(
        _np(fused_bwd(g, x, approximate=mode)),
        _np(_composite("aten::gelu_backward")(g, x, approximate=mode)), **tol)
    # and the values: the fused kernels are what F.gelu runs here
    _close(fused_fwd(x, approximate=mode), gelu_ref(_np(x), mode), dtype)
    _close(fused_bwd(g, x, approximate=mode), _np(g) * gelu_grad_ref(_np(x), mode), dtype)


def test_float32_gelu_tail_is_within_a_few_ulps_of_one() -> None:
    # x Phi(x) for x in [-6, 0): the float32 kernel computes 1 + erf(x / sqrt 2), as
    # PyTorch's does, so its absolute error is bounded by |x| ulps of 1, not relative
    x = torch.linspace(-6, 0, 10_001)
    err = np.abs(_np(F.gelu(x)) - gelu_ref(_np(x), "none"))
    assert (err <= np.abs(_np(x)) * 2 * 2.0 ** -24 + 1e-7).all()
