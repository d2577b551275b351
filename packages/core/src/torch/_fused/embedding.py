"""``aten::embedding`` and ``aten::embedding_dense_backward``: a lookup table's rows picked by
integer indices, as one operator with one derivative.

``F.embedding`` was composite (a reshape of the indices, ``index_select``, a reshape of the
rows), so each call of a model's token and position tables paid three recorded ops and
``index_select``'s scatter-shaped gradient. As operators of their own (PyTorch has both) the
forward is one node and the backward one ``index_add`` of the gradient's rows into zeros; a
backend may serve either with a kernel. ``padding_idx`` (negative: none) takes no gradient and
``scale_grad_by_freq`` divides each row's gradient by how often its index occurs, as in
PyTorch; ``sparse`` gradients stay with ``F.embedding``'s own path.
"""

from __future__ import annotations

from .._aten.factories import zeros
from .._aten.indexing import _index_scatter, checked_index
from .._aten.shape import gather_slices
from .._core import dispatch as _dispatch, dtype as _dtype
from .._core.tensor import Tensor

__all__: list[str] = []

_INDEX_DTYPES = (_dtype.int64, _dtype.int32)


def _flat_indices(indices: Tensor, num: int) -> Tensor:
    """The indices as a 1-d int64 tensor, each checked to lie in ``[0, num)``."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"embedding(): argument 'indices' (position 2) must be Tensor, not "
                        f"{type(indices).__name__}")
    if indices._dtype not in _INDEX_DTYPES:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"torch.{indices._dtype._name} instead")
    flat = indices if indices.ndim == 1 else indices.reshape(-1)
    return checked_index(flat, num, 0, negative=False,
                         error=lambda v: IndexError("index out of range in self"))


def _embedding_kernel(weight: Tensor, indices: Tensor, padding_idx: int = -1,
                      scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    if not isinstance(weight, Tensor):
        raise TypeError(f"embedding(): argument 'weight' (position 1) must be Tensor, not "
                        f"{type(weight).__name__}")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    rows = gather_slices(weight, 0, _flat_indices(indices, weight._shape[0]))
    return rows.view(*indices._shape, weight._shape[1])


def _embedding_dense_backward_kernel(grad_output: Tensor, indices: Tensor, num_weights: int,
                                     padding_idx: int, scale_grad_by_freq: bool) -> Tensor:
    flat = _flat_indices(indices, num_weights)
    dim = grad_output._shape[-1] if grad_output.ndim else 1
    rows = grad_output.reshape(-1, dim)
    if rows._dtype is not grad_output._dtype:
        rows = rows.to(grad_output._dtype)
    grad_weight = zeros((num_weights, dim), dtype=grad_output._dtype,
                        device=grad_output._device)
    # flat is checked (int64, in range) above: the scatter itself, not index_add_, which
    # would check the indices a second time (amin, amax and two reads to the host)
    _index_scatter(grad_weight, 0, flat, rows, "sum")
    if scale_grad_by_freq and flat.numel():
        counts = flat.bincount(minlength=num_weights).clamp_min(1).to(grad_weight._dtype)
        grad_weight.div_(counts.unsqueeze(1))
    if 0 <= padding_idx < num_weights:
        grad_weight[padding_idx] = 0
    return grad_weight


ATEN = _dispatch.define_aten({
    "embedding": ("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
                  "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
                  _embedding_kernel),
    "embedding_dense_backward": ("embedding_dense_backward(Tensor grad_output, Tensor indices, "
                                 "SymInt num_weights, SymInt padding_idx, "
                                 "bool scale_grad_by_freq) -> Tensor",
                                 _embedding_dense_backward_kernel),
})

