"""Reference kernels of the unary, binary, compare and ternary groups."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .common import load, np_view, store


def binary(ufunc: np.ufunc) -> Callable[[Tensor, Tensor, Tensor], None]:
    """A kernel applying a numpy ufunc; bfloat16 computes in float32 and rounds back."""

    def kernel(out: Tensor, a: Tensor, b: Tensor) -> None:
        if out._dtype is _dtype.bfloat16:
            store(out, ufunc(load(a), load(b)))
        else:
            with np.errstate(all="ignore"):  # integer overflow wraps, as in PyTorch
                ufunc(np_view(a), np_view(b), out=np_view(out))

    kernel.__name__ = ufunc.__name__
    return kernel


KERNELS: dict[str, Callable[..., None]] = {
    "add": binary(np.add),
    "mul": binary(np.multiply),
}
