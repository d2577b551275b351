"""Nearest-neighbour upsampling as PyTorch's ``aten::`` operators: ``upsample_nearest2d`` and
its ``upsample_nearest2d_backward`` (``F.interpolate(x, ..., mode="nearest")`` on a 4-D input).

Output pixel ``i`` of a dim reads input pixel ``min(floor(i * step), size - 1)``, where
``step`` is ``1 / scale`` when the caller's scale factor is given and ``size / out`` otherwise
(PyTorch's rule). The forward gathers rows then columns (``index_select``); the backward adds
each output gradient into the input pixel it read (``index_add`` along each dim). Composite
kernels: every backend and the meta device serve them. The derivatives are formulas
(``torch.autograd._formulas.nn_layout``): both operators are linear, each the other's
gradient.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._core import dispatch as _dispatch, dtype as _dtype
from .._core.tensor import Tensor
from . import factories as _fac, indexing as _indexing

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
    rows = _indexing.index_select(self, 2, _positions(self, h, out_h, scales_h))
    return _indexing.index_select(rows, 3, _positions(self, w, out_w, scales_w))


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
    cols = _indexing.index_add(_fac.zeros((n, c, out_h, w), dtype=dtype, device=device), 3,
                               _positions(grad_output, w, out_w, scales_w), grad_output)
    return _indexing.index_add(_fac.zeros((n, c, h, w), dtype=dtype, device=device), 2,
                               _positions(grad_output, h, out_h, scales_h), cols)


_TABLE: dict[str, tuple[Any, ...]] = {
    "upsample_nearest2d": ("upsample_nearest2d(Tensor self, SymInt[2] output_size, "
                           "float? scales_h=None, float? scales_w=None) -> Tensor",
                           _upsample_nearest2d),
    "upsample_nearest2d_backward": ("upsample_nearest2d_backward(Tensor grad_output, "
                                    "SymInt[2] output_size, SymInt[4] input_size, "
                                    "float? scales_h=None, float? scales_w=None) -> Tensor",
                                    _upsample_nearest2d_backward),
}

ATEN: dict[str, _dispatch.Operator] = _dispatch.define_aten(_TABLE)
