"""``torch.xpu`` as plait-backend-xpu provides it: OpenCL devices.

No native code at import: the native extension loads on the first question about devices.
Without OpenCL (not installed, or the wheel built without it) ``is_available()`` is False and
:func:`unavailable_reason` says why, never an exception.

Which OpenCL devices count as ``xpu`` devices: GPUs, unless the environment variable
``PLAIT_XPU_DEVICE_TYPE`` says ``cpu``, ``accelerator`` or ``all`` (any type, e.g. PoCL's CPU
device for tests). It is read once, at the first device query.

What every device module shares (device indices and the current device, the ``device`` context,
placeholder streams and events, random functions over core's generators) is
:mod:`torch.backends.devicekit`'s, bound to ``xpu`` once, at import, as ``_kit``; ``device``,
``Stream`` and ``Event`` are the kit's classes.

Until device memory and kernels land, ``synchronize`` has nothing to wait for, streams and
events are placeholders with PyTorch's names, and the random generator is not there yet.
"""

from __future__ import annotations

import importlib
import os
import threading
from types import ModuleType
from typing import TYPE_CHECKING, Any

from torch.backends import devicekit

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

DEVICE_TYPE = "xpu"
ENV_DEVICE_TYPE = "PLAIT_XPU_DEVICE_TYPE"
_DEVICE_TYPES = ("gpu", "cpu", "accelerator", "all")

_lock = threading.Lock()
_probe: tuple[int, str, str] | None = None  # (device count, why it is 0, OpenCL device type)


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


def current_device() -> int:
    """The calling thread's current device index (0 until ``set_device``)."""
    return _kit.devices.current()


def set_device(device: Any) -> None:
    """Make ``device`` the calling thread's current device; a negative index is ignored."""
    _kit.devices.set_current(device)


def synchronize(device: Any = None) -> None:
    """Wait for queued work: none can be queued yet, so this only checks the device."""
    _kit.devices.checked(device)


def get_device_name(device: Any = None) -> str:
    return devices()[_kit.devices.checked(device)]["name"]


def get_device_properties(device: Any = None) -> dict[str, Any]:
    return dict(devices()[_kit.devices.checked(device)])


# -- the kit: device, Stream, Event (placeholders until queues land) ---------------------------

# Made below the functions it binds; the ones above use it only when called.
_kit = devicekit.DeviceKit(
    DEVICE_TYPE,
    device_count=device_count,
    require=require_device,
    synchronize=synchronize,
)

device = _kit.device  # lower case: PyTorch's name
Stream = _kit.Stream
Event = _kit.Event


def current_stream(device: Any = None) -> devicekit.Stream:
    return _kit.Stream(device)


def stream(s: devicekit.Stream | None) -> AbstractContextManager[None]:
    """Select a stream for the block; with only default streams, a device switch at most."""
    return _kit.stream(s)


# -- random numbers: core's generators, one per device (torch.backends.devicekit) ----------

manual_seed = _kit.random.manual_seed  # seeds without touching the device
manual_seed_all = _kit.random.manual_seed_all
seed = _kit.random.seed
seed_all = _kit.random.seed_all
initial_seed = _kit.random.initial_seed
get_rng_state = _kit.random.get_rng_state
set_rng_state = _kit.random.set_rng_state
get_rng_state_all = _kit.random.get_rng_state_all
set_rng_state_all = _kit.random.set_rng_state_all
default_generator = _kit.random.default_generator


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
