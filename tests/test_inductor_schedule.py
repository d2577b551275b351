"""torch._inductor's schedule: which nodes become generated kernels and which stay library
calls, checked against numpy (values) and eager autograd (gradients)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import torch
import torch.nn.functional as F
from torch._inductor import config
from torch._inductor.compile_fx import compile_fx
from torch._inductor.scheduler import KernelGroup
from torch.fx.experimental.proxy_tensor import make_fx

aten = torch.ops.aten


@pytest.fixture(autouse=True)
def _settings(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "cache_dir", str(tmp_path_factory.getbasetemp() / "sched-cache"))
    monkeypatch.setattr(config, "compile_in_background", False)
    monkeypatch.setattr(config, "cxx", "g++")


def _compiled(fn, *inputs):
    gm = make_fx(fn)(*inputs)
    return compile_fx(gm, list(inputs))


def _gelu_np(x: np.ndarray) -> np.ndarray:
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_a_lone_pointwise_op_is_a_library_call(dtype) -> None:
    # (37, 23) transposed: odd sizes, a non-contiguous input
    x = torch.randn(23, 37, dtype=dtype).t()
    compiled = _compiled(lambda a: F.gelu(a), x)
    assert compiled.groups == []
    assert not any(isinstance(s, KernelGroup) for s in compiled.schedule.steps)
    got = compiled(x)
    want = _gelu_np(x.numpy().astype(np.float64))
    tol = 1e-6 if dtype == torch.float32 else 1e-12
    assert got.dtype == dtype and got.shape == (37, 23)
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)


def test_the_setting_generates_lone_ops_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "cpu_single_op_groups", True)
    x = torch.randn(5, 7)
    compiled = _compiled(lambda a: F.gelu(a), x)
    assert len(compiled.groups) == 1 and compiled.groups[0].calls == {
        "interpreted": 0, "compiled": 0, "vendor": 0}
    np.testing.assert_allclose(compiled(x).numpy(), _gelu_np(x.numpy().astype(np.float64)),
                               rtol=1e-6, atol=1e-6)
    assert compiled.groups[0].calls["compiled"] == 1


def test_a_chain_of_two_ops_stays_one_kernel() -> None:
    x, y = torch.randn(3, 65), torch.randn(65)
    compiled = _compiled(lambda a, b: F.gelu(a) * b, x, y)
    assert len(compiled.groups) == 1 and len(compiled.groups[0].group.members) == 2
    got = compiled(x, y)
    np.testing.assert_allclose(got.numpy(), _gelu_np(x.numpy().astype(np.float64))
                               * y.numpy(), rtol=1e-5, atol=1e-6)
    assert compiled.groups[0].calls["compiled"] == 1


def test_lone_ops_between_library_calls_keep_their_order_and_values() -> None:
    # add, matmul, add, matmul: each add alone between two library calls
    x, w, b = torch.randn(6, 5), torch.randn(5, 5), torch.randn(5)

    def fn(x, w, b):
        h = (x + b) @ w
        return (h + 1.5) @ w.t()

    compiled = _compiled(fn, x, w, b)
    assert compiled.groups == []
    xn, wn, bn = (t.numpy().astype(np.float64) for t in (x, w, b))
    want = ((xn + bn) @ wn + 1.5) @ wn.T
    np.testing.assert_allclose(compiled(x, w, b).numpy(), want, rtol=1e-5, atol=1e-5)


def _log_softmax_np(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_decomposed_linear_and_cross_entropy_graph(dtype) -> None:
    # What F.linear and F.cross_entropy decompose into under a dispatch mode: t + addmm / mm,
    # _log_softmax + nll_loss_forward. `t` is a view (no copy), matmuls library calls; the
    # addmm of a transposed weight runs as linear (the bias added in the GEMM).
    x = torch.randn(7, 11, dtype=dtype)
    w1, b1 = torch.randn(13, 11, dtype=dtype), torch.randn(13, dtype=dtype)
    w2 = torch.randn(5, 13, dtype=dtype)
    target = torch.tensor([0, 4, 2, 1, 3, 4, 0])

    def fn(x, w1, b1, w2, target):
        h = aten.addmm(b1, x, aten.t(w1))
        h = aten.relu(h) * 0.5
        logits = aten.mm(h, aten.t(w2))
        logp = aten._log_softmax(logits, 1, False)
        loss, _ = aten.nll_loss_forward(logp, target, None, 1, -100)
        return loss, logp

    compiled = _compiled(fn, x, w1, b1, w2, target)
    kinds = [s.target for s in compiled.schedule.steps if not isinstance(s, KernelGroup)]
    assert aten.t.default in kinds and aten.linear.default in kinds and aten.mm.default in kinds
    assert aten.addmm.default not in kinds
    assert len(compiled.groups) == 1  # relu * 0.5
    loss, logp = compiled(x, w1, b1, w2, target)
    xn, w1n, b1n, w2n = (t.numpy().astype(np.float64) for t in (x, w1, b1, w2))
    want_logp = _log_softmax_np((np.maximum(xn @ w1n.T + b1n, 0) * 0.5) @ w2n.T)
    want_loss = -want_logp[np.arange(7), target.numpy()].mean()
    tol = 1e-5 if dtype == torch.float32 else 1e-10
    np.testing.assert_allclose(logp.numpy(), want_logp, rtol=tol, atol=tol)
    assert abs(loss.item() - want_loss) < tol * 10


def test_compiled_mlp_gradients_match_eager() -> None:
    # forward and backward through AOT autograd and the schedule: lone adds and gelus are
    # library calls now, gelu_backward chains may be kernels; gradients equal eager's
    torch.manual_seed(3)
    x = torch.randn(9, 17, dtype=torch.float64)
    w1 = torch.randn(31, 17, dtype=torch.float64, requires_grad=True)
    b1 = torch.randn(31, dtype=torch.float64, requires_grad=True)
    w2 = torch.randn(17, 31, dtype=torch.float64, requires_grad=True)

    def fn(x, w1, b1, w2):
        h = F.gelu(F.linear(x, w1, b1))
        y = x + F.linear(h, w2)
        return F.layer_norm(y, (17,)).pow(2).sum()

    compiled = torch.compile(fn, backend="inductor")
    got = compiled(x, w1, b1, w2)
    got_grads = torch.autograd.grad(got, [w1, b1, w2])
    want = fn(x, w1, b1, w2)
    want_grads = torch.autograd.grad(want, [w1, b1, w2])
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    for g, e in zip(got_grads, want_grads):
        torch.testing.assert_close(g, e, rtol=1e-9, atol=1e-9)
