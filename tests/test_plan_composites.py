"""Composite operators that the dispatcher's plans serve by replaying their primitives (clamp
with number bounds: maximum then minimum on bound constants), compared with numpy."""

from __future__ import annotations

import numpy as np
import pytest

import torch
from torch._aten import elementwise as _elementwise
from torch._core import plan as _plan

aten = torch.ops.aten


def _served(op):
    """The signatures of ``op`` whose plan replays the result (not the kernel again)."""
    return [key for key, plan in (op._plans or {}).items()
            if plan is not False and plan[3] != _plan.KERNEL]


DATA = [-2.5, -0.5, 0.0, 0.75, 1.5, 3.0, float("nan"), float("inf")]


@pytest.mark.parametrize(("call", "op", "want"), [
    (lambda x: x.clamp(0, 2), aten.clamp.default, lambda v: np.clip(v, 0, 2)),
    (lambda x: torch.clamp(x, min=-1.0), aten.clamp.default, lambda v: np.maximum(v, -1.0)),
    (lambda x: torch.clamp(x, max=1), aten.clamp.default, lambda v: np.minimum(v, 1)),
    (lambda x: torch.clamp_min(x, 0.5), aten.clamp_min.default, lambda v: np.maximum(v, 0.5)),
    (lambda x: torch.clamp_max(x, 0.5), aten.clamp_max.default, lambda v: np.minimum(v, 0.5)),
], ids=["both", "min", "max", "clamp_min", "clamp_max"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_clamp_with_numbers_is_planned(call, op, want, dtype, monkeypatch):
    x = torch.tensor(DATA, dtype=dtype)
    expected = want(np.array(DATA, dtype=np.float32 if dtype is torch.float32 else np.float64))
    first = call(x)
    assert _served(op)

    def boom(*args, **kwargs):
        raise AssertionError("generic path taken")

    monkeypatch.setattr(_elementwise, "run", boom)
    for _ in range(2):
        got = call(x)
        assert got.dtype is dtype
        np.testing.assert_array_equal(got.numpy(), expected)
        np.testing.assert_array_equal(first.numpy(), expected)


def test_clamp_integer_tensor_with_float_bound_promotes():
    x = torch.arange(5)
    for _ in range(3):  # the first call plans; the next ones replay
        assert x.clamp(1, 3).tolist() == [1, 1, 2, 3, 3]
        got = x.clamp(1.5, 3)
        assert got.dtype is torch.float32
        assert got.tolist() == [1.5, 1.5, 2.0, 3.0, 3.0]


def test_clamp_planned_gradient():
    for _ in range(3):
        x = torch.tensor([-1.0, 0.5, 1.5, 3.0], dtype=torch.float64, requires_grad=True)
        y = x.clamp(0, 2)
        assert type(y.grad_fn).__name__ == "ClampBackward0"
        (y * torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)).sum().backward()
        # d clamp / dx is 1 strictly inside the bounds, 0 outside
        assert x.grad.tolist() == [0.0, 2.0, 3.0, 0.0]


def test_clamp_tensor_bound_is_not_replayed():
    x = torch.tensor([0.0, 1.0, 2.0])
    for low in (0.5, 1.5, 2.5):  # a tensor bound: its value is not in the signature
        got = torch.clamp(x, torch.tensor(low))
        assert got.tolist() == [max(v, low) for v in (0.0, 1.0, 2.0)]


@pytest.mark.parametrize(("call", "op", "want"), [
    (lambda x: x.mean(), aten.mean.default, lambda v: v.mean()),
    (lambda x: x.mean(0), aten.mean.dim, lambda v: v.mean(0)),
    (lambda x: torch.mean(x, (0, 1)), aten.mean.dim, lambda v: v.mean()),
    (lambda x: x.t().mean(1), aten.mean.dim, lambda v: v.T.mean(1)),
], ids=["all", "dim", "dims", "transposed"])
def test_mean_is_planned_as_sum_and_division(call, op, want, monkeypatch):
    from torch._aten import reductions as _reductions

    x = torch.arange(12, dtype=torch.float64).reshape(3, 4) / 8
    expected = want(np.arange(12, dtype=np.float64).reshape(3, 4) / 8)
    first = call(x)
    assert _served(op)

    def boom(*args, **kwargs):
        raise AssertionError("generic path taken")

    monkeypatch.setattr(_reductions, "_mean_kernel", boom)
    monkeypatch.setattr(_reductions, "_reduce", boom)
    for _ in range(2):
        got = call(x)
        assert got.shape == first.shape == np.shape(expected)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-15)
        assert got.tolist() == first.tolist()


def test_planned_mean_of_nothing_is_nan_and_its_gradient_is_the_count():
    for _ in range(3):
        assert torch.ones(0, 3).mean(0).isnan().tolist() == [True, True, True]
        x = torch.ones(2, 5, dtype=torch.float64, requires_grad=True)
        y = x.mean(1)
        assert type(y.grad_fn).__name__.startswith("MeanBackward")
        y.backward(torch.tensor([1.0, 2.0], dtype=torch.float64))
        # d mean / dx = 1 / n per row
        np.testing.assert_allclose(x.grad.numpy(), [[1 / 5] * 5, [2 / 5] * 5], rtol=1e-15)


