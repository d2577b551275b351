"""Gradients of reductions, scans and sorting: autograd against central differences in float64
(first derivatives, and second derivatives against differences of the first), plus the
subgradient conventions checked by hand against PyTorch 2.13."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from numgrad import F64, check_grad, check_gradgrad, grad_of, t64

import torch

X = t64([[0.3, -1.2, 2.5, 0.7], [1.1, 0.4, -0.6, 1.9], [-2.0, 0.9, 0.2, -0.35]])


# -- sums and products ------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda x: x.sum(),
    lambda x: x.sum(1),
    lambda x: x.sum((0, 1), keepdim=True),
    lambda x: x.sum(-2, keepdim=False),
    lambda x: torch.sum(x, dim=[], keepdim=False),
    lambda x: x.mean(0),
    lambda x: x.nansum(1),
])
def test_sum(call: Callable[[torch.Tensor], torch.Tensor]) -> None:
    check_grad(call, X)


def test_sum_of_0d() -> None:
    check_grad(lambda x: x.sum(), t64(1.5))


@pytest.mark.parametrize("values", [
    [[0.5, -1.5, 2.0], [1.2, 0.8, -0.7]],
    [[0.5, 0.0, 2.0], [1.2, 0.8, -0.7]],  # one zero
    [[0.0, 0.0, 2.0], [1.2, 0.0, -0.7]],  # two zeros
])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod(values: list[list[float]], dim: int | None) -> None:
    x = t64(values)
    fn = (lambda t: t.prod()) if dim is None else (lambda t: t.prod(dim, keepdim=dim == 1))
    check_grad(fn, x)
    check_gradgrad(fn, x)


def test_prod_zeros_by_hand() -> None:
    # PyTorch 2.13: one zero gets the product of the others; with two, everything is 0
    assert grad_of(lambda t: t.prod(), t64([2.0, 0.0, 3.0, 4.0])).tolist() == [0, 24, 0, 0]
    assert grad_of(lambda t: t.prod(), t64([2.0, 0.0, 3.0, 0.0, 5])).tolist() == [0] * 5


# -- extremes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda x: x.amax(),
    lambda x: x.amax(1),
    lambda x: x.amin((0, 1), keepdim=True),
    lambda x: x.amin(0),
    lambda x: x.max(1).values,
    lambda x: x.min(0, keepdim=True).values,
    lambda x: torch.logsumexp(x, 1),
])
def test_extremes(call: Callable[[torch.Tensor], torch.Tensor]) -> None:
    check_grad(call, X)
    check_gradgrad(call, X)


def test_extreme_ties_by_hand() -> None:
    x = t64([1.0, 3.0, 3.0, 2.0])
    # amax/amin share the gradient among ties; max.dim gives it to the index (the first)
    assert grad_of(lambda t: t.amax(), x).tolist() == [0, 0.5, 0.5, 0]
    assert grad_of(lambda t: t.max(0).values, x).tolist() == [0, 1, 0, 0]
    assert grad_of(lambda t: t.amin(), t64([2.0, 1.0, 1.0])).tolist() == [0, 0.5, 0.5]
    m = t64([[1.0, 1.0], [0.0, 5.0]])
    assert grad_of(lambda t: t.amax(1), m).tolist() == [[0.5, 0.5], [0, 1]]


def test_max_dim_of_0d() -> None:
    assert grad_of(lambda t: t.max(0).values, t64(2.0)).tolist() == 1.0


@pytest.mark.parametrize("call", [
    lambda x: x.argmax(), lambda x: x.argmin(1), lambda x: x.any(), lambda x: x.all(1),
    lambda x: x.max(1).indices, lambda x: x.sort(1).indices,
    lambda x: torch.searchsorted(x.sort(1).values, x),
])
def test_not_differentiable(call: Callable[[torch.Tensor], torch.Tensor]) -> None:
    assert not call(X.detach().requires_grad_(True)).requires_grad


# -- scans ------------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda x: x.cumsum(1),
    lambda x: x.cumsum(0),
    lambda x: torch.cumsum(x, -1, dtype=F64),
    lambda x: x.cumprod(1),
    lambda x: x.cumprod(0),
    lambda x: x.cummax(1).values,
    lambda x: x.cummin(0).values,
])
def test_scans(call: Callable[[torch.Tensor], torch.Tensor]) -> None:
    check_grad(call, X)
    check_gradgrad(call, X)


def test_logcumsumexp() -> None:
    check_grad(lambda x: torch.logcumsumexp(x, 1), X)


def test_logcumsumexp_second_derivative() -> None:
    check_gradgrad(lambda x: torch.logcumsumexp(x, 1), X)


@pytest.mark.parametrize("values", [
    [2.0, 0.0, 3.0, 4.0],
    [0.0, 1.5, -2.0, 0.5],
    [2.0, 0.0, 3.0, 0.0, 5.0],
    [1.5, -2.0, 0.7, 0.0],
])
def test_cumprod_with_zeros(values: list[float]) -> None:
    x = t64(values)
    check_grad(lambda t: t.cumprod(0), x)
    check_gradgrad(lambda t: t.cumprod(0), x)
    # the first-derivative-only path (no graph) agrees with the differentiable one
    leaf = x.detach().requires_grad_(True)
    out = leaf.cumprod(0)
    cotangent = t64([0.3 * i - 1 for i in range(len(values))])
    (plain,) = torch.autograd.grad(out, leaf, cotangent, retain_graph=True)
    (graph,) = torch.autograd.grad(out, leaf, cotangent, create_graph=True)
    torch.testing.assert_close(plain, graph.detach())


def test_cumprod_zeros_by_hand() -> None:
    # PyTorch 2.13
    assert grad_of(lambda t: t.cumprod(0), t64([2.0, 0.0, 3.0, 4.0])).tolist() == [1, 32, 0, 0]


def test_cummax_ties_by_hand() -> None:
    # the later index wins ties, and every output sends its gradient there
    assert grad_of(lambda t: t.cummax(0).values, t64([1.0, 3.0, 3.0, 2.0])).tolist() == [
        1, 1, 2, 0]


# -- sorting ----------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda x: x.sort(1).values,
    lambda x: x.sort(0, descending=True).values,
    lambda x: torch.sort(x.reshape(-1), stable=True).values,
    lambda x: x.topk(2, 1).values,
    lambda x: x.topk(2, 0, largest=False).values,
    lambda x: x.kthvalue(2, 1).values,
    lambda x: x.median(1).values,
    lambda x: x.msort(),
])
def test_sorting(call: Callable[[torch.Tensor], torch.Tensor]) -> None:
    check_grad(call, X)
    check_gradgrad(call, X)


def test_topk_by_hand() -> None:
    assert grad_of(lambda t: t.topk(2).values * t64([1.0, 10.0]), t64([5.0, 1.0, 7.0])
                   ).tolist() == [10, 0, 1]


# -- statistics (composites of the ops above) --------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda x: x.var(1),
    lambda x: x.std(0, correction=0),
    lambda x: x.var(),
    lambda x: torch.var_mean(x, 1)[0],
])
def test_statistics(call: Callable[[torch.Tensor], torch.Tensor]) -> None:
    check_grad(call, X)
    check_gradgrad(call, X)


def test_mode_of_empty_rows_is_differentiable() -> None:
    # PyTorch 2.13: the values of an empty result still require grad; the grad is empty
    for shape, dim, keepdim, out_shape in (((0, 2), -1, False, (0,)), ((3, 0), 0, True, (1, 0))):
        x = torch.empty(shape, dtype=torch.float64, requires_grad=True)
        result = torch.mode(x, dim, keepdim)
        assert result.values.requires_grad and not result.indices.requires_grad
        assert tuple(result.values.shape) == out_shape
        result.values.sum().backward()
        assert x.grad is not None and tuple(x.grad.shape) == shape


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_nanquantile_all_nan_row_by_hand(interpolation: str) -> None:
    # PyTorch 2.13 sends an all-NaN slice's gradient to its first element
    nan = float("nan")
    x = torch.tensor([[0.3, -1.2, 0.7], [nan, nan, nan]], dtype=torch.float64,
                     requires_grad=True)
    q = torch.tensor([0.5], dtype=torch.float64)
    y = torch.nanquantile(x, q, 1, interpolation=interpolation)
    assert y[0, 0].item() == 0.3 and math.isnan(y[0, 1].item())
    y.backward(torch.tensor([[1.0, 2.0]], dtype=torch.float64))
    assert x.grad.tolist() == [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
    x = torch.tensor([[nan, nan, nan]], dtype=torch.float64, requires_grad=True)
    torch.nanquantile(x, 0.3, 1).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0]]
