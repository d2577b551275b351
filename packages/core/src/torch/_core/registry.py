"""The device registry: backend plugins, their two load phases, and device modules.

Phase 1 (``autoload``, at the end of ``import torch``): find the ``torch.backends`` entry
points, import each light plugin module and ask it (by hook name) for its
:class:`~torch.backends.hookspecs.BackendInfo`. No native code runs.

Phase 2 (:func:`runtime`, on the first use of a device type): ask the plugin for its allocator
and copier and let it register kernels. Native extensions load here.

The device types core serves itself (``cpu`` through its reference kernels, ``meta``) are
plugins too, registered by ``import torch`` with :func:`add_builtin` rather than found through
entry points, and run through the same phases; an installed plugin for the same device type
serves it in their place, over the built-in's kernels.

A plugin that fails in either phase never breaks ``import torch``: phase 1 failures warn once
and the first use of the device raises a ``RuntimeError`` naming the plugin and chaining the
original error. Subsystems ask this registry what a device can do (:func:`capabilities`)
instead of comparing device-type strings.
"""

from __future__ import annotations

import importlib
import os
import threading
import time
import warnings
from types import ModuleType

from . import config as _config, entry_points as _entry_points, upcalls

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs more to import than this module: annotations only
    from typing import Any

ENV_VAR = "TORCH_DEVICE_BACKEND_AUTOLOAD"
CPU_FALLBACK_ENV_VAR = "TORCH_DEVICE_CPU_FALLBACK"

# Device types core always parses: the two it serves itself (cpu, meta) and the well-known
# accelerators it keeps placeholder modules for. The value is the distribution that serves it.
WELL_KNOWN: dict[str, str] = {
    "cpu": "plait-core",
    "meta": "plait-core",
    "cuda": "plait-backend-cuda",
    "mps": "plait-backend-mps",
    "xpu": "plait-backend-xpu",
}
KNOWN_DEVICE_TYPES = frozenset(WELL_KNOWN)

_TRUE = frozenset(("", "1", "true", "yes", "on"))
_FALSE = frozenset(("0", "false", "no", "off"))


class Plugin:
    """One installed ``torch.backends`` entry point and what became of it."""

    __slots__ = ("distribution", "error", "info", "load_seconds", "module", "name", "status",
                 "value", "version")

    def __init__(self, name: str, value: str, distribution: str, version: str,
                 module: Any = None) -> None:
        self.name = name  # the device type
        self.value = value  # "module" or "module:attr"
        self.distribution = distribution
        self.version = version
        self.status = "installed"  # installed | loaded | failed | skipped
        self.load_seconds = 0.0
        self.error: BaseException | None = None
        self.module = module
        self.info: Any = None  # its hookspecs.BackendInfo, once loaded

    def __repr__(self) -> str:
        return (f"Plugin(name={self.name!r}, distribution={self.distribution!r}, "
                f"status={self.status!r})")


class Runtime:
    """Phase-2 state of one device type: what core needs to allocate and move memory."""

    __slots__ = ("allocator", "capabilities", "copier", "device_type", "dispatch_key", "fast",
                 "plugin")

    def __init__(self, device_type: str, dispatch_key: str, allocator: Any, copier: Any,
                 capabilities: frozenset[str] = frozenset(), plugin: Plugin | None = None,
                 fast: Any = None) -> None:
        self.device_type = device_type
        self.dispatch_key = dispatch_key
        self.allocator = allocator
        self.copier = copier
        self.capabilities = capabilities
        self.plugin = plugin
        self.fast = fast  # the backend's hookspecs.FastPath, or None

    def __repr__(self) -> str:
        return f"Runtime(device_type={self.device_type!r}, dispatch_key={self.dispatch_key!r})"


_lock = threading.RLock()
_plugins: dict[str, Plugin] = {}  # by device type; every installed entry point
_builtins: dict[str, Plugin] = {}  # by device type; the plugins core itself ships
_runtimes: dict[str, Runtime] = {}
_runtime_errors: dict[str, BaseException] = {}
_device_modules: dict[str, ModuleType] = {}
_installed_scanned = False
autoload_setting: str = ""
autoload_seconds: float = 0.0
# Called once autoload has run (whatever it loaded): how torch.<device> and the Tensor methods
# of plugin devices are made without this registry importing the layers above it.
on_autoload: list[Any] = []


# -- phase 1 -------------------------------------------------------------------------------


