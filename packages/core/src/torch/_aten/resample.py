"""Upsampling as PyTorch's ``aten::`` operators: ``upsample_nearest2d`` /
``upsample_bilinear2d`` and their backward operators (``F.interpolate(x, ...,
mode="nearest" | "bilinear")`` on a 4-D input).

Output pixel ``i`` of a dim reads input pixel ``min(floor(i * step), size - 1)``, where
``step`` is ``1 / scale`` when the caller's scale factor is given and ``size / out`` otherwise
(PyTorch's rule). The forward gathers rows then columns (``index_select``); the backward adds
each output gradient into the input pixel it read (``index_add`` along each dim). Composite
kernels: every backend and the meta device serve them. The derivatives are formulas
(``torch.autograd._formulas.nn_layout``): both operators are linear, each the other's
gradient.

Bilinear output ``i`` of a dim reads input ``s = i * (size - 1) / (out - 1)`` with
``align_corners``, else ``s = max((i + 0.5) * step - 0.5, 0)``: ``(1 - l) * x[i0] + l *
x[i1]`` with ``i0 = floor(s)``, ``i1 = min(i0 + 1, size - 1)``, ``l = s - i0``, one dim after
the other (rows, then columns); the backward adds the weighted gradients back
(``index_add``), columns first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._core import dispatch as _dispatch, dtype as _dtype
from .._core.tensor import Tensor
from . import factories as _fac, indexing as _indexing, shape as _shape

__all__: list[str] = []  # F.interpolate comes from plait-nn


def nearest_source(size: int, out: int, scale: float | None) -> list[int]:
    """The input position each of the ``out`` outputs of a dim of ``size`` reads."""
    step = 1.0 / scale if scale else size / out
    return [min(math.floor(i * step), size - 1) for i in range(out)]


def _positions(like: Tensor, size: int, out: int, scale: float | None) -> Tensor:
    return _fac.tensor(nearest_source(size, out, scale), dtype=_dtype.int64, device=like.device)


def _check_sizes(name: str, input_size: Sequence[int], output_size: Sequence[int]) -> None:
    if len(output_size) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size "
                           f"{len(output_size)}")
    if min(input_size[2:]) <= 0 or min(output_size) <= 0:
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"(H: {input_size[2]}, W: {input_size[3]}) output (H: "
                           f"{output_size[0]}, W: {output_size[1]})")


def _upsample_nearest2d(self: Tensor, output_size: Sequence[int],
                        scales_h: float | None = None, scales_w: float | None = None) -> Tensor:
    """(N, C, H, W) -> (N, C, *output_size), nearest neighbour (floor) sampling."""
    if self.dim() != 4:
        raise RuntimeError(f"Non-empty 4D data tensor expected but got a tensor with sizes "
                           f"{list(self.shape)}")
    out_h, out_w = (int(v) for v in output_size)
    _check_sizes("upsample_nearest2d", list(self.shape), [out_h, out_w])
    h, w = self.shape[2], self.shape[3]
    # positions built here are in range: gathered without index_select's range check, which
    # reads the index's extremes on the host (a wait for an accelerator's queue)
    rows = _shape.gather_slices(self, 2, _positions(self, h, out_h, scales_h))
    return _shape.gather_slices(rows, 3, _positions(self, w, out_w, scales_w))


def _upsample_nearest2d_backward(grad_output: Tensor, output_size: Sequence[int],
                                 input_size: Sequence[int], scales_h: float | None = None,
                                 scales_w: float | None = None) -> Tensor:
    """The input's gradient: each output gradient summed into the input pixel it read."""
    n, c, h, w = (int(v) for v in input_size)
    out_h, out_w = (int(v) for v in output_size)
    _check_sizes("upsample_nearest2d_backward", [n, c, h, w], [out_h, out_w])
    if list(grad_output.shape) != [n, c, out_h, out_w]:
        raise RuntimeError(f"Expected grad_output to have the shape {[n, c, out_h, out_w]}, "
                           f"but got {list(grad_output.shape)}")
    dtype, device = grad_output.dtype, grad_output.device
    # in-range positions: added through the scatter primitive, without index_add's check
    cols = _indexing._index_scatter(_fac.zeros((n, c, out_h, w), dtype=dtype, device=device), 3,
                                    _positions(grad_output, w, out_w, scales_w), grad_output,
                                    "sum")
    return _indexing._index_scatter(_fac.zeros((n, c, h, w), dtype=dtype, device=device), 2,
                                    _positions(grad_output, h, out_h, scales_h), cols, "sum")


