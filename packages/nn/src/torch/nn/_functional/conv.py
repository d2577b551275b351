"""Transposed convolutions and ``fold``/``unfold`` (im2col / col2im) of ``nn.functional``."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch.nn import _ops

__all__ = ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "fold", "unfold"]


def _conv_transpose(n: int) -> Any:
    def fn(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, output_padding: Any = 0, groups: int = 1,
           dilation: Any = 1) -> Tensor:
        op = getattr(torch, f"conv_transpose{n}d")
        return op(input, weight, bias, stride, padding, output_padding, groups, dilation)

    fn.__name__ = fn.__qualname__ = f"conv_transpose{n}d"
    fn.__doc__ = (f"{n}-d transposed convolution of ``input`` (N, C_in, *spatial) with "
                  f"``weight`` (C_in, C_out/groups, *kernel): the gradient of conv{n}d.")
    return fn


conv_transpose1d, conv_transpose2d, conv_transpose3d = (_conv_transpose(n) for n in (1, 2, 3))


def _check_blocks(k: tuple[int, ...], d: tuple[int, ...], p: tuple[int, ...],
                  s: tuple[int, ...]) -> None:
    """PyTorch's checks of fold/unfold's block geometry (im2col/col2im shape checks)."""
    for label, (name, vs), low in (("kernel size", ("kernel", k), 1),
                                   ("stride", ("stride", s), 1),
                                   ("dilation", ("dilation", d), 1),
                                   ("padding", ("pad", p), 0)):
        if any(v < low for v in vs):
            bound = "greater than zero" if low else "non-negative"
            raise RuntimeError(f"{label} should be {bound}, but got {name}_height: {vs[0]} "
                               f"{name}_width: {vs[1]}")


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """im2col: (N, C, H, W) -> (N, C*kH*kW, L), one column per sliding block (blocks in
    row-major order; each column lists channel-major then kernel positions)."""
    if input.dim() not in (3, 4):
        raise NotImplementedError("Input Error: Only 3D or 4D input Tensors are supported "
                                  f"(got {input.dim()}D)")
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    k, d = _ops.ntuple(kernel_size, 2, "kernel_size"), _ops.ntuple(dilation, 2, "dilation")
    p, s = _ops.ntuple(padding, 2, "padding"), _ops.ntuple(stride, 2, "stride")
    _check_blocks(k, d, p, s)
    if any(p):
        x = _ops.pad(x, [p[1], p[1], p[0], p[0]])
    n, c = x.shape[0], x.shape[1]
    for i in range(2):
        if x.shape[2 + i] < d[i] * (k[i] - 1) + 1:
            raise RuntimeError(f"Given input with spatial size {tuple(input.shape[-2:])}, "
                               f"kernel_size={k}, dilation={d}, padding={p}, calculated shape "
                               "of the array of sliding blocks is non-positive")
    win = _ops._windows(x, k, s, d)  # (N, C, oH, oW, kH, kW)
    oh, ow = win.shape[2], win.shape[3]
    out = win.permute(0, 1, 4, 5, 2, 3).reshape(n, c * k[0] * k[1], oh * ow)
    return out if batched else out.squeeze(0)


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """col2im: sums the columns of (N, C*kH*kW, L) back into (N, C, *output_size); the
    adjoint of ``unfold`` (overlapping blocks add up)."""
    if input.dim() not in (2, 3):
        raise NotImplementedError("Input Error: Only unbatched (2D) or batched (3D) input "
                                  f"Tensors are supported (got {input.dim()}D)")
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    size = _ops.ntuple(output_size, 2, "output_size")
    k, d = _ops.ntuple(kernel_size, 2, "kernel_size"), _ops.ntuple(dilation, 2, "dilation")
    p, s = _ops.ntuple(padding, 2, "padding"), _ops.ntuple(stride, 2, "stride")
    _check_blocks(k, d, p, s)
    kk = k[0] * k[1]
    if x.shape[1] % kk:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={k}")
    blocks = [(size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    if blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {blocks[0]} * "
                           f"{blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size(2)={x.shape[2]}.")
    n, c = x.shape[0], x.shape[1] // kk
    ph, pw = size[0] + 2 * p[0], size[1] + 2 * p[1]
    # flat target position in the padded plane of every (kernel offset, block) column entry
    ki = torch.arange(k[0]).reshape(k[0], 1, 1, 1) * d[0]
    kj = torch.arange(k[1]).reshape(1, k[1], 1, 1) * d[1]
    bi = torch.arange(blocks[0]).reshape(1, 1, blocks[0], 1) * s[0]
    bj = torch.arange(blocks[1]).reshape(1, 1, 1, blocks[1]) * s[1]
    target = ((ki + bi) * pw + (kj + bj)).reshape(-1).to(x.device)
    cols = x.reshape(n, c, kk * blocks[0] * blocks[1])
    out = torch.zeros((n, c, ph * pw), dtype=x.dtype, device=x.device).index_add(2, target, cols)
    out = out.reshape(n, c, ph, pw)[:, :, p[0]: p[0] + size[0], p[1]: p[1] + size[1]]
    return out if batched else out.squeeze(0)
