"""Gradients of the shape and indexing ops: first derivatives against central differences in
float64, second derivatives against central differences of the first derivatives (taken with
``create_graph=True``), and PyTorch 2.13's values where an op has a subgradient convention
(ties, zeros, overwritten positions)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

import torch

F64 = torch.float64
EPS = 1e-6


# -- a small central-difference checker --------------------------------------------------------


def _flat_perturbed(x: torch.Tensor, i: int, delta: float) -> torch.Tensor:
    y = x.detach().clone()
    y.view(-1)[i] += delta
    return y


def numerical_vjp(f: Callable[..., torch.Tensor], inputs: list[torch.Tensor],
                  w: torch.Tensor) -> list[torch.Tensor]:
    """d/dx of sum(f(x) * w) for each input, by central differences."""
    grads = []
    for k, x in enumerate(inputs):
        g = torch.zeros(x.numel(), dtype=F64)
        for i in range(x.numel()):
            values = []
            for delta in (EPS, -EPS):
                args = [a.detach() for a in inputs]
                args[k] = _flat_perturbed(x, i, delta)
                values.append(float((f(*args).to(F64) * w).sum()))
            g[i] = (values[0] - values[1]) / (2 * EPS)
        grads.append(g.reshape(x.shape))
    return grads


def analytic_vjp(f: Callable[..., torch.Tensor], inputs: list[torch.Tensor], w: torch.Tensor,
                 create_graph: bool = False) -> list[torch.Tensor]:
    # inputs that already require grad stay connected: the first derivative taken inside
    # check_gradgrad is itself differentiated with respect to them
    xs = [x if x.requires_grad else x.detach().requires_grad_(True) for x in inputs]
    out = f(*xs)
    return list(torch.autograd.grad(out, xs, w, create_graph=create_graph, allow_unused=True))


def leaves(*tensors: torch.Tensor) -> list[torch.Tensor]:
    return [t.detach().to(F64) for t in tensors]


def check_grad(f: Callable[..., torch.Tensor], *inputs: torch.Tensor,
               atol: float = 1e-6) -> None:
    inputs_ = leaves(*inputs)
    out = f(*inputs_)
    w = torch.randn(out.shape, dtype=F64)
    expected = numerical_vjp(f, inputs_, w)
    got = analytic_vjp(f, inputs_, w)
    for e, g in zip(expected, got):
        g = torch.zeros_like(e) if g is None else g
        assert g.shape == e.shape
        torch.testing.assert_close(g, e, atol=atol, rtol=1e-5)


def check_gradgrad(f: Callable[..., torch.Tensor], *inputs: torch.Tensor,
                   atol: float = 1e-5) -> None:
    """The first derivative (x, w) -> d/dx sum(f(x) * w), differentiated by the engine with
    create_graph=True, against its central differences."""
    inputs_ = leaves(*inputs)
    w0 = torch.randn(f(*inputs_).shape, dtype=F64)
    n = len(inputs_)

    def first(*xw: torch.Tensor) -> torch.Tensor:
        xs, w = list(xw[:n]), xw[n]
        grads = analytic_vjp(f, xs, w, create_graph=True)
        return torch.cat([(torch.zeros_like(x) if g is None else g).reshape(-1)
                          for x, g in zip(xs, grads)])

    check_grad(first, *inputs_, w0, atol=atol)


def rand(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=F64)


def distinct(*shape: int) -> torch.Tensor:
    """Values spaced far apart in random order (no ties within a finite-difference step)."""
    n = 1
    for s in shape:
        n *= s
    return (torch.randperm(n).to(F64) * 0.37 + 0.5).reshape(shape)


# -- the op table ------------------------------------------------------------------------------

LONG = torch.int64
I2 = torch.tensor([[0, 2, 1], [1, 1, 0]])
UNIQUE = torch.tensor([[0, 2, 1], [1, 3, 0]])

CASES: list[tuple[str, Callable[..., Any], Callable[[], list[torch.Tensor]]]] = [
    # shape ops
    ("cat_dim0", lambda a, b: torch.cat([a, b]), lambda: [rand(2, 3), rand(1, 3)]),
    ("cat_dim1_neg", lambda a, b: torch.cat([a, b], -1), lambda: [rand(2, 3), rand(2, 2)]),
    ("cat_skips_empty_1d", lambda a, b, c: torch.cat([a, b, c], 1),
     lambda: [rand(2, 3), rand(0), rand(2, 1)]),
    ("cat_promotes", lambda a: torch.cat([a, torch.ones(1, 2, dtype=torch.float32)]),
     lambda: [rand(2, 2)]),
    ("stack", lambda a, b: torch.stack([a, b], 1), lambda: [rand(2, 3), rand(2, 3)]),
    ("hstack_vstack", lambda a, b: torch.vstack([torch.hstack([a, b]), torch.hstack([b, a])]),
     lambda: [rand(2, 2), rand(2, 2)]),
    ("flip", lambda a: torch.flip(a, (0, 2)), lambda: [rand(2, 3, 4)]),
    ("fliplr", lambda a: torch.fliplr(a), lambda: [rand(3, 4)]),
    ("rot90", lambda a: torch.rot90(a, 1, (0, 1)), lambda: [rand(3, 4)]),
    ("roll_dims", lambda a: torch.roll(a, (1, -2), (0, 1)), lambda: [rand(3, 4)]),
    ("roll_flat", lambda a: torch.roll(a, 5), lambda: [rand(3, 4)]),
    ("repeat", lambda a: a.repeat(2, 1, 3), lambda: [rand(2, 3)]),
    ("repeat_zero", lambda a: a.repeat(0, 2), lambda: [rand(2, 3)]),
    ("tile", lambda a: torch.tile(a, (2,)), lambda: [rand(2, 3)]),
    ("tril", lambda a: torch.tril(a), lambda: [rand(2, 3, 4)]),
    ("tril_diag", lambda a: torch.tril(a, -1), lambda: [rand(3, 4)]),
    ("triu_diag", lambda a: torch.triu(a, 1), lambda: [rand(4, 3)]),
    # advanced indexing
    ("index_int", lambda a: a[torch.tensor([2, 0, 2])], lambda: [rand(3, 4)]),
    ("index_two_adjacent", lambda a: a[:, torch.tensor([0, 1, 1]), torch.tensor([2, 0, 2])],
     lambda: [rand(2, 3, 4)]),
    ("index_separated", lambda a: a[torch.tensor([1, 0]), :, torch.tensor([3, 3])],
     lambda: [rand(2, 3, 4)]),
    ("index_mask", lambda a: a[a > 0], lambda: [rand(3, 4)]),
    ("index_mask_row", lambda a: a[torch.tensor([True, False, True])], lambda: [rand(3, 4)]),
    ("masked_select", lambda a: torch.masked_select(a, torch.tensor([True, False, True, True])),
     lambda: [rand(2, 4)]),
    ("index_put", lambda a, v: torch.index_put(a, (torch.tensor([0, 2]),), v),
     lambda: [rand(3, 4), rand(2, 4)]),
    ("index_put_dup_accumulate",
     lambda a, v: torch.index_put(a, (torch.tensor([1, 1, 0]), torch.tensor([0, 0, 3])), v,
                                  True),
     lambda: [rand(3, 4), rand(3)]),
    ("index_put_broadcast_value",
     lambda a, v: torch.index_put(a, (torch.tensor([0, 2]),), v), lambda: [rand(3, 4), rand(4)]),
    # aten::index / aten::index_put_ called directly (no view in front of them)
    ("aten_index", lambda a: torch.ops.aten.index.Tensor(a, [torch.tensor([1, 0]), None,
                                                            torch.tensor([3, 3])]),
     lambda: [rand(2, 3, 4)]),
    ("aten_index_mask", lambda a: torch.ops.aten.index.Tensor(a, [a > 0]), lambda: [rand(3, 4)]),
    ("aten_index_put_", lambda a, v: torch.ops.aten.index_put_.default(
        a * 1, [None, torch.tensor([0, 3, 2])], v, False), lambda: [rand(3, 4), rand(3, 1)]),
    ("aten_index_put_accumulate", lambda a, v: torch.ops.aten.index_put_.default(
        a * 1, [None, torch.tensor([0, 0, 2])], v, True), lambda: [rand(3, 4), rand(3)]),
    ("setitem_mask", lambda a, v: _setitem(a, a > 0, v), lambda: [rand(3, 4), rand(())]),
    ("setitem_leading_ones", lambda a, v: _setitem(a, torch.tensor([1]), v),
     lambda: [rand(3, 3), rand(1, 1, 3)]),
    ("index_select", lambda a: torch.index_select(a, 1, torch.tensor([2, 0, 2])),
     lambda: [rand(3, 4)]),
    ("index_select_int32", lambda a: a.index_select(0, torch.tensor([1, 1], dtype=torch.int32)),
     lambda: [rand(3, 2)]),
    ("index_select_0d", lambda a: a.index_select(0, torch.tensor([0, 0])), lambda: [rand(())]),
    ("gather", lambda a: torch.gather(a, 1, I2), lambda: [rand(2, 4)]),
    ("gather_dim0", lambda a: torch.gather(a, 0, I2), lambda: [rand(3, 3)]),
    ("take_along_dim", lambda a: torch.take_along_dim(a, torch.tensor([[1], [0]]), 1),
     lambda: [rand(2, 3)]),
    ("take_along_dim_flat", lambda a: torch.take_along_dim(a, torch.tensor([5, 0, 5])),
     lambda: [rand(2, 3)]),
    # (PyTorch gives every duplicate src element the gradient: no finite difference agrees)
    ("scatter_src", lambda a, s: torch.scatter(a, 1, UNIQUE, s), lambda: [rand(2, 4), rand(2, 3)]),
    ("scatter_src_larger", lambda a, s: torch.scatter(a, 1, UNIQUE, s),
     lambda: [rand(2, 4), rand(3, 5)]),
    ("scatter_value", lambda a: torch.scatter(a, 0, torch.tensor([[1, 0, 1]]), value=2.0),
     lambda: [rand(2, 3)]),
    ("scatter_add", lambda a, s: torch.scatter_add(a, 1, I2, s),
     lambda: [rand(2, 4), rand(2, 3)]),
    ("masked_fill", lambda a: a.masked_fill(torch.tensor([True, False, True]), -1.0),
     lambda: [rand(2, 3)]),
    ("masked_fill_broadcast_self",
     lambda a: torch.masked_fill(a, torch.tensor([[True], [False]]), 3.0), lambda: [rand(3)]),
    ("masked_fill_tensor_value",
     lambda a, v: a.masked_fill(torch.tensor([[True, False], [True, True]]), v),
     lambda: [rand(2, 2), rand(())]),
]

for _reduce in ("sum", "prod", "mean", "amax", "amin"):
    for _include in (True, False):
        CASES.append((
            f"scatter_reduce_{_reduce}_{'incl' if _include else 'excl'}",
            lambda a, s, r=_reduce, inc=_include: torch.scatter_reduce(
                a, 1, I2, s, r, include_self=inc),
            lambda: [distinct(2, 4), distinct(2, 3) + 5.0]))
CASES.append(("scatter_reduce_prod_larger_src",
              lambda a, s: torch.scatter_reduce(a, 1, I2, s, "prod"),
              lambda: [distinct(2, 4), distinct(3, 4)]))


def params(rows: list[Any]) -> list[Any]:
    """One pytest case per row, named by the row's id."""
    return [pytest.param(*row, id=row[0]) for row in rows]


