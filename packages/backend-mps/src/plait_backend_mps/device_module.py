"""``torch.mps`` as plait-backend-mps provides it.

Light to import (no native code, no ``torch``). MPS has one device, the system's default Metal
GPU. Off macOS the native extension is a stub and :func:`is_available` is False with
:func:`unavailable_reason`, never an exception. Until device memory and kernels land,
``synchronize`` has nothing to wait for and the random generator is not there yet.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

DEVICE_TYPE = "mps"

_lock = threading.Lock()
_probe: dict[str, Any] | None = None
_seed: int = 0


def native() -> ModuleType:
    """The native extension ``_C``, imported on first use."""
    return importlib.import_module(f"{__package__}._C")


def _probe_device() -> dict[str, Any]:
    global _probe
    if _probe is None:
        with _lock:
            if _probe is None:
                try:
                    _probe = dict(native().probe())
                except (ImportError, OSError) as exc:
                    _probe = {
                        "available": False,
                        "reason": f"the native extension failed to load: {exc}",
                        "name": "",
                        "recommended_max_working_set_size": 0,
                    }
    return _probe


# -- availability ------------------------------------------------------------------------------


def is_available() -> bool:
    """Whether a Metal device can be used. Never raises."""
    return bool(_probe_device()["available"])


def is_built() -> bool:
    """Whether this build has Metal support (``torch.backends.mps.is_built``)."""
    try:
        return bool(native().compiled_with_metal())
    except (ImportError, OSError):
        return False


def device_count() -> int:
    return 1 if is_available() else 0


def unavailable_reason() -> str:
    """Why MPS is unavailable, or ``""`` when it is available."""
    probe = _probe_device()
    return "" if probe["available"] else probe["reason"] or "no Metal device was found"


def require_device() -> None:
    """Raise ``RuntimeError`` unless the Metal device is usable."""
    if not is_available():
        raise RuntimeError(
            f"no MPS device was found: {unavailable_reason()}. torch.mps.is_available() is "
            "False on this machine: use device='cpu'."
        )


def _check_index(device: Any = None) -> None:
    index = device if isinstance(device, int) else getattr(device, "index", None)
    if isinstance(device, str):
        kind, _, rest = device.partition(":")
        if kind != DEVICE_TYPE:
            raise ValueError(f"Expected a mps device, but got: {device}")
        index = int(rest) if rest else None
    if index not in (None, 0):
        raise RuntimeError(f"invalid mps device index {index}: MPS has one device, 0")


def current_device() -> int:
    return 0


def set_device(device: Any) -> None:
    _check_index(device)


class device:  # lower case: PyTorch's name
    """Context manager for symmetry with other device modules: MPS has one device."""

    def __init__(self, device: Any) -> None:
        _check_index(device)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def synchronize(device: Any = None) -> None:
    """Wait for queued work: none can be queued yet, so this only checks the device."""
    _check_index(device)
    require_device()


def get_device_name(device: Any = None) -> str:
    require_device()
    return _probe_device()["name"]


# -- streams and events (placeholders until command queues land) ----------------------------


class Stream:
    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        _check_index(device)
        self.device_index = 0
        self.priority = priority

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        synchronize()

    def wait_stream(self, stream: Stream) -> None:
        """Nothing is queued yet."""

    def wait_event(self, event: Event) -> None:
        """Nothing is queued yet."""

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event


def current_stream(device: Any = None) -> Stream:
    return Stream(device)


@contextlib.contextmanager
def stream(s: Stream | None) -> Iterator[None]:
    yield


class Event:
    def __init__(self, enable_timing: bool = False, **kwargs: Any) -> None:
        self.enable_timing = enable_timing
        self._time: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        synchronize()
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
        f"torch.mps.{what}: plait-backend-mps has no device random generator yet (it comes "
        "with device memory and the Philox kernels, DESIGN.md §8). Seeds given to manual_seed "
        "are recorded and will seed it."
    )


def manual_seed(seed: int) -> None:
    """Record ``seed`` without touching the device."""
    global _seed
    _seed = int(seed)


manual_seed_all = manual_seed


def initial_seed() -> int:
    return _seed


def get_rng_state(device: Any = "mps") -> Any:
    raise _rng_missing("get_rng_state")


def set_rng_state(new_state: Any, device: Any = "mps") -> None:
    raise _rng_missing("set_rng_state")


# -- memory (nothing is allocated yet) ------------------------------------------------------


def memory_allocated(device: Any = None) -> int:
    return 0


def max_memory_allocated(device: Any = None) -> int:
    return 0


current_allocated_memory = memory_allocated
driver_allocated_memory = memory_allocated


def recommended_max_memory() -> int:
    """Metal's recommended working-set size of the device (0 when unavailable)."""
    return int(_probe_device()["recommended_max_working_set_size"])


def empty_cache() -> None:
    """Nothing is cached."""


# -- autocast ------------------------------------------------------------------------------


def get_amp_supported_dtype() -> list[Any]:
    import torch

    return [torch.float16, torch.bfloat16]
