"""``torch.ao.quantization`` (also ``torch.quantization``): the stubs a float model marks its
quantized region with (see :mod:`torch.ao`)."""

from __future__ import annotations

from typing import Any

from torch import Tensor
from torch.nn import Module

__all__ = ["DeQuantStub", "QuantStub", "QuantWrapper"]


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