def test_planned_mean_keeps_rejecting_integers():
    for _ in range(2):
        with pytest.raises(RuntimeError, match="could not infer output dtype"):
            torch.arange(4).mean()


def test_mean_keepdim_is_planned():
    # the kernel's division runs through Tensor's operator, which the fast tiers serve outside
    # planning; the planning run notes it, so the whole call replays
    x = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    first = x.mean(1, keepdim=True)
    assert _served(aten.mean.dim)
    for _ in range(2):
        got = x.mean(1, keepdim=True)
        assert got.shape == (3, 1)
        assert got.flatten().tolist() == [1.5, 5.5, 9.5] == first.flatten().tolist()


def test_softplus_written_with_operators_is_planned():
    import torch.nn.functional as F

    values = [-30.0, -1.0, 0.0, 0.5, 3.0, 25.0]
    x = torch.tensor(values, dtype=torch.float64)
    v = np.array(values)
    # softplus(x) = log(1 + exp(x)), and x itself above the threshold 20
    expected = np.where(v > 20, v, np.log1p(np.exp(v)))
    first = F.softplus(x)
    assert _served(aten.softplus.default)
    for _ in range(2):
        np.testing.assert_allclose(F.softplus(x).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(first.numpy(), expected, rtol=1e-12)


def test_where_keeps_only_its_condition():
    # PyTorch's WhereBackward0 saves the condition alone: the values may be written in place
    # after the call
    cond = torch.tensor([True, False, True])
    for _ in range(3):  # generic first call, then planned ones
        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
        x, y = a * 1, b * 1
        out = torch.where(cond, x, y)
        assert [n for n in dir(out.grad_fn) if n.startswith("_saved_")] == ["_saved_condition"]
        assert out.grad_fn._saved_condition.tolist() == [True, False, True]
        x.mul_(2)
        y.add_(1)
        out.backward(torch.tensor([1.0, 2.0, 3.0]))
        assert a.grad.tolist() == [1.0, 0.0, 3.0]
        assert b.grad.tolist() == [0.0, 2.0, 0.0]


@pytest.mark.parametrize(("call", "op", "want"), [
    (lambda x: x.var(), aten.var.correction, lambda v: v.var(ddof=1)),
    (lambda x: x.std(1), aten.std.correction, lambda v: v.std(1, ddof=1)),
    (lambda x: x.var(0, unbiased=False), aten.var.correction, lambda v: v.var(0)),
    (lambda x: x.std(0, keepdim=True), aten.std.correction,
     lambda v: v.std(0, ddof=1, keepdims=True)),
], ids=["var", "std dim", "var biased", "std keepdim"])
def test_var_and_std_are_planned(call, op, want, monkeypatch):
    from torch._aten import reductions as _reductions

    values = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 3
    x = torch.tensor(values)
    # computed in double precision and rounded once, as PyTorch's CPU kernels
    expected = want(values.astype(np.float64)).astype(np.float32)
    first = call(x)
    assert _served(op)
    monkeypatch.setattr(_reductions, "_reduce", lambda *a, **k: pytest.fail("generic path"))
    for _ in range(2):
        got = call(x)
        assert got.dtype is torch.float32 and got.shape == first.shape == expected.shape
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
        assert got.tolist() == first.tolist()


def test_variance_without_degrees_of_freedom_warns_on_every_call():
    x = torch.ones(1, 3)
    for _ in range(3):
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            assert x.var(0).isnan().tolist() == [True, True, True]


@pytest.mark.parametrize(("dtype", "np_dtype"), [(torch.float64, np.float64),
                                                 (torch.float16, np.float16),
                                                 (torch.int32, np.int32)], ids=str)
def test_casts_are_planned(dtype, np_dtype):
    values = [1.5, -2.25, 100.0, 0.0, -7.75]
    x = torch.tensor(values)
    expected = np.array(values, dtype=np.float32).astype(np_dtype)  # toward zero for ints
    first = x.to(dtype)
    assert _served(aten._to_copy.default)
    for _ in range(2):
        got = x.to(dtype)
        assert got.dtype is dtype
        np.testing.assert_array_equal(got.numpy(), expected)
    np.testing.assert_array_equal(first.numpy(), expected)


def test_mixed_dtype_addition_keeps_its_one_step_plan():
    a = torch.tensor([1.0, 2.0], dtype=torch.float32)
    d = torch.tensor([0.25, 0.5], dtype=torch.float64)
    for _ in range(3):
        got = a + d
        assert got.dtype is torch.float64 and got.tolist() == [1.25, 2.5]
    # the cast the generic path noted before the addition is part of the addition's replay
    assert any(plan is not False and plan[0].__name__ == "run_converted"
               for plan in aten.add.Tensor._plans.values())
