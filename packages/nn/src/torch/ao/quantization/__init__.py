"""``torch.ao.quantization`` (also ``torch.quantization``): dynamic quantization
(``quantize_dynamic``, its qconfigs and observers), the stubs a float model marks its
quantized region with, and the base class of fake-quantize modules (see :mod:`torch.ao`).
Static quantization (``prepare``/``convert``, calibrated activations) is not provided."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import torch
from torch import Tensor
from torch.nn import Module

from .observer import (
    MinMaxObserver,
    ObserverBase,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
    default_dynamic_quant_observer,
    default_per_channel_weight_observer,
    default_weight_observer,
)
from .qconfig import (
    QConfig,
    default_dynamic_qconfig,
    float16_dynamic_qconfig,
    per_channel_dynamic_qconfig,
)
from .quantize import get_default_dynamic_quant_module_mappings, quantize_dynamic

__all__ = ["DeQuantStub", "FakeQuantizeBase", "MinMaxObserver", "ObserverBase",
           "PerChannelMinMaxObserver", "PlaceholderObserver", "QConfig", "QuantStub",
           "QuantWrapper", "default_dynamic_qconfig", "default_dynamic_quant_observer",
           "default_per_channel_weight_observer", "default_weight_observer",
           "float16_dynamic_qconfig", "get_default_dynamic_quant_module_mappings",
           "per_channel_dynamic_qconfig", "quantize_dynamic"]


class FakeQuantizeBase(ABC, Module):
    """The base of fake-quantize modules (quantize then dequantize in float, for training
    aware of quantization), with the two switches PyTorch's have as ``uint8`` buffers."""

    fake_quant_enabled: Tensor
    observer_enabled: Tensor

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("fake_quant_enabled", torch.tensor([1], dtype=torch.uint8))
        self.register_buffer("observer_enabled", torch.tensor([1], dtype=torch.uint8))

    @abstractmethod
    def forward(self, x: Tensor) -> Tensor:
        """Fake-quantize ``x``."""

    @abstractmethod
    def calculate_qparams(self, **kwargs: Any) -> Any:
        """The ``(scale, zero_point)`` in use."""

    def enable_fake_quant(self, enabled: bool = True) -> None:
        self.fake_quant_enabled[0] = 1 if enabled else 0

    def disable_fake_quant(self) -> None:
        self.enable_fake_quant(False)

    def enable_observer(self, enabled: bool = True) -> None:
        self.observer_enabled[0] = 1 if enabled else 0

    def disable_observer(self) -> None:
        self.enable_observer(False)


class _Stub(Module):
    """A marker of a quantized region's edge, carrying its ``qconfig``: the identity until a
    model is converted (which Plait does not do)."""

    def __init__(self, qconfig: Any = None) -> None:
        super().__init__()
        if qconfig is not None:
            self.qconfig = qconfig

    def forward(self, x: Tensor) -> Tensor:
        return x


class QuantStub(_Stub):
    """Where a quantized region starts."""


class DeQuantStub(_Stub):
    """Where a quantized region ends."""


class QuantWrapper(Module):
    """``module`` between a :class:`QuantStub` and a :class:`DeQuantStub` (``quant``,
    ``module``, ``dequant``), carrying the module's ``qconfig``."""

    def __init__(self, module: Module) -> None:
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, x: Tensor) -> Tensor:
        return self.dequant(self.module(self.quant(x)))
