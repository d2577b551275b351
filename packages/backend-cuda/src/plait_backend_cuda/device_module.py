"""``torch.cuda`` as plait-backend-cuda provides it.

Light to import (no native code, no ``torch``): core mounts it when ``torch.cuda`` is first
touched, and ``is_available()`` must answer without initialising anything that can fail. The
native extension loads on the first question about devices; a machine without a driver or a GPU
gets ``is_available() == False`` and :func:`unavailable_reason`, never an exception.

Streams and events are minimal until the CUDA kernels land: all work runs on each device's
default stream, so ``Stream`` and ``Event`` order nothing beyond it, and ``Event.record``
synchronises the device and timestamps on the host.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

DEVICE_TYPE = "cuda"

_NO_DEVICE = "no CUDA driver or device was found"

_lock = threading.Lock()
_probe: tuple[int, str] | None = None  # (device count, why it is 0)
_local = threading.local()  # .index: the calling thread's current device
_seeds: dict[int, int] = {}


def native() -> ModuleType:
    """The native extension ``_C`` (``importlib``: ``from . import _C`` can recurse through a
    module ``__getattr__`` while packages initialise)."""
    return importlib.import_module(f"{__package__}._C")


def _probe_devices() -> tuple[int, str]:
    global _probe
    if _probe is None:
        with _lock:
            if _probe is None:
                try:
                    count, reason = native().device_count()
                except (ImportError, OSError) as exc:
                    count, reason = 0, f"the native extension failed to load: {exc}"
                _probe = (int(count), str(reason))
    return _probe


# -- availability ------------------------------------------------------------------------------


def is_available() -> bool:
    """Whether a CUDA device can be used. Never raises."""
    return device_count() > 0


def device_count() -> int:
    """The number of usable CUDA devices (0 without a driver or a GPU). Never raises."""
    return _probe_devices()[0]


def unavailable_reason() -> str:
    """Why CUDA is unavailable (the CUDA error string), or ``""`` when it is available."""
    count, reason = _probe_devices()
    return "" if count else reason or "the CUDA runtime reports no device"


def is_initialized() -> bool:
    """Whether the devices have been probed and at least one is usable."""
    return _probe is not None and _probe[0] > 0


def require_device() -> None:
    """Raise ``RuntimeError`` unless a CUDA device is usable (``torch.cuda.init()``)."""
    if not is_available():
        raise RuntimeError(
            f"{_NO_DEVICE}: {unavailable_reason()}. torch.cuda.is_available() is False on this "
            "machine: use device='cpu', or install an NVIDIA driver that supports CUDA "
            f"{_cuda_version()} and check that a GPU is visible (nvidia-smi, "
            "CUDA_VISIBLE_DEVICES)."
        )


init = require_device


def _cuda_version() -> str:
    try:
        v = native().runtime_version()
    except (ImportError, OSError):
        return "13"
    return f"{v // 1000}.{v % 1000 // 10}" if v else "13"


# -- current device ---------------------------------------------------------------------------


def _index(device: Any = None) -> int:
    """A device index from ``None`` (current), an int, ``"cuda:1"`` or a ``torch.device``."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        kind, _, index = device.partition(":")
        if kind != DEVICE_TYPE:
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return int(index) if index else current_device()
    kind, index = getattr(device, "type", None), getattr(device, "index", None)
    if kind != DEVICE_TYPE:
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return current_device() if index is None else int(index)


def _checked_index(device: Any = None) -> int:
    index = _index(device)
    require_device()
    if not 0 <= index < device_count():
        raise RuntimeError(
            f"CUDA error: invalid device ordinal {index}; {device_count()} device(s) available"
        )
    return index


def current_device() -> int:
    """The calling thread's current device index (0 until ``set_device``)."""
    return getattr(_local, "index", 0)


def set_device(device: Any) -> None:
    """Make ``device`` the calling thread's current device; a negative index is ignored."""
    index = _index(device)
    if index < 0:
        return
    index = _checked_index(index)
    native().set_device(index)
    _local.index = index


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
    """Wait for all work queued on ``device`` (default: current)."""
    native().synchronize(_checked_index(device))


def get_device_name(device: Any = None) -> str:
    return native().device_properties(_checked_index(device))["name"]


def get_device_capability(device: Any = None) -> tuple[int, int]:
    props = native().device_properties(_checked_index(device))
    return props["major"], props["minor"]


def get_device_properties(device: Any = None) -> dict[str, Any]:
    """name, major, minor, total_memory, multi_processor_count."""
    return dict(native().device_properties(_checked_index(device)))


