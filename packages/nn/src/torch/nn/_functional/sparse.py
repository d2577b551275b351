"""``embedding``, ``embedding_bag`` and ``one_hot`` of ``nn.functional``, composite over
differentiable core indexing ops (``embedding(..., sparse=True)``: a sparse COO gradient)."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch.jit._recording import traced_as

__all__ = ["embedding", "embedding_bag", "one_hot"]


_aten_embedding = torch.ops.aten.embedding.default
_INDEX_DTYPES = (torch.int64, torch.int32)


def _check_indices(input: Tensor) -> None:
    if input.dtype not in _INDEX_DTYPES:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.dtype} instead")


def _padding_idx(padding_idx: int | None, num: int) -> int | None:
    if padding_idx is None:
        return None
    if padding_idx >= num or padding_idx < -num:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx + num if padding_idx < 0 else padding_idx


def _renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale the rows of ``weight`` that ``input`` reads down to norm ``max_norm``, in place."""
    with torch.no_grad():
        rows = torch.unique(input.reshape(-1))
        if rows.numel() == 0:
            return
        sub = weight.index_select(0, rows)
        norms = sub.norm(norm_type, dim=1, keepdim=True)
        scale = torch.where(norms > max_norm, max_norm / (norms + 1e-7),
                            torch.ones_like(norms))
        weight.index_copy_(0, rows, sub * scale)


# one node in traces (and one ONNX Gather for any index shape), as aten::embedding in PyTorch
@traced_as("aten::embedding")
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input``: shape ``(*input.shape, dim)``.

    Entries equal to ``padding_idx`` pass no gradient to their row; ``max_norm`` first
    renormalises the rows read (in place); ``scale_grad_by_freq`` divides each row's gradient by
    how often it occurs in ``input``."""
    if input.dtype not in _INDEX_DTYPES:
        _check_indices(input)  # (raises PyTorch's error)
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if padding_idx is not None:
        padding_idx = _padding_idx(padding_idx, weight.shape[0])
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    if sparse and weight.requires_grad and torch.is_grad_enabled():
        flat = input.reshape(-1).to(torch.int64)
        out = _SparseRows.apply(weight, flat, padding_idx, scale_grad_by_freq)
        return out.reshape(*input.shape, weight.shape[1])
    # one operator, with one derivative (its padding and frequency scaling included); the
    # schema's trailing defaults are not passed, as PyTorch's dispatcher shows the call to a
    # mode (and the call's plan key is shorter)
    if scale_grad_by_freq:
        return _aten_embedding(weight, input, -1 if padding_idx is None else padding_idx, True)
    if padding_idx is not None:
        return _aten_embedding(weight, input, padding_idx)
    return _aten_embedding(weight, input)


class _SparseRows(torch.autograd.Function):
    """``weight.index_select(0, rows)`` whose gradient for ``weight`` is a sparse COO tensor
    with one entry per row read (uncoalesced, as PyTorch's ``sparse=True`` gradient), so an
    update touches only those rows' values."""

    @staticmethod
    def forward(ctx: Any, weight: Tensor, rows: Tensor, padding_idx: int | None,
                scale_grad_by_freq: bool) -> Tensor:
        ctx.save_for_backward(rows)
        ctx.shape = tuple(weight.shape)
        ctx.padding_idx = padding_idx
        ctx.scale_grad_by_freq = scale_grad_by_freq
        return weight.index_select(0, rows)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None, None, None]:
        (rows,) = ctx.saved_tensors
        if ctx.scale_grad_by_freq and rows.numel():
            counts = torch.bincount(rows, minlength=ctx.shape[0]).to(grad.dtype)
            grad = grad / counts.index_select(0, rows).unsqueeze(1)
        if ctx.padding_idx is not None:  # the padding row gets no gradient: no entry
            keep = rows != ctx.padding_idx
            rows, grad = rows[keep], grad[keep]
        sparse = torch.sparse_coo_tensor(rows.unsqueeze(0), grad, ctx.shape)
        return sparse, None, None, None


_MODES = ("sum", "mean", "max")


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of embedding rows, without the intermediate embeddings.

    A 2-D ``input`` (B, L) is B bags of L indices; a 1-D one is split into bags starting at
    ``offsets``. Indices equal to ``padding_idx`` are left out of their bag; an empty bag gives
    zeros. ``per_sample_weights`` (``mode='sum'`` only) scales each row first."""
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    _check_indices(input)
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                      "per_sample_weights is only supported for mode='sum' "
                                      f"(got mode='{mode}'). Please open a feature request on "
                                      "GitHub.")
        if per_sample_weights.shape != input.shape:
            raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape})"
                             f" is not None, then it must have the same shape as the input "
                             f"({input.shape})")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        bags, length = input.shape
        starts = [i * length for i in range(bags)]
        ends = [(i + 1) * length for i in range(bags)]
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        bounds = [int(v) for v in offsets.tolist()]
        if bounds and bounds[0] != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the "
                               "mini-batch has to start from position 0. However, got "
                               f"{bounds[0]}")
        if include_last_offset:
            starts, ends = bounds[:-1], bounds[1:]
        else:
            starts, ends = bounds, bounds[1:] + [input.shape[0]]
        if any(e < s or e > input.shape[0] for s, e in zip(starts, ends)):
            raise RuntimeError("offsets must be non-decreasing and within the input")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    padding_idx = _padding_idx(padding_idx, weight.shape[0])
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    rows = embedding(input, weight, None, None, norm_type, scale_grad_by_freq)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    flat = input.to(torch.int64)
    keep = None if padding_idx is None else (flat != padding_idx)
    nbags, dim = len(starts), weight.shape[1]
    covered = ends[-1] if ends else 0
    bag_of = torch.searchsorted(torch.tensor(starts, dtype=torch.int64),
                                torch.arange(covered, dtype=torch.int64), right=True) - 1
    bag_of = bag_of.to(rows.device)
    rows = rows[:covered]
    if keep is not None:
        keep = keep[:covered]
    if mode == "max":
        if keep is not None:  # padding entries take no part in the maximum
            where = keep.nonzero().reshape(-1)
            rows, bag_of = rows.index_select(0, where), bag_of.index_select(0, where)
        # include_self=False: a bag's maximum over its rows only; empty bags stay 0
        return torch.zeros((nbags, dim), dtype=rows.dtype, device=rows.device).scatter_reduce(
            0, bag_of.unsqueeze(1).expand(rows.shape[0], dim), rows, "amax",
            include_self=False)
    if keep is not None:
        rows = rows * keep.unsqueeze(1).to(rows.dtype)
    total = torch.zeros((nbags, dim), dtype=rows.dtype, device=rows.device).index_add(
        0, bag_of, rows)
    if mode == "sum":
        return total
    ones = (keep.to(rows.dtype) if keep is not None else
            torch.ones(covered, dtype=rows.dtype, device=rows.device))
    counts = torch.zeros(nbags, dtype=rows.dtype, device=rows.device).index_add(
        0, bag_of, ones)
    return total / counts.clamp_min(1).unsqueeze(1)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """(*) int64 class indices -> (*, num_classes) int64 one-hot rows; ``num_classes=-1``
    uses ``max + 1``."""
    if tensor.dtype != torch.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() and int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max()) + 1
    elif tensor.numel() and int(tensor.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = torch.zeros((*tensor.shape, num_classes), dtype=torch.int64, device=tensor.device)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)
