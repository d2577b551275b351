"""Resampling and rearranging of ``nn.functional``: ``interpolate``/``upsample``,
``grid_sample``, ``affine_grid``, pixel and channel shuffles.

Interpolation is separable: each spatial dim in turn is a weighted sum of a few
``index_select``-ed slices (1 tap for nearest, 2 for linear, 4 for cubic), or with
``antialias=True`` a matmul with a banded weight matrix, so autograd flows through core ops
without formulas of its own.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np

import torch
from torch import Tensor
from torch.nn import _ops

__all__ = [
    "affine_grid", "channel_shuffle", "grid_sample", "interpolate", "native_channel_shuffle",
    "pixel_shuffle", "pixel_unshuffle", "upsample", "upsample_bilinear", "upsample_nearest",
]

_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "lanczos",
          "area")
_CUBIC_A = -0.75  # the cubic convolution coefficient PyTorch (and OpenCV) use


def _cubic_weights(t: float) -> tuple[float, float, float, float]:
    """Keys' cubic convolution weights of the taps at -1, 0, 1, 2 for fraction ``t``."""
    a = _CUBIC_A

    def near(x: float) -> float:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: float) -> float:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _resample_dim(x: Tensor, dim: int, out: int, mode: str, align_corners: bool,
                  scale: float | None) -> Tensor:
    """``x`` resampled along ``dim`` to ``out`` points. ``scale`` is the user's output/input
    ratio when it is to be used as given (PyTorch's rule), else ``None``."""
    size = x.shape[dim]
    if size == out and mode not in ("nearest", "nearest-exact") and not scale:
        return x
    if mode in ("nearest", "nearest-exact"):
        step = 1.0 / scale if scale else size / out
        off = 0.5 if mode == "nearest-exact" else 0.0
        idx = [min(math.floor((i + off) * step), size - 1) for i in range(out)]
        return x.index_select(dim, torch.tensor(idx, dtype=torch.int64, device=x.device))
    if align_corners:
        step = (size - 1) / (out - 1) if out > 1 else 0.0
        src = [i * step for i in range(out)]
    else:
        step = 1.0 / scale if scale else size / out
        src = [(i + 0.5) * step - 0.5 for i in range(out)]
    taps: list[tuple[list[int], list[float]]]
    if mode == "bicubic":
        taps = [([], []) for _ in range(4)]
        for s in src:
            base = math.floor(s)
            for k, w in enumerate(_cubic_weights(s - base)):
                taps[k][0].append(min(max(base - 1 + k, 0), size - 1))
                taps[k][1].append(w)
    else:
        taps = [([], []), ([], [])]
        for s in src:
            s = max(s, 0.0)
            i0 = min(int(s), size - 1)
            i1 = min(i0 + 1, size - 1)
            lam = s - i0
            taps[0][0].append(i0)
            taps[0][1].append(1.0 - lam)
            taps[1][0].append(i1)
            taps[1][1].append(lam)
    shape = [1] * x.dim()
    shape[dim] = out
    result = None
    for idx, w in taps:
        part = x.index_select(dim, torch.tensor(idx, dtype=torch.int64, device=x.device))
        part = part * torch.tensor(w, dtype=x.dtype, device=x.device).reshape(shape)
        result = part if result is None else result + part
    return result


# ------------------------------------------------------------------- antialiased resampling
#
# ``antialias=True`` resamples like Pillow: output pixel i of a dim takes the input pixels whose
# centres lie within the filter's support of its centre ``scale * (i + 0.5)`` (in input pixel
# units). When shrinking (scale > 1) the filter is stretched by ``scale``, so an output pixel
# averages every input pixel it covers instead of sampling the 2 or 4 nearest; each output's
# weights are normalised to sum to 1, which also handles the borders (taps outside are dropped).
# align_corners changes only the scale, (in - 1) / (out - 1).


