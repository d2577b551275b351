"""``torch.amp``: automatic mixed precision (``autocast``, ``GradScaler``), as in PyTorch.

The submodules load on first use, so that libraries which only mark functions for autocast
(:func:`torch.amp._composite.composite`) do not register the Autocast kernels at import.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

# public name -> the submodule that defines it
_HOMES = {"autocast": "autocast_mode", "is_autocast_available": "autocast_mode",
          "GradScaler": "grad_scaler", "custom_fwd": "custom_autograd",
          "custom_bwd": "custom_autograd"}
_SUBMODULES = frozenset(("autocast_mode", "grad_scaler", "custom_autograd"))


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'torch.amp' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