def parse_autoload(value: str | None) -> bool | frozenset[str]:
    """``True`` (load all), ``False`` (load none) or the set of names to load."""
    v = (value or "").strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    return frozenset(part.strip() for part in v.split(",") if part.strip())


def add_builtin(device_type: str, module: Any) -> None:
    """Register a plugin that core ships for ``device_type`` (``import torch`` adds ``cpu`` and
    ``meta``). Its phase 1 runs when the device type is first asked about; it serves the type
    unless an installed plugin does."""
    with _lock:
        _builtins[device_type] = Plugin(device_type, getattr(module, "__name__", device_type),
                                        "plait-core", "", module=module)


def _builtin(device_type: str) -> Plugin | None:
    plugin = _builtins.get(device_type)
    if plugin is not None and plugin.status == "installed":
        with _lock:
            if plugin.status == "installed":
                _load_plugin(plugin)
    return plugin


def _serving(device_type: str) -> Plugin | None:
    """The loaded plugin that serves ``device_type``: an installed one, else core's own."""
    plugin = _plugins.get(device_type)
    if plugin is not None and plugin.status == "loaded":
        return plugin
    builtin = _builtin(device_type)
    return builtin if builtin is not None and builtin.status == "loaded" else None


def _scan_installed() -> dict[str, Plugin]:
    global _installed_scanned
    if not _installed_scanned:
        for ep in _entry_points.find("torch.backends"):
            _plugins.setdefault(ep.name, Plugin(ep.name, ep.value, ep.distribution, ep.version))
        _installed_scanned = True
    return _plugins


def installed() -> dict[str, Plugin]:
    """Every installed backend plugin, by device type, with its status."""
    with _lock:
        return dict(_scan_installed())


def autoload() -> None:
    """Phase 1 for every installed plugin the environment variable selects."""
    global autoload_setting, autoload_seconds
    t0 = time.perf_counter()
    autoload_setting = os.environ.get(ENV_VAR, "")
    selected = parse_autoload(autoload_setting)
    if selected is not False:
        with _lock:
            plugins = _scan_installed()
            for name, plugin in plugins.items():
                if selected is not True and name not in selected:
                    plugin.status = "skipped"
                    continue
                _load_plugin(plugin)
            if selected is not True:
                _warn_unknown(selected, plugins)
    for callback in on_autoload:
        callback()
    autoload_seconds = time.perf_counter() - t0


def _warn_unknown(selected: frozenset[str], plugins: dict[str, Plugin]) -> None:
    """A name in the allowlist that no installed plugin serves is most likely a typo."""
    unknown = sorted(selected - set(plugins) - set(_builtins))
    if unknown:
        listing = ", ".join(sorted(plugins)) or "none"
        warnings.warn(
            f"{ENV_VAR}={autoload_setting!r} names {', '.join(map(repr, unknown))}, which no "
            f"installed backend plugin serves (installed: {listing}).",
            RuntimeWarning,
            stacklevel=_config.external_stacklevel(),
        )


def _load_plugin(plugin: Plugin) -> None:
    """Phase 1 of one plugin: import its module and ask it for its
    :class:`~torch.backends.hookspecs.BackendInfo`."""
    t0 = time.perf_counter()
    try:
        module: Any = plugin.module
        if module is None:
            mod_name, _, attr = plugin.value.partition(":")
            module = importlib.import_module(mod_name.strip())
            for part in filter(None, attr.strip().split(".")):
                module = getattr(module, part)
        plugin.module = module
        info = _call_owner(plugin, "torch_backend_info", device_type=plugin.name)
        if info is None:
            raise RuntimeError(f"the plugin declares no backend for device type '{plugin.name}' "
                               "(torch_backend_info returned None)")
        if info.device_type != plugin.name:
            raise RuntimeError(f"the entry point is named '{plugin.name}' but the plugin says "
                               f"it serves '{info.device_type}'")
        plugin.info = info
        plugin.status = "loaded"
    except Exception as exc:  # a broken plugin must not break `import torch`
        plugin.status = "failed"
        plugin.error = exc
        others = ",".join(n for n in sorted(_plugins) if n != plugin.name)
        keep = f", or load only the others with {ENV_VAR}={others}" if others else ""
        warnings.warn(
            f"Failed to load the torch backend plugin '{plugin.name}' (from {plugin.distribution}"
            f"): {type(exc).__name__}: {exc}. Device type '{plugin.name}' is unusable. Set "
            f"{ENV_VAR}=0 to turn backend autoloading off{keep}.",
            RuntimeWarning,
            stacklevel=_config.external_stacklevel(),
        )
    finally:
        plugin.load_seconds = time.perf_counter() - t0


