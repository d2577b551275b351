"""``torch.accelerator``: the one accelerator this process has, whatever its device type.

It asks the device registry: the accelerator is the first loaded backend plugin for a device
type other than the host's (``cpu``, ``meta``) that has a usable device, else the first loaded
one (several can be installed, e.g. a CUDA backend on a machine without a GPU beside another
device's plugin; PyTorch's build has one), and its ``torch.<type>`` module answers the
device questions. With only the CPU, the answers are PyTorch's CPU build's: none available, no
devices, and the calls that need a device raise :class:`RuntimeError`.
"""

from __future__ import annotations

import warnings
from types import ModuleType
from typing import Any

from ._core import registry as _registry
from ._core.device import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "current_stream",
           "device_count", "device_index", "empty_cache", "empty_host_cache", "get_memory_info",
           "is_available", "max_memory_allocated", "max_memory_reserved", "memory_allocated",
           "memory_reserved", "memory_stats", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats", "set_device_idx", "set_device_index", "set_stream",
           "synchronize"]

# Device types that are the host, never an accelerator.
_HOST = frozenset({"cpu", "meta"})
_NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def _accelerator_type() -> str | None:
    """The device type of the first loaded accelerator plugin with a usable device, else of
    the first loaded one, or None."""
    loaded = [device_type for device_type, plugin in _registry.installed().items()
              if device_type not in _HOST and plugin.status == "loaded"]
    for device_type in loaded:
        mod = _module(device_type)
        if mod is not None and mod.is_available():
            return device_type
    return loaded[0] if loaded else None


def _module(device_type: str) -> ModuleType | None:
    return _registry.device_module(device_type)


def _available_type() -> str | None:
    """The accelerator's device type when it has a usable device, else None."""
    device_type = _accelerator_type()
    if device_type is None:
        return None
    mod = _module(device_type)
    return device_type if mod is not None and mod.is_available() else None


def _require() -> tuple[str, ModuleType]:
    device_type = _available_type()
    if device_type is None:
        raise RuntimeError(_NONE_AVAILABLE)
    mod = _module(device_type)
    assert mod is not None  # _available_type asked it
    return device_type, mod


def _index_of(device: Any, device_type: str) -> int:
    """A device index from an int, a device string or a ``torch.device`` of the accelerator."""
    if isinstance(device, int):
        return device
    d = _device(device)
    if d.type != device_type:
        raise ValueError(f"{d} doesn't match the current accelerator {device_type}.")
    return d.index if d.index is not None else int(_module(device_type).current_device())


def is_available() -> bool:
    """Whether an accelerator is present and usable."""
    return _available_type() is not None


def current_accelerator(check_available: bool = False) -> _device | None:
    """The accelerator's device type as a ``torch.device``; None without one (or, with
    ``check_available``, when it has no usable device)."""
    device_type = _available_type() if check_available else _accelerator_type()
    return None if device_type is None else _device(device_type)


def device_count() -> int:
    """How many accelerator devices there are (0 without one)."""
    device_type = _available_type()
    if device_type is None:
        return 0
    count = getattr(_module(device_type), "device_count", None)
    return int(count()) if count is not None else 1


def current_device_index() -> int:
    """The index of the accelerator device in use."""
    _, mod = _require()
    return int(mod.current_device())


def set_device_index(device: Any, /) -> None:
    """Make ``device`` (an index, a device string or a ``torch.device``) the one in use."""
    device_type, mod = _require()
    mod.set_device(_index_of(device, device_type))


def synchronize(device: Any = None, /) -> None:
    """Wait for the work queued on ``device`` (the current one by default)."""
    device_type, mod = _require()
    index = int(mod.current_device()) if device is None else _index_of(device, device_type)
    mod.synchronize(_device(device_type, index))


def empty_cache() -> None:
    """Give the accelerator's cached memory back, where its module keeps a cache."""
    _, mod = _require()
    release = getattr(mod, "empty_cache", None)
    if release is not None:
        release()


def _provided(name: str) -> tuple[str, ModuleType, Any]:
    """The accelerator's type, module and its function ``name``; a RuntimeError naming the
    backend when its module lacks it."""
    device_type, mod = _require()
    fn = getattr(mod, name, None)
    if fn is None:
        raise RuntimeError(f"torch.accelerator.{name}: the {device_type} backend does not "
                           f"provide torch.{device_type}.{name}")
    return device_type, mod, fn


def _ask(name: str, device: Any = None) -> Any:
    """``torch.<accelerator>.<name>(index)`` for ``device`` (the current device by default)."""
    device_type, mod, fn = _provided(name)
    index = int(mod.current_device()) if device is None else _index_of(device, device_type)
    return fn(index)


def memory_allocated(device_index: Any = None, /) -> int:
    """Bytes the accelerator's tensors occupy on ``device_index`` (the current device)."""
    return int(_ask("memory_allocated", device_index))


def max_memory_allocated(device_index: Any = None, /) -> int:
    """The peak of :func:`memory_allocated` since the start or the last reset."""
    return int(_ask("max_memory_allocated", device_index))


def memory_reserved(device_index: Any = None, /) -> int:
    """Bytes the accelerator's caching allocator holds on the device."""
    return int(_ask("memory_reserved", device_index))


def max_memory_reserved(device_index: Any = None, /) -> int:
    """The peak of :func:`memory_reserved` since the start or the last reset."""
    return int(_ask("max_memory_reserved", device_index))


def memory_stats(device_index: Any = None, /) -> dict[str, Any]:
    """The accelerator's allocator statistics for the device (its module's ``memory_stats``)."""
    return _ask("memory_stats", device_index)


def reset_peak_memory_stats(device_index: Any = None, /) -> None:
    """Reset the peaks :func:`max_memory_allocated` and :func:`max_memory_reserved` report."""
    _ask("reset_peak_memory_stats", device_index)


def reset_accumulated_memory_stats(device_index: Any = None, /) -> None:
    """Reset the accumulated (historical) counters of :func:`memory_stats`."""
    _ask("reset_accumulated_memory_stats", device_index)


def get_memory_info(device_index: Any = None, /) -> tuple[int, int]:
    """``(free, total)`` bytes of the device's memory (its module's ``mem_get_info``)."""
    free, total = _ask("mem_get_info", device_index)
    return int(free), int(total)


def current_stream(device: Any = None, /) -> Any:
    """The stream work is queued on for ``device`` (the current device by default)."""
    return _ask("current_stream", device)


def set_stream(stream: Any) -> None:
    """Make ``stream`` the current stream of its device."""
    _provided("set_stream")[2](stream)


def empty_host_cache() -> None:
    """Give back the cached pinned host memory, where the accelerator's module keeps one."""
    _, mod = _require()
    release = getattr(mod, "empty_host_cache", None)
    if release is not None:
        release()


def current_device_idx() -> int:
    """Deprecated name of :func:`current_device_index`."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device: Any, /) -> None:
    """Deprecated name of :func:`set_device_index`."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:  # PyTorch's lower-case name
    """``with torch.accelerator.device_index(i)``: use device ``i`` inside the block; None
    changes nothing (and needs no accelerator)."""

    def __init__(self, device: int | None, /) -> None:
        self.index = device
        self.previous: int | None = None

    def __enter__(self) -> None:
        if self.index is not None:
            self.previous = current_device_index()
            set_device_index(self.index)

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            set_device_index(self.previous)
