"""Derivative formulas: reductions, scans and sorting (the CompositeExplicitAutograd ops of
``torch/_reductions.py``).

Reductions give each input element the gradient of the output it went into: sums broadcast
the gradient back, products multiply by the product of the other elements (zeros included),
extremes send it to the element(s) that won. Ops whose results are indices or truth values
(argmax, any, searchsorted, ...) are not differentiable: every entry is ``None``.
"""

from __future__ import annotations

import math
from typing import Any

from ..._aten import creation as _creation, elementwise as _ew, factories as _fac, shape as _shape
from ..._core import config as _config, dtype as _dtype
from ..._core.tensor import Tensor, wrap_dim
from . import derivative

# -- reading the call -----------------------------------------------------------------------


def _arg(ctx: Any, index: int, name: str, default: Any) -> Any:
    """Argument ``name`` of the call, given by position ``index`` or by keyword."""
    if len(ctx.args) > index:
        return ctx.args[index]
    return ctx.kwargs.get(name, default)


def _only_first(ctx: Any, grad: Tensor | None) -> tuple[Tensor | None, ...]:
    """``grad`` for the input, ``None`` for every other positional argument."""
    return (grad,) + (None,) * (len(ctx.args) - 1)


def _nothing(ctx: Any, *grads: Tensor) -> tuple[None, ...]:
    return (None,) * len(ctx.args)


def _reduced_dims(dim: Any, ndim: int) -> list[int]:
    """The dims a reduction ran over, wrapped and sorted; ``None`` or ``[]`` means all."""
    if dim is None:
        return list(range(ndim))
    dims = list(dim) if isinstance(dim, (tuple, list)) else [dim]
    if not dims:
        return list(range(ndim))
    return sorted(wrap_dim(d, max(ndim, 1)) for d in dims) if ndim else []


def _restore(t: Tensor, dims: list[int], keepdim: bool) -> Tensor:
    """A reduction's output (or its gradient) with the reduced dims back as size 1."""
    if keepdim:
        return t
    for d in dims:  # sorted: each unsqueeze lands where the dim was
        t = t.unsqueeze(d)
    return t


def _conj(t: Tensor) -> Tensor:
    return t.conj() if t.is_complex() else t


def _has_zero(x: Tensor) -> bool:
    """Whether ``x`` holds a zero (always "maybe" on meta tensors, which have no values)."""
    if x.device.type == "meta":
        return True
    return bool(_ew.eq(x, 0).any())


def _reversed_cumsum(t: Tensor, dim: int) -> Tensor:
    """``out[i] = sum(t[i:])`` along ``dim``."""
    return t.flip(dim).cumsum(dim).flip(dim)


# -- sums and products ----------------------------------------------------------------------


@derivative("aten::sum.dim_IntList", "aten::sum", args=False, result=False)
def _(ctx, grad):
    # Only the input's shape is needed (kept by the node), as PyTorch's SumBackward keeps
    # its sizes: the input may change in place after the sum.
    shape = ctx._node._inputs_meta[0][0]
    dim = _arg(ctx, 1, "dim", None)
    if grad._shape and not _arg(ctx, 2, "keepdim", False):
        # the reduced dims back as size 1, by one view (a full sum's 0-d gradient expands
        # as it is)
        kept = list(shape)
        for d in _reduced_dims(dim, len(shape)):
            kept[d] = 1
        grad = grad.reshape(kept)
    return _only_first(ctx, grad.expand(shape))


