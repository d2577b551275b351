"""What ``torch.cuda`` (``torch.mps``, ``torch.xpu``) answers while no backend serves the device.

Programs probe an accelerator before they use it, and PyTorch's CPU build answers those probes
without raising: ``is_available()`` and ``is_bf16_supported()`` are False, the memory counters 0,
the memory statistics empty, ``empty_cache()`` and the peak resets do nothing, a ``device_of`` or
``stream(None)`` context does nothing. What needs a device (``current_device()``,
``get_device_name()``, ``get_device_capability()``, a ``Stream`` or ``Event``...) raises the
device's error: a :class:`torch._core.registry.BackendNotInstalledError` naming the distribution
to install, which is both a RuntimeError and the AssertionError PyTorch's CPU build raises.

(PyTorch's CPU build raises an AttributeError from its C extension for the peak-statistics
resets; here they are no-ops, as the empty statistics they reset.)
"""

from __future__ import annotations

import contextlib
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from ._core.storage import OutOfMemoryError  # (core raises it; every device module names it)


def _constant(value: Any) -> Callable[..., Any]:
    """An entry point that takes PyTorch's arguments and answers ``value`` (a fresh copy of a
    container, so callers may mutate it)."""

    def answer(*args: Any, **kwargs: Any) -> Any:
        return value.copy() if hasattr(value, "copy") else value

    return answer


def _renamed(old: str, new: str, value: Any) -> Callable[..., Any]:
    """A deprecated name (``memory_cached``): PyTorch's FutureWarning, then the answer."""

    def answer(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"`torch.cuda.{old}` has been renamed to `torch.cuda.{new}`",
                      FutureWarning, stacklevel=2)
        return value

    return answer


# name -> what PyTorch's CPU build answers
_ANSWERS: dict[str, Any] = {
    "is_available": False,
    "is_initialized": False,
    "device_count": 0,
    "is_bf16_supported": False,
    "is_tf32_supported": False,
    "memory_allocated": 0,
    "max_memory_allocated": 0,
    "memory_reserved": 0,
    "max_memory_reserved": 0,
    "memory_stats": OrderedDict(),
    "memory_stats_as_nested_dict": {},
    "host_memory_stats": OrderedDict(),
    "empty_cache": None,
    "reset_peak_memory_stats": None,
    "reset_max_memory_allocated": None,
    "reset_accumulated_memory_stats": None,
    "caching_allocator_enable": None,
    "get_arch_list": [],
    "get_gencode_flags": "",
    "get_amp_supported_dtype": [],
}

# Entry points that need a device: they raise the device's error.
_NEED_DEVICE = (
    "current_device", "set_device", "init", "get_device_name", "get_device_capability",
    "get_device_properties", "mem_get_info", "ipc_collect", "current_stream", "default_stream",
    "set_stream", "is_current_stream_capturing", "get_per_process_memory_fraction",
    "set_per_process_memory_fraction", "get_sync_debug_mode", "set_sync_debug_mode",
    "memory_summary", "cudart", "current_blas_handle",
)


# What a program asks before it uses a device: answered even for an installed plugin that
# failed or was skipped (the rest of the table raises that device's error then).
PROBES = frozenset(("is_available", "is_initialized", "device_count", "is_bf16_supported",
                    "is_tf32_supported"))