def _call_owner(plugin: Plugin, hook: str, **kwargs: Any) -> Any:
    """Call ``hook`` on the plugin that owns a device type only: a broken neighbour cannot
    answer for it, nor make it fail."""
    fn = getattr(plugin.module, hook, None)
    if fn is None:
        return None
    return fn(**kwargs)


def is_declared(device_type: str) -> bool:
    """Whether an installed plugin (loaded, failed or not) declares ``device_type``."""
    if device_type in _plugins:
        return True
    with _lock:
        return device_type in _scan_installed()


def unknown_device_message(device_type: str, spec: str) -> str:
    known = sorted(KNOWN_DEVICE_TYPES | set(_plugins))
    plugins = installed()
    listing = ", ".join(f"{p.name} ({p.distribution})" for p in plugins.values()) or "none"
    return (f"Expected one of {', '.join(known)} device type at start of device string: {spec}. "
            f"Unknown device type '{device_type}'. Installed backend plugins: {listing}.")


# -- phase 2 -------------------------------------------------------------------------------


def runtime(device_type: str) -> Runtime:
    """The initialised runtime of ``device_type``, initialising it on first use."""
    rt = _runtimes.get(device_type)
    if rt is not None:
        return rt
    with _lock:
        rt = _runtimes.get(device_type)
        if rt is None:
            rt = _initialise(device_type)
            _runtimes[device_type] = rt
        return rt


def _initialise(device_type: str) -> Runtime:
    if device_type in _runtime_errors:
        # A fresh error each time, chained to the original: re-raising one object would grow
        # its traceback on every use of the device.
        first = _runtime_errors[device_type]
        raise RuntimeError(str(first)) from first.__cause__
    installed_plugin = _scan_installed().get(device_type)
    plugin = _serving(device_type)
    if plugin is None:
        raise _unusable(device_type, installed_plugin)
    # core's own plugin is loaded (phase 1) here even when an installed one serves the type:
    # its kernels go beneath the installed plugin's
    builtin = _builtin(device_type)
    try:
        allocator = _call_owner(plugin, "torch_backend_allocator", device_type=device_type)
        if allocator is None:
            raise RuntimeError("torch_backend_allocator returned None")
        copier = _call_owner(plugin, "torch_backend_copy", device_type=device_type)
        caps = plugin.info.capabilities
        if copier is None and "host_accessible" not in caps:
            raise RuntimeError("the backend gave no copier and its memory is not host accessible")
        from . import dispatch

        dispatch.define_primitives()
        lib = upcalls.kernel_library("prims", "IMPL", plugin.info.dispatch_key)
        if builtin is not None and builtin.status == "loaded":
            # core's own kernels first, beneath an installed plugin's (which may leave some out)
            _call_owner(builtin, "torch_backend_register_kernels", device_type=device_type,
                        lib=lib)
        for other in list(_plugins.values()):  # every loaded plugin may add kernels for any
            if other.status == "loaded":  # device type, in the order they were found
                _call_owner(other, "torch_backend_register_kernels", device_type=device_type,
                            lib=lib)
        _call_owner(plugin, "torch_backend_set_num_threads", device_type=device_type,
                    num_threads=_config.state.num_threads)
        fast = _call_owner(plugin, "torch_backend_fast_path", device_type=device_type)
    except Exception as exc:
        err = RuntimeError(
            f"The torch backend plugin '{plugin.name}' (from {plugin.distribution}) could not "
            f"initialise device type '{device_type}': {exc}"
        )
        err.__cause__ = exc
        _runtime_errors[device_type] = err
        raise err from exc
    return Runtime(device_type, plugin.info.dispatch_key, allocator, copier, caps, plugin, fast)


class BackendNotInstalledError(RuntimeError, AssertionError):
    """A device type no installed backend serves. PyTorch built without CUDA raises an
    AssertionError ("Torch not compiled with CUDA enabled") where other builds raise a
    RuntimeError, so programs catch either: this error is both."""


