"""torch.ao.quantization's float-model parts (stubs, QuantWrapper, FloatFunctional) and
torch.backends.quantized, whose only engine is "none": Plait has no quantized kernels
(torchvision's quantizable models import these and are built as float models)."""

from __future__ import annotations

import pytest

import torch
import torch.nn as nn


def test_stubs_are_the_identity_in_a_float_model():
    from torch.ao.quantization import DeQuantStub, QuantStub, QuantWrapper

    x = torch.randn(3, 2)
    assert QuantStub()(x) is x and DeQuantStub()(x) is x
    linear = nn.Linear(2, 4)
    wrapped = QuantWrapper(linear)
    assert [name for name, _ in wrapped.named_children()] == ["quant", "dequant", "module"]
    torch.testing.assert_close(wrapped(x), linear(x))
    assert torch.quantization.QuantStub is QuantStub  # the older name


def test_float_functional_is_the_plain_operation():
    ff = nn.quantized.FloatFunctional()
    a, b = torch.tensor([1.0, -2.0]), torch.tensor([3.0, 1.0])
    assert ff.add(a, b).tolist() == [4.0, -1.0]
    assert ff.add_relu(a, b).tolist() == [4.0, 0.0]
    assert ff.mul(a, b).tolist() == [3.0, -2.0]
    assert ff.add_scalar(a, 1.0).tolist() == [2.0, -1.0]
    assert ff.mul_scalar(a, 2.0).tolist() == [2.0, -4.0]
    assert ff.cat([a, b]).tolist() == [1.0, -2.0, 3.0, 1.0]
    with pytest.raises(RuntimeError, match="not intended to use the 'forward'"):
        ff(a)
    assert torch.ao.nn.quantized.FloatFunctional is type(ff)


def test_the_only_quantized_engine_is_none():
    engines = torch.backends.quantized
    assert engines.supported_engines == ["none"] and engines.engine == "none"
    engines.engine = "none"
    with pytest.raises(RuntimeError, match="fbgemm is not supported"):
        engines.engine = "fbgemm"
