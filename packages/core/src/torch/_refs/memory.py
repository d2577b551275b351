"""Reference kernels of the memory group: strided copies with casts, fills, ranges."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._core import dtype as _dtype
from .._core.tensor import Tensor
from .common import NP_DTYPES, check_scalar_fits, convert, f32_to_bf16, np_view, store


def copy_(out: Tensor, src: Tensor) -> None:
    values = np_view(src)
    if src._dtype is not out._dtype:
        values = convert(values, src._dtype, out._dtype)
    np_view(out)[...] = values


def fill_(out: Tensor, value: Any) -> None:
    check_scalar_fits(value, out._dtype)
    if out._dtype is _dtype.bfloat16:
        np_view(out)[...] = f32_to_bf16(np.float32(value))
    elif out._dtype is _dtype.bool_:
        np_view(out)[...] = bool(value)
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            np_view(out)[...] = np.array(value).astype(NP_DTYPES[out._dtype], casting="unsafe")


def arange_(out: Tensor, start: Any, step: Any) -> None:
    n = out._shape[0]
    if out._dtype._category <= _dtype.INT and isinstance(start, int) and isinstance(step, int):
        values: Any = start + step * np.arange(n, dtype=np.int64)
    else:
        values = start + step * np.arange(n, dtype=np.float64)
    store(out, values)


KERNELS: dict[str, Callable[..., None]] = {"copy_": copy_, "fill_": fill_, "arange_": arange_}
