"""Sliding blocks as PyTorch's ``aten::`` operators: ``im2col`` (``F.unfold``: (N, C, H, W)
-> (N, C*kH*kW, L), one column per block) and ``col2im`` (``F.fold``: the columns summed back
into the plane, overlapping blocks adding up).

A column lists its entries channel-major, then by kernel position (row-major); blocks run
in row-major order over the padded plane. The kernels are composites (``constant_pad_nd`` +
``unfold`` windows; ``index_add`` into a flat padded plane), so every backend and the meta
device serve them. The two operators are adjoint linear maps, each the other's gradient
(``torch.autograd._formulas.pooling``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._core import dispatch as _dispatch, dtype as _dtype
from .._core.tensor import Tensor
from . import factories as _fac, indexing as _indexing
from .nn_layout import ATEN as _LAYOUT

__all__: list[str] = []  # F.unfold / F.fold come from plait-nn


def _pairs(*values: Any) -> list[list[int]]:
    out = []
    for v in values:
        pair = [int(x) for x in v] if isinstance(v, (list, tuple)) else [int(v)]
        out.append(pair * 2 if len(pair) == 1 else pair)
    return out


def check_blocks(k: Sequence[int], d: Sequence[int], p: Sequence[int],
                 s: Sequence[int]) -> None:
    """PyTorch's checks of a block geometry (im2col / col2im), in its order."""
    for label, name, vs, low in (("kernel size", "kernel", k, 1), ("stride", "stride", s, 1),
                                 ("dilation", "dilation", d, 1), ("padding", "pad", p, 0)):
        if any(v < low for v in vs):
            bound = "greater than zero" if low else "non-negative"
            raise RuntimeError(f"{label} should be {bound}, but got {name}_height: {vs[0]} "
                               f"{name}_width: {vs[1]}")


def _im2col(self: Tensor, kernel_size: Sequence[int], dilation: Sequence[int],
            padding: Sequence[int], stride: Sequence[int]) -> Tensor:
    if self.dim() not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions, but got: {list(self.shape)}")
    k, d, p, s = _pairs(kernel_size, dilation, padding, stride)
    check_blocks(k, d, p, s)
    batched = self.dim() == 4
    x = self if batched else self.unsqueeze(0)
    for i in range(2):
        if x.shape[2 + i] + 2 * p[i] < d[i] * (k[i] - 1) + 1:
            raise RuntimeError(f"Given input with spatial size {tuple(self.shape[-2:])}, "
                               f"kernel_size={k}, dilation={d}, padding={p}, calculated shape "
                               "of the array of sliding blocks is non-positive")
    if any(p):
        x = _LAYOUT["constant_pad_nd"](x, [p[1], p[1], p[0], p[0]], 0)
    for i in range(2):
        x = x.unfold(2 + i, d[i] * (k[i] - 1) + 1, s[i])
        if d[i] > 1:
            x = x[..., ::d[i]]
    n, c, oh, ow = x.shape[:4]  # x: (N, C, oH, oW, kH, kW)
    out = x.permute(0, 1, 4, 5, 2, 3).reshape(n, c * k[0] * k[1], oh * ow)
    return out if batched else out.squeeze(0)


def _col2im(self: Tensor, output_size: Sequence[int], kernel_size: Sequence[int],
            dilation: Sequence[int], padding: Sequence[int], stride: Sequence[int]) -> Tensor:
    if self.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions, but got: {list(self.shape)}")
    size, k, d, p, s = _pairs(output_size, kernel_size, dilation, padding, stride)
    check_blocks(k, d, p, s)
    batched = self.dim() == 3
    x = self if batched else self.unsqueeze(0)
    kk = k[0] * k[1]
    if x.shape[1] % kk:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={k}")
    blocks = [(size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    if blocks[0] < 1 or blocks[1] < 1 or blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {blocks[0]} * "
                           f"{blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size(2)={x.shape[2]}.")
    n, c = x.shape[0], x.shape[1] // kk
    ph, pw = size[0] + 2 * p[0], size[1] + 2 * p[1]
    # the flat position in the padded plane of every (kernel row, kernel column, block) entry
    target = [(a * d[0] + i * s[0]) * pw + b * d[1] + j * s[1]
              for a in range(k[0]) for b in range(k[1])
              for i in range(blocks[0]) for j in range(blocks[1])]
    index = _fac.tensor(target, dtype=_dtype.int64, device=x.device)
    plane = _fac.zeros((n, c, ph * pw), dtype=x.dtype, device=x.device)
    out = _indexing.index_add(plane, 2, index, x.reshape(n, c, kk * blocks[0] * blocks[1]))
    out = out.reshape(n, c, ph, pw)[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]
    out = out.contiguous()
    return out if batched else out.squeeze(0)


_TABLE: dict[str, tuple[Any, ...]] = {
    "im2col": ("im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, "
               "int[2] stride) -> Tensor", _im2col),
    "col2im": ("col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, "
               "int[2] dilation, int[2] padding, int[2] stride) -> Tensor", _col2im),
}

ATEN: dict[str, _dispatch.Operator] = _dispatch.define_aten(_TABLE)
