"""The shortcuts of the backward pass keep PyTorch's behaviour: autograd.grad runs only the
nodes above its inputs, sum keeps only its input's shape, broadcast gradients sum back to the
input's shape, and cat/stack (the backward of split/chunk/unbind) give exact values."""

from __future__ import annotations

import pytest

import torch


def leaf(values, dtype=torch.float64):
    return torch.tensor(values, dtype=dtype, requires_grad=True)


def test_grad_runs_only_the_nodes_above_its_inputs() -> None:
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    only_y = y * 3  # a branch that reaches y alone
    ran = []
    only_y.grad_fn.register_hook(lambda gi, go: ran.append("y branch"))
    loss = (x * 2).sum() + only_y.sum()
    (gx,) = torch.autograd.grad(loss, [x], retain_graph=True)
    assert gx.tolist() == [2.0, 2.0] and ran == []
    gx, gy = torch.autograd.grad(loss, [x, y])  # every leaf: every node runs
    assert gy.tolist() == [3.0, 3.0] and ran == ["y branch"]


def test_grad_for_an_intermediate_does_not_run_the_nodes_below_it() -> None:
    x = leaf([1.0, -2.0])
    mid = x * 5
    ran = []
    mid.grad_fn.register_hook(lambda gi, go: ran.append("below"))
    mid.grad_fn.register_prehook(lambda go: ran.append("its pre-hook"))
    (g,) = torch.autograd.grad((mid * mid).sum(), [mid])
    # its gradient is captured before mid's node would run, and the node does not run
    assert g.tolist() == [10.0, -20.0] and ran == []


def test_grad_for_a_leaf_and_an_intermediate_above_it() -> None:
    x = leaf([2.0])
    mid = x * x
    gx, gmid = torch.autograd.grad((mid * 3).sum(), [x, mid])
    assert gx.tolist() == [12.0] and gmid.tolist() == [3.0]


def test_sum_keeps_only_its_input_shape() -> None:
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2
    s = y.sum()
    with torch.no_grad():
        y.add_(1)  # sum's backward does not read y: PyTorch allows this
    s.backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("dim, keepdim", [(None, False), ([1], False), ([0, 2], False),
                                          ([-1], True), ([0, 1, 2], True)])
def test_sum_backward_restores_the_reduced_dims(dim, keepdim) -> None:
    x = leaf([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]])  # (1, 3, 2)
    weights = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]], dtype=torch.float64)
    s = (x.sum() if dim is None else x.sum(dim, keepdim=keepdim))
    (s * s).sum().backward()
    # d/dx of sum(s^2) = 2 * s broadcast back over the reduced dims
    expected = {
        (None, False): [[[42.0] * 2] * 3],
        ((1,), False): [[[18.0, 24.0]] * 3],
        ((0, 2), False): [[[6.0] * 2, [14.0] * 2, [22.0] * 2]],
        ((-1,), True): [[[6.0] * 2, [14.0] * 2, [22.0] * 2]],
        ((0, 1, 2), True): [[[42.0] * 2] * 3],
    }[(None if dim is None else tuple(dim), keepdim)]
    assert x.grad.tolist() == expected
    assert weights.shape == x.shape


def test_broadcast_gradients_sum_back_to_the_input_shape() -> None:
    b = leaf([[1.0, 2.0, 3.0]])  # (1, 3): broadcast over a leading dim and a size-1 dim
    c = leaf([10.0, 20.0, 30.0])  # (3,): leading dims only
    out = torch.zeros(2, 4, 3, dtype=torch.float64) + b + c
    out.sum().backward()
    assert b.grad.tolist() == [[8.0, 8.0, 8.0]]
    assert c.grad.tolist() == [8.0, 8.0, 8.0]
    e = leaf([5.0])
    e.expand(2, 3).sum().backward()
    assert e.grad.tolist() == [6.0]