def placeholder_table(device_type: str, unusable: Callable[..., Any]) -> dict[str, Any]:
    """``torch.<device_type>``'s entries while no backend serves it; ``unusable`` raises the
    device's error."""
    table: dict[str, Any] = {name: _constant(value) for name, value in _ANSWERS.items()}
    table.update({name: unusable for name in _NEED_DEVICE})
    table["memory_cached"] = _renamed("memory_cached", "memory_reserved", 0)
    table["max_memory_cached"] = _renamed("max_memory_cached", "max_memory_reserved", 0)
    table["default_generators"] = ()
    table["OutOfMemoryError"] = OutOfMemoryError

    def needs_device(name: str) -> type:
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            unusable()

        return type(name, (), {"__init__": __init__, "__module__": f"torch.{device_type}",
                               "__doc__": f"A {device_type} {name.lower()} (needs a device)."})

    for name in ("Stream", "Event", "ExternalStream"):
        table[name] = needs_device(name)
    # Libraries annotate with torch.cuda.CUDAGraph and torch.cuda.graph at import
    # (transformers does); making one needs a device.
    for name in {"cuda": ("CUDAGraph", "graph"), "xpu": ("XPUGraph",)}.get(device_type, ()):
        table[name] = needs_device(name)

    class device:  # PyTorch's lower-case name
        """``with torch.<type>.device(i)``: selecting a device needs one; None or -1 (no
        device) selects nothing."""

        def __init__(self, device: Any) -> None:
            self.index = _index_of(device)

        def __enter__(self) -> None:
            if self.index is not None and self.index >= 0:
                unusable()

        def __exit__(self, *exc: object) -> None:
            return None

    class device_of(device):  # PyTorch's lower-case name
        """``with torch.<type>.device_of(t)``: the device of ``t`` when it is on this type."""

        def __init__(self, obj: Any) -> None:
            on_type = getattr(getattr(obj, "device", None), "type", None) == device_type
            super().__init__(obj.device if on_type else None)

    @contextlib.contextmanager
    def stream(s: Any) -> Iterator[None]:
        """``with torch.<type>.stream(s)``: no stream (None) is a no-op, as in PyTorch."""
        if s is not None:
            unusable()
        yield

    table.update(device=device, device_of=device_of, stream=stream,
                 StreamContext=type(stream(None)))
    table["amp"] = _amp_module(device_type)
    from ._legacy_tensor_types import BY_DEVICE_TYPE  # torch.cuda.FloatTensor...

    table.update(BY_DEVICE_TYPE.get(device_type, {}))
    return table


def _index_of(device: Any) -> int | None:
    if device is None or isinstance(device, int):
        return device
    index = getattr(device, "index", None)
    if index is None and isinstance(device, str):
        index = int(device.split(":", 1)[1]) if ":" in device else 0
    return 0 if index is None else index


def _amp_module(device_type: str) -> ModuleType:
    """``torch.<type>.amp``: the deprecated aliases of ``torch.amp.autocast`` and
    ``torch.amp.GradScaler``."""
    mod = ModuleType(f"torch.{device_type}.amp")

    def autocast(enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> Any:
        """Deprecated alias: ``torch.amp.autocast("<type>", ...)``."""
        from .amp import autocast as _autocast

        warnings.warn(f"`torch.{device_type}.amp.autocast(args...)` is deprecated. Please use "
                      f"`torch.amp.autocast('{device_type}', args...)` instead.",
                      FutureWarning, stacklevel=2)
        kwargs: dict[str, Any] = {"enabled": enabled, "cache_enabled": cache_enabled}
        if dtype is not None:
            kwargs["dtype"] = dtype
        return _autocast(device_type, **kwargs)

    def grad_scaler(init_scale: float = 2.0**16, growth_factor: float = 2.0,
                    backoff_factor: float = 0.5, growth_interval: int = 2000,
                    enabled: bool = True) -> Any:
        """Deprecated alias: ``torch.amp.GradScaler("<type>", ...)``."""
        from .amp import GradScaler

        warnings.warn(f"`torch.{device_type}.amp.GradScaler(args...)` is deprecated. Please use "
                      f"`torch.amp.GradScaler('{device_type}', args...)` instead.",
                      FutureWarning, stacklevel=2)
        return GradScaler(device_type, init_scale, growth_factor, backoff_factor,
                          growth_interval, enabled)

    mod.autocast = autocast  # type: ignore[attr-defined]
    mod.GradScaler = grad_scaler  # type: ignore[attr-defined]
    return mod
