"""What a recorded node keeps and how pieces of a split share one node, as in PyTorch: a node
saves only the tensors its formula reads (so an unread input may change afterwards), a saved
output is rebuilt when backward reads it, and ``split``/``chunk``/``unbind`` pieces are the
outputs of one node."""

from __future__ import annotations

import math

import numpy as np
import pytest

import torch


def leaf(values):
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


# -- split-like views: one node, one output per piece ----------------------------------------


@pytest.mark.parametrize("make, name", [
    (lambda x: x.chunk(3, 1), "SplitBackward0"),
    (lambda x: x.split(2, -1), "SplitBackward0"),
    (lambda x: x.split([1, 2, 3], 1), "SplitWithSizesBackward0"),
])
def test_split_pieces_are_outputs_of_one_node(make, name):
    x = leaf(np.arange(12.0).reshape(2, 6))
    pieces = make(x)
    nodes = {id(p.grad_fn) for p in pieces}
    assert len(nodes) == 1 and pieces[0].grad_fn.name() == name
    assert pieces[0].grad_fn.next_functions[0][0].variable is x
    assert [p.output_nr for p in pieces] == list(range(len(pieces)))


def test_chunk_gradient_of_some_pieces_leaves_zeros_elsewhere():
    x = leaf(np.arange(8.0).reshape(2, 4))
    a, _b, _c, d = x.chunk(4, 1)
    (a * 2 + d * 3).sum().backward()
    assert x.grad.tolist() == [[2.0, 0.0, 0.0, 3.0], [2.0, 0.0, 0.0, 3.0]]


