"""``torch.backends.cudnn``: cuDNN switches; available only when a CUDA backend that ships
cuDNN support is loaded and a device is present."""

from __future__ import annotations

from typing import Any

from .._core import registry as _registry

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    if "cudnn" not in _registry.capabilities("cuda"):
        return False
    mod = _registry.device_module("cuda")
    return bool(mod is not None and mod.is_available())


def version() -> Any:
    if not is_available():
        return None
    mod = _registry.device_module("cuda")
    return getattr(mod, "cudnn_version", lambda: None)()
