"""``torch.mps`` as plait-backend-mps provides it.

No native code at import. MPS has one device, the system's default Metal GPU. Off macOS the
native extension is a stub and :func:`is_available` is False with :func:`unavailable_reason`,
never an exception. Until device memory and kernels land, ``synchronize`` has nothing to wait
for; random numbers use core's generators like every device's.

What every device module shares (device indices, the ``device`` context, placeholder streams and
events, random functions over core's generators) is :mod:`torch.backends.devicekit`'s, bound to
``mps`` once, at import, as ``_kit``; ``device``, ``Stream`` and ``Event`` are the kit's
classes.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType
from typing import TYPE_CHECKING, Any

from torch.backends import devicekit

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

DEVICE_TYPE = "mps"

_lock = threading.Lock()
_probe: dict[str, Any] | None = None


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


def current_device() -> int:
    """Always 0: MPS has one device."""
    return 0


def set_device(device: Any) -> None:
    """Check ``device``: MPS has one device, which is always current."""
    _kit.devices.set_current(device)


def synchronize(device: Any = None) -> None:
    """Wait for queued work: none can be queued yet, so this only checks the device."""
    _kit.devices.parse(device)  # one device: an index is checked as it is parsed
    require_device()


def get_device_name(device: Any = None) -> str:
    require_device()
    return _probe_device()["name"]


# -- the kit: device, Stream, Event (placeholders until command queues land) ------------------

# One device, index 0, whether or not it is available: an index is checked as soon as it is
# given. Made below the functions it binds; the ones above use it only when called.
_kit = devicekit.DeviceKit(
    DEVICE_TYPE,
    device_count=1,
    require=require_device,  # generator states need a usable device, as in PyTorch
    synchronize=synchronize,
    invalid_index="invalid mps device index {index}: MPS has one device, 0",
)

device = _kit.device  # lower case: PyTorch's name
Stream = _kit.Stream
Event = _kit.Event


def current_stream(device: Any = None) -> devicekit.Stream:
    return _kit.Stream(device)


def stream(s: devicekit.Stream | None) -> AbstractContextManager[None]:
    """Select a stream for the block: with one device and its default stream, nothing to do."""
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