def test_unbind_gradient_stacks_back():
    x = leaf([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    rows = x.unbind(0)
    assert rows[0].grad_fn is rows[2].grad_fn and rows[0].grad_fn.name() == "UnbindBackward0"
    (rows[1] * rows[1]).sum().backward()  # d/dx of x[1]^2: 2 x[1] in row 1, zeros elsewhere
    assert x.grad.tolist() == [[0.0, 0.0], [6.0, 8.0], [0.0, 0.0]]
    y = leaf([[1.0, 2.0], [3.0, 4.0]])
    cols = y.unbind(-1)
    (cols[0] * 5).sum().backward()
    assert y.grad.tolist() == [[5.0, 0.0], [5.0, 0.0]]


def test_split_double_backward():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    _first, second = x.split(2)
    (g,) = torch.autograd.grad((second ** 3).sum(), x, create_graph=True)
    assert g.tolist() == [0.0, 0.0, 27.0, 48.0]  # 3 x^2 on the second piece
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert gg.tolist() == [0.0, 0.0, 18.0, 24.0]  # 6 x


def test_split_piece_hooks_and_retain_grad_see_their_own_gradient():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    a, b = x.split(2)
    b.retain_grad()
    seen = []
    a.register_hook(lambda g: seen.append(g.tolist()))
    (a * 10 + b * 20).sum().backward()
    assert seen == [[10.0, 10.0]] and b.grad.tolist() == [20.0, 20.0]
    assert x.grad.tolist() == [10.0, 10.0, 20.0, 20.0]


# -- what a node saves ----------------------------------------------------------------------


def test_result_only_formulas_let_the_input_change():
    # tanh and exp read only their result (PyTorch saves only `result` for them)
    for fn, derivative in ((torch.tanh, lambda y: 1 - y * y), (torch.exp, lambda y: y)):
        x = leaf([0.5, -1.0])
        h = x * 1  # a non-leaf input that may be written in place
        y = fn(h)
        expected = [derivative(v) for v in y.tolist()]
        with torch.no_grad():
            h.add_(100.0)
        y.sum().backward()
        assert x.grad.tolist() == pytest.approx(expected)


def test_input_formulas_still_check_versions():
    x = leaf([0.5, -1.0])
    h = x * 1
    y = torch.sin(h)  # reads its input
    h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    z = leaf([0.5, -1.0])
    t = torch.tanh(z)
    t.mul_(2)  # the result tanh's formula reads
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        t.sum().backward()


def test_mm_keeps_an_argument_only_for_the_other_gradient():
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    b = leaf([[5.0, 6.0], [7.0, 8.0]])
    out = a @ b
    a.add_(1.0)  # a is read for b's gradient: written after the call, backward refuses it
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    out = a @ b
    with torch.no_grad():
        b.mul_(2)  # b only serves a's gradient, which nobody needs: not saved
    out.sum().backward()
    # d(sum(a @ b))/db = a^T @ ones
    assert b.grad.tolist() == [[4.0, 4.0], [6.0, 6.0]]


def test_saved_output_is_rebuilt_for_double_backward_and_freed_after():
    x = leaf([0.3, -0.7])
    y = torch.tanh(x)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    expected = [-2 * math.tanh(v) * (1 - math.tanh(v) ** 2) for v in (0.3, -0.7)]
    assert gg.tolist() == pytest.approx(expected)
    z = torch.sigmoid(x)
    z.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        z.sum().backward()
    w = torch.sigmoid(x)
    s = w.sum()
    s.backward(retain_graph=True)
    s.backward()
    sig = [1 / (1 + math.exp(-v)) for v in (0.3, -0.7)]
    # the first backward above left one sigmoid gradient; these two add two more
    assert x.grad.tolist() == pytest.approx([3 * s_ * (1 - s_) for s_ in sig])


def test_saved_tensor_hooks_see_saved_outputs():
    packed = []

    def pack(t):
        packed.append(t.tolist())
        return t

    x = leaf([0.0, 1.0])
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = torch.exp(x)
    y.sum().backward()
    assert packed == [[1.0, math.e]]
    assert x.grad.tolist() == pytest.approx([1.0, math.e])


# -- calls under no_grad on tensors that require grad ----------------------------------------


def test_no_grad_calls_on_tensors_that_require_grad_record_nothing():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
    with torch.no_grad():
        results = [x * w, x + 1.0, torch.exp(x), torch.tanh(x) - w]
    for r in results:
        assert not r.requires_grad and r.grad_fn is None
    assert results[0].tolist() == [4.0, 10.0, 18.0]
    assert results[1].tolist() == [2.0, 3.0, 4.0]
    assert results[2].tolist() == pytest.approx([math.exp(v) for v in (1.0, 2.0, 3.0)])
    assert results[3].tolist() == pytest.approx([math.tanh(a) - b for a, b in
                                                 ((1.0, 4.0), (2.0, 5.0), (3.0, 6.0))])
    assert (x * w).requires_grad  # grad mode back on: recorded again


# -- sigmoid in float32 --------------------------------------------------------------------


def test_float32_sigmoid_at_the_ends_of_its_range():
    x = torch.tensor([-100.0, -88.0, 0.0, 20.0])
    y = torch.sigmoid(x)
    assert y.dtype == torch.float32
    # 1/(1 + e^100) is 3.8e-44, a float32 denormal: PyTorch gives 0 there (its e^100 overflows
    # float32 first); the native kernel computes e^-100 / (1 + e^-100) and keeps the denormal.
    # Both are within one denormal step of the true value.
    assert 0.0 <= y[0].item() < 1e-43
    assert 0.0 < y[1].item() < 1e-37  # a denormal at -88 on both
    assert y[2].item() == 0.5 and y[3].item() == 1.0


# -- the engine ------------------------------------------------------------------------------


def test_backward_from_roots_that_reach_each_other():
    x = leaf([1.0, 2.0])
    y = x * 2
    z = y * 3  # z's graph passes through y's node, itself a root below
    torch.autograd.backward([z, y], [torch.ones(2, dtype=torch.float64)] * 2)
    assert x.grad.tolist() == [8.0, 8.0]  # 2 * 3 through z, 2 through y
    w = leaf([1.0, 2.0])
    (gw,) = torch.autograd.grad([w * 5, w], [w], [torch.ones(2, dtype=torch.float64)] * 2)
    assert gw.tolist() == [6.0, 6.0]  # a leaf as a root, also reached from the other root


@pytest.mark.parametrize("name", ["layer_norm", "max.dim", "sort", "topk", "cummax",
                                  "cross_entropy", "nll_loss"])
def test_outputs_the_rule_does_not_read_may_be_written_in_place(name):
    # As in PyTorch, a node keeps only the outputs its derivative reads (layer norm: mean and
    # rstd; max/sort/topk/cummax: the indices; the losses: total weight / logsumexp), so an
    # in-place op on the main output (`nn.ReLU(inplace=True)` after a LayerNorm) backpropagates,
    # and gives what the out-of-place program gives. Run three times: plans serve repeats.
    import torch.nn.functional as F

    target = torch.tensor([1, 2, 3, 0])
    calls = {
        "layer_norm": lambda x: F.layer_norm(x, (8,)),
        "max.dim": lambda x: x.max(1)[0],
        "sort": lambda x: x.sort(1)[0],
        "topk": lambda x: x.topk(3, 1)[0],
        "cummax": lambda x: x.cummax(1)[0],
        "cross_entropy": lambda x: F.cross_entropy(x, target),
        "nll_loss": lambda x: F.nll_loss(x, target),
    }
    f = calls[name]
    base = torch.arange(32.0).reshape(4, 8).div(7).sin()
    for _ in range(3):
        x = base.clone().requires_grad_()
        (f(x) * 3).relu().pow(2).sum().backward()
        expected = x.grad
        x = base.clone().requires_grad_()
        y = f(x)
        y.mul_(3).relu_()
        y.pow(2).sum().backward()
        torch.testing.assert_close(x.grad, expected)


def test_a_saved_output_written_in_place_still_raises():
    # softmax's rule reads its output: writing it in place is an error, as in PyTorch
    x = torch.randn(4, 8, requires_grad=True)
    for _ in range(2):
        y = torch.softmax(x, -1)
        y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
