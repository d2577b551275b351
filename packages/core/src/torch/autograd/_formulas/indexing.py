"""Derivative formulas: advanced indexing and index assignment, index_select, gather/scatter,
scatter_reduce, masked_fill, nonzero.

The public ops built on these (masked_select, take_along_dim, scatter_add, index_put, stack,
...) differentiate through their decompositions. The backward of a read (index, gather,
index_select) is a scatter-add of the gradient into zeros, and the backward of a write is a
read of the gradient, so second derivatives come through the same rules.
"""

from __future__ import annotations

from typing import Any

from ..._aten import elementwise as _ew, factories as _fac
from ..._aten.indexing import ATEN as _INDEXING
from ..._aten.shape import cat
from ..._core import config as _config, dtype as _dtype
from ..._core.tensor import Tensor
from ..._fused import embedding as _fused_embedding
from . import CROSS, derivative
from .shape import arg, needs, positional


def _zeros(shape: Any, like: Any) -> Any:
    return _fac.zeros(tuple(shape), dtype=like.dtype, device=like.device)


def _index(t: Any, indices: list[Any]) -> Any:
    """``t[indices]`` through ``aten::index`` (one entry per dim: ``None`` or a tensor)."""
    return _INDEXING["index.Tensor"](t, list(indices))


def _index_put(t: Any, indices: list[Any], values: Any, accumulate: bool) -> Any:
    """Out-of-place ``aten::index_put_`` (``indices`` may hold ``None``, which the public
    ``torch.index_put`` refuses)."""
    return _INDEXING["index_put_"](t.clone(), list(indices), values, accumulate)


def _sum_to(g: Any, shape: Any) -> Any:
    """``g`` summed down to ``shape``, which may also have extra leading size-1 dims (a value
    assigned through ``t[idx] = v`` may carry them)."""
    shape = tuple(shape)
    if g.ndim < len(shape):
        g = g.reshape((1,) * (len(shape) - g.ndim) + tuple(g.shape))
    lead = g.ndim - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape)
                                if s == 1 and g.shape[lead + i] != 1]
    if dims:
        g = g.sum(dim=dims, keepdim=True)
    return g.reshape(shape)


def _within(t: Any, shape: Any) -> Any:
    """The leading block of ``t`` with ``shape`` (scatter reads only the part of ``src`` that
    ``index`` covers)."""
    for d, n in enumerate(shape):
        if t.shape[d] != n:
            t = t.narrow(d, 0, n)
    return t


def _padded(g: Any, shape: Any) -> Any:
    """``g`` placed at the start of zeros of ``shape``: the inverse of :func:`_within`."""
    for d, n in enumerate(shape):
        if g.shape[d] != n:
            rest = list(g.shape)
            rest[d] = n - g.shape[d]
            g = cat([g, _zeros(rest, g)], d)
    return g


def _long(index: Any) -> Any:
    return index if index.dtype == _dtype.int64 else index.to(_dtype.int64)


# -- advanced indexing -----------------------------------------------------------------------


@derivative("aten::index.Tensor")
def _index_backward(ctx: Any, grad: Any) -> tuple[Any, ...]:
    self, indices = ctx.args[0], arg(ctx, 1, "indices")
    if not needs(ctx, 0):
        return positional(ctx, None, None)
    # repeated positions read the same element, so their gradients add up
    grad_self = _index_put(_zeros(self.shape, grad), indices, grad, True)
    return positional(ctx, grad_self, None)


@derivative("aten::index_put_")
def _index_put_backward(ctx: Any, grad: Any) -> tuple[Any, ...]:
    # self was written in place: its shape is grad's, and its values are not needed
    indices = arg(ctx, 1, "indices")
    values = arg(ctx, 2, "values")
    accumulate = arg(ctx, 3, "accumulate", False)
    grad_self = grad_values = None
    if needs(ctx, 0):
        # overwritten positions did not reach the output through self
        grad_self = grad if accumulate else _index_put(grad, indices, _zeros((), grad), False)
    if needs(ctx, 2):
        grad_values = _sum_to(_index(grad, indices), values.shape)
    return positional(ctx, grad_self, None, grad_values, None)


