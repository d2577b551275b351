"""Reference kernels of the reduction and scan groups."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._tensor import Tensor
from .common import load, store


def sum_(out: Tensor, a: Tensor, dims: list[int]) -> None:
    values = load(a, widen_half=True)
    with np.errstate(all="ignore"):
        store(out, np.sum(values, axis=tuple(dims), keepdims=True, dtype=values.dtype))


KERNELS: dict[str, Callable[..., None]] = {"sum": sum_}
