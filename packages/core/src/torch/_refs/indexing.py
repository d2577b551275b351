"""Reference kernels of the indexing group: gather, scatter_, nonzero.

Core checks index dtypes, shapes and bounds before calling these (so that every backend
reports errors the same way); the kernels still refuse an out-of-range index rather than
touching memory they do not own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._core import dtype as _dtype
from .._core.alloc import new_tensor
from .._core.tensor import Tensor
from .common import NP_DTYPES, load, np_view, store


def _coords(index: np.ndarray, dim: int, size: int) -> tuple[np.ndarray, ...]:
    """Full coordinates of the elements ``index`` points at: every position of ``index``
    with its ``dim`` coordinate replaced by the index value there."""
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = index[(index < 0) | (index >= size)].flat[0]
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _as_1d(*arrays: np.ndarray) -> list[np.ndarray]:
    """0-d tensors index like 1-element vectors."""
    return [a.reshape(1) if a.ndim == 0 else a for a in arrays]


def gather(out: Tensor, a: Tensor, dim: int, index: Tensor) -> None:
    values, idx = _as_1d(np_view(a), np_view(index))
    # the same bits move: bfloat16 needs no widening
    store_view = np_view(out)
    store_view[...] = values[_coords(idx, dim, values.shape[dim])].reshape(store_view.shape)


# reduce -> (numpy ufunc applied unbuffered, identity written first when self is excluded)
_UFUNCS: dict[str, np.ufunc] = {"sum": np.add, "mean": np.add, "prod": np.multiply,
                                "amax": np.maximum, "amin": np.minimum}


def _identity(reduce: str, dt: np.dtype) -> Any:
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dt.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dt.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dt)
    return info.min if reduce == "amax" else info.max


def scatter_(out: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str = "none",
             include_self: bool = True) -> None:
    idx = np_view(index)
    if out.ndim == 0:
        idx = idx.reshape(1)
    if idx.size == 0:
        return
    # src may be larger than index: only its leading part along every dim is used
    src_v = load(src, widen_half=True)
    if src_v.ndim == 0:
        src_v = src_v.reshape(1)
    src_v = src_v[tuple(slice(0, n) for n in idx.shape)]
    target = load(out, widen_half=True)
    work = target.reshape(1).copy() if out.ndim == 0 else target.copy()
    coords = _coords(idx, dim, work.shape[dim])
    if reduce == "none":
        work[coords] = src_v
    else:
        ufunc = _UFUNCS.get(reduce)
        if ufunc is None:
            raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                               f"got {reduce}")
        if work.dtype == np.bool_ and ufunc is np.add:
            ufunc = np.logical_or
        elif work.dtype == np.bool_ and ufunc is np.multiply:
            ufunc = np.logical_and
        if not include_self:
            work[coords] = _identity(reduce, work.dtype)
        with np.errstate(all="ignore"):
            ufunc.at(work, coords, src_v)
        if reduce == "mean":
            counts = np.zeros(work.shape, np.int64)
            np.add.at(counts, coords, 1)
            if include_self:
                counts += 1
            counts = np.maximum(counts, 1)
            if work.dtype.kind in "fc":
                work = work / counts
            else:
                work = np.floor_divide(work, counts).astype(work.dtype)
    store(out, work.reshape(target.shape))


def nonzero(a: Tensor) -> Tensor:
    values = load(a)
    coords = np.argwhere(values != 0).astype(NP_DTYPES[_dtype.int64])
    # PyTorch's layout: (n, ndim) with column-major strides, each dim's coordinates contiguous
    out = new_tensor(coords.shape[::-1], _dtype.int64, a._device)
    np_view(out)[...] = coords.T
    return out.t()


KERNELS: dict[str, Callable[..., Any]] = {"gather": gather, "scatter_": scatter_,
                                          "nonzero": nonzero}
