"""``torch.xpu`` as plait-backend-xpu provides it: OpenCL devices.

Light to import (no native code, no ``torch``). The native extension loads on the first
question about devices; without OpenCL (not installed, or the wheel built without it)
``is_available()`` is False and :func:`unavailable_reason` says why, never an exception.

Which OpenCL devices count as ``xpu`` devices: GPUs, unless the environment variable
``PLAIT_XPU_DEVICE_TYPE`` says ``cpu``, ``accelerator`` or ``all`` (any type, e.g. PoCL's CPU
device for tests). It is read once, at the first device query.

Until device memory and kernels land, ``synchronize`` has nothing to wait for, streams and
events are placeholders with PyTorch's names, and the random generator is not there yet.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

DEVICE_TYPE = "xpu"
ENV_DEVICE_TYPE = "PLAIT_XPU_DEVICE_TYPE"
_DEVICE_TYPES = ("gpu", "cpu", "accelerator", "all")

_lock = threading.Lock()
_probe: tuple[int, str, str] | None = None  # (device count, why it is 0, OpenCL device type)
_local = threading.local()
_seeds: dict[int, int] = {}


def native() -> ModuleType:
    """The native extension ``_C``, imported on first use."""
    return importlib.import_module(f"{__package__}._C")


def opencl_device_type() -> str:
    """The OpenCL device type that counts as ``xpu`` (``PLAIT_XPU_DEVICE_TYPE``, default gpu)."""
    value = os.environ.get(ENV_DEVICE_TYPE, "").strip().lower() or "gpu"
    if value not in _DEVICE_TYPES:
        raise ValueError(f"{ENV_DEVICE_TYPE}={value!r} is not one of {', '.join(_DEVICE_TYPES)}")
    return value


def _probe_devices() -> tuple[int, str, str]:
    global _probe
    if _probe is None:
        with _lock:
            if _probe is None:
                try:
                    kind = opencl_device_type()
                    count, reason = native().device_count(kind)
                except ValueError as exc:
                    kind, count, reason = "gpu", 0, str(exc)
                except (ImportError, OSError) as exc:
                    # e.g. libOpenCL.so.1 missing at run time
                    kind, count, reason = "gpu", 0, f"the native extension failed to load: {exc}"
                _probe = (int(count), str(reason), kind)
    return _probe


# -- availability ------------------------------------------------------------------------------


def is_available() -> bool:
    """Whether an OpenCL device of the selected type was found. Never raises."""
    return device_count() > 0


def device_count() -> int:
    """The number of OpenCL devices of the selected type. Never raises."""
    return _probe_devices()[0]


def unavailable_reason() -> str:
    """Why ``xpu`` is unavailable, or ``""`` when it is available."""
    count, reason, _ = _probe_devices()
    return "" if count else reason or "no OpenCL device was found"


def is_initialized() -> bool:
    return _probe is not None and _probe[0] > 0


def require_device() -> None:
    """Raise ``RuntimeError`` unless an ``xpu`` device is usable."""
    if not is_available():
        raise RuntimeError(
            f"no OpenCL (xpu) device was found: {unavailable_reason()}. "
            "torch.xpu.is_available() is False on this machine: use device='cpu', or install "
            f"an OpenCL driver (set {ENV_DEVICE_TYPE}=all to accept CPU devices such as PoCL)."
        )


init = require_device


def devices() -> list[dict[str, Any]]:
    """The selected OpenCL devices (name, vendor, type, version, platform, memory, fp64, fp16);
    empty when unavailable."""
    if not is_available():
        return []
    return list(native().devices(_probe_devices()[2]))


def platforms() -> list[dict[str, Any]]:
    """The installed OpenCL platforms; empty when OpenCL is missing."""
    try:
        return list(native().platforms(_probe_devices()[2]))
    except (ImportError, OSError):
        return []


# -- current device ---------------------------------------------------------------------------


def _index(device: Any = None) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        kind, _, index = device.partition(":")
        if kind != DEVICE_TYPE:
            raise ValueError(f"Expected a xpu device, but got: {device}")
        return int(index) if index else current_device()
    kind, index = getattr(device, "type", None), getattr(device, "index", None)
    if kind != DEVICE_TYPE:
        raise ValueError(f"Expected a xpu device, but got: {device}")
    return current_device() if index is None else int(index)


def _checked_index(device: Any = None) -> int:
    index = _index(device)
    require_device()
    if not 0 <= index < device_count():
        raise RuntimeError(f"invalid xpu device index {index}; {device_count()} available")
    return index


def current_device() -> int:
    return getattr(_local, "index", 0)


def set_device(device: Any) -> None:
    index = _index(device)
    if index >= 0:
        _local.index = _checked_index(index)


class device:  # lower case: PyTorch's name
    """Context manager that makes ``device`` current and restores the previous one."""

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.idx != self.prev_idx:
                set_device(self.idx)

    def __exit__(self, *exc: object) -> None:
        if self.idx >= 0 and self.idx != self.prev_idx:
            set_device(self.prev_idx)


def synchronize(device: Any = None) -> None:
    """Wait for queued work: none can be queued yet, so this only checks the device."""
    _checked_index(device)


def get_device_name(device: Any = None) -> str:
    return devices()[_checked_index(device)]["name"]


def get_device_properties(device: Any = None) -> dict[str, Any]:
    return dict(devices()[_checked_index(device)])


# -- streams and events (placeholders until queues land) ----------------------------------


class Stream:
    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device_index = _index(device)
        self.priority = priority

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        synchronize(self.device_index)

    def wait_stream(self, stream: Stream) -> None:
        """Nothing is queued yet."""

    def wait_event(self, event: Event) -> None:
        """Nothing is queued yet."""

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and self.device_index == other.device_index

    def __hash__(self) -> int:
        return hash(("xpu", self.device_index))


def current_stream(device: Any = None) -> Stream:
    return Stream(device)


@contextlib.contextmanager
def stream(s: Stream | None) -> Iterator[None]:
    if s is None:
        yield
        return
    with device(s.device_index):
        yield


class Event:
    def __init__(self, enable_timing: bool = False, **kwargs: Any) -> None:
        self.enable_timing = enable_timing
        self._time: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        synchronize(None if stream is None else stream.device_index)
        self._time = time.perf_counter()

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Recording already synchronised."""

    def wait(self, stream: Stream | None = None) -> None:
        """Recording already synchronised."""

    def elapsed_time(self, end_event: Event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0


# -- random numbers ------------------------------------------------------------------------


def _rng_missing(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch.xpu.{what}: plait-backend-xpu has no device random generator yet (it comes "
        "with device memory and the Philox kernels, DESIGN.md §8). Seeds given to manual_seed "
        "are recorded and will seed it."
    )


def manual_seed(seed: int) -> None:
    """Record ``seed`` for the current device without touching it."""
    _seeds[current_device()] = int(seed)


def manual_seed_all(seed: int) -> None:
    _seeds.clear()
    _seeds[-1] = int(seed)


def initial_seed() -> int:
    return _seeds.get(current_device(), _seeds.get(-1, 0))


def get_rng_state(device: Any = "xpu") -> Any:
    raise _rng_missing("get_rng_state")


def set_rng_state(new_state: Any, device: Any = "xpu") -> None:
    raise _rng_missing("set_rng_state")


# -- memory (nothing is allocated yet) ------------------------------------------------------


def memory_allocated(device: Any = None) -> int:
    return 0


def max_memory_allocated(device: Any = None) -> int:
    return 0


def memory_reserved(device: Any = None) -> int:
    return 0


def reset_peak_memory_stats(device: Any = None) -> None:
    """Nothing to reset."""


def empty_cache() -> None:
    """Nothing is cached."""


# -- autocast ------------------------------------------------------------------------------


def get_amp_supported_dtype() -> list[Any]:
    import torch

    return [torch.bfloat16, torch.float16]