def _triangle(x: np.ndarray) -> np.ndarray:
    return np.maximum(1.0 - np.abs(x), 0.0)


def _aa_cubic(x: np.ndarray) -> np.ndarray:
    """Keys' cubic convolution kernel with a = -0.5 (Pillow's; plain bicubic uses -0.75)."""
    a = -0.5
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _lanczos3(x: np.ndarray) -> np.ndarray:
    """The Lanczos-3 windowed sinc: sinc(x) * sinc(x / 3) on |x| < 3."""
    return np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0.0)


# mode -> (filter, support radius in input pixels before stretching)
_AA_FILTERS = {"bilinear": (_triangle, 1.0), "bicubic": (_aa_cubic, 2.0),
               "lanczos": (_lanczos3, 3.0)}


# Each dim's resampling matrix is banded: output rows are cut into blocks of this many, each
# multiplied with just the input columns its taps reach, once a dim is long enough for the
# zeros of a dense (out, in) matrix to cost more than the extra matmul calls.
_AA_BLOCK_ROWS = 64
_AA_DENSE_MAX = 256

# (first input column, one past the last, (rows, last - first) weights) of one row block
_Block = tuple[int, int, np.ndarray]


@functools.lru_cache(maxsize=64)  # data pipelines resize many images between the same sizes
def _aa_blocks(size: int, out: int, mode: str, align_corners: bool,
               scale: float | None) -> tuple[_Block, ...] | None:
    """The (out, size) matrix of antialiased resampling along one dim as row blocks in output
    order, or None where it is the identity (the pass is skipped). ``scale`` is the user's
    output/input ratio when it is to be used as given, else ``None``. Arrays are shared:
    read-only."""
    if align_corners:
        step = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        step = 1.0 / scale if scale else size / out
    kernel, radius = _AA_FILTERS[mode]
    stretch = max(step, 1.0)  # shrinking widens the filter; enlarging keeps it
    support = radius * stretch
    centre = step * (np.arange(out, dtype=np.float64) + 0.5)
    # the first and one-past-last taps, truncated towards zero like Pillow's bounds; both
    # grow with the output index, so a block of rows reaches [first[o0], stop[o1 - 1])
    first = np.maximum(np.trunc(centre - support + 0.5), 0).astype(np.int64)
    stop = np.minimum(np.trunc(centre + support + 0.5), size).astype(np.int64)
    rows = out if size <= _AA_DENSE_MAX else _AA_BLOCK_ROWS
    blocks = []
    for o0 in range(0, out, rows):
        o1 = min(o0 + rows, out)
        lo = int(first[o0])
        hi = max(int(stop[o1 - 1]), lo + 1)
        taps = np.arange(lo, hi, dtype=np.int64)[None, :]
        w = kernel((taps + 0.5 - centre[o0:o1, None]) / stretch)
        w = np.where((taps >= first[o0:o1, None]) & (taps < stop[o0:o1, None]), w, 0.0)
        total = w.sum(axis=1, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
        w.flags.writeable = False
        blocks.append((lo, hi, w))
    if out == size and len(blocks) == 1 and np.array_equal(blocks[0][2], np.eye(size)):
        return None
    return tuple(blocks)


def _aa_pass(x: Tensor, blocks: tuple[_Block, ...], dim: int) -> Tensor:
    """``x`` (N, C, H, W) resampled along ``dim`` (3: width, 2: height) by ``blocks``."""
    parts = []
    for lo, hi, w in blocks:
        wt = torch.tensor(w, dtype=x.dtype, device=x.device)
        part = x.narrow(dim, lo, hi - lo)
        # (N, C, H, w) @ (w, rows) -> (N, C, H, rows); (rows, h) @ (N, C, h, W) -> (N, C, rows, W)
        parts.append(torch.matmul(part, wt.T) if dim == 3 else torch.matmul(wt, part))
    return parts[0] if len(parts) == 1 else torch.cat(parts, dim)


@functools.lru_cache(maxsize=64)
def _aa_uint8_blocks(size: int, out: int, mode: str, align_corners: bool,
                     scale: float | None) -> tuple[tuple[_Block, ...], int, torch.dtype] | None:
    """Pillow's uint8 weights: int16, scaled by as many bits (at most 22) as keep the dim's
    largest weight below 2**15, rounded half away from zero. Also the float dtype that holds
    every partial sum (<= 255 * the largest row sum of |weights|) exactly."""
    blocks = _aa_blocks(size, out, mode, align_corners, scale)
    if blocks is None:
        return None
    largest = max(float(w.max()) for _, _, w in blocks)
    bits = 0
    while bits < 22 and int(0.5 + largest * 2 ** (bits + 1)) < 2 ** 15:
        bits += 1
    ints = []
    for lo, hi, w in blocks:
        scaled = w * 2 ** bits
        q = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
        q.flags.writeable = False
        ints.append((lo, hi, q))
    reach = 255 * max(float(np.abs(q).sum(axis=1).max()) for _, _, q in ints) + 2 ** bits
    return tuple(ints), bits, torch.float32 if reach < 2 ** 24 else torch.float64


def _interpolate_aa(x: Tensor, outs: list[int], mode: str, align_corners: bool,
                    scales: list[float | None]) -> Tensor:
    """Antialiased (N, C, H, W) -> (N, C, *outs): per spatial dim (width first, like Pillow)
    matmuls with blocks of its weight matrix, so autograd needs nothing of its own."""
    dtype = x.dtype
    if dtype != torch.uint8 and not x.is_floating_point():
        raise NotImplementedError(f"interpolate(antialias=True) is not implemented for {dtype}")
    keys = [(3, (x.shape[3], outs[1], mode, align_corners, scales[1])),
            (2, (x.shape[2], outs[0], mode, align_corners, scales[0]))]
    if dtype == torch.uint8:
        # Pillow's fixed point, rounded and saturated after each pass; the float dtype holds
        # the integer sums exactly
        plans = [(dim, _aa_uint8_blocks(*key)) for dim, key in keys]
        plans = [(dim, plan) for dim, plan in plans if plan is not None]
        if not plans:
            return x.clone()  # a new tensor, as from any resize
        for dim, (blocks, bits, exact) in plans:
            x = _aa_pass(x.to(exact), blocks, dim)
            x = torch.floor((x + 2 ** (bits - 1)) / 2 ** bits).clamp(0, 255)
        return x.to(torch.uint8)
    passes = [(dim, _aa_blocks(*key)) for dim, key in keys]
    passes = [(dim, blocks) for dim, blocks in passes if blocks is not None]
    if not passes:
        return x.clone()
    if dtype in (torch.float16, torch.bfloat16):
        x = x.to(torch.float32)  # accumulate in float32, as for the other reductions
    for dim, blocks in passes:
        x = _aa_pass(x, blocks, dim)
    return x.to(dtype)


def _sizes_text(sizes: list[int]) -> str:
    """``"H: 8, W: 8"``: spatial sizes labelled as PyTorch's size errors label them."""
    return ", ".join(f"{label}: {s}" for label, s in zip("DHW"[3 - len(sizes):], sizes))


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the spatial dims of (N, C, *spatial) by ``size`` or ``scale_factor`` with
    nearest, nearest-exact, (bi/tri)linear, bicubic or area interpolation; ``antialias``
    (4-D bilinear, bicubic and lanczos) filters like Pillow when shrinking."""
    n = input.dim() - 2
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != n:
                raise ValueError(f"Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{list(input.shape[2:])} and output size of {size}. Please "
                                 "provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "output size in (o1, o2, ...,oK) format.")
            outs = [int(v) for v in size]
        else:
            outs = [int(size)] * max(n, 0)
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        scales: list[float | None] = [None] * max(n, 0)
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != n:
                raise ValueError(f"Input and scale_factor must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, "
                                 "d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                                 "format.")
            factors = [float(v) for v in scale_factor]
        else:
            factors = [float(scale_factor)] * max(n, 0)
        outs = [math.floor(float(s) * f) for s, f in zip(input.shape[2:], factors)]
        # the given factor drives the coordinate map unless the size is to be recomputed
        scales = [None] * n if recompute_scale_factor else list(factors)
    else:
        raise ValueError("either size or scale_factor should be defined")
    if antialias and not (mode in _AA_FILTERS and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode not in _MODES or not 1 <= n <= 3 or (mode == "lanczos" and n != 2):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.dim()}D) for the modes: nearest | linear | "
                                  f"bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode in _MODE_DIMS and _MODE_DIMS[mode] != n:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{_MODE_DIMS[mode] + 2}D input")
    if mode == "area":
        return _ops.adaptive_avg_pool(input, n, outs)
    if any(o <= 0 for o in outs) or any(s <= 0 for s in input.shape[2:]):
        joiner = " and output" if n == 1 else " output"
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({_sizes_text(list(input.shape[2:]))}){joiner} "
                           f"({_sizes_text(outs)})")
    if antialias:
        return _interpolate_aa(input, outs, mode, bool(align_corners), scales)
    if mode == "nearest" and n == 2:  # one operator, as in PyTorch
        return torch.ops.aten.upsample_nearest2d.default(input, outs, scales[0], scales[1])
    if mode == "bilinear":  # one operator, as in PyTorch
        return torch.ops.aten.upsample_bilinear2d.default(input, outs, bool(align_corners),
                                                          scales[0], scales[1])
    x = input
    for i in range(n):
        x = _resample_dim(x, 2 + i, outs[i], mode, bool(align_corners), scales[i])
    return x


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated alias of ``interpolate``."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use "
                  "nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use "
                  "nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# --------------------------------------------------------------------------- grid sampling


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
                  "since 1.3.0. Please specify align_corners=True if the old behavior is "
                  "desired. See the documentation of grid_sample for details.")


# PyTorch's enums of grid_sampler's interpolation and padding modes
_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample (N, C, [D,] H, W) by bilinear, nearest or (4-D only) bicubic interpolation at
    the normalised (x, y[, z]) points of ``grid``
    (N, [D_out,] H_out, W_out, 2|3); -1 and 1 are the outer pixel edges (centres with
    ``align_corners``)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    n = input.dim() - 2
    if n not in (2, 3) or grid.dim() != input.dim() or grid.shape[-1] != n:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same "
                           f"number of dimensions, and grid's last dim equal to the number of "
                           f"spatial dims, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and n != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    # PyTorch's operators (what a mode sees), with their backward operators
    sampler = (torch.ops.aten.grid_sampler_2d if n == 2 else torch.ops.aten.grid_sampler_3d)
    return sampler.default(input, grid, _GRID_MODES[mode], _GRID_PADDINGS[padding_mode],
                           align_corners)


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps ``theta``
    (N, 2, 3) (or (N, 3, 4)) over the normalised output coordinates."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {list(theta.shape)}.")
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {list(theta.shape)}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    # PyTorch's operator (what a mode sees), with its backward operator
    return torch.ops.aten.affine_grid_generator.default(theta, size, align_corners)


# --------------------------------------------------------------------------- shuffles


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r): ``aten::pixel_shuffle``, as in PyTorch."""
    return torch.ops.aten.pixel_shuffle.default(input, upscale_factor)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W), the inverse of ``pixel_shuffle``:
    ``aten::pixel_unshuffle``, as in PyTorch."""
    return torch.ops.aten.pixel_unshuffle.default(input, downscale_factor)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the ``groups`` channel groups of (N, C, *): channel g*(C/g)+i moves to
    i*groups+g."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value "
                           f"of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    n, rest = input.shape[0], list(input.shape[2:])
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle
