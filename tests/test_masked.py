"""torch.masked: masked reductions and normalisations, and MaskedTensor.

Expected values are worked out here in plain Python from the kept elements, independently of
the functions under test."""

from __future__ import annotations

import math
import pickle

import pytest

import torch

VALUES = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
MASK = [[True, False, True], [False, False, False]]  # the second row keeps nothing


def _x() -> torch.Tensor:
    return torch.tensor(VALUES)


def _m() -> torch.Tensor:
    return torch.tensor(MASK)


def _kept(row: int) -> list[float]:
    return [v for v, k in zip(VALUES[row], MASK[row]) if k]


def _close(got: torch.Tensor, want: list[float]) -> None:
    assert got.shape == (len(want),)
    for g, w in zip(got.tolist(), want):
        if math.isnan(w):
            assert math.isnan(g)
        else:
            assert g == pytest.approx(w, rel=1e-6, abs=1e-6)


def _median(values: list[float]) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def _var(values: list[float], correction: int) -> float:
    if len(values) - correction <= 0:
        return math.nan
    centre = sum(values) / len(values)
    return sum((v - centre) ** 2 for v in values) / (len(values) - correction)


# name -> the value of a row from its kept elements (an empty row: the identity or nan)
REDUCTIONS = {
    "sum": lambda kept: sum(kept),
    "prod": lambda kept: math.prod(kept),
    "amax": lambda kept: max(kept, default=-math.inf),
    "amin": lambda kept: min(kept, default=math.inf),
    "mean": lambda kept: sum(kept) / len(kept) if kept else math.nan,
    "logsumexp": lambda kept: math.log(sum(math.exp(v) for v in kept)) if kept else -math.inf,
    "median": _median,
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_reads_only_kept_elements(name):
    got = getattr(torch.masked, name)(_x(), 1, mask=_m())
    _close(got, [REDUCTIONS[name](_kept(row)) for row in range(2)])


def test_reduction_without_mask_is_the_plain_one():
    assert torch.equal(torch.masked.sum(_x(), 1), torch.sum(_x(), 1))
    assert torch.equal(torch.masked.amax(_x(), 0, keepdim=True), torch.amax(_x(), 0, True))


def test_reduction_over_every_dim_and_keepdim():
    kept = _kept(0)
    assert torch.masked.sum(_x(), mask=_m()).item() == sum(kept)
    assert torch.masked.sum(_x(), (), mask=_m()).item() == sum(kept)
    assert torch.masked.mean(_x(), (0, 1), keepdim=True, mask=_m()).shape == (1, 1)


def test_variance_and_std_corrections():
    for correction in (0, 1):
        got = torch.masked.var(_x(), 1, correction=correction, mask=_m())
        _close(got, [_var(_kept(row), correction) for row in range(2)])
    _close(torch.masked.std(_x(), 1, unbiased=True, mask=_m()),
           [math.sqrt(_var(_kept(0), 1)), math.nan])


def test_arg_reductions_answer_in_input_dtype():
    got = torch.masked.argmax(_x(), 1, mask=_m())
    assert got.dtype is torch.float32
    assert got.tolist() == [2.0, 0.0]  # row 0 keeps columns 0 and 2; row 1 keeps none
    assert torch.masked.argmin(_x(), 1, mask=_m(), dtype=torch.int64).tolist() == [0, 0]


def test_norms():
    _close(torch.masked.norm(_x(), 2.0, 1, mask=_m()), [math.hypot(*_kept(0)), 0.0])
    _close(torch.masked.norm(_x(), math.inf, 1, mask=_m()), [max(_kept(0)), 0.0])
    _close(torch.masked.norm(_x(), 0, 1, mask=_m()), [2.0, 0.0])


def test_softmax_family():
    a, b = _kept(0)
    pa = math.exp(a) / (math.exp(a) + math.exp(b))
    got = torch.masked.softmax(_x(), 1, mask=_m())
    _close(got[0], [pa, 0.0, 1 - pa])
    assert all(math.isnan(v) for v in got[1].tolist())  # a row that keeps nothing
    logs = torch.masked.log_softmax(_x(), 1, mask=_m())[0].tolist()
    assert logs[0] == pytest.approx(math.log(pa)) and logs[1] == -math.inf
    mins = torch.masked.softmin(_x(), 1, mask=_m())[0].tolist()
    assert mins[0] == pytest.approx(1 - pa) and mins[1] == 0.0


def test_normalize_and_cumulative():
    scale = math.hypot(*_kept(0))
    _close(torch.masked.normalize(_x(), 2.0, 1, mask=_m())[0], [1 / scale, 0.0, 3 / scale])
    _close(torch.masked.cumsum(_x(), 1, mask=_m())[0], [1.0, 1.0, 4.0])
    _close(torch.masked.cumprod(_x(), 1, mask=_m())[1], [1.0, 1.0, 1.0])


def test_logaddexp_skips_masked_sides():
    got = torch.masked.logaddexp(_x(), _x(), input_mask=_m(), other_mask=~_m())
    assert torch.equal(got, _x())  # exactly one side is kept everywhere


def test_mask_broadcasts_and_is_checked():
    row_mask = torch.tensor([True, False, True])
    _close(torch.masked.sum(_x(), 1, mask=row_mask), [4.0, 10.0])
    with pytest.raises(IndexError, match="broadcastable"):
        torch.masked.sum(_x(), 1, mask=torch.ones(3, 2, 3, dtype=torch.bool))
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.masked.sum(_x(), 2, mask=_m())
    with pytest.raises(ValueError, match="floating point"):
        torch.masked.mean(_x().int(), 1, mask=_m())


def _mt() -> torch.masked.MaskedTensor:
    return torch.masked.masked_tensor(_x(), torch.tensor([[True, False, True],
                                                          [False, True, False]]))


def test_masked_tensor_construction_checks():
    assert torch.masked.is_masked_tensor(_mt()) and isinstance(_mt(), torch.Tensor)
    assert _mt().shape == (2, 3) and _mt().dtype is torch.float32
    with pytest.raises(TypeError, match="dtype bool"):
        torch.masked.masked_tensor(_x(), _m().int())
    with pytest.raises(ValueError, match="dim"):
        torch.masked.masked_tensor(_x(), _m()[0])
    with pytest.raises(TypeError, match="not supported"):
        torch.masked.masked_tensor(_x().to(torch.complex64), _m())


def test_masked_tensor_elementwise_keeps_mask():
    mt = _mt()
    for result in (mt + 1, mt * torch.full((2, 3), 2.0), torch.exp(mt), mt > 2):
        assert isinstance(result, torch.masked.MaskedTensor)
        assert torch.equal(result.get_mask(), mt.get_mask())
    assert torch.equal((mt * 2).get_data(), _x() * 2)
    with pytest.raises(ValueError, match="masks must match"):
        mt + torch.masked.masked_tensor(_x(), ~mt.get_mask())


def test_masked_tensor_reductions_and_views():
    mt = _mt()
    total = mt.sum()
    assert total.get_data().item() == 1.0 + 3.0 + 5.0 and total.get_mask().item() is True
    by_col = mt.sum(0)
    assert by_col.get_data().tolist() == [1.0, 5.0, 3.0]
    assert by_col.get_mask().tolist() == [True, True, True]
    assert mt.amax(1).get_data().tolist() == [3.0, 5.0]
    t = mt.t()
    assert t.shape == (3, 2) and torch.equal(t.get_mask(), mt.get_mask().t())
    assert torch.equal(mt[0].get_data(), _x()[0])
    soft = torch.softmax(mt, 1)
    assert soft.get_data()[1, 1].item() == 1.0  # the only kept element of its row
    with pytest.raises(TypeError, match="aten::mm"):
        mt @ mt.t()


def test_masked_tensor_to_tensor_and_repr():
    mt = _mt()
    assert mt.to_tensor(0.0).tolist() == [[1.0, 0.0, 3.0], [0.0, 5.0, 0.0]]
    text = repr(mt)
    assert text.startswith("MaskedTensor(") and text.count("--") == 3
    assert "  1.0000" in text and "  5.0000" in text
    scalar = torch.masked.masked_tensor(torch.tensor(3.0), torch.tensor(False))
    assert repr(scalar) == "MaskedTensor(--, False)"


def test_masked_tensor_gradients_are_masked():
    leaf = torch.masked.masked_tensor(_x(), _mt().get_mask(), requires_grad=True)
    (leaf * 3).sum().backward()
    assert isinstance(leaf.grad, torch.masked.MaskedTensor)
    assert torch.equal(leaf.grad.get_mask(), leaf.get_mask())
    assert torch.equal(leaf.grad.to_tensor(0.0), torch.where(leaf.get_mask(), 3.0, 0.0))

    data = _x().requires_grad_()
    torch.masked.as_masked_tensor(data, _mt().get_mask()).sum().backward()
    assert torch.equal(data.grad.to_tensor(0.0), _mt().get_mask().float())


def test_masked_tensor_pickles():
    back = pickle.loads(pickle.dumps(_mt()))
    assert torch.equal(back.get_data(), _x()) and torch.equal(back.get_mask(), _mt().get_mask())
