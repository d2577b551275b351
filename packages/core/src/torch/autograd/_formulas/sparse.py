"""Derivative formulas: the sparse COO operators of ``torch._aten.sparse``.

A sparse input's gradient is sparse with that input's pattern (its indices, its values
coalesced or not), as PyTorch gives it: the gradient's values at those positions
(``values_at``), whether the incoming gradient is dense or sparse.
"""

from __future__ import annotations

from ..._aten import sparse as _sparse
from ..._core.sparse import SparseTensor, make
from ..._core.tensor import Tensor
from . import CROSS, derivative

_OPS = _sparse.ATEN


def _masked_like(grad: Tensor, like: SparseTensor) -> SparseTensor:
    """``grad`` at ``like``'s positions (each once): a coalesced sparse tensor."""
    where = _sparse.positions(like)
    values = _sparse.values_at(grad, where, like._sparse_dim)
    return make(where, values, like._shape, True)


@derivative("aten::_sparse_coo_tensor_with_dims_and_tensors", args=CROSS, result=False)
def _(ctx, grad):
    # only the indices are kept (the values' gradient needs none of the values)
    indices = ctx.args[3]
    if not ctx.needs_input_grad[4]:
        return None, None, None, None, None
    return None, None, None, None, _sparse.values_at(grad, indices, indices._shape[0])


@derivative("aten::to_dense", result=False)
def _(ctx, grad):
    # PyTorch's masked gradient: the dense gradient at the input's positions
    return (_masked_like(grad, ctx.args[0]),)


@derivative("aten::_to_sparse.sparse_dim", args=False, result=False)
def _(ctx, grad):
    return (grad.to_dense() if grad.__class__ is SparseTensor else grad, None)


@derivative("aten::_coalesce", args=False, result=False)
def _(ctx, grad):
    # coalescing does not change the tensor's value: the gradient passes through (a later
    # node takes it at its own positions)
    return (grad,)


@derivative("aten::_values", result=False)
def _(ctx, grad):
    self = ctx.args[0]
    return (make(self._sparse_indices, grad, self._shape, self._coalesced),)


@derivative("aten::_sparse_mm", result=False)
def _(ctx, grad):
    sparse, dense = ctx.args[:2]
    need_sparse, need_dense = ctx.needs_input_grad[:2]
    grad_sparse = grad_dense = None
    if need_sparse:
        if dense.__class__ is SparseTensor:
            raise NotImplementedError("the derivative of torch.sparse.mm(sparse, sparse) is "
                                      "not implemented (use a dense second operand)")
        # d(out[r, :]) / d(value of entry (r, c)) = dense[c, :]: one dot product per entry
        where = _sparse.positions(sparse)
        rows, cols = where.unbind(0)
        values = (grad.index_select(0, rows) * dense.index_select(0, cols)).sum(1)
        grad_sparse = make(where, values, sparse._shape, True)
    if need_dense:
        grad_dense = _OPS["_sparse_mm"](sparse.t(), grad)
    return grad_sparse, grad_dense


@derivative("aten::_sparse_sum.dim", args=True, result=False)
def _(ctx, grad):
    self = ctx.args[0]
    dims = ctx.args[1] if len(ctx.args) > 1 else ctx.kwargs.get("dim")
    n, sd = self.ndim, self._sparse_dim
    if dims is None:
        dims = list(range(n))
    wrapped = _sparse._wrap_dims(dims, n)
    # the gradient at each entry: the output's gradient at the entry's kept sparse indices,
    # broadcast over its summed dense dims
    where = _sparse.positions(self)
    kept = [d for d in range(sd) if d not in wrapped]
    if kept:
        sub = where[kept]
        per_entry = _sparse.values_at(grad, sub, len(kept))
    else:
        per_entry = (grad.to_dense() if grad.__class__ is SparseTensor else grad).unsqueeze(0)
    # restore the summed dense dims as size 1, then expand to the values' shape
    values_shape = (where._shape[1],) + tuple(self._sparse_values._shape[1:])
    for d in wrapped:
        if d >= sd:
            per_entry = per_entry.unsqueeze(d - sd + 1)
    values = per_entry.expand(values_shape)
    return make(where, values, self._shape, True), None


@derivative("aten::_sparse_softmax", args=False)
def _(ctx, grad):
    # y = softmax(x) over each group: dx = y * (g - sum_group(g * y))
    y = ctx.result
    dim = _sparse._wrap_dims(ctx.args[1], y.ndim)[0]
    g = _sparse.values_at(grad, y._sparse_indices, y._sparse_dim)
    yv = y._sparse_values
    values = yv * (g - _sparse.group_sums(y, g * yv, dim))
    return make(y._sparse_indices, values, y._shape, True), None, None


@derivative("aten::_sparse_log_softmax", args=False)
def _(ctx, grad):
    # y = log_softmax(x) over each group: dx = g - exp(y) * sum_group(g)
    y = ctx.result
    dim = _sparse._wrap_dims(ctx.args[1], y.ndim)[0]
    g = _sparse.values_at(grad, y._sparse_indices, y._sparse_dim)
    values = g - y._sparse_values.exp() * _sparse.group_sums(y, g, dim)
    return make(y._sparse_indices, values, y._shape, True), None, None
