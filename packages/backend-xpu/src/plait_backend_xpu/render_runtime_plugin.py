"""A GPU backend's ``torch.backends`` hooks: one source for plait-backend-xpu and
plait-backend-cuda, which differ only in a :class:`PluginTable` (device type, capabilities,
and which of their modules serve the allocator, the fast path and the code generator).

Phase 1 (``import torch``) only imports the plugin module and asks ``torch_backend_info``: the
hooks import the backend's modules (and its native code) when first called, never at module
level, and this module imports nothing from ``torch`` at module level.
"""

from __future__ import annotations

import importlib

# typing (and pluggy, dataclasses) cost more to import than the rest of `import torch`: this
# module runs on every import, so it uses none of them at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

    from torch.backends import BackendInfo
    from torch.library import Library


class PluginTable:
    """What one GPU backend declares and where its parts live.

    ``package`` is its import name (``"plait_backend_xpu"``); ``allocator_module`` the module
    of ``DeviceAllocator`` and ``DeviceCopier``; ``fast_path_module`` the module of
    ``FastPath`` (None: the backend has no fast path); ``codegen_class`` the name of the class
    in its ``codegen`` module that generates pointwise kernels."""

    def __init__(self, device_type: str, distribution: str, version: str,
                 capabilities: frozenset[str], amp_dtypes: tuple[str, ...], package: str,
                 allocator_module: str, fast_path_module: str | None,
                 codegen_class: str) -> None:
        self.device_type = device_type
        self.distribution = distribution
        self.version = version
        self.capabilities = capabilities
        self.amp_dtypes = amp_dtypes
        self.package = package
        self.allocator_module = allocator_module
        self.fast_path_module = fast_path_module
        self.codegen_class = codegen_class


class BackendHooks:
    """The hook implementations of the backend that ``table`` describes (:func:`export` puts
    them on the plugin module)."""

    def __init__(self, table: PluginTable) -> None:
        self.table = table

    def _module(self, name: str) -> ModuleType:
        return importlib.import_module(f"{self.table.package}.{name}")

    def _device_module(self) -> ModuleType:
        module = self._module("device_module")
        module.require_device()  # no device: core reports this error, naming the plugin
        return module

    def torch_backend_info(self, device_type: str) -> BackendInfo | None:
        """The backend's declaration, for its own device type only."""
        if device_type != self.table.device_type:
            return None
        from torch.backends import BackendInfo

        return BackendInfo(
            device_type=self.table.device_type,
            distribution=self.table.distribution,
            version=self.table.version,
            capabilities=self.table.capabilities,
            amp_dtypes=self.table.amp_dtypes,
        )

    def torch_backend_allocator(self, device_type: str) -> Any | None:
        """The device allocator over the native extension (needs a device)."""
        if device_type != self.table.device_type:
            return None
        native = self._device_module().native()
        return self._module(self.table.allocator_module).DeviceAllocator(native)

    def torch_backend_copy(self, device_type: str) -> Any | None:
        """The host/device copier over the native extension (needs a device)."""
        if device_type != self.table.device_type:
            return None
        native = self._device_module().native()
        return self._module(self.table.allocator_module).DeviceCopier(native)

    def torch_backend_synchronize(self, device_type: str, device_index: int) -> bool | None:
        """Wait for the device's queued work."""
        if device_type != self.table.device_type:
            return None
        self._module("device_module").synchronize(device_index)
        return True

    def torch_backend_register_kernels(self, device_type: str, lib: Library) -> None:
        """Register every primitive kernel and the fused kernels."""
        if device_type != self.table.device_type:
            return
        for name, kernel in self._module("kernels").kernels().items():
            lib.impl(name, kernel)
        self._module("fused").register(lib.dispatch_key)

    def torch_backend_fast_path(self, device_type: str) -> Any | None:
        """The native small-op path, where the backend has one."""
        if device_type != self.table.device_type or self.table.fast_path_module is None:
            return None
        native = self._module("device_module").native()
        fast = self._module(self.table.fast_path_module)
        return fast.FastPath(native, self._module("kernels").kernels())

    def torch_backend_device_module(self, device_type: str) -> ModuleType | None:
        """The backend's ``torch.<device type>`` module."""
        if device_type != self.table.device_type:
            return None
        return self._module("device_module")

    def torch_backend_codegen(self, device_type: str, target: str) -> Any | None:
        """The generator of ``torch.compile``'s pointwise kernels."""
        if device_type != self.table.device_type or target != "pointwise":
            return None
        return getattr(self._module("codegen"), self.table.codegen_class)()


#: The hooks a GPU backend implements: core calls them on the entry point's module by name.
HOOK_NAMES = ("torch_backend_info", "torch_backend_allocator", "torch_backend_copy",
              "torch_backend_synchronize", "torch_backend_register_kernels",
              "torch_backend_fast_path", "torch_backend_device_module", "torch_backend_codegen")


def export(table: PluginTable, namespace: dict[str, Any]) -> BackendHooks:
    """Bind the hooks of the backend ``table`` describes into ``namespace`` (the plugin
    module's ``globals()``) under their hook names, where core looks for them; returns the
    hooks object."""
    hooks = BackendHooks(table)
    for name in HOOK_NAMES:
        namespace[name] = getattr(hooks, name)
    return hooks
