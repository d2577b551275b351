"""The ``torch.backends`` entry point of plait-backend-mps (device type ``mps``).

Phase 1 (``import torch``) only imports this module and asks :func:`torch_backend_info`: no
native code, no ``torch`` at module level.
"""

from __future__ import annotations

from types import ModuleType

from . import __version__

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from typing import Any

    from torch.backends import BackendInfo
    from torch.library import Library


DEVICE_TYPE = "mps"
DISTRIBUTION = "plait-backend-mps"
# Metal has no float64; autocast on MPS uses float16 and bfloat16.
CAPABILITIES = frozenset({"amp"})
AMP_DTYPES = ("float16", "bfloat16")


def torch_backend_info(device_type: str) -> BackendInfo | None:
    if device_type != DEVICE_TYPE:
        return None
    from torch.backends import BackendInfo

    return BackendInfo(
        device_type=DEVICE_TYPE,
        distribution=DISTRIBUTION,
        version=__version__,
        capabilities=CAPABILITIES,
        amp_dtypes=AMP_DTYPES,
    )


def torch_backend_allocator(device_type: str) -> Any | None:
    if device_type != DEVICE_TYPE:
        return None
    from . import device_module

    device_module.require_device()
    raise RuntimeError(
        "plait-backend-mps found a Metal device but does not allocate device memory yet "
        "(Metal buffers come with the mps kernels); use device='cpu' for now."
    )


def torch_backend_copy(device_type: str) -> Any | None:
    return None  # nothing to copy until the allocator exists


def torch_backend_synchronize(device_type: str, device_index: int) -> bool | None:
    if device_type != DEVICE_TYPE:
        return None
    from . import device_module

    device_module.synchronize()
    return True


def torch_backend_register_kernels(device_type: str, lib: Library) -> None:
    return None  # no mps kernels yet


def torch_backend_device_module(device_type: str) -> ModuleType | None:
    if device_type != DEVICE_TYPE:
        return None
    from . import device_module

    return device_module
