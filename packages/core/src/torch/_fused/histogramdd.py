"""``torch.histogramdd``: the histogram of points in D dimensions.

The innermost dim of ``input`` holds each point's D coordinates. Each coordinate finds its
bin as ``torch.histogram`` does (bins closed on the left, the last one on both sides, points
outside any bin not counted); the D bin numbers make one index into the flattened histogram,
which ``index_add`` fills. As in PyTorch there is no derivative.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from .._aten.convert import scalar_type_name
from .._aten.creation import linspace
from .._aten.elementwise import where as _where
from .._aten.no_data import has_no_data
from .._aten.reductions import _structseq, searchsorted
from .._core.dtype import int64
from .._core.tensor import Tensor

__all__ = ["histogramdd"]

_HistogramddResult = _structseq("histogramdd", ("hist", "bin_edges"))


def _edges(column: Tensor, bins: Any, low_high: tuple[float, float] | None) -> Tensor:
    """The bin edges of one coordinate: given, or ``bins`` equal bins over ``low_high`` (the
    data's range by default, widened by 0.5 each way when it is a single value)."""
    if isinstance(bins, Tensor):
        return bins.to(column.dtype)
    if low_high is None:
        low_high = (column.min().item(), column.max().item()) if column.numel() else (0.0, 0.0)
    low, high = low_high
    if low == high:
        low, high = low - 0.5, high + 0.5
    return linspace(low, high, int(bins) + 1, dtype=column.dtype, device=column.device)


def _layouts_only(input: Tensor, per_dim: list[Any]) -> Any:
    """Empty results of the right shapes for a tensor without values: the bin counts are
    known without the data (a fake tensor). Like PyTorch, there is no meta kernel."""
    if input.device.type == "meta":
        raise NotImplementedError("aten::_histogramdd_bin_edges: attempted to run this "
                                  "operator with Meta tensors, but there was no fake impl or "
                                  "Meta kernel registered.")
    counts = [b.shape[0] - 1 if isinstance(b, Tensor) else int(b) for b in per_dim]
    return _HistogramddResult((input.new_empty(tuple(counts)),
                               tuple(input.new_empty((n + 1,)) for n in counts)))


def histogramdd(input: Tensor, bins: int | Sequence[int] | Sequence[Tensor],
                range: Sequence[float] | None = None, weight: Tensor | None = None,
                density: bool = False, *, out: Any = None) -> Any:
    """``(hist, bin_edges)`` of the points in ``input`` (*, D): ``hist`` has one dim per
    coordinate; ``bins`` is a count for every coordinate, a count per coordinate or the edges
    per coordinate; ``range`` the flat ``[low_0, high_0, low_1, high_1, ...]``; ``weight``
    (*) weighs each point; ``density`` divides by the total and the bins' volumes."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"histogramdd" not implemented for '
                                  f"'{scalar_type_name(input.dtype)}'")
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    count = input.shape[-1]
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * count
    if len(per_dim) != count:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if range is not None and len(range) != 2 * count:
        raise RuntimeError("histogramdd: for a 2-dimensional input, the range argument must "
                           f"contain {2 * count} values, but got {len(range)}.")
    if has_no_data(input):
        return _layouts_only(input, per_dim)
    points = input.reshape(-1, count)  # (N, D)
    weights = (weight.reshape(-1).to(input.dtype) if weight is not None
               else points.new_ones(points.shape[:1]))
    edges: list[Tensor] = []
    flat_index = points.new_zeros(points.shape[:1], dtype=int64)
    inside = points.new_ones(points.shape[:1]).bool()
    for d in builtins.range(count):  # (the parameter ``range`` shadows the builtin)
        column = points[:, d]
        low_high = None if range is None else (float(range[2 * d]), float(range[2 * d + 1]))
        e = _edges(column, per_dim[d], low_high)
        edges.append(e)
        n = e.shape[0] - 1
        index = searchsorted(e, column.contiguous(), right=True) - 1
        index = _where(column == e[-1], n - 1, index)  # the last bin is closed
        inside = inside & (index >= 0) & (index < n) & (column <= e[-1])
        flat_index = flat_index * n + index.clamp(0, max(n - 1, 0))
    shape = tuple(e.shape[0] - 1 for e in edges)
    total = 1
    for n in shape:
        total *= n
    hist = points.new_zeros((total,)).index_add(0, flat_index[inside], weights[inside])
    hist = hist.reshape(shape)
    if density:
        volume = None
        for d, e in enumerate(edges):
            view = [1] * count
            view[d] = shape[d]
            width = e.diff().reshape(view)
            volume = width if volume is None else volume * width
        hist = hist / (hist.sum() * volume)
    # PyTorch has no derivative for histogramdd: the results carry no graph here
    hist, edges = hist.detach(), [e.detach() for e in edges]
    if out is not None:
        out[0].resize_(hist.shape).copy_(hist)
        for dst, src in zip(out[1], edges, strict=True):
            dst.resize_(src.shape).copy_(src)
        return _HistogramddResult((out[0], tuple(out[1])))
    return _HistogramddResult((hist, tuple(edges)))


METHODS: dict[str, Any] = {}
