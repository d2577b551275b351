"""Entry point of the ``toy`` backend: hook implementations only, nothing heavy imported.

Phase 1 (``import torch``) imports this module and calls :func:`torch_backend_info`; the
"native" part (``_runtime``: numpy) is imported on the first use of the device (phase 2).
"""

from __future__ import annotations

import importlib
from types import ModuleType

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from typing import Any


DEVICE = "toy"


def runtime() -> ModuleType:
    """The "native extension", imported on first use."""
    return importlib.import_module("plait_toy_device._runtime")


def torch_backend_info(device_type: str) -> Any:
    if device_type != DEVICE:
        return None
    from torch.backends import BackendInfo

    return BackendInfo(device_type=DEVICE, distribution="plait-toy-device", version="0.1.0",
                       capabilities=frozenset({"float64"}))


def torch_backend_allocator(device_type: str) -> Any:
    return runtime().Allocator() if device_type == DEVICE else None


def torch_backend_copy(device_type: str) -> Any:
    return runtime().Copier() if device_type == DEVICE else None


def torch_backend_synchronize(device_type: str, device_index: int) -> Any:
    if device_type != DEVICE:
        return None
    runtime().synchronize(device_index)
    return True


def torch_backend_register_kernels(device_type: str, lib: Any) -> None:
    if device_type != DEVICE:
        return
    for name, kernel in runtime().KERNELS.items():
        lib.impl(name, kernel)


def torch_backend_device_module(device_type: str) -> Any:
    if device_type != DEVICE:
        return None
    return importlib.import_module("plait_toy_device.device_module")
