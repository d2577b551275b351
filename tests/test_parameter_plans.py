"""Calls on ``nn.Parameter`` operands take the dispatcher's plans as plain tensors do (a
parameter is a plain tensor below the facade), keyed apart from them; gradients still reach
the parameters, and subclasses that are not plain tensors below the facade (sparse, a
``__torch_dispatch__`` or ``__torch_function__`` subclass) never do."""

from __future__ import annotations

import numpy as np
import pytest

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._core import plan as _plan

aten = torch.ops.aten


def _keys_with(op, cls):
    """The plan keys of ``op`` that name class ``cls`` (a subclass operand) and replay."""
    return [key for key, plan in (op._plans or {}).items()
            if cls in key and plan is not False and plan is not _plan._GENERIC]


@pytest.mark.parametrize("grad", [True, False])
def test_a_parameter_operand_is_planned_and_its_gradient_accumulates(grad, no_plans):
    torch.manual_seed(0)
    w = nn.Parameter(torch.randn(4, 3), requires_grad=grad)
    x = torch.randn(2, 4)
    for _ in range(3):  # the first call plans, the next replay
        y = x @ w * w.sum()
    assert _keys_with(aten.mm.default, nn.Parameter) or _keys_with(aten.mul.Tensor,
                                                                   nn.Parameter)
    with no_plans():
        want = x @ w * w.sum()
    np.testing.assert_array_equal(y.detach().numpy(), want.detach().numpy())
    assert y.__class__ is torch.Tensor and y.requires_grad is grad
    if grad:
        y.sum().backward()
        got = w.grad.clone()
        w.grad = None
        with no_plans():
            (x @ w * w.sum()).sum().backward()
        np.testing.assert_array_equal(got.numpy(), w.grad.numpy())
        w_np, x_np = w.detach().numpy().astype(np.float64), x.numpy().astype(np.float64)
        expect = x_np.T @ np.ones((2, 3)) * w_np.sum() + (x_np @ w_np).sum()
        np.testing.assert_allclose(got.numpy(), expect, rtol=1e-5)


def test_linear_with_module_parameters_is_planned_like_plain_tensors(no_plans):
    torch.manual_seed(1)
    m = nn.Linear(16, 8)
    x = torch.randn(2, 5, 16)
    for _ in range(3):
        out = F.linear(x, m.weight, m.bias)
    served = [op for op in torch._core.dispatch.operators("aten") if _keys_with(op, nn.Parameter)]
    assert served, "no operator kept a plan for a call with nn.Parameter operands"
    out.pow(2).sum().backward()
    grads = (m.weight.grad.clone(), m.bias.grad.clone())
    m.zero_grad()
    with no_plans():
        ref = F.linear(x, m.weight, m.bias)
        ref.pow(2).sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    np.testing.assert_array_equal(grads[0].numpy(), m.weight.grad.numpy())
    np.testing.assert_array_equal(grads[1].numpy(), m.bias.grad.numpy())


def test_a_plain_tensor_plan_is_not_replayed_for_a_parameter():
    # the same layouts as plain tensors first, then as a parameter: each keyed by its class
    a, b = torch.ones(3, requires_grad=True), torch.full((3,), 2.0)
    for _ in range(2):
        torch.sub(a, b)
    p = nn.Parameter(torch.ones(3))
    out = torch.sub(p, b)
    assert out.__class__ is torch.Tensor and out.tolist() == [-1.0, -1.0, -1.0]
    out.sum().backward()
    assert p.grad.tolist() == [1.0, 1.0, 1.0] and a.grad is None


def test_subclasses_that_are_not_plain_tensors_keep_their_own_path():
    class Traced(torch.Tensor):  # keeps the __torch_function__ protocol: never planned
        pass

    assert Traced not in torch._core.tensor.plain_tensor_classes
    assert nn.Parameter in torch._core.tensor.plain_tensor_classes
    assert torch._core.sparse.SparseTensor not in torch._core.tensor.plain_tensor_classes
    t = torch.ones(3).as_subclass(Traced)
    for _ in range(3):
        out = t * 2
    assert out.__class__ is Traced and out.tolist() == [2.0, 2.0, 2.0]
    s = torch.eye(3).to_sparse()
    for _ in range(3):
        dense = s.to_dense() * 2
    assert dense.tolist() == (np.eye(3) * 2).tolist()


def test_in_place_updates_of_a_parameter_take_the_direct_path():
    from torch._aten import arith

    p = nn.Parameter(torch.ones(6))
    g = torch.arange(6.0)
    arith._inplace_plans.clear()
    version = p._version
    with torch.no_grad():
        p.add_(g)  # what an optimizer step does: straight into the parameter's memory
        p.mul_(0.5)
    assert p.tolist() == [(1 + i) * 0.5 for i in range(6)]
    assert p._version == version + 2 and p.__class__ is nn.Parameter
    assert any(key[0] in ("add", "mul") for key in arith._inplace_plans)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p.add_(g)  # with grad on: the general path and its error
