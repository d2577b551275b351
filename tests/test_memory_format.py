"""Memory formats: channels-last layouts from contiguous/to/clone/empty and the is_contiguous
test per format, with the strides PyTorch gives (worked out by hand below)."""

from __future__ import annotations

import pytest

import torch

# (N, C, H, W) = (2, 3, 4, 5) laid out as (N, H, W, C): C innermost (1), then W (3), H (15),
# N (60). (N, C, D, H, W) = (2, 3, 4, 5, 6) as (N, D, H, W, C): 1, 3, 18, 90, 360.
CL_2D = (60, 1, 15, 3)
CL_3D = (360, 1, 90, 18, 3)


def make(shape):
    return torch.arange(float(torch.Size(shape).numel())).reshape(shape)


@pytest.mark.parametrize("convert", [
    lambda x: x.contiguous(memory_format=torch.channels_last),
    lambda x: x.to(memory_format=torch.channels_last),
    lambda x: x.to(torch.float64, memory_format=torch.channels_last),
    lambda x: x.clone(memory_format=torch.channels_last),
    lambda x: torch.clone(x, memory_format=torch.channels_last),
], ids=["contiguous", "to", "to-dtype", "clone", "torch.clone"])
def test_channels_last_conversions_keep_values_and_lay_channels_innermost(convert):
    x = make((2, 3, 4, 5))
    y = convert(x)
    assert y.stride() == CL_2D and y.shape == x.shape
    assert y.is_contiguous(memory_format=torch.channels_last) and not y.is_contiguous()
    assert torch.equal(y.double(), x.double())


def test_channels_last_3d():
    x = make((2, 3, 4, 5, 6))
    y = x.contiguous(memory_format=torch.channels_last_3d)
    assert y.stride() == CL_3D and torch.equal(y, x)
    assert y.is_contiguous(memory_format=torch.channels_last_3d)
    assert not x.is_contiguous(memory_format=torch.channels_last_3d)


def test_factories_take_the_format():
    assert torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride() == CL_2D
    x = make((2, 3, 4, 5))
    assert torch.empty_like(x, memory_format=torch.channels_last).stride() == CL_2D
    assert torch.zeros_like(x, memory_format=torch.channels_last).stride() == CL_2D


def test_preserve_format_keeps_channels_last_and_contiguous_undoes_it():
    y = make((2, 3, 4, 5)).contiguous(memory_format=torch.channels_last)
    assert y.clone().stride() == CL_2D  # preserve_format, the default
    assert torch.empty_like(y).stride() == CL_2D
    z = y.contiguous()
    assert z.stride() == (60, 20, 5, 1) and torch.equal(z, y)
    assert y.contiguous(memory_format=torch.channels_last) is y
    assert y.to(memory_format=torch.channels_last) is y


def test_is_contiguous_per_format():
    x = make((2, 3, 4, 5))
    assert x.is_contiguous() and x.is_contiguous(memory_format=torch.contiguous_format)
    assert not x.is_contiguous(memory_format=torch.channels_last)
    assert not make((2, 3)).is_contiguous(memory_format=torch.channels_last)  # wrong rank
    # size-1 dims may have any stride: one channel is both layouts at once
    one = make((2, 1, 4, 5))
    assert one.is_contiguous() and one.is_contiguous(memory_format=torch.channels_last)


def test_wrong_rank_is_an_error():
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        make((2, 3)).contiguous(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d"):
        make((2, 3, 4, 5)).clone(memory_format=torch.channels_last_3d)


def test_ops_on_channels_last_tensors_compute_the_same_values():
    x = make((2, 3, 4, 5))
    y = x.contiguous(memory_format=torch.channels_last)
    assert torch.equal(y * 2 + 1, x * 2 + 1)
    assert torch.equal(y.sum(1), x.sum(1))
    assert torch.equal(y.permute(0, 2, 3, 1).reshape(-1), x.permute(0, 2, 3, 1).reshape(-1))


def test_module_to_memory_format_converts_4d_parameters_only():
    import torch.nn as nn

    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.Linear(4 * 6 * 6, 2))
    model.to(memory_format=torch.channels_last)
    conv, linear = model[0], model[2]
    assert conv.weight.stride() == (27, 1, 9, 3)  # (4, 3, 3, 3) as (O, kH, kW, I)
    assert linear.weight.is_contiguous() and conv.bias.is_contiguous()
    assert isinstance(conv.weight, nn.Parameter)


def test_convolution_output_follows_a_channels_last_input():
    import torch.nn.functional as F

    x = make((2, 3, 8, 8)) / 100
    w = make((4, 3, 3, 3)) / 100
    plain = F.conv2d(x, w)
    last = F.conv2d(x.contiguous(memory_format=torch.channels_last), w)
    assert plain.is_contiguous() and last.stride() == (144, 1, 24, 4)  # (2, 4, 6, 6) as NHWC
    assert torch.allclose(last, plain)
