"""The arithmetic of dynamically quantized layers, as PyTorch's CPU kernels (fbgemm) do it.

``linear_dynamic``: the input is quantized to quint8 with the scale and zero point its own
minimum and maximum call for (over ``0..127`` when ``reduce_range``, fbgemm's one bit of
headroom), the integer products are summed exactly (float64 holds every partial sum of 8-bit
products exactly for any realistic width), and the result is
``fma(float32(acc), input_scale * weight_scale, bias)`` in float32: one rounding, as fbgemm's
fused multiply-add, emulated by computing in float64 (a product of two float32 values is exact
there) and rounding once.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch._quantized import QuantizedTensor, choose_qparams, quantize_values

__all__ = ["linear_dynamic", "linear_dynamic_fp16", "quantize_weight"]


def quantize_weight(weight: Tensor, observer: torch.nn.Module) -> QuantizedTensor:
    """``weight`` quantized with the parameters ``observer`` computes after seeing it (per
    tensor, or per channel along the observer's ``ch_axis``)."""
    float_weight = weight.detach().float()
    observer(float_weight)
    scale, zero_point = observer.calculate_qparams()
    if observer.qscheme in (torch.per_channel_symmetric, torch.per_channel_affine):
        return torch.quantize_per_channel(float_weight, scale.double(), zero_point.long(),
                                          observer.ch_axis, observer.dtype)
    return torch.quantize_per_tensor(float_weight, float(scale), int(zero_point),
                                     observer.dtype)


def _weight_params(weight: QuantizedTensor) -> tuple[Tensor, Tensor]:
    """The weight's centered integers (float64, exact) and its float32 scale(s)."""
    if weight.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        scale = torch.tensor(weight.q_scale(), dtype=torch.float32)
        zero_point: int | Tensor = weight.q_zero_point()
    else:
        if weight.q_per_channel_axis() != 0:
            raise RuntimeError("a dynamic quantized linear's weight is quantized per output "
                               "channel (axis 0)")
        scale = weight.q_per_channel_scales().float()
        zero_point = weight.q_per_channel_zero_points().reshape(-1, 1)
    return weight.int_repr().double() - zero_point, scale


def linear_dynamic(x: Tensor, weight: QuantizedTensor, bias: Tensor | None,
                   reduce_range: bool) -> Tensor:
    """``x @ weight.T + bias`` on quint8-quantized ``x`` and the qint8 ``weight``."""
    with torch.no_grad():
        x = x.detach().float()
        low = float(x.min()) if x.numel() else 0.0
        high = float(x.max()) if x.numel() else 0.0
        x_scale, x_zero_point = choose_qparams(low, high, 0, 255, reduce_range)
        qmax = 127 if reduce_range else 255
        qx = quantize_values(x, x_scale, x_zero_point, torch.quint8).clamp_(0, qmax)
        centered_w, w_scale = _weight_params(weight)
        acc = torch.matmul(qx.double() - x_zero_point, centered_w.t())
        multiplier = (torch.tensor(x_scale, dtype=torch.float32) * w_scale).double()
        out = acc.float().double() * multiplier
        if bias is not None:
            out = out + bias.detach().double()
        return out.float()


def linear_dynamic_fp16(x: Tensor, weight16: Tensor, bias: Tensor | None) -> Tensor:
    """``x @ weight.T + bias`` with the weight stored in float16 and float32 arithmetic."""
    with torch.no_grad():
        out = torch.matmul(x.detach().float(), weight16.float().t())
        if bias is not None:
            out = out + bias.detach().float()
        return out