def test_chunk_and_unbind_gradients_join_the_pieces() -> None:
    x = leaf([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    a, b = x.chunk(2, 1)
    (a * 2 + b * 3).sum().backward()
    assert x.grad.tolist() == [[2.0, 2.0, 3.0, 3.0], [2.0, 2.0, 3.0, 3.0]]
    y = leaf([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    rows = y.unbind(0)
    (rows[0] * 4 + rows[2]).sum().backward()  # row 1 gets no gradient: zeros
    assert y.grad.tolist() == [[4.0, 4.0], [0.0, 0.0], [1.0, 1.0]]


def test_cat_values_promotion_and_strided_parts() -> None:
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = torch.tensor([[5, 6, 7], [8, 9, 10]], dtype=torch.int64)
    out = torch.cat([a, b], -1)
    assert out.dtype == torch.float32
    assert out.tolist() == [[1.0, 2.0, 5.0, 6.0, 7.0], [3.0, 4.0, 8.0, 9.0, 10.0]]
    t = a.t()  # a strided part
    assert torch.cat([t, a], 0).tolist() == [[1.0, 3.0], [2.0, 4.0], [1.0, 2.0], [3.0, 4.0]]
    assert torch.cat([torch.empty(0), a.reshape(-1)]).tolist() == [1.0, 2.0, 3.0, 4.0]
    assert torch.cat([a[:, :0], a], 1).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 1"):
        torch.cat([a, torch.ones(3, 1)], 1)
    with pytest.raises(RuntimeError, match="zero-dimensional tensor"):
        torch.cat([a, torch.tensor(1.0)])


def test_stack_values_with_and_without_grad() -> None:
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    plain = torch.stack([a, a.t()], 1)
    assert plain.shape == (2, 2, 2) and plain.grad_fn is None
    assert plain.tolist() == [[[1.0, 2.0], [1.0, 3.0]], [[3.0, 4.0], [2.0, 4.0]]]
    assert torch.stack([a, a], -1).tolist() == [[[1.0, 1.0], [2.0, 2.0]],
                                                [[3.0, 3.0], [4.0, 4.0]]]
    x = leaf([1.0, 2.0])
    s = torch.stack([x, x * 2])
    assert s.grad_fn is not None
    s.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    with torch.no_grad():
        assert torch.stack([x, x]).grad_fn is None


def test_mm_backward_gives_both_products() -> None:
    a = leaf([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])  # (3, 2)
    b = leaf([[1.0, 0.0, -1.0], [2.0, 1.0, 0.0]])  # (2, 3)
    (a @ b).sum().backward()
    # d/da = ones(3, 3) @ b^T: row sums of b; d/db = a^T @ ones(3, 3): column sums of a
    assert a.grad.tolist() == [[0.0, 3.0]] * 3
    assert b.grad.tolist() == [[9.0] * 3, [12.0] * 3]


def test_saved_output_double_backward() -> None:
    x = leaf([0.5, -1.0])
    y = torch.exp(x)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert gg.tolist() == pytest.approx([1.6487212707001282, 0.36787944117144233])


def test_leaves_handed_one_gradient_accumulate_separately() -> None:
    a, b = leaf([1.0, 1.0]), leaf([1.0, 1.0])
    y = (a + b) * 2  # add's backward hands a and b the same gradient
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert a.grad.tolist() == [4.0, 4.0] and b.grad.tolist() == [4.0, 4.0]


def test_accumulation_is_in_place_for_code_holding_grad() -> None:
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    held = x.grad
    (x * 3).sum().backward()
    assert held is x.grad and held.tolist() == [6.0, 6.0]


def test_a_given_gradient_is_never_written_by_accumulation() -> None:
    x = leaf([1.0, 2.0])
    g = torch.tensor([0.5, 0.25], dtype=torch.float64)
    x.backward(g)
    x.backward(g)
    assert g.tolist() == [0.5, 0.25] and x.grad.tolist() == [1.0, 0.5]


def test_addmm_is_one_node_with_its_scalars() -> None:
    bias = leaf([1.0, -1.0])
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    w = leaf([[0.5, 0.0], [0.0, 2.0]])
    out = torch.addmm(bias, x, w.t(), beta=3.0, alpha=-2.0)
    assert out.grad_fn.name() == "AddmmBackward0"
    out.sum().backward()
    # d/dbias = beta * rows; d/dx = alpha * ones @ w; d/dw = alpha * (x^T @ ones)^T
    assert bias.grad.tolist() == [6.0, 6.0]
    assert x.grad.tolist() == [[-1.0, -4.0], [-1.0, -4.0]]
    assert w.grad.tolist() == [[-8.0, -12.0], [-8.0, -12.0]]
