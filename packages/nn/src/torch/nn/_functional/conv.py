"""Transposed convolutions and ``fold``/``unfold`` (im2col / col2im) of ``nn.functional``."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch.nn import _ops

__all__ = ["conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "fold",
           "unfold"]


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-d convolution over a (time, batch, in_channels) sequence with a (kernel, in_channels,
    out_channels) filter, padded by ``pad`` steps on both ends of time; the output is
    (time + 2 * pad - kernel + 1, batch, out_channels)."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    # (T, B, C) -> conv1d's (B, C, T), and the filter (K, Cin, Cout) -> (Cout, Cin, K)
    out = torch.nn.functional.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias,
                                     padding=pad)
    return out.permute(2, 0, 1)


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


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """im2col: (N, C, H, W) -> (N, C*kH*kW, L), one column per sliding block (blocks in
    row-major order; each column lists channel-major then kernel positions)."""
    if input.dim() not in (3, 4):
        raise NotImplementedError("Input Error: Only 3D or 4D input Tensors are supported "
                                  f"(got {input.dim()}D)")
    k, d = _ops.ntuple(kernel_size, 2, "kernel_size"), _ops.ntuple(dilation, 2, "dilation")
    p, s = _ops.ntuple(padding, 2, "padding"), _ops.ntuple(stride, 2, "stride")
    # one operator, as in PyTorch
    return torch.ops.aten.im2col.default(input, list(k), list(d), list(p), list(s))


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """col2im: sums the columns of (N, C*kH*kW, L) back into (N, C, *output_size); the
    adjoint of ``unfold`` (overlapping blocks add up)."""
    if input.dim() not in (2, 3):
        raise NotImplementedError("Input Error: Only unbatched (2D) or batched (3D) input "
                                  f"Tensors are supported (got {input.dim()}D)")
    size = _ops.ntuple(output_size, 2, "output_size")
    k, d = _ops.ntuple(kernel_size, 2, "kernel_size"), _ops.ntuple(dilation, 2, "dilation")
    p, s = _ops.ntuple(padding, 2, "padding"), _ops.ntuple(stride, 2, "stride")
    # one operator, as in PyTorch
    return torch.ops.aten.col2im.default(input, list(size), list(k), list(d), list(p), list(s))