@derivative("aten::index_select", result=False)
def _index_select(ctx: Any, grad: Any) -> tuple[Any, ...]:
    self, dim, index = ctx.args[0], arg(ctx, 1, "dim"), arg(ctx, 2, "index")
    if not needs(ctx, 0):
        return positional(ctx, None, None, None)
    if self.ndim == 0:  # every index is 0
        return positional(ctx, grad.sum().reshape(()), None, None)
    d = dim % self.ndim
    idx = _long(index).reshape(-1)
    view = [1] * grad.ndim
    view[d] = idx.shape[0]
    spread = idx.reshape(view).expand(tuple(grad.shape))
    grad_self = _zeros(self.shape, grad).scatter_add(d, spread, grad)
    return positional(ctx, grad_self, None, None)


# -- embedding ----------------------------------------------------------------------------------


def _embedding_ops():
    return _fused_embedding.ATEN


def _lookup_args(ctx: Any, padding_at: int) -> tuple[Any, int, bool]:
    """An embedding op's indices (argument 1), padding_idx and scale_grad_by_freq (from
    argument ``padding_at`` on), by position or keyword."""
    return (ctx.args[1], arg(ctx, padding_at, "padding_idx", -1),
            arg(ctx, padding_at + 1, "scale_grad_by_freq", False))


@derivative("aten::embedding", args=CROSS, result=False)
def _embedding(ctx: Any, grad: Any) -> tuple[Any, ...]:
    # The rule reads the indices and the table's row count, never the table itself (CROSS
    # keeps only the indices), so the table may be updated in place before the backward.
    indices, padding_idx, scale_grad_by_freq = _lookup_args(ctx, 2)
    if not needs(ctx, 0):
        return positional(ctx, None, None, None, None, None)
    num_weights = ctx._node._inputs_meta[0][0][0]
    grad_weight = _embedding_ops()["embedding_dense_backward"](
        grad, indices, num_weights, padding_idx, scale_grad_by_freq)
    return positional(ctx, grad_weight, None, None, None, None)


@derivative("aten::embedding_dense_backward", args=CROSS, result=False)
def _embedding_dense_backward(ctx: Any, grad: Any) -> tuple[Any, ...]:
    # linear in grad_output: the rows of the cotangent at the indices, with the same padding
    # and frequency scaling
    indices, padding_idx, scale_grad_by_freq = _lookup_args(ctx, 3)
    if not needs(ctx, 0):
        return positional(ctx, None, None, None, None, None)
    flat = _long(indices).reshape(-1)
    rows = grad.index_select(0, flat)
    if scale_grad_by_freq and flat.numel():
        counts = flat.bincount(minlength=grad.shape[0]).index_select(0, flat)
        rows = rows / counts.unsqueeze(1).to(rows.dtype)
    if padding_idx >= 0:
        rows = rows * (flat != padding_idx).unsqueeze(1).to(rows.dtype)
    out_shape = ctx._node._inputs_meta[0][0]
    return positional(ctx, rows.reshape(out_shape), None, None, None, None)


# -- gather and scatter ----------------------------------------------------------------------


@derivative("aten::gather", result=False)
def _gather(ctx: Any, grad: Any) -> tuple[Any, ...]:
    self, dim, index = ctx.args[0], arg(ctx, 1, "dim"), arg(ctx, 2, "index")
    if not needs(ctx, 0):
        return positional(ctx, None, None, None)
    grad_self = _zeros(self.shape, grad).scatter_add(dim, _long(index), grad)
    return positional(ctx, grad_self, None, None)


@derivative("aten::scatter")
def _scatter(ctx: Any, grad: Any) -> tuple[Any, ...]:
    dim, index, src = arg(ctx, 1, "dim"), arg(ctx, 2, "index"), arg(ctx, 3, "src")
    if ctx.kwargs.get("reduce", arg(ctx, 4, "reduce")) is not None:
        raise RuntimeError("derivative for aten::scatter is not implemented")
    grad_self = grad_src = None
    if needs(ctx, 0):
        grad_self = grad.scatter(dim, index, 0)
    if isinstance(src, Tensor) and needs(ctx, 3):
        grad_src = grad.gather(dim, index)
        if src.ndim == index.ndim:
            grad_src = _padded(grad_src, src.shape)
    return positional(ctx, grad_self, None, None, grad_src)


