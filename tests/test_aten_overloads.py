"""The aten overloads a dispatch mode sees for common calls are PyTorch's (the names below are
those real PyTorch's ``TorchDispatchMode`` logs for the same calls), and the new overloads
compute and differentiate as the old route did."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from dispatch_log import ops_seen as _seen

import torch


def _x() -> torch.Tensor:
    return torch.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]])


# call -> the overloads PyTorch 2.13's dispatch mode logs for it (no autograd involved)
EXPECTED: dict[str, tuple[Callable[[torch.Tensor], Any], list[str]]] = {
    "x / 2": (lambda x: x / 2, ["aten.div.Tensor"]),
    "torch.div": (lambda x: torch.div(x, x), ["aten.div.Tensor"]),
    "true_divide": (lambda x: torch.true_divide(x, 3), ["aten.div.Tensor"]),
    "div floor": (lambda x: torch.div(x, 2, rounding_mode="floor"), ["aten.div.Tensor_mode"]),
    "x ** 2": (lambda x: x**2, ["aten.pow.Tensor_Scalar"]),
    "2 ** x": (lambda x: 2**x, ["aten.pow.Scalar"]),
    "x.pow(x)": (lambda x: x.pow(x), ["aten.pow.Tensor_Tensor"]),
    "torch.pow(2, x)": (lambda x: torch.pow(2, x), ["aten.pow.Scalar"]),
    "x > 0": (lambda x: x > 0, ["aten.gt.Scalar"]),
    "x != 0": (lambda x: x != 0, ["aten.ne.Scalar"]),
    "x == 1.0": (lambda x: x == 1.0, ["aten.eq.Scalar"]),
    "0 < x": (lambda x: 0 < x, ["aten.gt.Scalar"]),
    "x.le(2)": (lambda x: x.le(2), ["aten.le.Scalar"]),
    "torch.ge(x, 1)": (lambda x: torch.ge(x, 1), ["aten.ge.Scalar"]),
    "x > x": (lambda x: x > x, ["aten.gt.Tensor"]),
    "x.sum()": (lambda x: x.sum(), ["aten.sum.default"]),
    "x.sum(dtype)": (lambda x: x.sum(dtype=torch.float64), ["aten.sum.default"]),
    "x.sum(0)": (lambda x: x.sum(0), ["aten.sum.dim_IntList"]),
    "x.prod()": (lambda x: x.prod(), ["aten.prod.default"]),
    "x.prod(1)": (lambda x: x.prod(1), ["aten.prod.dim_int"]),
    "x.max()": (lambda x: x.max(), ["aten.max.default"]),
    "x.min()": (lambda x: torch.min(x), ["aten.min.default"]),
    "x.max(0)": (lambda x: x.max(0), ["aten.max.dim"]),
    "x.amax()": (lambda x: x.amax(), ["aten.amax.default"]),
    "all()": (lambda x: x.all(), ["aten.all.default"]),
    "any()": (lambda x: x.any(), ["aten.any.default"]),
    "all(0)": (lambda x: x.all(0), ["aten.all.dim"]),
    "arange(5)": (lambda x: torch.arange(5), ["aten.arange.default"]),
    "arange(1, 5)": (lambda x: torch.arange(1, 5), ["aten.arange.start"]),
    "arange(1, 5, 2)": (lambda x: torch.arange(1, 5, 2), ["aten.arange.start_step"]),
    "x.sort()": (lambda x: x.sort(), ["aten.sort.default"]),
    "torch.sort(x, 0, True)": (lambda x: torch.sort(x, 0, True), ["aten.sort.default"]),
    "x.sort(stable=True)": (lambda x: x.sort(stable=True), ["aten.sort.stable"]),
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_overload_names_match_pytorch(case: str) -> None:
    call, names = EXPECTED[case]
    x = _x()
    assert _seen(lambda: call(x)) == names


def test_true_division_values_and_gradients() -> None:
    x = _x().requires_grad_()
    y = torch.tensor([2.0, 4.0, -0.5])
    out = x / y
    assert out.tolist() == [[0.5, -0.5, -6.0], [0.25, 1.0, 3.0]]
    out.sum().backward()
    assert x.grad.tolist() == [[0.5, 0.25, -2.0]] * 2
    assert torch.ops.aten.div.Tensor(torch.tensor([7]), torch.tensor([2])).tolist() == [3.5]


def test_pow_overloads_values_and_gradients() -> None:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x**2).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]  # d/dx x^2 = 2x
    x.grad = None
    out = 2**x
    assert out.tolist() == [2.0, 4.0, 8.0]
    out.sum().backward()
    # d/dx 2^x = 2^x ln 2
    assert x.grad.tolist() == pytest.approx([2 * 0.6931471805599453, 4 * 0.6931471805599453,
                                             8 * 0.6931471805599453])
    assert torch.ops.aten.pow.Tensor_Scalar(torch.tensor([3]), 2).tolist() == [9]
    assert torch.ops.aten.pow.Scalar(3, torch.tensor([2])).tolist() == [9]
    with pytest.raises(RuntimeError, match="negative integer powers"):
        torch.tensor([2]) ** -1


def test_scalar_comparisons_values() -> None:
    x = _x().requires_grad_()
    assert (x > 0).tolist() == [[True, False, True], [True, True, False]]
    assert (x != 3).tolist() == [[True, True, False], [True, True, True]]
    assert torch.ops.aten.ge.Scalar(torch.tensor([1, 2]), 2).tolist() == [False, True]
    assert (x > 0).requires_grad is False


def test_whole_reductions_values_and_gradients() -> None:
    x = torch.tensor([[2.0, 3.0], [4.0, 4.0]], requires_grad=True)
    assert x.sum().item() == 13.0 and x.prod().item() == 96.0
    assert x.max().item() == 4.0 and x.min().item() == 2.0
    x.prod().backward()
    assert x.grad.tolist() == [[48.0, 32.0], [24.0, 24.0]]  # the product of the others
    x.grad = None
    x.max().backward()
    assert x.grad.tolist() == [[0.0, 0.0], [0.5, 0.5]]  # ties share the gradient
    x.grad = None
    x.sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert torch.ones(2, 3, dtype=torch.int32).sum().dtype == torch.int64
    assert torch.tensor([[True, False]]).all().item() is False
    assert torch.tensor([[True, False]]).any().item() is True
    with pytest.raises(RuntimeError):
        torch.empty(0).max()


def test_whole_reductions_under_vmap() -> None:
    x = torch.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, 2.0]])
    assert torch.vmap(lambda a: a.sum())(x).tolist() == [2.0, 6.5]
    assert torch.vmap(lambda a: a.prod())(x).tolist() == [-6.0, 4.0]
    assert torch.vmap(lambda a: a.max())(x).tolist() == [3.0, 4.0]
    assert torch.vmap(lambda a: a.min())(x).tolist() == [-2.0, 0.5]
    assert torch.vmap(lambda a: (a > 0).all())(x).tolist() == [False, True]


def test_arange_and_sort_overloads_values() -> None:
    assert torch.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert torch.arange(1, 5).tolist() == [1, 2, 3, 4]
    assert torch.arange(1, 5, 2).tolist() == [1, 3]
    assert torch.arange(2.5).dtype == torch.get_default_dtype()
    x = torch.tensor([[3.0, 1.0, 2.0]], requires_grad=True)
    values, indices = torch.sort(x, 1, True)
    assert values.tolist() == [[3.0, 2.0, 1.0]] and indices.tolist() == [[0, 2, 1]]
    (values * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [[1.0, 100.0, 10.0]]  # each value's weight back at its place


# reshape and flatten are CompositeImplicitAutograd in PyTorch: a mode sees what they reach
RESHAPES: dict[str, tuple[Callable[[torch.Tensor], Any], list[str]]] = {
    "x.reshape(6)": (lambda x: x.reshape(6), ["aten.view.default"]),
    "x.flatten()": (lambda x: x.flatten(), ["aten.view.default"]),
    "x.t().reshape(6)": (lambda x: x.t().reshape(6), ["aten.t.default", "aten.clone.default",
                                                     "aten._unsafe_view.default"]),
}


@pytest.mark.parametrize("case", sorted(RESHAPES))
def test_reshape_of_a_tensor_requiring_grad_is_a_view(case: str) -> None:
    # (with grad, as here, Plait decomposes them below autograd as PyTorch does; a tensor
    # without grad still shows aten::reshape to a mode)
    call, names = RESHAPES[case]
    x = _x().requires_grad_()
    assert _seen(lambda: call(x)) == names
