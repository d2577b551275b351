"""The dispatcher's plan lookup (``torch._core.plan.call``): the signatures its head keys
without the flat loop (the same tensor twice, lists of ints, a reduction's dims and keepdim,
keywords, tensors that require grad) give the loop's key and the generic path's results."""

from __future__ import annotations

import pytest

import torch

aten = torch.ops.aten


def _keys(op):
    return set((op._plans or {}).keys())


def _strided(grad: bool) -> torch.Tensor:
    """A transposed leaf: its first call keys it in the loop (which gives it an interned
    geometry), later calls in the head."""
    base = torch.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]])
    return base.t().detach().requires_grad_(grad)


# contiguous second and third tensors (one requiring grad), for the head's three-tensor case
_WEIGHT = torch.tensor([[1.0, -1.0], [0.5, 2.0], [0.0, 3.0], [-2.0, 1.0]], requires_grad=True)
_BIAS = torch.tensor([0.25, -0.5, 1.0, 2.0])

CALLS = {
    "t * t": (aten.mul.Tensor, lambda t: t * t),
    "t.transpose(0, 1)": (aten.transpose.int, lambda t: t.transpose(0, 1)),
    "softmax(t, -1)": (aten._softmax.default, lambda t: torch.softmax(t, -1)),
    "linear(t, w, b)": (aten.linear.default, lambda t: torch.nn.functional.linear(t, _WEIGHT,
                                                                                   _BIAS)),
    # (torch.mm, not @: matmul's own first call would run mm inside its record, unplanned)
    "t @ t.T": (aten.mm.default, lambda t: torch.mm(t.t(), t)),
    "t.sum([0])": (aten.sum.dim_IntList, lambda t: t.sum([0])),
    "t.sum(0, keepdim)": (aten.sum.dim_IntList, lambda t: t.sum(0, keepdim=True)),
    "t.amax((0, 1))": (aten.amax.default, lambda t: t.amax((0, 1))),
    "t - 2.5": (aten.sub.Tensor, lambda t: torch.sub(t, 2.5)),
    "t // 2 (keyword)": (aten.div.Tensor_mode,
                         lambda t: torch.div(t, 2.0, rounding_mode="floor")),
}


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("name", list(CALLS))
def test_head_and_loop_key_a_signature_alike(name, grad, no_plans):
    op, call = CALLS[name]
    with no_plans():
        x = _strided(grad)
        want = call(x)
        if grad:
            want.sum().backward()
        want_grad = x.grad
    for _ in range(2):
        x = _strided(grad)
        call(x)  # keyed by the loop (which gives x its interned geometry)...
        keys = _keys(op)
        got = call(x)  # ...then by the head: the same key, no new signature
        assert _keys(op) == keys
        if grad:
            got.sum().backward()
        assert got.tolist() == want.tolist()
        assert got.shape == want.shape and got.stride() == want.stride()
        assert got.requires_grad == want.requires_grad
        if grad:
            assert type(got.grad_fn) is type(want.grad_fn)
            assert x.grad.tolist() == want_grad.tolist()


def test_grad_mode_off_serves_a_tensor_that_requires_grad_by_the_plain_plan():
    a = torch.tensor([1.0, 2.0, 3.0])
    b = torch.tensor([0.5, -1.0, 2.0])
    torch.sub(a, b)
    before = _keys(aten.sub.Tensor)
    a.requires_grad_()
    with torch.no_grad():
        out = torch.sub(a, b)
    assert not out.requires_grad and out.grad_fn is None
    assert out.tolist() == [0.5, 3.0, 1.0]
    assert _keys(aten.sub.Tensor) == before
    out = torch.sub(a, b)  # grad mode on again: a graph, as before
    assert out.requires_grad and out.grad_fn is not None


def test_a_saved_output_keeps_its_plan_signature():
    a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = torch.tanh(a)
    saved = y.grad_fn._result.unpack(y.grad_fn)
    assert saved._interned_layout is y._interned_layout
    assert saved.grad_fn is y.grad_fn and saved.requires_grad
    x = _strided(True)
    torch.tanh(x)
    t = torch.tanh(x)  # a planned strided output: made with its interned geometry
    saved = t.grad_fn._result.unpack(t.grad_fn)
    assert t._geometry is not None and saved._geometry is t._geometry
    assert saved.stride() == t.stride()


def test_backward_through_planned_ops_matches_the_generic_path(no_plans):
    def run():
        a = torch.tensor([0.3, -0.7, 1.1, 0.2], requires_grad=True)
        b = torch.tensor([1.5, 0.4, -0.9, 2.0], requires_grad=True)
        y = a
        for _ in range(3):
            y = torch.tanh(y * b + a)
        torch.sigmoid(y).sum().backward()
        return a.grad.tolist(), b.grad.tolist()

    with no_plans():
        want = run()
    for _ in range(3):
        assert run() == want
