"""``torch.cuda``, ``torch.mps``, ``torch.xpu``: modules that exist whatever is installed.

Each is a proxy mounted at import (also in ``sys.modules``, so ``import torch.cuda`` works).
When a backend plugin serves the device type, attribute access goes to the plugin's device
module; otherwise to a placeholder whose ``is_available()`` is False and whose other entry
points raise a RuntimeError naming the distribution to install.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from .backends import _registry

PLACEHOLDER_TYPES = ("cuda", "mps", "xpu")


def _placeholder_table(device_type: str) -> dict[str, Callable[..., Any]]:
    def unusable(*args: Any, **kwargs: Any) -> Any:
        raise _registry._unusable(device_type, _registry._plugins.get(device_type))

    def no_op(*args: Any, **kwargs: Any) -> None:
        # PyTorch accepts seeding an absent accelerator silently; so do we.
        return None

    return {
        "is_available": lambda: False,
        "device_count": lambda: 0,
        "is_initialized": lambda: False,
        "manual_seed": no_op,
        "manual_seed_all": no_op,
        "seed": no_op,
        "seed_all": no_op,
        "current_device": unusable,
        "set_device": unusable,
        "synchronize": unusable,
        "get_rng_state": unusable,
        "set_rng_state": unusable,
        "memory_allocated": unusable,
        "max_memory_allocated": unusable,
        "get_device_name": unusable,
        "get_device_properties": unusable,
        "get_amp_supported_dtype": lambda: [],
        "init": unusable,
    }


class DeviceModuleProxy(ModuleType):
    """``torch.<device_type>``: the backend's module when one serves it, else a placeholder."""

    def __init__(self, device_type: str) -> None:
        super().__init__(f"torch.{device_type}")
        self.__dict__["_device_type"] = device_type
        self.__dict__["_placeholder"] = _placeholder_table(device_type)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        device_type = self.__dict__["_device_type"]
        mod = _registry.device_module(device_type)
        if mod is not None:
            return getattr(mod, name)
        fn = self.__dict__["_placeholder"].get(name)
        if fn is not None:
            return fn
        dist = _registry.WELL_KNOWN.get(device_type, "a backend plugin")
        raise AttributeError(f"torch.{device_type}.{name} is not available: no backend serves "
                             f"'{device_type}' (install {dist})")

    def __dir__(self) -> list[str]:
        mod = _registry.device_module(self.__dict__["_device_type"])
        return sorted(dir(mod) if mod is not None else self.__dict__["_placeholder"])


def mount(torch: ModuleType) -> None:
    """Create the proxies as ``torch.cuda``... and in ``sys.modules``."""
    for device_type in PLACEHOLDER_TYPES:
        proxy = DeviceModuleProxy(device_type)
        setattr(torch, device_type, proxy)
        sys.modules[f"torch.{device_type}"] = proxy


def get_device_module(device: Any = None) -> ModuleType:
    """The module of a device type (``torch.get_device_module("cuda")`` is ``torch.cuda``)."""
    import torch

    if device is None:
        for name in PLACEHOLDER_TYPES:
            if getattr(torch, name).is_available():
                return getattr(torch, name)
        return torch.cpu
    dev_type = device.type if isinstance(device, torch.device) else torch.device(device).type
    if dev_type == "cpu":
        return torch.cpu
    mod = _registry.device_module(dev_type)
    if mod is not None:
        return mod
    if dev_type in PLACEHOLDER_TYPES:
        return getattr(torch, dev_type)
    raise RuntimeError(f"Device '{dev_type}' does not have a corresponding module registered as "
                       f"'torch.{dev_type}'.")


def register_device_module(device_type: str, module: ModuleType) -> None:
    """``torch._register_device_module``: mount a backend's module as ``torch.<type>``."""
    import torch

    dev_type = torch.device(device_type).type
    _registry.register_device_module(dev_type, module)
