"""``F.pad``, pooling, ``batch_norm`` and ``leaky_relu`` with PyTorch's signatures, over the
composites of ``torch.nn._ops``."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch.nn import _ops

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "batch_norm", "bilinear",
    "leaky_relu",
    "max_pool1d", "max_pool2d", "max_pool3d", "pad",
]

pad = _ops.pad
batch_norm = _ops.batch_norm
leaky_relu = _ops.leaky_relu


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError("bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    out = torch.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def _max_pool(n: int) -> Any:
    def fn(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
           dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
        return _ops.max_pool(input, n, kernel_size, stride, padding, dilation, ceil_mode,
                             return_indices)

    fn.__name__ = fn.__qualname__ = f"max_pool{n}d"
    fn.__doc__ = f"{n}-d max pooling (padding counts as -inf; indices into the input plane)."
    return fn


def _avg_pool(n: int) -> Any:
    def fn(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
           ceil_mode: bool = False, count_include_pad: bool = True,
           divisor_override: int | None = None) -> Tensor:
        return _ops.avg_pool(input, n, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override)

    fn.__name__ = fn.__qualname__ = f"avg_pool{n}d"
    fn.__doc__ = f"{n}-d average pooling."
    return fn


def _adaptive(n: int, maximum: bool) -> Any:
    def max_fn(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
        return _ops.adaptive_max_pool(input, n, output_size, return_indices)

    def avg_fn(input: Tensor, output_size: Any) -> Any:  # (no return_indices, as in PyTorch)
        return _ops.adaptive_avg_pool(input, n, output_size)

    fn = max_fn if maximum else avg_fn

    kind = "max" if maximum else "avg"
    fn.__name__ = fn.__qualname__ = f"adaptive_{kind}_pool{n}d"
    fn.__doc__ = f"{n}-d adaptive {kind} pooling: windows [floor(i*L/O), ceil((i+1)*L/O))."
    return fn


max_pool1d, max_pool2d, max_pool3d = (_max_pool(n) for n in (1, 2, 3))
avg_pool1d, avg_pool2d, avg_pool3d = (_avg_pool(n) for n in (1, 2, 3))
adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d = (
    _adaptive(n, False) for n in (1, 2, 3))
adaptive_max_pool1d, adaptive_max_pool2d = (_adaptive(n, True) for n in (1, 2))