def _setitem(a: torch.Tensor, index: Any, v: torch.Tensor) -> torch.Tensor:
    b = a.clone()
    b[index] = v
    return b


@pytest.mark.parametrize("name,f,make", params(CASES))
def test_first_derivative(name: str, f: Callable[..., Any], make: Any) -> None:
    torch.manual_seed(0)
    check_grad(f, *make())


# Every op but those whose backward uses comparisons on values (amax/amin, covered by the
# first-derivative test) and prod with a zero factor has a second derivative worth checking.
GRADGRAD = [c for c in CASES if "amax" not in c[0] and "amin" not in c[0]]


@pytest.mark.parametrize("name,f,make", params(GRADGRAD))
def test_second_derivative(name: str, f: Callable[..., Any], make: Any) -> None:
    torch.manual_seed(1)
    check_gradgrad(f, *make())


# -- views: handled by the engine, checked here ------------------------------------------------

VIEWS: list[tuple[str, Callable[..., Any], tuple[int, ...]]] = [
    ("view", lambda a: a.view(4, 3), (2, 6)),
    ("reshape_noncontiguous", lambda a: a.t().reshape(-1), (3, 4)),
    ("permute", lambda a: a.permute(2, 0, 1), (2, 3, 4)),
    ("transpose", lambda a: a.transpose(0, 2), (2, 3, 4)),
    ("expand", lambda a: a.expand(3, 2, 4), (2, 1)),
    ("select", lambda a: a.select(1, -1), (2, 3)),
    ("narrow", lambda a: a.narrow(1, 1, 2), (2, 4)),
    ("squeeze", lambda a: a.squeeze(1), (3, 1, 2)),
    ("unsqueeze", lambda a: a.unsqueeze(0), (3, 2)),
    ("diagonal", lambda a: torch.diagonal(a, 1), (3, 4)),
    ("unfold_overlapping", lambda a: a.unfold(0, 3, 1), (5,)),
    ("as_strided_overlapping", lambda a: a.as_strided((3, 2), (1, 1)), (4,)),
    ("basic_index", lambda a: a[1:, None, ::2, 0], (3, 4, 2)),
    ("chain", lambda a: a.t()[1:].unsqueeze(0).expand(2, 3, 3).sum(0), (3, 4)),
    ("split_unbind", lambda a: torch.cat([p * (i + 1) for i, p in enumerate(a.unbind(1))]),
     (3, 2)),
    ("movedim_flatten", lambda a: torch.movedim(a, 0, -1).flatten(), (2, 3, 2)),
]


