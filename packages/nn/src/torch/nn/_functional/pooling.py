"""``max_unpool*``, ``lp_pool*`` and ``adaptive_max_pool3d`` of ``nn.functional``."""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor
from torch.nn import _ops

__all__ = [
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "max_unpool1d", "max_unpool2d", "max_unpool3d",
]


def _unpool_size(input: Tensor, n: int, kernel: tuple[int, ...], stride: tuple[int, ...],
                 padding: tuple[int, ...], output_size: Any) -> list[int]:
    default = [(input.shape[-n + i] - 1) * stride[i] - 2 * padding[i] + kernel[i]
               for i in range(n)]
    if output_size is None:
        return default
    size = [int(v) for v in output_size]
    if len(size) == n + 2 or (len(size) == n + 1 and input.dim() == n + 1):
        size = size[-n:]
    if len(size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} "
                         f"elements, but it has a length of '{len(size)}'")
    for i in range(n):
        lo, hi = default[i] - stride[i], default[i] + stride[i]
        if not lo < size[i] < hi:
            raise ValueError(f'invalid output_size "{size}" (dim {i} must be between {lo} '
                             f"and {hi})")
    return size


def _max_unpool(n: int) -> Any:
    def fn(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
           padding: Any = 0, output_size: Any = None) -> Tensor:
        k = _ops.ntuple(kernel_size, n, "kernel_size")
        s = k if stride is None else _ops.ntuple(stride, n, "stride")
        p = _ops.ntuple(padding, n, "padding")
        if input.dim() not in (n + 1, n + 2):
            raise RuntimeError(f"max_unpool{n}d: Expected {n + 1}D or {n + 2}D input, but got "
                               f"{input.dim()}D")
        if indices.shape != input.shape:
            raise RuntimeError(f"Expected shape of indices to be same as that of the input "
                               f"tensor ({list(input.shape)}) but got indices tensor with shape:"
                               f" {list(indices.shape)}")
        size = _unpool_size(input, n, k, s, p, output_size)
        batched = input.dim() == n + 2
        x = input if batched else input.unsqueeze(0)
        idx = indices if batched else indices.unsqueeze(0)
        plane = 1
        for v in size:
            plane *= v
        per_plane = math.prod(x.shape[2:])  # explicit: -1 is ambiguous for empty batches
        flat_idx = idx.reshape(x.shape[0], x.shape[1], per_plane).to(torch.int64)
        if flat_idx.numel() and (int(flat_idx.min()) < 0 or int(flat_idx.max()) >= plane):
            raise RuntimeError(f"Found an invalid max index: {int(flat_idx.max())} (output "
                               f"volumes are of size {'x'.join(str(v) for v in size)})")
        out = torch.zeros((x.shape[0], x.shape[1], plane), dtype=x.dtype, device=x.device)
        out = out.scatter(2, flat_idx, x.reshape(x.shape[0], x.shape[1], per_plane))
        out = out.reshape(x.shape[0], x.shape[1], *size)
        return out if batched else out.squeeze(0)

    fn.__name__ = fn.__qualname__ = f"max_unpool{n}d"
    fn.__doc__ = (f"Partial inverse of max_pool{n}d: each value goes to the flat position its "
                  "index names in the output plane, zeros elsewhere.")
    return fn


max_unpool1d, max_unpool2d, max_unpool3d = (_max_unpool(n) for n in (1, 2, 3))


def _lp_pool(n: int) -> Any:
    def fn(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
           ceil_mode: bool = False) -> Tensor:
        k = _ops.ntuple(kernel_size, n, "kernel_size")
        count = 1
        for v in k:
            count *= v
        x = input.pow(norm_type) if norm_type != 1 else input
        out = _ops.avg_pool(x, n, k, stride, 0, ceil_mode)
        # the window mean times its size is the sum of x**p (a negative sum, possible for odd
        # p, has no real root: NaN, as in PyTorch)
        return (out * count).pow(1.0 / norm_type)

    fn.__name__ = fn.__qualname__ = f"lp_pool{n}d"
    fn.__doc__ = f"{n}-d power-average pooling: (sum over each window of x**p) ** (1/p)."
    return fn


lp_pool1d, lp_pool2d, lp_pool3d = (_lp_pool(n) for n in (1, 2, 3))


def _adaptive_max_with_indices(n: int) -> Any:
    def fn(input: Tensor, output_size: Any, return_indices: bool = True) -> Any:
        return _ops.adaptive_max_pool(input, n, output_size, return_indices)

    fn.__name__ = fn.__qualname__ = f"adaptive_max_pool{n}d_with_indices"
    fn.__doc__ = f"{n}-d adaptive max pooling returning (values, indices)."
    return fn


adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices, \
    adaptive_max_pool3d_with_indices = (_adaptive_max_with_indices(n) for n in (1, 2, 3))