@derivative("aten::mean", "aten::mean.dim", args=False, result=False)
def _mean(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    # the gradient spread evenly over each reduced group (only the input's shape is kept, as
    # PyTorch's MeanBackward keeps its sizes)
    shape = ctx._node._inputs_meta[0][0]
    dims = _reduced_dims(_arg(ctx, 1, "dim", None), len(shape))
    count = math.prod(shape[d] for d in dims)
    grad = _restore(grad, dims, _arg(ctx, 2, "keepdim", False))
    return _only_first(ctx, grad.expand(shape) / count)


def _variance_grad(grad: Tensor, x: Tensor, dim: Any, correction: Any,
                   keepdim: bool) -> Tensor:
    """d var / dx times ``grad``: ``2 grad (x - mean(x)) / (n - correction)``, as PyTorch's
    var_backward (a non-positive dof gives inf or NaN there too)."""
    dims = _reduced_dims(dim, x.ndim)
    n = math.prod(x.shape[d] for d in dims)
    dof = max(n - (1 if correction is None else correction), 0)
    centred = x - x.mean(dims, keepdim=True)
    return _restore(grad, dims, keepdim) * centred * (2.0 / dof if dof else math.inf)


@derivative("aten::var.correction", result=False)
def _var(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    x = ctx.args[0]
    return _only_first(ctx, _variance_grad(grad, x, _arg(ctx, 1, "dim", None),
                                           ctx.kwargs.get("correction"),
                                           ctx.kwargs.get("keepdim", False)))


@derivative("aten::var_mean.correction", result=False)
def _var_mean(ctx: Any, grad_var: Tensor | None, grad_mean: Tensor | None
              ) -> tuple[Tensor | None, ...]:
    # the variance's gradient plus the mean's (spread evenly over each reduced group)
    x = ctx.args[0]
    dim, keepdim = _arg(ctx, 1, "dim", None), ctx.kwargs.get("keepdim", False)
    total = None
    if grad_var is not None:
        total = _variance_grad(grad_var, x, dim, ctx.kwargs.get("correction"), keepdim)
    if grad_mean is not None:
        dims = _reduced_dims(dim, x.ndim)
        spread = _restore(grad_mean, dims, keepdim).expand(x.shape) \
            / math.prod(x.shape[d] for d in dims)
        total = spread if total is None else total + spread
    return _only_first(ctx, total)


@derivative("aten::std.correction")
def _std(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    # d std = d var / (2 std), zero where std is 0 (a constant input), as PyTorch's
    # std_backward (instead of 0 * inf)
    x, std = ctx.args[0], ctx.result
    zero = _ew.eq(std, 0)
    grad_var = _ew.where(zero, 0.0, grad / (2 * _ew.where(zero, 1.0, std)))
    return _only_first(ctx, _variance_grad(grad_var, x, _arg(ctx, 1, "dim", None),
                                           ctx.kwargs.get("correction"),
                                           ctx.kwargs.get("keepdim", False)))


def _prod_without_each(x: Tensor, dim: int) -> Tensor:
    """The product along ``dim`` of all elements but the one at each position, without
    dividing (so zeros are fine): exclusive running products from both ends, multiplied."""
    n = x.shape[dim]
    if n == 0:
        return x
    ones = _fac.ones_like(x.narrow(dim, 0, 1))
    before = _shape.cat([ones, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    after = _shape.cat([ones, x.narrow(dim, 1, n - 1).flip(dim)], dim).cumprod(dim).flip(dim)
    return before * after


@derivative("aten::prod.dim_int", "aten::prod")
def _(ctx, grad):
    x = ctx.args[0]
    dim = _arg(ctx, 1, "dim", None)
    keepdim = _arg(ctx, 2, "keepdim", False)
    if x.ndim == 0:
        return _only_first(ctx, grad)
    if dim is None:  # the product of everything: a 0-d result
        grad = grad.reshape((1,) * x.ndim)
        result = ctx.result.reshape((1,) * x.ndim)
    else:
        dim = wrap_dim(dim, x.ndim)
        grad = _restore(grad, [dim], keepdim)
        result = _restore(ctx.result, [dim], keepdim)
    if not _has_zero(x):
        return _only_first(ctx, grad * _conj(result / x))
    if dim is None:
        others = _prod_without_each(x.reshape(-1), 0).reshape(x.shape)
    else:
        others = _prod_without_each(x, dim)
    return _only_first(ctx, grad * _conj(others))


# -- extremes -------------------------------------------------------------------------------


@derivative("aten::logsumexp")
def _(ctx, grad):
    # d/dx log(sum(exp(x))) = exp(x - result), the softmax over the reduced dims
    x = ctx.args[0]
    dims = _reduced_dims(_arg(ctx, 1, "dim", ()), x.ndim)
    keepdim = _arg(ctx, 2, "keepdim", False)
    return _only_first(ctx, _restore(grad, dims, keepdim)
                       * _ew.exp(x - _restore(ctx.result, dims, keepdim)))


@derivative("aten::amax", "aten::amin", "aten::max", "aten::min")
def _(ctx, grad):
    # ties share the gradient evenly, as in PyTorch
    x = ctx.args[0]
    dims = _reduced_dims(_arg(ctx, 1, "dim", ()), x.ndim)
    keepdim = _arg(ctx, 2, "keepdim", False)
    winners = _ew.eq(x, _restore(ctx.result, dims, keepdim)).to(grad.dtype)
    count = winners.sum(dims, keepdim=True) if dims else winners
    return _only_first(ctx, _restore(grad, dims, keepdim) / count * winners)


def _scatter_to(shape: tuple[int, ...], dim: int, indices: Tensor, grad: Tensor,
                accumulate: bool = False) -> Tensor:
    """A zero gradient of ``shape`` with ``grad`` written (or added) at ``indices`` along
    ``dim``."""
    zeros = _fac.zeros(shape, dtype=grad.dtype, device=grad.device)
    if accumulate:
        return zeros.scatter_add(dim, indices, grad)
    return zeros.scatter(dim, indices, grad)


@derivative("aten::max.dim", "aten::min.dim", result=(1,))
def _(ctx, grad, _grad_indices):
    # the gradient goes to the one element the index names (the first on ties)
    x = ctx.args[0]
    if x.ndim == 0:
        return _only_first(ctx, grad)
    dim = wrap_dim(_arg(ctx, 1, "dim", None), x.ndim)
    keepdim = _arg(ctx, 2, "keepdim", False)
    indices = _restore(ctx.result[1], [dim], keepdim)
    return _only_first(ctx, _scatter_to(x.shape, dim, indices, _restore(grad, [dim], keepdim)))


for _name in ("aten::argmax", "aten::argmin", "aten::any.dims", "aten::all.dims", "aten::any",
              "aten::all", "aten::any.dim", "aten::all.dim",
              "aten::searchsorted.Tensor"):
    derivative(_name)(_nothing)


# -- scans ----------------------------------------------------------------------------------


@derivative("aten::cumsum", result=False)
def _(ctx, grad):
    x = ctx.args[0]
    if x.ndim == 0:
        return _only_first(ctx, grad)
    return _only_first(ctx, _reversed_cumsum(grad, wrap_dim(_arg(ctx, 1, "dim", 0), x.ndim)))


def _cumprod_grad_with_zeros(x: Tensor, grad: Tensor, dim: int) -> Tensor:
    """d/dx_i of sum_k grad_k * prod_{j<=k} x_j is sum_{k>=i} grad_k * prod_{j<=k, j!=i} x_j.

    Written for every i at once on an (..., n, n) table whose row i is ``x`` with x_i set to
    1: its running products are the inner products. O(n^2), but made of differentiable ops,
    so the second derivative is right too (the O(n) first-zero trick is not)."""
    xs = x.movedim(dim, -1)  # (..., n)
    gs = grad.movedim(dim, -1)  # (..., n)
    n = xs.shape[-1]
    eye = _creation.eye(n, dtype=_dtype.bool_, device=x.device)
    table = _ew.where(eye, 1, xs.unsqueeze(-2).expand(xs.shape[:-1] + (n, n)))  # (..., n, n)
    later = _fac.ones(n, n, dtype=_dtype.bool_, device=x.device).triu()  # k >= i
    terms = _ew.where(later, table.cumprod(-1) * gs.unsqueeze(-2), 0)  # (..., i, k)
    return terms.sum(-1).movedim(-1, dim)


def _cumprod_grad_first_zero(x: Tensor, grad: Tensor, result: Tensor, dim: int) -> Tensor:
    """The O(n) gradient of cumprod with zeros (first derivative only): elements before the
    first zero divide, the first zero gets the products around it, later ones get 0."""
    zeros_so_far = _ew.eq(x, 0).cumsum(dim)
    before = _ew.eq(zeros_so_far, 0)
    first_zero = _ew.logical_and(_ew.eq(x, 0), _ew.eq(zeros_so_far, 1))
    after = _ew.logical_and(_ew.logical_not(before), _ew.logical_not(first_zero))
    # prod of x before the first zero (the same at every position from it on)
    head = _ew.where(before, x, 1).cumprod(dim)
    # prod of x after the first zero, up to each later position k
    tail = _ew.where(after, x, 1).cumprod(dim)
    at_zero = head * _ew.where(before, 0, grad * tail).sum(dim, keepdim=True)
    divided = _reversed_cumsum(grad * result, dim) / _ew.where(before, x, 1)
    return _ew.where(before, divided, _ew.where(first_zero, at_zero, 0))


@derivative("aten::cumprod")
def _(ctx, grad):
    x = ctx.args[0]
    if x.ndim == 0 or x.numel() <= 1:
        return _only_first(ctx, grad)
    dim = wrap_dim(_arg(ctx, 1, "dim", 0), x.ndim)
    x = x.to(grad.dtype)  # a dtype= cumprod ran in grad's dtype
    if not _has_zero(x):
        return _only_first(ctx, _reversed_cumsum(grad * _conj(ctx.result), dim) / _conj(x))
    # complex inputs: the gradient is sum_k grad_k * conj(prod ...), so work on conj(x)
    if _config.is_grad_enabled() or x.device.type == "meta":
        return _only_first(ctx, _cumprod_grad_with_zeros(_conj(x), grad, dim))
    return _only_first(ctx, _cumprod_grad_first_zero(_conj(x), grad, _conj(ctx.result), dim))


@derivative("aten::cummax", "aten::cummin", result=(1,))
def _(ctx, grad, _grad_indices):
    # ties: each output's gradient goes to the element its index names
    x = ctx.args[0]
    if x.ndim == 0:
        return _only_first(ctx, grad)
    dim = wrap_dim(_arg(ctx, 1, "dim", 0), x.ndim)
    return _only_first(ctx, _scatter_to(x.shape, dim, ctx.result[1], grad, accumulate=True))


# -- sorting --------------------------------------------------------------------------------


@derivative("aten::sort.stable", "aten::sort", result=(1,))
def _(ctx, grad, _grad_indices):
    x = ctx.args[0]
    if x.ndim == 0:
        return _only_first(ctx, grad)
    dim = wrap_dim(_arg(ctx, 1, "dim", -1), x.ndim)  # (sort.stable's dim is keyword-only)
    return _only_first(ctx, _scatter_to(x.shape, dim, ctx.result[1], grad))


@derivative("aten::topk", result=(1,))
def _(ctx, grad, _grad_indices):
    x = ctx.args[0]
    if x.ndim == 0:
        return _only_first(ctx, grad)
    dim = wrap_dim(_arg(ctx, 2, "dim", -1), x.ndim)
    return _only_first(ctx, _scatter_to(x.shape, dim, ctx.result[1], grad))


@derivative("aten::logcumsumexp")
def _logcumsumexp(ctx, grad):
    x, dim = ctx.args
    if x.ndim == 0:
        return grad, None
    y = ctx.result
    xd = x.movedim(dim, -1).unsqueeze(-1)  # (..., n, 1): x_j
    yd = y.movedim(dim, -1).unsqueeze(-2)  # (..., 1, n): y_k
    gd = grad.movedim(dim, -1).unsqueeze(-2)  # (..., 1, n): g_k
    n = x._shape[dim]
    later = _fac.ones(n, n, dtype=_dtype.bool_, device=x.device).triu()  # k >= j
    finite = _ew.logical_and(later, ~_ew.isinf(yd) | (yd > 0))
    # exp(x_j - y_k) for k >= j; pairs with y_k = -inf (an all -inf prefix) contribute 0
    expo = _ew.where(finite, xd - _ew.where(finite, yd, 0), -math.inf)
    gx = (gd * _ew.exp(expo)).sum(-1)  # (..., n)
    return gx.movedim(-1, dim), None
