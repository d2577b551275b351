"""``torch.<device type>``: one module per accelerator, whatever is installed.

``torch.cuda``, ``torch.mps`` and ``torch.xpu`` are mounted at import; a plugin's device type
(``torch.npu``) on first access. Each is a :class:`DeviceModuleProxy` (also in ``sys.modules``,
so ``import torch.cuda`` works) that answers in three layers:

1. What core owns for every device: ``synchronize`` (the index checked, then the backend's
   ``torch_backend_synchronize`` hook) and the random functions (``manual_seed``,
   ``get_rng_state``...: core's per-device generators).
2. The backend's device module (``torch_backend_device_module``), when a loaded plugin serves
   the type.
3. Otherwise a placeholder: ``is_available()`` is False, ``device_count()`` 0, and every other
   entry point raises the RuntimeError a tensor on the device would raise (naming the
   distribution to install, the plugin that failed to load, or the autoload setting that
   skipped it).

Also here: ``Tensor.<device type>()``, ``Tensor.is_<device type>`` and ``Module.<device
type>()`` for every plugin device type, as PyTorch's ``generate_methods_for_privateuse1_backend``
makes them.
"""

from __future__ import annotations

import os as _os
import sys
from collections.abc import Callable
from types import ModuleType

from ._core import registry as _registry

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from typing import Any

PLACEHOLDER_TYPES = ("cuda", "mps", "xpu")

_proxies: dict[str, DeviceModuleProxy] = {}
_MISSING = object()
# the submodules core provides under torch.<device type> (in _device_packages/<type>/)
_SUBPACKAGES = {"cuda": ("amp",)}


def _placeholder_table(device_type: str) -> dict[str, Any]:
    def unusable(*args: Any, **kwargs: Any) -> Any:
        raise _registry._unusable(device_type, _registry._plugins.get(device_type))

    from ._device_placeholder import PROBES, placeholder_table

    table = placeholder_table(device_type, unusable)
    if device_type in _registry._plugins:
        # An installed plugin that failed or was skipped: the user meant to use the device, so
        # everything but the probes says why it is unusable (as its tensors do).
        table = {name: entry if name in PROBES else unusable for name, entry in table.items()}
    return table


class _ModuleDevices:
    """The device indices of a type as its device module counts them, for core's own entry
    points (a :class:`torch.backends.devicekit.DeviceIndex` whose current device and count are
    the backend's)."""

    def __init__(self, device_type: str) -> None:
        from .backends.devicekit import DeviceIndex

        self.device_type = device_type
        self.index = DeviceIndex(device_type, self.count, require=self.require,
                                 current=self.current)

    def module(self) -> ModuleType | None:
        return _registry.device_module(self.device_type)

    def require(self) -> None:
        """Raise the device's own error when it cannot be used (no backend, failed, skipped,
        no device)."""
        _registry.runtime(self.device_type)

    def count(self) -> int:
        mod = self.module()
        fn = getattr(mod, "device_count", None)
        return int(fn()) if fn is not None else 1

    def current(self) -> int:
        mod = self.module()
        fn = getattr(mod, "current_device", None)
        return int(fn()) if fn is not None else 0


def _core_table(device_type: str) -> dict[str, Callable[..., Any]]:
    """What ``torch.<device_type>`` serves itself, whatever the backend's module has."""
    from .backends.devicekit import DeviceRandom

    index = _ModuleDevices(device_type).index
    rnd = DeviceRandom(device_type, index)

    def synchronize(device: Any = None) -> None:
        """Wait for every queued kernel of ``device`` (default: the current device)."""
        _registry.synchronize(device_type, index.checked(device))

    return {
        "synchronize": synchronize,
        "manual_seed": rnd.manual_seed,
        "manual_seed_all": rnd.manual_seed_all,
        "seed": rnd.seed,
        "seed_all": rnd.seed_all,
        "initial_seed": rnd.initial_seed,
        "get_rng_state": rnd.get_rng_state,
        "set_rng_state": rnd.set_rng_state,
        "get_rng_state_all": rnd.get_rng_state_all,
        "set_rng_state_all": rnd.set_rng_state_all,
    }


