"""``torch.ao.nn``: the modules of quantized models (see :mod:`torch.ao`)."""

from __future__ import annotations

import importlib
from types import ModuleType


def __getattr__(name: str) -> ModuleType:
    # torch.ao.nn.quantized works without importing it by name, as in PyTorch
    if name == "quantized":
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