@pytest.mark.parametrize("name,f,shape", params(VIEWS))
def test_view_first_derivative(name: str, f: Callable[..., Any], shape: tuple[int, ...]) -> None:
    torch.manual_seed(2)
    check_grad(f, rand(*shape))


@pytest.mark.parametrize("name,f,shape", params(VIEWS))
def test_view_second_derivative(name: str, f: Callable[..., Any],
                                shape: tuple[int, ...]) -> None:
    torch.manual_seed(3)
    check_gradgrad(lambda a: f(a) * f(a), rand(*shape))


# -- PyTorch's conventions, values taken from PyTorch 2.13 -------------------------------------

SR_SELF = [1.0, 5.0, 0.0, 2.0]
SR_SRC = [5.0, 3.0, 0.0, 0.0, 4.0, 2.0]
SR_INDEX = [1, 1, 2, 2, 3, 0]
SR_WEIGHT = [1.0, 2.0, 3.0, 4.0]
# reduce, include_self -> (grad of self, grad of src) for sum(y * SR_WEIGHT)
SR_EXPECTED = {
    ("sum", True): ([1, 2, 3, 4], [2, 2, 3, 3, 4, 1]),
    ("sum", False): ([0, 0, 0, 0], [2, 2, 3, 3, 4, 1]),
    ("prod", True): ([2, 30, 0, 16], [30, 50, 0, 0, 8, 1]),
    ("prod", False): ([0, 0, 0, 0], [6, 10, 0, 0, 4, 1]),
    ("mean", True): ([0.5, 2 / 3, 1, 2], [2 / 3, 2 / 3, 1, 1, 2, 0.5]),
    ("mean", False): ([0, 0, 0, 0], [1, 1, 1.5, 1.5, 4, 1]),
    ("amax", True): ([0, 1, 1, 0], [1, 0, 1, 1, 4, 1]),
    ("amax", False): ([0, 0, 0, 0], [1, 0, 1, 1, 4, 1]),
    ("amin", True): ([1, 0, 1, 4], [0, 2, 1, 1, 0, 0]),
    ("amin", False): ([0, 0, 0, 0], [0, 2, 1, 1, 4, 1]),
}