@derivative("aten::scatter_reduce.two")
def _scatter_reduce(ctx: Any, grad: Any) -> tuple[Any, ...]:
    self, dim, index = ctx.args[0], arg(ctx, 1, "dim"), arg(ctx, 2, "index")
    src, reduce = arg(ctx, 3, "src"), arg(ctx, 4, "reduce")
    include_self = ctx.kwargs.get("include_self", True)
    result = ctx.result
    # src may be larger than index; only its leading block takes part
    part = _within(src, index.shape) if src.ndim == index.ndim else src
    if reduce == "sum":
        grad_self = grad
        grad_src = grad.gather(dim, index)
    elif reduce == "prod":
        grad_self, grad_src = _prod_backward(grad, self, dim, index, part, result,
                                             include_self)
    elif reduce == "mean":
        counts = (_fac.ones_like(grad) if include_self else _fac.zeros_like(grad))
        counts = counts.scatter_add(dim, index, _fac.ones_like(part))
        counts = counts.masked_fill(counts == 0, 1)
        grad_self = grad / counts
        grad_src = grad.gather(dim, index) / counts.gather(dim, index)
    elif reduce in ("amax", "amin"):
        # the gradient is split evenly between every element that equals the extreme
        # (including self's, even when include_self=False: PyTorch's convention)
        value = result.gather(dim, index)
        self_is_result = (self == result).to(grad.dtype)
        src_is_result = (part == value).to(grad.dtype)
        share = grad / self_is_result.scatter_add(dim, index, src_is_result)
        grad_self = self_is_result * share
        grad_src = src_is_result * share.gather(dim, index)
    else:
        raise RuntimeError(f"derivative for scatter_reduce with reduce={reduce!r} is not "
                           "implemented")
    if not include_self:
        grad_self = grad_self.scatter(dim, index, 0)
    if src.ndim == index.ndim:
        grad_src = _padded(grad_src, src.shape)
    return positional(ctx, grad_self if needs(ctx, 0) else None, None, None,
                      grad_src if needs(ctx, 3) else None, None)


def _prod_backward(grad: Any, self: Any, dim: int, index: Any, src: Any, result: Any,
                   include_self: bool) -> tuple[Any, Any]:
    """The product's gradient without dividing by a zero factor: a zero in self or src is
    replaced by 1 and the product recomputed, which is the product of the other factors."""
    masked_self = self.masked_fill(self == 0, 1)
    masked_self_result = masked_self.scatter_reduce(dim, index, src, "prod",
                                                    include_self=include_self)
    grad_self = grad * masked_self_result / masked_self
    src_zero = src == 0
    zeros_per_slot = _fac.zeros_like(self).scatter_add(dim, index, src_zero.to(self.dtype))
    src_zeros_here = zeros_per_slot.gather(dim, index)
    src_single_zero = _ew.logical_and(src_zero, src_zeros_here == 1)
    if _config.is_grad_enabled() and bool((src_zeros_here > 1).any()):
        # the product of the other factors is then 0, but its derivative is not
        raise RuntimeError("scatter_reduce(): Double backward is unsupported for src when >1 "
                           "zeros in src are scattered to the same position. This may happen "
                           "for example if 2 elements of src are 0 and scattered to the same "
                           "position.")
    masked_src = src.masked_fill(src_single_zero, 1)
    masked_src_result = self.scatter_reduce(dim, index, masked_src, "prod",
                                            include_self=include_self)
    grad_src = _ew.where(src_single_zero, (grad * masked_src_result).gather(dim, index),
                           (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1))
    return grad_self, grad_src


# -- masked and data-dependent ops -----------------------------------------------------------


@derivative("aten::masked_fill.Scalar")
def _masked_fill(ctx: Any, grad: Any) -> tuple[Any, ...]:
    mask, value = arg(ctx, 1, "mask"), arg(ctx, 2, "value")
    grad_self = grad.masked_fill(mask, 0) if needs(ctx, 0) else None
    grad_value = None
    if isinstance(value, Tensor) and needs(ctx, 2):
        # a 0-d tensor value receives every filled position's gradient
        grad_value = grad.masked_fill(mask.logical_not(), 0).sum()
    return positional(ctx, grad_self, None, grad_value)


@derivative("aten::nonzero")
def _nonzero(ctx: Any, grad: Any) -> tuple[Any, ...]:
    return positional(ctx, None)  # integer output: nothing flows back
