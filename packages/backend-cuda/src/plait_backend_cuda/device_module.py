"""``torch.cuda`` as plait-backend-cuda provides it.

No native code at import: core mounts it when ``torch.cuda`` is first touched, and
``is_available()`` must answer without initialising anything that can fail. The native extension
loads on the first question about devices; a machine without a driver or a GPU gets
``is_available() == False`` and :func:`unavailable_reason`, never an exception.

What every device module shares (device indices and the current device, the ``device`` context,
placeholder streams and events, random functions over core's generators) is
:mod:`torch.backends.devicekit`'s, bound to CUDA once, at import, as ``_kit``; ``device``,
``Stream`` and ``Event`` are the kit's classes.

Streams and events are minimal until the CUDA kernels land: all work runs on each device's
default stream, so ``Stream`` and ``Event`` order nothing beyond it, and ``Event.record``
synchronises the device and timestamps on the host.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType
from typing import Any

from torch.backends import devicekit

from ._render import render_runtime_device

DEVICE_TYPE = "cuda"

_NO_DEVICE = "no CUDA driver or device was found"

_lock = threading.Lock()
_probe: tuple[int, str] | None = None  # (device count, why it is 0)


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


def toolkit_version() -> str | None:
    """``torch.version.cuda``: the CUDA version this build links (``"13.0"``), or None when it
    was built without the CUDA toolkit (the runtime stub) or its extension cannot load."""
    try:
        v = native().runtime_version()
    except (ImportError, OSError):
        return None
    return f"{v // 1000}.{v % 1000 // 10}" if v else None


# -- current device ---------------------------------------------------------------------------


def current_device() -> int:
    """The calling thread's current device index (0 until ``set_device``)."""
    return _kit.devices.current()


def set_device(device: Any) -> None:
    """Make ``device`` the calling thread's current device; a negative index is ignored."""
    _kit.devices.set_current(device)


def synchronize(device: Any = None) -> None:
    """Wait for all work queued on ``device`` (default: current)."""
    native().synchronize(_kit.devices.checked(device))


def get_device_name(device: Any = None) -> str:
    return native().device_properties(_kit.devices.checked(device))["name"]


def get_device_capability(device: Any = None) -> tuple[int, int]:
    props = native().device_properties(_kit.devices.checked(device))
    return props["major"], props["minor"]


def get_device_properties(device: Any = None) -> dict[str, Any]:
    """name, major, minor, total_memory, multi_processor_count."""
    return dict(native().device_properties(_kit.devices.checked(device)))


_arches: dict[int, str] = {}
_programs: Any = None


def arch(index: int) -> str:
    """The architecture kernels are compiled for on ``cuda:<index>`` (``"sm_90"``)."""
    found = _arches.get(index)
    if found is None:
        props = native().device_properties(index)
        found = _arches[index] = f"sm_{props['major']}{props['minor']}"
    return found


def programs() -> Any:
    """The process's :class:`~.programs.ProgramCache` (NVRTC compiles, memory and disk)."""
    global _programs
    if _programs is None:
        with _lock:
            if _programs is None:
                from .programs import ProgramCache, builder

                _programs = ProgramCache(builder(native(), arch))
    return _programs


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current device computes in bfloat16 natively (compute capability 8.0 or
    later); ``including_emulation`` is PyTorch's argument and changes nothing here: emulated
    bfloat16 on older devices is not offered."""
    return is_available() and get_device_capability()[0] >= 8


def is_tf32_supported() -> bool:
    """Whether the current device has TF32 tensor cores (compute capability 8.0 or later)."""
    return is_available() and get_device_capability()[0] >= 8


# -- the kit: device, Stream, Event ---------------------------------------------------------


class _DefaultStream(devicekit.Stream):
    """CUDA's ``Stream``: a device's default stream (the only one until streams land with the
    kernels), with its handle."""

    cuda_stream = 0  # the default stream's handle

    def query(self) -> bool:
        return native().query(self.kit.devices.checked(self.device_index))

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device=cuda:{self.device_index} cuda_stream=0x0>"


# Made below the functions it binds; the ones above use it only when called.
_kit = devicekit.DeviceKit(
    DEVICE_TYPE,
    device_count=device_count,
    require=require_device,
    activate=lambda index: native().set_device(index),
    synchronize=synchronize,
    invalid_index="CUDA error: invalid device ordinal {index}; {count} device(s) available",
    stream_class=_DefaultStream,
)

# device, Stream, Event, current_stream, stream and the random functions (manual_seed,
# seed, get_rng_state, ..., default_generator): the kit's, under PyTorch's names
globals().update(render_runtime_device.kit_names(_kit))


def default_stream(device: Any = None) -> devicekit.Stream:
    """The default stream of ``device`` (the only one until streams land)."""
    return _kit.Stream(device)


# -- memory --------------------------------------------------------------------------------


def _stats_index(device: Any) -> int | None:
    """The device index for memory statistics, or None when CUDA is unusable (stats are 0)."""
    if not is_available():
        return None
    return _kit.devices.parse(device)


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
    return native().mem_get_info(_kit.devices.checked(device))


# -- autocast ------------------------------------------------------------------------------


def get_amp_supported_dtype() -> list[Any]:
    import torch

    return [torch.float16, torch.bfloat16]