class DeviceModuleProxy(ModuleType):
    """``torch.<device_type>``: core's entry points, then the backend's module, else a
    placeholder whose entry points say why the device is unusable."""

    def __init__(self, device_type: str) -> None:
        super().__init__(f"torch.{device_type}")
        self.__dict__["_device_type"] = device_type
        self.__dict__["_placeholder"] = None  # made on first use, as _core
        self.__dict__["_core"] = None  # made on first use: it imports devicekit
        # the device type's submodules (torch.cuda.amp), when core has a folder for it
        folder = _os.path.join(_os.path.dirname(__file__), "_device_packages", device_type)
        if _os.path.isdir(folder):
            self.__dict__["__path__"] = [folder]

    def _core_entries(self) -> dict[str, Callable[..., Any]]:
        table = self.__dict__["_core"]
        if table is None:
            table = self.__dict__["_core"] = _core_table(self.__dict__["_device_type"])
        return table

    def _placeholder_entries(self) -> dict[str, Any]:
        table = self.__dict__["_placeholder"]
        if table is None:
            table = self.__dict__["_placeholder"] = _placeholder_table(
                self.__dict__["_device_type"])
        return table

    def _placeholder_classes(self) -> dict[str, type]:
        table = self.__dict__.get("_classes")
        if table is None:
            from ._device_placeholder import placeholder_table

            def unusable(*args: Any, **kwargs: Any) -> Any:
                raise RuntimeError(f"this {self.__dict__['_device_type']} backend does not "
                                   f"support this yet")

            entries = placeholder_table(self.__dict__["_device_type"], unusable)
            table = self.__dict__["_classes"] = {
                name: entry for name, entry in entries.items() if isinstance(entry, type)}
        return table

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _SUBPACKAGES.get(self.__dict__["_device_type"], ()):
            import importlib

            return importlib.import_module(f"{self.__name__}.{name}")
        fn = self._core_entries().get(name)
        if fn is not None:
            return fn
        device_type = self.__dict__["_device_type"]
        mod = _registry.device_module(device_type)
        if mod is not None:
            found = getattr(mod, name, _MISSING)
            if found is not _MISSING:
                return found
            # The classes PyTorch's module has that this backend does not define yet
            # (libraries annotate with torch.cuda.StreamContext or CUDAGraph at import):
            # the placeholder's, whose construction raises.
            cls = self._placeholder_classes().get(name)
            if cls is not None:
                return cls
            raise AttributeError(f"module 'torch.{device_type}' has no attribute '{name}' "
                                 f"(the installed backend does not define it)")
        fn = self._placeholder_entries().get(name)
        if fn is not None:
            return fn
        plugin = _registry._plugins.get(device_type)
        if plugin is not None and plugin.status != "loaded":
            raise _registry._unusable(device_type, plugin)  # the same error as its tensors
        dist = _registry.WELL_KNOWN.get(device_type, "a backend plugin")
        raise AttributeError(f"torch.{device_type}.{name} is not available: no backend serves "
                             f"'{device_type}' (install {dist})")

    def __dir__(self) -> list[str]:
        mod = _registry.device_module(self.__dict__["_device_type"])
        names = set(dir(mod) if mod is not None else self._placeholder_entries())
        return sorted(names | set(self._core_entries()))


def _mount_one(torch: ModuleType, device_type: str) -> DeviceModuleProxy:
    proxy = _proxies.get(device_type)
    if proxy is None:
        proxy = _proxies[device_type] = DeviceModuleProxy(device_type)
        setattr(torch, device_type, proxy)
        sys.modules[f"torch.{device_type}"] = proxy
    return proxy


def mount(torch: ModuleType) -> None:
    """Create the proxies as ``torch.cuda``... and in ``sys.modules``."""
    for device_type in PLACEHOLDER_TYPES:
        _mount_one(torch, device_type)
    _registry.on_autoload.append(_after_autoload)


