"""The ``torch.backends`` entry point of plait-backend-xpu (device type ``xpu``).

Phase 1 (``import torch``) only imports this module and asks :func:`torch_backend_info`: no
native code, no ``torch`` at module level.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from . import __version__

if TYPE_CHECKING:
    from torch.backends.hookspecs import BackendInfo
    from torch.library import Library

hookimpl = pluggy.HookimplMarker("torch")

DEVICE_TYPE = "xpu"
DISTRIBUTION = "plait-backend-xpu"
# fp64 is not declared: many Intel GPUs have no native double precision.
CAPABILITIES = frozenset({"amp"})
AMP_DTYPES = ("float16", "bfloat16")  # float16 first: PyTorch's default on xpu


@hookimpl
def torch_backend_info(device_type: str) -> BackendInfo | None:
    if device_type != DEVICE_TYPE:
        return None
    from torch.backends.hookspecs import BackendInfo

    return BackendInfo(
        device_type=DEVICE_TYPE,
        distribution=DISTRIBUTION,
        version=__version__,
        capabilities=CAPABILITIES,
        amp_dtypes=AMP_DTYPES,
    )


@hookimpl
def torch_backend_allocator(device_type: str) -> Any | None:
    if device_type != DEVICE_TYPE:
        return None
    from . import device_module
    from .memory import DeviceAllocator

    device_module.require_device()  # no device: core reports this error, naming the plugin
    return DeviceAllocator(device_module.native())


@hookimpl
def torch_backend_copy(device_type: str) -> Any | None:
    if device_type != DEVICE_TYPE:
        return None
    from . import device_module
    from .memory import DeviceCopier

    device_module.require_device()
    return DeviceCopier(device_module.native())


@hookimpl
def torch_backend_synchronize(device_type: str, device_index: int) -> bool | None:
    if device_type != DEVICE_TYPE:
        return None
    from . import device_module

    device_module.synchronize(device_index)
    return True


@hookimpl
def torch_backend_register_kernels(device_type: str, lib: Library) -> None:
    if device_type != DEVICE_TYPE:
        return
    from . import fused
    from .kernels import kernels

    for name, kernel in kernels().items():
        lib.impl(name, kernel)
    fused.register(lib.dispatch_key)


@hookimpl
def torch_backend_fast_path(device_type: str) -> Any | None:
    if device_type != DEVICE_TYPE:
        return None
    from . import device_module
    from .fast import FastPath
    from .kernels import kernels

    return FastPath(device_module.native(), kernels())


@hookimpl
def torch_backend_device_module(device_type: str) -> ModuleType | None:
    if device_type != DEVICE_TYPE:
        return None
    from . import device_module

    return device_module


@hookimpl
def torch_backend_codegen(device_type: str, target: str) -> Any | None:
    if device_type != DEVICE_TYPE or target != "pointwise":
        return None
    from .codegen import XpuCodegen

    return XpuCodegen()
