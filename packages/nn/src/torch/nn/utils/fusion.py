"""Folding an evaluation-mode batch norm into the convolution or linear layer before it.

In eval mode a batch norm is the affine map ``y = (x - mean) * gamma / sqrt(var + eps) + beta``
per channel; applied after ``conv(x) = W * x + b`` it equals one convolution with each output
channel's filter scaled by ``gamma / sqrt(var + eps)`` and the bias moved accordingly. The
functions return fused copies (the originals are untouched), for inference.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import Tensor
from torch.nn.parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _scale_and_shift(bn_rm: Tensor, bn_rv: Tensor, bn_eps: float, bn_w: Tensor | None,
                     bn_b: Tensor | None) -> tuple[Tensor, Tensor]:
    """The batch norm's per-channel factor gamma / sqrt(var + eps) and its beta."""
    gamma = bn_w if bn_w is not None else torch.ones_like(bn_rm)
    beta = bn_b if bn_b is not None else torch.zeros_like(bn_rm)
    return gamma * torch.rsqrt(bn_rv + bn_eps), beta


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The weight and bias of one convolution computing ``bn(conv(x))`` (batch norm in eval
    mode). ``transpose``: the convolution is transposed (output channels in dim 1)."""
    factor, beta = _scale_and_shift(bn_rm, bn_rv, bn_eps, bn_w, bn_b)
    bias = conv_b if conv_b is not None else torch.zeros_like(bn_rm)
    channel_dim = 1 if transpose else 0
    shape = [1] * conv_w.dim()
    shape[channel_dim] = -1
    weight = (conv_w * factor.reshape(shape)).to(conv_w.dtype)
    fused_bias = ((bias - bn_rm) * factor + beta).to(bias.dtype if conv_b is not None
                                                     else conv_w.dtype)
    return (Parameter(weight, conv_w.requires_grad),
            Parameter(fused_bias, conv_b.requires_grad if conv_b is not None else True))


def fuse_conv_bn_eval(conv: Any, bn: Any, transpose: bool = False) -> Any:
    """A copy of ``conv`` that computes ``bn(conv(x))``; both must be in eval mode."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("the batch norm must track running statistics to be fused")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor, bn_b: Tensor
                           ) -> tuple[Parameter, Parameter]:
    """The weight and bias of one linear layer computing ``bn(linear(x))`` (eval mode)."""
    factor, beta = _scale_and_shift(bn_rm, bn_rv, bn_eps, bn_w, bn_b)
    bias = linear_b if linear_b is not None else torch.zeros_like(bn_rm)
    weight = linear_w * factor.unsqueeze(-1)  # (out, in): row o scaled by factor[o]
    return (Parameter(weight, linear_w.requires_grad),
            Parameter((bias - bn_rm) * factor + beta, linear_w.requires_grad))


def fuse_linear_bn_eval(linear: Any, bn: Any) -> Any:
    """A copy of ``linear`` that computes ``bn(linear(x))``; both must be in eval mode."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or "
                             "bn.num_features must equal 1")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
