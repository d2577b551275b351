"""torch.nn.utils.fusion: an eval-mode batch norm folded into the convolution or linear layer
before it computes what the two layers compute in sequence, in a copy of the layer."""

from __future__ import annotations

import pytest

import torch
import torch.nn as nn


def _bn(module: nn.Module, mean: list[float], var: list[float], weight: list[float],
        bias: list[float]) -> nn.Module:
    with torch.no_grad():
        module.running_mean.copy_(torch.tensor(mean))
        module.running_var.copy_(torch.tensor(var))
        module.weight.copy_(torch.tensor(weight))
        module.bias.copy_(torch.tensor(bias))
    return module.eval()


def test_conv_bn_fusion():
    torch.manual_seed(0)
    conv = nn.Conv2d(3, 4, 3, padding=1).eval()
    bn = _bn(nn.BatchNorm2d(4), [0.1, -0.2, 0.3, 0.0], [1.5, 0.5, 2.0, 1.0],
             [1.2, 0.8, -0.5, 1.0], [0.0, 0.1, 0.2, -0.3])
    x = torch.randn(2, 3, 5, 5)
    fused = nn.utils.fusion.fuse_conv_bn_eval(conv, bn)
    assert isinstance(fused, nn.Conv2d) and fused is not conv
    assert isinstance(fused.weight, nn.Parameter) and isinstance(fused.bias, nn.Parameter)
    assert torch.allclose(fused(x), bn(conv(x)), atol=1e-5)
    # the factor of output channel 0 is 1.2 / sqrt(1.5 + eps)
    factor = 1.2 / (1.5 + bn.eps) ** 0.5
    assert torch.allclose(fused.weight[0], conv.weight[0] * factor, atol=1e-6)
    assert torch.allclose(fused.bias[0], (conv.bias[0] - 0.1) * factor, atol=1e-6)
    no_bias = nn.Conv2d(3, 4, 1, bias=False).eval()
    assert torch.allclose(nn.utils.fuse_conv_bn_eval(no_bias, bn)(x), bn(no_bias(x)),
                          atol=1e-5)
    with pytest.raises(AssertionError, match="eval"):
        nn.utils.fuse_conv_bn_eval(nn.Conv2d(3, 4, 1), bn)


def test_transposed_conv_and_linear_fusion():
    torch.manual_seed(1)
    deconv = nn.ConvTranspose2d(4, 3, 2).eval()
    bn = _bn(nn.BatchNorm2d(3), [0.0, 0.5, -0.5], [2.0, 1.0, 0.5], [0.5, 1.0, 2.0],
             [0.1, 0.0, -0.1])
    y = torch.randn(1, 4, 3, 3)
    fused = nn.utils.fuse_conv_bn_eval(deconv, bn, transpose=True)
    assert torch.allclose(fused(y), bn(deconv(y)), atol=1e-5)
    linear = nn.Linear(4, 3).eval()
    bn1 = _bn(nn.BatchNorm1d(3), [0.2, 0.2, 0.2], [3.0, 3.0, 3.0], [1.0, -1.0, 0.5],
              [0.0, 0.0, 1.0])
    z = torch.randn(5, 4)
    assert torch.allclose(nn.utils.fusion.fuse_linear_bn_eval(linear, bn1)(z), bn1(linear(z)),
                          atol=1e-5)