def plugin_module(device_type: str) -> ModuleType:
    """``torch.<device_type>`` of an installed plugin's device type, mounted on first access
    (loaded or not: a failed or skipped plugin's module raises the device's error)."""
    return _mount_one(sys.modules["torch"], device_type)


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
    if dev_type in _proxies or _registry.device_module(dev_type) is not None:
        return _mount_one(torch, dev_type)
    raise RuntimeError(f"Device '{dev_type}' does not have a corresponding module registered as "
                       f"'torch.{dev_type}'.")


def register_device_module(device_type: str, module: ModuleType) -> None:
    """``torch._register_device_module``: serve ``torch.<type>`` from ``module``."""
    import torch

    dev_type = torch.device(device_type).type
    _registry.register_device_module(dev_type, module)
    _mount_one(torch, dev_type)
    add_methods(dev_type)


# -- Tensor.<device type>(), Tensor.is_<device type>, Module.<device type>() ---------------


def _tensor_method(device_type: str) -> Callable[..., Any]:
    def method(self: Any, device: Any = None, non_blocking: bool = False,
               memory_format: Any = None) -> Any:
        import torch

        if device is None:
            target: Any = device_type
        elif isinstance(device, int) and not isinstance(device, bool):
            target = torch.device(device_type, device)
        else:
            target = torch.device(device)
            if target.type != device_type:
                raise RuntimeError(f"Invalid device, must be {device_type} device")
        return self.to(target, non_blocking=non_blocking)

    method.__name__ = method.__qualname__ = device_type
    method.__doc__ = (f"A copy of this tensor on the ``{device_type}`` device (this tensor when "
                      "it is there already).")
    return method


def _is_device(device_type: str) -> property:
    def getter(self: Any) -> bool:
        return self.device.type == device_type

    getter.__doc__ = f"Whether the tensor is on the ``{device_type}`` device."
    return property(getter)


def _module_method(device_type: str) -> Callable[..., Any]:
    def method(self: Any, device: Any = None) -> Any:
        return self._apply(lambda t: getattr(t, device_type)(device))

    method.__name__ = method.__qualname__ = device_type
    method.__doc__ = f"Move every parameter and buffer to the ``{device_type}`` device."
    return method


_module_classes: list[type] = []


def add_methods(device_type: str) -> None:
    """``Tensor.<type>()``, ``Tensor.is_<type>`` and ``Module.<type>()`` where absent (a
    device type named like an existing attribute gets none, as in PyTorch)."""
    from ._core.tensor import Tensor

    # (looked up in the class dicts: hasattr's miss would load the op surface, and numpy with
    # it, during `import torch`; methods the op surface binds later replace these, as before)
    def defined(name: str) -> bool:
        return any(name in vars(klass) for klass in Tensor.__mro__)

    if not defined(device_type):
        setattr(Tensor, device_type, _tensor_method(device_type))
    if not defined(f"is_{device_type}"):
        setattr(Tensor, f"is_{device_type}", _is_device(device_type))
    for cls in _module_classes:
        if not hasattr(cls, device_type):
            setattr(cls, device_type, _module_method(device_type))


def add_module_methods(cls: type) -> None:
    """Give ``cls`` (``torch.nn.Module``) a ``<type>()`` method per device type, now and for
    device types registered later."""
    if cls not in _module_classes:
        _module_classes.append(cls)
    for device_type in device_types_with_methods():
        if not hasattr(cls, device_type):
            setattr(cls, device_type, _module_method(device_type))


def device_types_with_methods() -> list[str]:
    """Device types that get ``<type>()`` methods: the installed plugins' and the well-known
    accelerators' (names that are identifiers)."""
    names = set(_registry._plugins) | set(PLACEHOLDER_TYPES)
    return sorted(n for n in names if n.isidentifier())


def _after_autoload() -> None:
    """Every installed plugin's device type (loaded or not) gets its Tensor methods; using one
    of an unusable device raises the device's error."""
    for device_type in device_types_with_methods():
        add_methods(device_type)
