"""Reference kernels of the linear-algebra group: batched matmul."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core import dtype as _dtype
from .._core.tensor import Tensor
from .common import load, np_view, store


def matmul(out: Tensor, a: Tensor, b: Tensor) -> None:
    """``out[..., i, j] = sum_k a[..., i, k] * b[..., k, j]``.

    ``a``, ``b`` and ``out`` share the output's dtype and batch dims (already broadcast, maybe
    with stride 0); any strides are accepted. Integers compute exactly in int64 and wrap into
    the output's width (modular arithmetic, so the low bits match an accumulation in the
    narrower type); bool is "any k with a and b"; float16 and bfloat16 accumulate in float32.
    """
    dt = out._dtype
    if dt is _dtype.bool_:
        product = np.matmul(np_view(a).astype(np.int64), np_view(b).astype(np.int64)) != 0
    elif dt._category <= _dtype.INT:
        with np.errstate(over="ignore"):
            product = np.matmul(np_view(a).astype(np.int64), np_view(b).astype(np.int64))
        product = product.astype(np_view(out).dtype, casting="unsafe")
    else:
        product = np.matmul(load(a, widen_half=True), load(b, widen_half=True))
    store(out, product)


KERNELS: dict[str, Callable[..., None]] = {"matmul": matmul}