@pytest.mark.parametrize("reduce,include_self", list(SR_EXPECTED))
def test_scatter_reduce_ties_and_zeros_match_pytorch(reduce: str, include_self: bool) -> None:
    x = torch.tensor(SR_SELF, dtype=F64, requires_grad=True)
    s = torch.tensor(SR_SRC, dtype=F64, requires_grad=True)
    y = x.scatter_reduce(0, torch.tensor(SR_INDEX), s, reduce, include_self=include_self)
    (y * torch.tensor(SR_WEIGHT, dtype=F64)).sum().backward()
    want_x, want_s = SR_EXPECTED[(reduce, include_self)]
    torch.testing.assert_close(x.grad, torch.tensor(want_x, dtype=F64))
    torch.testing.assert_close(s.grad, torch.tensor(want_s, dtype=F64))


def test_scatter_reduce_prod_two_zeros_refuses_double_backward() -> None:
    x = torch.tensor([1.0, 2.0], dtype=F64, requires_grad=True)
    s = torch.tensor([0.0, 0.0, 3.0], dtype=F64, requires_grad=True)
    y = x.scatter_reduce(0, torch.tensor([0, 0, 1]), s, "prod")
    (gs,) = torch.autograd.grad(y.sum(), s)  # first derivative is fine: all zeros there
    torch.testing.assert_close(gs, torch.tensor([0.0, 0.0, 2.0], dtype=F64))
    y = x.scatter_reduce(0, torch.tensor([0, 0, 1]), s, "prod")
    with pytest.raises(RuntimeError, match="Double backward is unsupported"):
        torch.autograd.grad(y.sum(), s, create_graph=True)