def _unusable(device_type: str, plugin: Plugin | None) -> RuntimeError:
    if plugin is None:
        dist = WELL_KNOWN.get(device_type, f"a plait backend for '{device_type}'")
        return BackendNotInstalledError(
            f"Device type '{device_type}' has no backend installed: install {dist} "
            f"(pip install {dist})." if device_type in WELL_KNOWN else
            f"Device type '{device_type}' has no backend installed."
        )
    if plugin.status == "failed":
        err = RuntimeError(
            f"Device type '{device_type}' is unusable: its backend plugin '{plugin.name}' (from "
            f"{plugin.distribution}) failed to load at import: {type(plugin.error).__name__}: "
            f"{plugin.error}. Fix or uninstall {plugin.distribution}, or set {ENV_VAR}=0 to "
            "turn backend autoloading off."
        )
        err.__cause__ = plugin.error
        return err
    return RuntimeError(
        f"Device type '{device_type}' is served by the plugin '{plugin.name}' (from "
        f"{plugin.distribution}), which was not loaded because {ENV_VAR}="
        f"{autoload_setting!r}; add '{plugin.name}' to {ENV_VAR} or unset it."
    )


def capabilities(device_type: str) -> frozenset[str]:
    """What a device type can do, without initialising it."""
    if device_type in _runtimes:
        return _runtimes[device_type].capabilities
    plugin = _serving(device_type)
    return plugin.info.capabilities if plugin is not None else frozenset()


def amp_dtypes(device_type: str) -> tuple[str, ...]:
    """The dtype names autocast may use on a device type, its default first; empty when its
    backend does not declare the ``"amp"`` capability."""
    if "amp" not in capabilities(device_type):
        return ()
    plugin = _serving(device_type)
    return tuple(plugin.info.amp_dtypes) if plugin is not None else ()


def dispatch_key(device_type: str) -> str:
    """The dispatcher key of a device type (``cpu -> CPU``, ``npu -> NPU``)."""
    plugin = _serving(device_type)
    return plugin.info.dispatch_key if plugin is not None else device_type.upper()


def cpu_fallback_enabled() -> bool:
    return os.environ.get(CPU_FALLBACK_ENV_VAR, "1").strip().lower() not in _FALSE


def synchronize(device_type: str, index: int) -> None:
    """Call the backend's ``torch_backend_synchronize`` hook for one device."""
    rt = runtime(device_type)
    if rt.plugin is not None:
        _call_owner(rt.plugin, "torch_backend_synchronize", device_type=device_type,
                    device_index=index)


def set_num_threads(n: int) -> None:
    """Tell every initialised backend to use ``n`` intra-op threads."""
    for rt in list(_runtimes.values()):
        if rt.plugin is not None:
            _call_owner(rt.plugin, "torch_backend_set_num_threads",
                        device_type=rt.device_type, num_threads=n)


# -- device modules ------------------------------------------------------------------------


def register_device_module(device_type: str, module: ModuleType) -> None:
    """Record ``module`` as the backend's module of ``device_type`` (what ``torch.<type>``
    forwards to); a second registration is an error."""
    with _lock:
        existing = _device_modules.get(device_type)
        if existing is not None:
            raise RuntimeError(f"The runtime module of '{device_type}' has already been "
                               f"registered with '{getattr(existing, '__name__', existing)}'")
        _device_modules[device_type] = module


def check_index(device_type: str, index: int) -> None:
    """Raise before a backend sees an index its device module does not count (a negative one,
    or one past ``device_count()``)."""
    from .device import INDEXLESS  # (device imports this module)

    if device_type in INDEXLESS:  # no device count to check an index against
        return
    mod = device_module(device_type)
    count = getattr(mod, "device_count", None) if mod is not None else None
    if index < 0 or (count is not None and index >= int(count())):
        total = "" if count is None else f"; {int(count())} available"
        raise RuntimeError(f"Invalid device index {index} for device type '{device_type}'"
                           f"{total}")


def device_module(device_type: str) -> ModuleType | None:
    """The registered module of ``device_type``, asking its plugin for one the first time."""
    mod = _device_modules.get(device_type)
    if mod is not None:
        return mod
    with _lock:
        plugin = _plugins.get(device_type)
        if plugin is not None and plugin.status == "loaded" and device_type not in _device_modules:
            mod = _call_owner(plugin, "torch_backend_device_module", device_type=device_type)
            if mod is not None:
                register_device_module(device_type, mod)
        return _device_modules.get(device_type)


def summary() -> dict[str, Any]:
    """Diagnostics for ``python -m torch.backends``."""
    return {
        "autoload": autoload_setting,
        "autoload_seconds": autoload_seconds,
        "plugins": installed(),
        "initialised": sorted(_runtimes),
    }
