"""``F.pad``, pooling, ``batch_norm`` and ``leaky_relu`` with PyTorch's signatures, over the
composites of ``torch.nn._ops``."""

from __future__ import annotations

from typing import Any

from torch import Tensor
from torch.nn import _ops

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "batch_norm", "leaky_relu",
    "max_pool1d", "max_pool2d", "max_pool3d", "pad",
]

pad = _ops.pad
batch_norm = _ops.batch_norm
leaky_relu = _ops.leaky_relu


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
    def fn(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
        if maximum:
            return _ops.adaptive_max_pool(input, n, output_size, return_indices)
        return _ops.adaptive_avg_pool(input, n, output_size)

    kind = "max" if maximum else "avg"
    fn.__name__ = fn.__qualname__ = f"adaptive_{kind}_pool{n}d"
    fn.__doc__ = f"{n}-d adaptive {kind} pooling: windows [floor(i*L/O), ceil((i+1)*L/O))."
    return fn


max_pool1d, max_pool2d, max_pool3d = (_max_pool(n) for n in (1, 2, 3))
avg_pool1d, avg_pool2d, avg_pool3d = (_avg_pool(n) for n in (1, 2, 3))
adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d = (
    _adaptive(n, False) for n in (1, 2, 3))
adaptive_max_pool1d, adaptive_max_pool2d = (_adaptive(n, True) for n in (1, 2))