def linear_taps(size: int, out: int, align_corners: bool,
                scale: float | None) -> list[tuple[list[int], list[float]]]:
    """The two (input positions, weights) taps of linear resampling of a dim of ``size`` to
    ``out`` points; empty when the dim is kept as it is (same size, no scale given)."""
    if size == out and not scale:
        return []
    if align_corners:
        step = (size - 1) / (out - 1) if out > 1 else 0.0
        src = [i * step for i in range(out)]
    else:
        step = 1.0 / scale if scale else size / out
        src = [max((i + 0.5) * step - 0.5, 0.0) for i in range(out)]
    low: tuple[list[int], list[float]] = ([], [])
    high: tuple[list[int], list[float]] = ([], [])
    for s in src:
        i0 = min(int(s), size - 1)
        lam = s - i0
        low[0].append(i0)
        low[1].append(1.0 - lam)
        high[0].append(min(i0 + 1, size - 1))
        high[1].append(lam)
    return [low, high]


def _tap_tensors(like: Tensor, dim: int, rank: int, positions: list[int],
                 weights: list[float]) -> tuple[Tensor, Tensor]:
    shape = [1] * rank
    shape[dim] = len(weights)
    return (_fac.tensor(positions, dtype=_dtype.int64, device=like.device),
            _fac.tensor(weights, dtype=like.dtype, device=like.device).reshape(shape))


def _upsample_bilinear2d(self: Tensor, output_size: Sequence[int], align_corners: bool,
                         scales_h: float | None = None,
                         scales_w: float | None = None) -> Tensor:
    """(N, C, H, W) -> (N, C, *output_size), bilinear: rows, then columns."""
    if self.dim() != 4:
        raise RuntimeError(f"Non-empty 4D data tensor expected but got a tensor with sizes "
                           f"{list(self.shape)}")
    outs = [int(v) for v in output_size]
    _check_sizes("upsample_bilinear2d", list(self.shape), outs)
    x = self
    for dim, out, scale in ((2, outs[0], scales_h), (3, outs[1], scales_w)):
        result = None
        for positions, weights in linear_taps(x.shape[dim], out, bool(align_corners), scale):
            index, weight = _tap_tensors(x, dim, 4, positions, weights)
            part = _shape.gather_slices(x, dim, index) * weight  # in range: no check
            result = part if result is None else result + part
        x = x if result is None else result
    return x if x is not self else self.clone()


def _upsample_bilinear2d_backward(grad_output: Tensor, output_size: Sequence[int],
                                  input_size: Sequence[int], align_corners: bool,
                                  scales_h: float | None = None,
                                  scales_w: float | None = None) -> Tensor:
    """The input's gradient: each output gradient added, weighted, into the two input pixels
    of each dim it read (the adjoint of the forward, columns first)."""
    n, c, h, w = (int(v) for v in input_size)
    outs = [int(v) for v in output_size]
    _check_sizes("upsample_bilinear2d_backward", [n, c, h, w], outs)
    if list(grad_output.shape) != [n, c, *outs]:
        raise RuntimeError(f"Expected grad_output to have the shape {[n, c, *outs]}, but got "
                           f"{list(grad_output.shape)}")
    g = grad_output
    for dim, size, out, scale in ((3, w, outs[1], scales_w), (2, h, outs[0], scales_h)):
        taps = linear_taps(size, out, bool(align_corners), scale)
        if not taps:
            continue
        shape = list(g.shape)
        shape[dim] = size
        result = _fac.zeros(shape, dtype=g.dtype, device=g.device)
        for positions, weights in taps:
            index, weight = _tap_tensors(g, dim, 4, positions, weights)
            result = _indexing._index_scatter(result, dim, index, g * weight, "sum")
        g = result
    return g if g is not grad_output else grad_output.clone()


_TABLE: dict[str, tuple[Any, ...]] = {
    "upsample_nearest2d": ("upsample_nearest2d(Tensor self, SymInt[2] output_size, "
                           "float? scales_h=None, float? scales_w=None) -> Tensor",
                           _upsample_nearest2d),
    "upsample_nearest2d_backward": ("upsample_nearest2d_backward(Tensor grad_output, "
                                    "SymInt[2] output_size, SymInt[4] input_size, "
                                    "float? scales_h=None, float? scales_w=None) -> Tensor",
                                    _upsample_nearest2d_backward),
    "upsample_bilinear2d": ("upsample_bilinear2d(Tensor self, SymInt[2] output_size, "
                            "bool align_corners, float? scales_h=None, float? scales_w=None) "
                            "-> Tensor", _upsample_bilinear2d),
    "upsample_bilinear2d_backward": (
        "upsample_bilinear2d_backward(Tensor grad_output, SymInt[2] output_size, "
        "SymInt[4] input_size, bool align_corners, float? scales_h=None, "
        "float? scales_w=None) -> Tensor", _upsample_bilinear2d_backward),
}

ATEN: dict[str, _dispatch.Operator] = _dispatch.define_aten(_TABLE)