def test_index_put_overwritten_positions_and_duplicates() -> None:
    # PyTorch: self gets no gradient where it was overwritten; every duplicate value reads the
    # output position's gradient
    a = torch.randn(3, dtype=F64, requires_grad=True)
    v = torch.tensor([1.0, 2.0, 3.0], dtype=F64, requires_grad=True)
    w = torch.tensor([1.0, 2.0, 3.0], dtype=F64)
    (a.index_put((torch.tensor([0, 0, 2]),), v) * w).sum().backward()
    torch.testing.assert_close(a.grad, torch.tensor([0.0, 2.0, 0.0], dtype=F64))
    torch.testing.assert_close(v.grad, torch.tensor([1.0, 1.0, 3.0], dtype=F64))
    a.grad = v.grad = None
    (a.index_put((torch.tensor([0, 0, 2]),), v, accumulate=True) * w).sum().backward()
    torch.testing.assert_close(a.grad, w)
    torch.testing.assert_close(v.grad, torch.tensor([1.0, 1.0, 3.0], dtype=F64))


def test_setitem_on_nonleaf_routes_gradients() -> None:
    a = torch.randn(3, 3, dtype=F64, requires_grad=True)
    v = torch.randn(1, 3, dtype=F64, requires_grad=True)
    b = a * 1
    b[torch.tensor([0, 2])] = v
    b.sum().backward()
    torch.testing.assert_close(a.grad, torch.tensor([[0.0] * 3, [1.0] * 3, [0.0] * 3],
                                                    dtype=F64))
    torch.testing.assert_close(v.grad, torch.full((1, 3), 2.0, dtype=F64))


def test_masked_fill_tensor_value_gets_filled_gradients() -> None:
    x = torch.randn(2, 3, dtype=F64, requires_grad=True)
    val = torch.tensor(2.0, dtype=F64, requires_grad=True)
    y = x.masked_fill(torch.tensor([True, False, True]), val)
    (y * torch.arange(6.0, dtype=F64).view(2, 3)).sum().backward()
    torch.testing.assert_close(x.grad, torch.tensor([[0.0, 1.0, 0.0], [0.0, 4.0, 0.0]],
                                                    dtype=F64))
    torch.testing.assert_close(val.grad, torch.tensor(10.0, dtype=F64))


def test_scatter_value_form_and_legacy_reduce() -> None:
    x = torch.randn(3, 4, dtype=F64, requires_grad=True)
    i = torch.tensor([[0, 1], [2, 0]])
    x.scatter(1, i, 2.5).sum().backward()
    torch.testing.assert_close(x.grad, torch.tensor(
        [[0.0, 0.0, 1.0, 1.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]], dtype=F64))
    s = torch.randn(2, 2, dtype=F64, requires_grad=True)
    with warnings.catch_warnings():  # PyTorch warns that reduce= is deprecated here
        warnings.simplefilter("ignore")
        y = x.scatter(1, i, s, reduce="add")
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        y.sum().backward()


def test_integer_index_and_nonzero_get_no_gradient() -> None:
    x = torch.randn(3, 4, dtype=F64, requires_grad=True)
    nz = torch.nonzero(x > 0)
    assert nz.dtype == torch.int64 and not nz.requires_grad
    y = x.gather(1, torch.tensor([[0], [1], [3]]))
    assert y.grad_fn is not None and y.grad_fn.name() == "GatherBackward0"
    (g,) = torch.autograd.grad(y.sum(), x)
    assert g.sum().item() == 3.0
    ints = torch.arange(12).view(3, 4)
    assert not torch.cat([ints, ints]).requires_grad


def test_cat_grads_only_for_inputs_that_need_them() -> None:
    a = torch.randn(2, 2, dtype=F64, requires_grad=True)
    b = torch.randn(3, 2, dtype=F64)
    torch.cat([b, a]).sum().backward()
    torch.testing.assert_close(a.grad, torch.ones(2, 2, dtype=F64))
    assert b.grad is None


def test_cat_float32_with_float64_casts_each_gradient() -> None:
    a = torch.randn(2, dtype=torch.float32, requires_grad=True)
    b = torch.randn(2, dtype=F64, requires_grad=True)
    y = torch.cat([a, b])
    assert y.dtype == F64
    y.sum().backward()
    assert a.grad.dtype == torch.float32 and b.grad.dtype == F64


# -- public ops that compute through primitives directly and record no graph -----------------

UNRECORDED = [
    ("index_add", lambda a, s: a.index_add(0, torch.tensor([0, 2, 0]), s),
     lambda: [rand(3, 2), rand(3, 2)]),
    ("index_copy", lambda a, s: a.index_copy(0, torch.tensor([2, 0]), s),
     lambda: [rand(3, 2), rand(2, 2)]),
    ("index_fill", lambda a: a.index_fill(1, torch.tensor([0, 2]), -1.0), lambda: [rand(3, 3)]),
    ("index_reduce_prod", lambda a, s: a.index_reduce(0, torch.tensor([0, 2, 0]), s, "prod"),
     lambda: [distinct(3, 2), distinct(3, 2)]),
    ("masked_scatter", lambda a, s: a.masked_scatter(torch.tensor([True, False, True]), s),
     lambda: [rand(2, 3), rand(6)]),
    ("take", lambda a: torch.take(a, torch.tensor([[5, 0], [-1, 2]])), lambda: [rand(2, 3)]),
    ("put", lambda a, s: a.put(torch.tensor([1, 4]), s), lambda: [rand(2, 3), rand(2)]),
    ("repeat_interleave", lambda a: a.repeat_interleave(2, dim=0), lambda: [rand(2, 3)]),
    ("repeat_interleave_tensor",
     lambda a: a.repeat_interleave(torch.tensor([1, 0, 2]), dim=1), lambda: [rand(2, 3)]),
    ("narrow_copy", lambda a: torch.narrow_copy(a, 1, 1, 2), lambda: [rand(2, 4)]),
    # distinct positions: an overwrite through duplicate indices has no defined gradient
    ("scatter__inplace", lambda a, s: (a * 1).scatter_(1, torch.tensor([[0, 2, 1], [1, 3, 0]]),
                                                       s),
     lambda: [rand(2, 4), rand(2, 3)]),
    ("scatter_add__inplace", lambda a, s: (a * 1).scatter_add_(1, I2, s),
     lambda: [rand(2, 4), rand(2, 3)]),
    ("select_scatter", lambda a, s: torch.select_scatter(a, s, 0, 1),
     lambda: [rand(2, 3), rand(3)]),
    ("slice_scatter", lambda a, s: torch.slice_scatter(a, s, 1, 0, 2),
     lambda: [rand(2, 3), rand(2, 2)]),
    ("diagonal_scatter", lambda a, s: torch.diagonal_scatter(a, s),
     lambda: [rand(3, 3), rand(3)]),
]


@pytest.mark.parametrize("name,f,make", params(UNRECORDED))
def test_ops_outside_the_aten_table(name: str, f: Callable[..., Any], make: Any) -> None:
    """These public functions have no ``aten::`` operator of their own: their gradients are
    right only if every step they take is a recorded op."""
    torch.manual_seed(4)
    check_grad(f, *make())


# -- rules on meta tensors (compile builds backward graphs from them) ------------------------

META_INDEX = {"dtype": torch.int64, "device": "meta"}
META_CASES: list[tuple[str, Callable[..., Any]]] = [
    ("cat", lambda a: torch.cat([a, a], 1)),
    ("flip", lambda a: a.flip(0)),
    ("roll", lambda a: a.roll(1, 0)),
    ("repeat", lambda a: a.repeat(2, 1)),
    ("tril", lambda a: a.tril()),
    ("gather", lambda a: a.gather(1, torch.zeros(2, 2, **META_INDEX))),
    ("index_select", lambda a: a.index_select(0, torch.zeros(3, **META_INDEX))),
    ("index", lambda a: torch.ops.aten.index.Tensor(a, [torch.zeros(3, **META_INDEX)])),
    ("scatter", lambda a: a.scatter(1, torch.zeros(2, 2, **META_INDEX), 1.0)),
    ("scatter_reduce_mean", lambda a: a.scatter_reduce(1, torch.zeros(2, 2, **META_INDEX),
                                                       a[:, :2] * 1, "mean")),
    ("scatter_reduce_amax", lambda a: a.scatter_reduce(1, torch.zeros(2, 2, **META_INDEX),
                                                       a[:, :2] * 1, "amax")),
    ("masked_fill", lambda a: a.masked_fill(torch.zeros(2, 3, dtype=torch.bool,
                                                        device="meta"), 1.0)),
]


@pytest.mark.parametrize("name,f", META_CASES, ids=[c[0] for c in META_CASES])
def test_rules_run_on_meta(name: str, f: Callable[..., Any]) -> None:
    a = torch.empty(2, 3, device="meta", requires_grad=True)
    y = f(a)
    (g,) = torch.autograd.grad(y, a, torch.empty(y.shape, device="meta"))
    assert g.device.type == "meta" and g.shape == a.shape
