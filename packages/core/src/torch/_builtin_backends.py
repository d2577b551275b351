"""The two device types core serves itself, written as backend plugins like any other.

``cpu`` is the reference backend: the numpy kernels of :mod:`torch._refs`. It serves the CPU
when no plugin does (plait-backend-cpu not installed, or not autoloaded), and its kernels are
registered first beneath a native CPU plugin's, so that what the plugin leaves out still runs.
``meta`` has shapes, dtypes and strides and no memory: its primitives write nothing.

Both answer the hooks of :mod:`torch.backends.hookspecs` with the same names and arguments an
installed plugin uses, and the registry (:mod:`torch._core.registry`) runs them through the
same two phases. Two things differ, both on purpose: ``import torch`` registers them
(:func:`torch._core.registry.add_builtin`) instead of an entry point naming them, and they are
plain namespaces rather than modules.
"""

from __future__ import annotations

from types import SimpleNamespace

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from typing import Any


def _info(served: str, dispatch_key: str, capabilities: tuple[str, ...],
          amp_dtypes: tuple[str, ...] = ()) -> Any:
    def torch_backend_info(device_type: str) -> Any:
        if device_type != served:
            return None
        from .backends._backend_info import BackendInfo

        return BackendInfo(served, "plait-core", dispatch_key=dispatch_key,
                           capabilities=frozenset(capabilities), amp_dtypes=amp_dtypes)

    return torch_backend_info


def _storage() -> Any:
    from ._core import storage  # imports numpy: with the first runtime, not with torch

    return storage


def _register_reference_kernels(device_type: str, lib: Any) -> None:
    from . import _refs  # numpy and the kernels load with the CPU runtime, not with torch

    for name, kernel in _refs.CPU_KERNELS.items():
        lib.impl(name, kernel)


def _register_meta_kernels(device_type: str, lib: Any) -> None:
    from . import _refs
    from ._core import prims as _prims

    for name in _prims.PRIMITIVES:
        lib.impl(name, _refs.meta_kernel(name))


reference_cpu = SimpleNamespace(
    __name__=f"{__name__}:reference_cpu",
    # Host memory that numpy views directly; float64 and autocast (bfloat16 first) supported.
    torch_backend_info=_info("cpu", "CPU", ("host_accessible", "float64", "amp"),
                             ("bfloat16", "float16")),
    torch_backend_allocator=lambda device_type: _storage().HostAllocator(),
    torch_backend_copy=lambda device_type: None,
    torch_backend_register_kernels=_register_reference_kernels,
)

class _NoData:
    """The ``meta`` device's copier: there are no bytes to move."""

    def _refuse(self, *args: Any) -> None:
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    to_host = to_device = device_to_device = _refuse


meta = SimpleNamespace(
    __name__=f"{__name__}:meta",
    torch_backend_info=_info("meta", "Meta", ()),
    torch_backend_allocator=lambda device_type: _storage().MetaAllocator(),
    torch_backend_copy=lambda device_type: _NoData(),
    torch_backend_register_kernels=_register_meta_kernels,
)

BUILTIN_BACKENDS = {"cpu": reference_cpu, "meta": meta}
