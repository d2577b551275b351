"""Planned calls on strided operands that share their output's dense geometry, and the nodes a
planned call with grad records through its recipe's recorder (torch._core.plan,
torch.autograd._nodes.plan_recorder). Expected values come from numpy."""

from __future__ import annotations

import numpy as np
import pytest

import torch
import torch.nn.functional as F

REPEATS = 4  # the first call plans, the later ones replay the plan


def _transposed(values: np.ndarray) -> torch.Tensor:
    return torch.tensor(values).t()


def test_transposed_elementwise_plans_match_numpy() -> None:
    x = np.arange(16, dtype=np.float32).reshape(4, 4) - 7.5
    y = np.arange(16, dtype=np.float32).reshape(4, 4) * 0.25
    t, u = _transposed(x), _transposed(y)
    for _ in range(REPEATS):
        s = t + t
        d = torch.sub(t, u)
        e = t.exp()
        r = F.relu(t)
        m = t * 3.0
    np.testing.assert_array_equal(s.numpy(), (x + x).T)
    np.testing.assert_array_equal(d.numpy(), (x - y).T)
    np.testing.assert_allclose(e.numpy(), np.exp(x).T, rtol=1e-6)
    np.testing.assert_array_equal(r.numpy(), np.maximum(x, 0).T)
    np.testing.assert_array_equal(m.numpy(), (x * 3).T)
    for out in (s, d, e, r, m):
        assert out.stride() == (1, 4)  # the result follows the inputs' layout, as in PyTorch


def test_transposed_plan_is_the_contiguous_entry_point() -> None:
    t = _transposed(np.ones((4, 4), dtype=np.float32))
    add = torch.ops.aten.add.Tensor
    for _ in range(REPEATS):
        t + t
    runs = [plan[0].__name__ for key, plan in add._plans.items()
            if plan and t._geometry in key]
    assert runs == ["run_binary"]  # one native call over the flat block, no strided wrapper


def test_same_geometry_at_other_offsets() -> None:
    base = np.arange(48, dtype=np.float64).reshape(3, 4, 4)
    whole = torch.tensor(base)
    pieces = [whole[k].t() for k in range(3)]  # one geometry, offsets 0, 16, 32
    for k in range(3):
        for _ in range(REPEATS):
            got = pieces[k] + pieces[(k + 1) % 3]
            neg = torch.neg(pieces[k])
        np.testing.assert_array_equal(got.numpy(), (base[k] + base[(k + 1) % 3]).T)
        np.testing.assert_array_equal(neg.numpy(), -base[k].T)


def test_broadcast_with_a_transposed_operand_still_correct() -> None:
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    row = np.array([1.0, -1.0, 2.0, -2.0], dtype=np.float32)
    t, r = _transposed(x), torch.tensor(row)
    for _ in range(REPEATS):
        out = t * r
    np.testing.assert_array_equal(out.numpy(), x.T * row)


@pytest.mark.parametrize("strided", [False, True])
def test_planned_nodes_with_grad(strided: bool) -> None:
    x = np.array([[1.0, -2.0], [3.0, -0.5]])
    y = np.array([[0.5, 4.0], [-1.0, 2.0]])
    grads_a, grads_b = [], []
    for _ in range(REPEATS):
        a = torch.tensor(x.T if strided else x).requires_grad_()
        b = torch.tensor(y.T if strided else y).requires_grad_()
        if strided:
            a, b = a.detach().t().requires_grad_(), b.detach().t().requires_grad_()
        r = F.relu(a)
        e = torch.exp(a)
        d = torch.sub(a, b)
        m = a * 2.0
        q = b.tanh()
        assert type(r.grad_fn).__name__ == "ReluBackward0"
        assert type(d.grad_fn).__name__ == "SubBackward0"
        assert d.grad_fn.next_functions[1][0] is b.grad_fn or \
            type(d.grad_fn.next_functions[1][0]).__name__ == "AccumulateGrad"
        (r.sum() + e.sum() + d.sum() + m.sum() + q.sum()).backward()
        grads_a.append(a.grad.numpy().copy())
        grads_b.append(b.grad.numpy().copy())
    ga = (x > 0) + np.exp(x) + 1 + 2
    gb = -1 + (1 - np.tanh(y) ** 2)
    for g in grads_a:
        np.testing.assert_allclose(g, ga, rtol=1e-12)
    for g in grads_b:
        np.testing.assert_allclose(g, gb, rtol=1e-12)


def test_planned_node_edges_and_saved_number() -> None:
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = torch.tensor([4.0, 5.0, 6.0])  # needs no gradient
    for _ in range(REPEATS):
        d = torch.sub(a, c)
        m = torch.mul(a, 2.5)
    assert d.grad_fn.next_functions[1] == (None, 0)
    assert d.grad_fn.next_functions[0][0] is a.grad_fn or a.grad_fn is None
    assert m.grad_fn._saved_other == 2.5
    inner = a * 1.0  # output 0 of a node: the next node's edge is that node
    for _ in range(REPEATS):
        r = inner.exp()
    assert r.grad_fn.next_functions == ((inner.grad_fn, 0),)
    r.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.exp([1.0, 2.0, 3.0]), rtol=1e-6)


def test_planned_nodes_under_saved_tensor_hooks() -> None:
    packed = []
    a = torch.tensor([0.5, -1.0], requires_grad=True)
    for _ in range(REPEATS):
        a.exp()  # planned without hooks
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t,
                                                  lambda t: t):
        e = a.exp()  # keeps its result: packed through the hooks
        p = a * a.detach()  # keeps its other operand
    assert len(packed) == 2
    (e.sum() + p.sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), np.exp([0.5, -1.0]) + np.array([0.5, -1.0]),
                               rtol=1e-6)


def test_saved_result_is_checked_against_in_place_writes() -> None:
    a = torch.tensor([0.5, 1.5], requires_grad=True)
    for _ in range(REPEATS):
        e = a.exp()
    e.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        e.sum().backward()


def test_planned_views_with_grad_record_their_nodes() -> None:
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    weights = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    for _ in range(REPEATS):
        a = torch.tensor(x, requires_grad=True)
        tr = a.transpose(0, 1)
        vw = a.view(3, 2)
        assert type(tr.grad_fn).__name__ == "TransposeBackward0"
        assert type(vw.grad_fn).__name__ == "ViewBackward0"
        assert tr.grad_fn.next_functions[0][0] is vw.grad_fn.next_functions[0][0]
        (tr * torch.tensor(weights)).sum().backward()
        np.testing.assert_array_equal(a.grad.numpy(), weights.T)
    inner = torch.tensor(x, requires_grad=True) * 2.0
    for _ in range(REPEATS):
        v = inner.view(6)
    assert v.grad_fn.next_functions == ((inner.grad_fn, 0),)


def test_sum_over_dims_matches_numpy() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 5
    t = torch.tensor(x)
    for _ in range(REPEATS):
        s0 = t.sum(0)
        s1 = torch.sum(t, (0, 2), keepdim=True)
        si = torch.tensor(x.astype(np.int32)).sum(1)
    np.testing.assert_array_equal(s0.numpy(), x.sum(0))
    np.testing.assert_array_equal(s1.numpy(), x.sum((0, 2), keepdims=True))
    assert si.dtype == torch.int64  # integers sum to int64, as in PyTorch
    np.testing.assert_array_equal(si.numpy(), x.astype(np.int64).sum(1))
    for _ in range(REPEATS):
        a = torch.tensor(x, requires_grad=True)
        a.sum(1).sum().backward()
        np.testing.assert_array_equal(a.grad.numpy(), np.ones_like(x))
