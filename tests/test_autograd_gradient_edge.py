"""``torch.autograd.graph``'s edge and version tools: ``get_gradient_edge`` (a gradient with
respect to a place in the graph, taken by ``autograd.grad``/``backward`` in place of a tensor),
``increment_version`` and ``disable_saved_tensors_hooks``."""

from __future__ import annotations

import pytest

import torch
from torch.autograd.graph import (
    GradientEdge,
    disable_saved_tensors_hooks,
    get_gradient_edge,
    increment_version,
    saved_tensors_hooks,
)


def test_an_edge_stands_for_its_tensor_in_grad() -> None:
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x.exp()
    loss = (y * 3).sum()
    edge = get_gradient_edge(y)
    assert isinstance(edge, GradientEdge) and edge.node is y.grad_fn and edge.output_nr == 0
    (by_edge,) = torch.autograd.grad(loss, edge, retain_graph=True)
    assert torch.equal(by_edge, torch.full((3,), 3.0))
    (leaf,) = torch.autograd.grad(loss, get_gradient_edge(x))
    assert torch.allclose(leaf, 3 * torch.exp(torch.tensor([0.5, -1.0, 2.0])))


def test_an_edge_outlives_its_tensor() -> None:
    x = torch.randn(4, requires_grad=True)
    h = x * 2
    edge = get_gradient_edge(h)
    loss = h.sum()
    del h
    (g,) = torch.autograd.grad(loss, [edge])
    assert torch.equal(g, torch.ones(4))


def test_an_edge_as_output_continues_backward_from_there() -> None:
    x = torch.randn(3, requires_grad=True)
    y = x.sin()
    (g,) = torch.autograd.grad(get_gradient_edge(y), x, grad_outputs=torch.ones(3))
    assert torch.allclose(g, torch.cos(x.detach()))
    with pytest.raises(RuntimeError):
        torch.autograd.grad(get_gradient_edge(x.sin()), x)  # an edge needs its gradient


def test_backward_accumulates_into_a_leaf_given_as_an_edge() -> None:
    x = torch.ones(2, requires_grad=True)
    w = torch.ones(2, requires_grad=True)
    (x * w * 5).sum().backward(inputs=[get_gradient_edge(x)])
    assert torch.equal(x.grad, torch.full((2,), 5.0)) and w.grad is None


def test_a_tensor_without_grad_has_no_edge() -> None:
    with pytest.raises(RuntimeError, match="does not require gradients"):
        get_gradient_edge(torch.ones(2))


def test_increment_version_makes_a_saved_tensor_stale() -> None:
    a = torch.randn(3, requires_grad=True)
    b = a * 1
    c = b.sin()  # saves b
    before = b._version
    increment_version(b)
    assert b._version == before + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()
    d, e = torch.zeros(1), torch.zeros(1)
    increment_version([d, e])
    assert d._version == 1 and e._version == 1


def test_disabled_saved_tensor_hooks_refuse_with_the_message() -> None:
    with disable_saved_tensors_hooks("hooks are off in this region"):
        with pytest.raises(RuntimeError, match="hooks are off in this region"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # on again outside
        pass

    @disable_saved_tensors_hooks("not in f")
    def f() -> None:
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            pass

    with pytest.raises(RuntimeError, match="not in f"):
        f()
