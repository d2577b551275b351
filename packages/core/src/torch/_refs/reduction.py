"""Reference kernels of the reduction and scan groups.

Reductions write a "keepdim" output (every reduced dim kept with size 1); scans write an output
shaped like the input. float16 and bfloat16 accumulate in float32 and round once on store.
NaN propagates through amax/amin, and argmax/argmin point at the first NaN, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core.tensor import Tensor
from .common import load, np_view, store


def _accumulating(fn: Callable[..., np.ndarray]) -> Callable[[Tensor, Tensor, list[int]], None]:
    """A sum-like reduction: numpy's ``fn`` over ``dims`` in the (widened) input dtype."""

    def kernel(out: Tensor, a: Tensor, dims: list[int]) -> None:
        values = load(a, widen_half=True)
        with np.errstate(all="ignore"):  # integer overflow wraps, inf/nan propagate
            store(out, fn(values, axis=tuple(dims), keepdims=True, dtype=values.dtype))

    kernel.__name__ = fn.__name__
    return kernel


def _extreme(fn: Callable[..., np.ndarray]) -> Callable[[Tensor, Tensor, list[int]], None]:
    """amax/amin: numpy's max/min propagate NaN, which is PyTorch's rule."""

    def kernel(out: Tensor, a: Tensor, dims: list[int]) -> None:
        store(out, fn(load(a), axis=tuple(dims), keepdims=True))

    kernel.__name__ = fn.__name__
    return kernel


def _truth(fn: Callable[..., np.ndarray]) -> Callable[[Tensor, Tensor, list[int]], None]:
    """any/all: the input may have any dtype; the output is bool (or uint8, PyTorch's legacy
    result for uint8 inputs)."""

    def kernel(out: Tensor, a: Tensor, dims: list[int]) -> None:
        store(out, fn(load(a) != 0, axis=tuple(dims), keepdims=True))

    kernel.__name__ = fn.__name__
    return kernel


def _arg_extreme(fn: Callable[..., np.ndarray]) -> Callable[[Tensor, Tensor, int], None]:
    """argmax/argmin along one dim: numpy returns the first extreme, and the first NaN when
    there is one (it ranks NaN above everything for both), which is PyTorch's rule."""

    def kernel(out: Tensor, a: Tensor, dim: int) -> None:
        values = load(a)
        if values.ndim == 0:
            np_view(out)[...] = 0
            return
        np_view(out)[...] = fn(values, axis=dim, keepdims=True)

    kernel.__name__ = fn.__name__
    return kernel


def _scan(fn: Callable[..., np.ndarray]) -> Callable[[Tensor, Tensor, int], None]:
    def kernel(out: Tensor, a: Tensor, dim: int) -> None:
        values = load(a, widen_half=True)
        if values.ndim == 0:
            store(out, values)
            return
        with np.errstate(all="ignore"):
            store(out, fn(values, axis=dim, dtype=values.dtype))

    kernel.__name__ = fn.__name__
    return kernel


def _cum_extreme(ufunc: np.ufunc) -> Callable[[Tensor, Tensor, Tensor, int], None]:
    """cummax/cummin with int64 indices; on ties the later index wins and NaN, once seen,
    stays (each later NaN moves the index), as in PyTorch."""

    def kernel(values: Tensor, indices: Tensor, a: Tensor, dim: int) -> None:
        x = load(a)
        if x.ndim == 0:
            store(values, x)
            np_view(indices)[...] = 0
            return
        running = ufunc.accumulate(x, axis=dim)  # maximum/minimum propagate NaN
        hit = running == x
        if a._dtype.is_floating_point:
            hit |= np.isnan(running) & np.isnan(x)
        shape = [1] * x.ndim
        shape[dim] = x.shape[dim]
        position = np.arange(x.shape[dim], dtype=np.int64).reshape(shape)
        # the running extreme at i sits at the last position j <= i where x[j] matched it
        np_view(indices)[...] = np.maximum.accumulate(np.where(hit, position, -1), axis=dim)
        store(values, running)

    kernel.__name__ = f"cum{ufunc.__name__[:3]}"
    return kernel


KERNELS: dict[str, Callable[..., None]] = {
    "sum": _accumulating(np.sum),
    "prod": _accumulating(np.prod),
    "amax": _extreme(np.max),
    "amin": _extreme(np.min),
    "any": _truth(np.any),
    "all": _truth(np.all),
    "argmax": _arg_extreme(np.argmax),
    "argmin": _arg_extreme(np.argmin),
    "cumsum": _scan(np.cumsum),
    "cumprod": _scan(np.cumprod),
    "cummax": _cum_extreme(np.maximum),
    "cummin": _cum_extreme(np.minimum),
}