def _max_pool_with_indices(n: int) -> Any:
    # PyTorch's *_with_indices functions return (values, indices) whatever return_indices
    # says: the flag is only there so that they share max_poolNd's signature.
    def fn(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
           dilation: Any = 1, ceil_mode: bool = False,
           return_indices: bool = False) -> tuple[Tensor, Tensor]:
        return _ops.max_pool(input, n, kernel_size, stride, padding, dilation, ceil_mode, True)

    fn.__name__ = fn.__qualname__ = f"max_pool{n}d_with_indices"
    fn.__doc__ = f"{n}-d max pooling returning (values, indices into the input plane)."
    return fn


max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d_with_indices = (
    _max_pool_with_indices(n) for n in (1, 2, 3))


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """3-d adaptive max pooling: windows [floor(i*L/O), ceil((i+1)*L/O))."""
    return _ops.adaptive_max_pool(input, 3, output_size, return_indices)


def _fractional_starts(u: Tensor, size: int, out: int, k: int) -> Tensor:
    """Window starts (N, C, out) of pseudo-random fractional pooling for the samples ``u``
    (N, C) in [0, 1): ``floor((i + u) * alpha) - floor(u * alpha)``, the last window flush with
    the end."""
    last = torch.full((*u.shape, 1), size - k, dtype=torch.int64, device=u.device)
    if out == 1:
        return last
    # computed in the samples' dtype, as PyTorch does (float32 rounding moves some starts)
    alpha = (torch.tensor(size - k, dtype=u.dtype, device=u.device) /
             torch.tensor(out - 1, dtype=u.dtype, device=u.device))
    i = torch.arange(out - 1, device=u.device).to(u.dtype)
    u = u.unsqueeze(-1)
    starts = (torch.floor((i + u) * alpha) - torch.floor(u * alpha)).to(torch.int64)
    return torch.cat([starts, last], -1)


def _fractional(n: int, with_indices: bool) -> Any:
    def fn(input: Tensor, kernel_size: Any, output_size: Any = None,
           output_ratio: Any = None, return_indices: bool = False,
           _random_samples: Tensor | None = None) -> Any:
        if output_size is None and output_ratio is None:
            raise ValueError(f"fractional_max_pool{n}d requires specifying either an "
                             "output_size or an output_ratio")
        if input.dim() not in (n + 1, n + 2):
            raise RuntimeError(f"fractional_max_pool{n}d(): Expected {n + 1}D or {n + 2}D "
                               f"tensor, but got: {list(input.shape)}")
        batched = input.dim() == n + 2
        x = input if batched else input.unsqueeze(0)
        sizes = list(x.shape[2:])
        k = _ops.ntuple(kernel_size, n, "kernel_size")
        if output_size is None:
            ratio = output_ratio if isinstance(output_ratio, (list, tuple)) else \
                (output_ratio,) * n
            outs = [int(sz * float(r)) for sz, r in zip(sizes, ratio)]
        else:
            outs = list(_ops.ntuple(output_size, n, "output_size"))
        for i in range(n):
            if outs[i] + k[i] - 1 > sizes[i]:
                raise RuntimeError(f"fractional_max_pool{n}d(): pool size {k[i]} too large "
                                   f"relative to input size {sizes[i]} and output size "
                                   f"{outs[i]}")
        batch, chans = x.shape[0], x.shape[1]
        if _random_samples is None:
            samples = torch.rand((batch, chans, n), dtype=x.dtype, device=x.device)
        else:
            samples = _random_samples.reshape(batch, chans, n).to(x.dtype)
        # PyTorch's sample order: (width, height) in 2-d but (time, height, width) in 3-d
        order = [1, 0] if n == 2 else [0, 1, 2]
        lin = None
        for i in range(n):
            starts = _fractional_starts(samples[..., order[i]], sizes[i], outs[i], k[i])
            pos = starts.unsqueeze(-1) + torch.arange(k[i], device=x.device)  # (N, C, O, K)
            shape = [batch, chans] + [1] * (2 * n)
            shape[2 + i], shape[2 + n + i] = outs[i], k[i]
            pos = pos.reshape(shape)
            lin = pos if lin is None else lin * sizes[i] + pos
        lin = lin.expand(batch, chans, *outs, *k)
        plane = math.prod(sizes)
        flat = x.reshape(batch, chans, plane)
        taps = math.prod(k)
        idx = lin.reshape(batch, chans, math.prod(outs) * taps)
        win = flat.gather(2, idx).reshape(batch, chans, *outs, taps)
        values, arg = _ops.window_max(win)
        if not (return_indices or with_indices):
            return values if batched else values.squeeze(0)
        index = lin.reshape(batch, chans, *outs, taps).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
        if not batched:
            values, index = values.squeeze(0), index.squeeze(0)
        return values, index

    name = f"fractional_max_pool{n}d" + ("_with_indices" if with_indices else "")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{n}-d fractional max pooling (Graham): ``kernel_size`` windows at "
                  "pseudo-random, increasing starts that cover the input in ``output_size`` "
                  "steps.")
    return fn


fractional_max_pool2d = _fractional(2, False)
fractional_max_pool3d = _fractional(3, False)
fractional_max_pool2d_with_indices = _fractional(2, True)
fractional_max_pool3d_with_indices = _fractional(3, True)
