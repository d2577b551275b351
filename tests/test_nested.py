"""torch.nested: nested tensors of the strided layout, each operator run on every component.

Expected values come from running the same operation on each component as a plain tensor."""

from __future__ import annotations

import pickle

import pytest

import torch
import torch.nn.functional as F


def _parts() -> list[torch.Tensor]:
    return [torch.arange(6.0).reshape(2, 3), torch.arange(9.0).reshape(3, 3) / 2]


def _nt(**kwargs) -> torch.Tensor:
    return torch.nested.nested_tensor(_parts(), **kwargs)


def _same(nested: torch.Tensor, expected: list[torch.Tensor]) -> None:
    assert nested.is_nested
    got = nested.unbind()
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and torch.allclose(g, e)


def test_sizes_and_metadata():
    nt = _nt()
    assert nt.is_nested and nt.dim() == 3 and nt.size(0) == 2 and nt.size(2) == 3
    assert nt.numel() == 15 and nt.dtype is torch.float32 and len(nt) == 2
    with pytest.raises(RuntimeError, match="irregular"):
        nt.size(1)
    with pytest.raises(RuntimeError, match="sizes"):
        _ = nt.shape
    assert nt._nested_tensor_size().tolist() == [[2, 3], [3, 3]]
    assert torch.equal(nt.values(), torch.cat([p.reshape(-1) for p in _parts()]))


def test_construction_checks_and_copies():
    source = _parts()
    nt = torch.nested.nested_tensor(source)
    nt.unbind()[0].zero_()  # (a detached view of the copy)
    assert torch.equal(source[0], _parts()[0])
    with pytest.raises(RuntimeError, match="same dimension"):
        torch.nested.nested_tensor([torch.ones(2, 3), torch.ones(2)])
    assert torch.nested.nested_tensor([[1, 2], [3]]).unbind()[1].tolist() == [3]
    assert torch.nested.nested_tensor(_parts(), dtype=torch.float64).dtype is torch.float64
    with pytest.raises(NotImplementedError, match="jagged"):
        torch.nested.nested_tensor(_parts(), layout=torch.jagged)


def test_elementwise_and_broadcast_per_component():
    nt = _nt()
    _same(nt + nt, [p + p for p in _parts()])
    _same(nt * 2 + 1, [p * 2 + 1 for p in _parts()])
    bias = torch.tensor([1.0, -1.0, 0.5])
    _same(nt + bias, [p + bias for p in _parts()])
    _same(torch.relu(nt - 2), [torch.relu(p - 2) for p in _parts()])
    _same(nt.masked_fill(nt > 2, 0.0), [p.masked_fill(p > 2, 0.0) for p in _parts()])


def test_dims_shift_past_the_batch():
    nt = _nt()
    _same(nt.softmax(-1), [p.softmax(-1) for p in _parts()])
    _same(nt.transpose(1, 2), [p.transpose(0, 1) for p in _parts()])
    _same(nt.sum(2, keepdim=True), [p.sum(1, keepdim=True) for p in _parts()])
    _same(nt.reshape(2, -1, 3), _parts())
    with pytest.raises(RuntimeError, match="dim 0"):
        nt.unsqueeze(0)
    with pytest.raises(RuntimeError, match="every dim"):
        nt.sum()
    with pytest.raises(RuntimeError, match="dimension 0"):
        nt.unbind(1)


def test_products():
    nt = _nt()
    weight, bias = torch.arange(12.0).reshape(4, 3) / 10, torch.tensor([1.0, 0.0, -1.0, 2.0])
    _same(F.linear(nt, weight, bias), [F.linear(p, weight, bias) for p in _parts()])
    _same(nt.bmm(nt.transpose(1, 2)), [p @ p.t() for p in _parts()])
    _same(torch.matmul(nt, weight.t()), [p @ weight.t() for p in _parts()])


def test_padding():
    padded = torch.nested.to_padded_tensor(_nt(), -1.0)
    assert padded.shape == (2, 3, 3)
    assert torch.equal(padded[0, :2], _parts()[0]) and (padded[0, 2] == -1).all()
    assert _nt().to_padded_tensor(0.0, (2, 4, 5)).shape == (2, 4, 5)
    with pytest.raises(RuntimeError, match="at least"):
        _nt().to_padded_tensor(0.0, (2, 2, 3))


def test_cat_joins_components():
    joined = torch.cat([_nt(), _nt()])
    _same(joined, _parts() + _parts())


def test_gradients_reach_leaves_and_weights():
    nt = _nt(requires_grad=True)
    weight = (torch.arange(12.0).reshape(4, 3) / 10).requires_grad_()
    F.linear(nt * 3, weight).to_padded_tensor(0.0).sum().backward()
    # d/dW of sum(x W^T) is the sum of every row of every component, in each row of W
    rows = torch.cat([p * 3 for p in _parts()]).sum(0)
    assert torch.allclose(weight.grad, rows.expand(4, 3))
    _same(nt.grad, [torch.full_like(p, 3.0) * weight.detach().sum(0) for p in _parts()])

    parts = [p.clone().requires_grad_() for p in _parts()]
    torch.nested.as_nested_tensor(parts).softmax(-1).to_padded_tensor(0.0)[:, :, 0].sum() \
        .backward()
    for p in parts:
        probe = p.detach().clone().requires_grad_()
        probe.softmax(-1)[:, 0].sum().backward()
        assert torch.allclose(p.grad, probe.grad)


def test_repr_and_pickle():
    text = repr(_nt())
    assert text.startswith("nested_tensor([\n  tensor(") and text.endswith("\n])")
    back = pickle.loads(pickle.dumps(_nt()))
    _same(back, _parts())
