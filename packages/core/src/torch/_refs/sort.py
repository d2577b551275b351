"""Reference kernels of the sort group: sort, topk, searchsorted.

NaN sorts as the largest value (last ascending, first descending). Sorting is always stable,
so equal values keep their original order in both directions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core.tensor import Tensor
from .common import load, np_view, store


def _stable_order(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Indices that sort ``x`` along ``dim``, stably, NaN largest."""
    if not descending:
        return np.argsort(x, axis=dim, kind="stable")  # numpy puts NaN last
    # Sorting the reversed slice ascending and reading the result backwards gives descending
    # order in which equal values keep their original order (and NaN comes first).
    n = x.shape[dim]
    backwards = np.argsort(np.flip(x, axis=dim), axis=dim, kind="stable")
    return (n - 1) - np.flip(backwards, axis=dim)


def sort(values: Tensor, indices: Tensor, a: Tensor, dim: int, descending: bool = False,
         stable: bool = True) -> None:
    x = load(a)
    if x.ndim == 0:
        store(values, x)
        np_view(indices)[...] = 0
        return
    order = _stable_order(x, dim, descending)
    np_view(indices)[...] = order
    store(values, np.take_along_axis(x, order, axis=dim))


def topk(values: Tensor, indices: Tensor, a: Tensor, k: int, dim: int, largest: bool = True,
         sorted: bool = True) -> None:
    x = load(a)
    if x.ndim == 0:
        store(values, x)
        np_view(indices)[...] = 0
        return
    order = np.take(_stable_order(x, dim, largest), np.arange(k), axis=dim)
    np_view(indices)[...] = order
    store(values, np.take_along_axis(x, order, axis=dim))


def searchsorted(out: Tensor, sorted_sequence: Tensor, values: Tensor, right: bool = False) -> None:
    """A bisection per value with PyTorch's comparisons (``seq[mid] >= v`` for the left side,
    ``seq[mid] > v`` for the right), so a NaN anywhere lands where PyTorch puts it."""
    seq = load(sorted_sequence)
    vals = load(values)
    n, m = seq.shape[-1], vals.shape[-1]
    if n == 0 or vals.size == 0:
        np_view(out)[...] = 0
        return
    rows = seq.reshape(-1, n)
    targets = vals.reshape(-1, m)
    start = np.zeros(targets.shape, np.int64)
    end = np.full(targets.shape, n, np.int64)
    while True:
        active = start < end
        if not active.any():
            break
        mid = start + (end - start) // 2
        probe = np.take_along_axis(rows, np.minimum(mid, n - 1), axis=1)
        stop = probe > targets if right else probe >= targets
        start = np.where(active & ~stop, mid + 1, start)
        end = np.where(active & stop, mid, end)
    np_view(out)[...] = start.reshape(vals.shape)


KERNELS: dict[str, Callable[..., None]] = {
    "sort": sort,
    "topk": topk,
    "searchsorted": searchsorted,
}
