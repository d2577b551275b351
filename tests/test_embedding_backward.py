"""aten::embedding_dense_backward checks its indices once and scatters the gradient's rows
(duplicates accumulate); expected values are written out here."""

from __future__ import annotations

import pytest

import torch
import torch.nn.functional as F


@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
def test_embedding_gradient_accumulates_duplicate_rows(index_dtype):
    weight = torch.zeros(4, 2, requires_grad=True)
    idx = torch.tensor([[0, 2], [2, 3]], dtype=index_dtype)
    grad = torch.tensor([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
    F.embedding(idx, weight).backward(grad)
    assert weight.grad.tolist() == [[1.0, 2.0], [0.0, 0.0], [8.0, 10.0], [7.0, 8.0]]


def test_embedding_gradient_with_padding_and_frequency_scaling():
    weight = torch.zeros(3, 1, requires_grad=True)
    idx = torch.tensor([1, 1, 2, 0])
    grad = torch.tensor([[2.0], [4.0], [5.0], [9.0]])
    F.embedding(idx, weight, padding_idx=0, scale_grad_by_freq=True).backward(grad)
    # row 1 occurs twice: (2 + 4) / 2; row 0 is the padding row: no gradient
    assert weight.grad.tolist() == [[0.0], [3.0], [5.0]]


def test_embedding_dense_backward_called_directly_still_checks_its_indices():
    grad = torch.ones(2, 3)
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.ops.aten.embedding_dense_backward(grad, torch.tensor([0, 5]), 4, -1, False)
    out = torch.ops.aten.embedding_dense_backward(grad, torch.tensor([3, 3]), 4, -1, False)
    assert out.tolist() == [[0.0] * 3, [0.0] * 3, [0.0] * 3, [2.0] * 3]


def test_embedding_double_backward_through_the_gradient():
    weight = torch.zeros(3, 2, requires_grad=True)
    g = torch.ones(2, 2, requires_grad=True)
    (gw,) = torch.autograd.grad(F.embedding(torch.tensor([1, 1]), weight), weight, g,
                                create_graph=True)
    (gw * torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    assert g.grad.tolist() == [[3.0, 4.0], [3.0, 4.0]]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding_gradient_on_repeated_calls_matches_numpy(dtype, padding_idx):
    # the second and later calls of one signature run the backend's planned kernel (if it
    # has one); each must give what the first gives: numpy's np.add.at of the rows
    import numpy as np

    rs = np.random.RandomState(0)
    idx_np = np.array([[1, 3, 3, 0], [5, 3, 1, 2]])
    for _ in range(3):
        weight = torch.zeros(6, 5, dtype=dtype, requires_grad=True)
        g_np = rs.standard_normal((2, 4, 5))
        F.embedding(torch.tensor(idx_np), weight, padding_idx=padding_idx).backward(
            torch.tensor(g_np, dtype=dtype))
        expected = np.zeros((6, 5))
        np.add.at(expected, idx_np.reshape(-1), g_np.reshape(-1, 5))
        if padding_idx is not None:
            expected[padding_idx % 6] = 0.0
        np.testing.assert_allclose(weight.grad.numpy(), expected, rtol=1e-6, atol=1e-6)


def test_embedding_dense_backward_repeated_call_checks_its_indices():
    grad = torch.ones(2, 3)
    for _ in range(3):
        out = torch.ops.aten.embedding_dense_backward(grad, torch.tensor([3, 0]), 4, -1, False)
        assert out.tolist() == [[1.0] * 3, [0.0] * 3, [0.0] * 3, [1.0] * 3]
    for bad in ([0, 4], [-1, 0]):
        with pytest.raises(IndexError, match="index out of range in self"):
            torch.ops.aten.embedding_dense_backward(grad, torch.tensor(bad), 4, -1, False)
