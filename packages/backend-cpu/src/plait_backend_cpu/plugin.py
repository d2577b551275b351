"""The ``torch.backends`` entry point of plait-backend-cpu (device type ``cpu``).

Phase 1 (``import torch``) only imports this module and asks :func:`torch_backend_info`, so
it stays light: no native code and no ``torch`` at module level. The native extension is
imported on the first allocation or kernel registration (phase 2).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from . import __version__

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from typing import Any

    from torch.backends import BackendInfo
    from torch.library import Library

    from .allocator import HostAllocator


DEVICE_TYPE = "cpu"
DISTRIBUTION = "plait-backend-cpu"
CAPABILITIES = frozenset({"host_accessible", "float64", "amp"})
AMP_DTYPES = ("bfloat16", "float16")  # autocast's default first, as PyTorch's CPU autocast


def native() -> ModuleType:
    """The native extension ``_C``, imported on first use.

    ``importlib`` rather than ``from . import _C``, which would recurse through a module
    ``__getattr__`` while the package is still initialising.
    """
    return importlib.import_module(f"{__package__}._C")


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


def torch_backend_allocator(device_type: str) -> HostAllocator | None:
    if device_type != DEVICE_TYPE:
        return None
    from .allocator import HostAllocator

    return HostAllocator(native())


def torch_backend_copy(device_type: str) -> Any | None:
    # Host memory is host accessible: core copies through Allocator.host_buffer with numpy.
    return None


def torch_backend_synchronize(device_type: str, device_index: int) -> bool | None:
    if device_type != DEVICE_TYPE:
        return None
    return True  # kernels run synchronously on the calling thread


def torch_backend_register_kernels(device_type: str, lib: Library) -> None:
    if device_type != DEVICE_TYPE:
        return
    from torch.backends import contract

    from .kernels import make_kernels

    module = native()
    # contract.reference is looked up at call time: the reference table is core's, and
    # complete only once core has finished importing.
    kernels = make_kernels(module, contract.dtype_codes(module.DTYPES), contract.reference)
    _REGISTERED.update(kernels)
    fused = {name: k for name, k in kernels.items() if "::" in name}
    # A primitive this core's table lacks (a newer backend on an older core: `sigmoid` before
    # primitive table version 4) is left out; core never calls it.
    primitives = contract.PRIMITIVES
    for name, kernel in kernels.items():
        if "::" not in name and name in primitives:
            lib.impl(name, kernel)
    if fused:
        _register_fused(fused, lib.dispatch_key)


# Every kernel registered, by name: the fast path (fast.py) runs a primitive's native code
# directly only while the dispatcher still resolves the primitive to this kernel.
_REGISTERED: dict[str, Any] = {}

# Libraries holding the fused kernels' registrations, kept alive with the process.
_FUSED_LIBRARIES: dict[str, Any] = {}


def _register_fused(kernels: dict[str, Any], dispatch_key: str) -> None:
    """Fused kernels override composite ops (``"aten::_softmax"``) under the CPU key; the
    composite stays the other devices' kernel and the reference (docs/architecture.md)."""
    import torch
    from torch.backends import contract
    from torch.library import Library

    for qualname, kernel in kernels.items():
        ns, _, name = qualname.partition("::")
        try:
            contract.composite(qualname)  # defines the op, and checks it has a composite
        except RuntimeError:
            if hasattr(getattr(torch.ops, ns), name.partition(".")[0]):
                raise
            # an operator this core does not define (a newer backend on an older core:
            # `aten::gelu` before core had it) is left out; core never calls it
            continue
        lib = _FUSED_LIBRARIES.get(ns)
        if lib is None:
            lib = _FUSED_LIBRARIES[ns] = Library(ns, "IMPL", dispatch_key)
        lib.impl(name, kernel)


def torch_backend_fast_path(device_type: str) -> Any | None:
    if device_type != DEVICE_TYPE:
        return None
    from torch.backends import contract

    from .fast import FastPath

    module = native()
    return FastPath(module, contract.dtype_codes(module.DTYPES), _REGISTERED)


def torch_backend_codegen(device_type: str, target: str) -> Any | None:
    """For plait-compile's generated CPU code (``target="thread_pool"``): the address of the
    pool's C entry ``plait_cpu_parallel_for`` (README, "Threads"), so that compiled kernels split
    their loops over this backend's threads."""
    if device_type != DEVICE_TYPE or target != "thread_pool":
        return None
    return int(native().parallel_for_address())


def torch_backend_set_num_threads(device_type: str, num_threads: int) -> None:
    if device_type != DEVICE_TYPE:
        return
    native().set_num_threads(num_threads)


def torch_backend_device_module(device_type: str) -> ModuleType | None:
    # Core ships torch.cpu itself.
    return None
