"""``torch.backends.quantized``: the engine of quantized kernels. Plait has none (its kernels
compute in floating point), so the only engine is ``"none"``: code that checks
``supported_engines`` before quantizing a model (torchvision's quantized models) reports that
its engine is not supported instead of failing inside."""

from __future__ import annotations

import sys
from types import ModuleType

# (the module's attributes are its class's: engine, supported_engines)


class _QuantizedEngines(ModuleType):
    """The module itself: ``engine`` is a checked attribute, as in PyTorch."""

    supported_engines = ["none"]

    @property
    def engine(self) -> str:
        return "none"

    @engine.setter
    def engine(self, name: str) -> None:
        if name not in self.supported_engines:
            raise RuntimeError(f"quantized engine {name} is not supported")


sys.modules[__name__].__class__ = _QuantizedEngines