def is_bf16_supported() -> bool:
    return is_available() and get_device_capability()[0] >= 8


# -- streams and events ------------------------------------------------------------------------


class Stream:
    """A device's default stream (the only one until streams land with the kernels)."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device_index = _index(device)
        self.priority = priority
        self.cuda_stream = 0  # the default stream's handle

    @property
    def device(self) -> Any:
        import torch

        return torch.device(DEVICE_TYPE, self.device_index)

    def query(self) -> bool:
        return native().query(_checked_index(self.device_index))

    def synchronize(self) -> None:
        synchronize(self.device_index)

    def wait_stream(self, stream: Stream) -> None:
        """Nothing to wait for: work on one device's default stream is already ordered."""

    def wait_event(self, event: Event) -> None:
        """Nothing to wait for: events are recorded synchronously."""

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and (self.device_index, self.cuda_stream) == (
            other.device_index,
            other.cuda_stream,
        )

    def __hash__(self) -> int:
        return hash((self.device_index, self.cuda_stream))

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device=cuda:{self.device_index} cuda_stream=0x0>"


def current_stream(device: Any = None) -> Stream:
    return Stream(device)


def default_stream(device: Any = None) -> Stream:
    return Stream(device)


@contextlib.contextmanager
def stream(s: Stream | None) -> Iterator[None]:
    """Select a stream for the block; with only default streams, a device switch at most."""
    if s is None:
        yield
        return
    with device(s.device_index):
        yield


class Event:
    """A point in a stream; recording synchronises the device and timestamps on the host."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ) -> None:
        self.enable_timing = enable_timing
        self._time: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        stream = current_stream() if stream is None else stream
        synchronize(stream.device_index)
        self._time = time.perf_counter()

    def query(self) -> bool:
        return True  # recording already waited for the work before it

    def synchronize(self) -> None:
        """Nothing to wait for: ``record`` synchronised."""

    def wait(self, stream: Stream | None = None) -> None:
        """Nothing to wait for: ``record`` synchronised."""

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between this event and ``end_event``."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0


# -- random numbers ------------------------------------------------------------------------


def _rng_missing(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch.cuda.{what}: plait-backend-cuda has no device random generator yet (it comes "
        "with the Philox kernels, DESIGN.md §8). Seeds given to manual_seed are recorded and "
        "will seed it."
    )


def manual_seed(seed: int) -> None:
    """Record ``seed`` for the current device (lazily, like PyTorch: it never initialises
    CUDA, so ``torch.manual_seed`` works on machines without a GPU)."""
    _seeds[current_device()] = int(seed)


def manual_seed_all(seed: int) -> None:
    """Record ``seed`` for every device."""
    _seeds.clear()
    _seeds[-1] = int(seed)


def initial_seed() -> int:
    return _seeds.get(current_device(), _seeds.get(-1, 0))


def get_rng_state(device: Any = "cuda") -> Any:
    raise _rng_missing("get_rng_state")


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    raise _rng_missing("set_rng_state")


def get_rng_state_all() -> list[Any]:
    raise _rng_missing("get_rng_state_all")


def set_rng_state_all(new_states: Any) -> None:
    raise _rng_missing("set_rng_state_all")


# -- memory --------------------------------------------------------------------------------


def _stats_index(device: Any) -> int | None:
    """The device index for memory statistics, or None when CUDA is unusable (stats are 0)."""
    if not is_available():
        return None
    return _index(device)


def memory_allocated(device: Any = None) -> int:
    """Bytes held by live tensors on ``device`` (0 without CUDA)."""
    index = _stats_index(device)
    return 0 if index is None else native().memory_stats(index)[0]


def max_memory_allocated(device: Any = None) -> int:
    """The peak of :func:`memory_allocated` since start or the last reset."""
    index = _stats_index(device)
    return 0 if index is None else native().memory_stats(index)[1]


def memory_reserved(device: Any = None) -> int:
    """Bytes reserved from the driver: without a caching allocator, the allocated bytes."""
    return memory_allocated(device)


def max_memory_reserved(device: Any = None) -> int:
    return max_memory_allocated(device)


def reset_peak_memory_stats(device: Any = None) -> None:
    index = _stats_index(device)
    if index is not None:
        native().reset_peak_memory_stats(index)


def empty_cache() -> None:
    """Nothing is cached yet: every block goes back to the driver when its tensor dies."""


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes of ``device`` as the driver reports them."""
    return native().mem_get_info(_checked_index(device))


# -- autocast ------------------------------------------------------------------------------


def get_amp_supported_dtype() -> list[Any]:
    import torch

    return [torch.float16, torch.bfloat16]
