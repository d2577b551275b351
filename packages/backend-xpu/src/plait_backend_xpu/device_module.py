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

Each device gets one OpenCL context and one in-order queue, made at its first use; all work
runs on that queue, so ``Stream`` is a placeholder for it (events time on the host). Device
memory comes from the native caching allocator: ``memory_allocated`` and friends report it with
PyTorch's names.
"""

from __future__ import annotations

import importlib
import os
import threading
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any

from torch.backends import devicekit

from . import render_runtime_device

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
                    if count:
                        # Fixes xpu:0, xpu:1... for the process (the devices of this type).
                        count = native().select_devices(kind)
                except (ValueError, RuntimeError) as exc:  # a bad or conflicting type
                    kind, count, reason = "gpu", 0, str(exc)
                except (ImportError, OSError) as exc:
                    # e.g. libOpenCL.so.1 missing at run time
                    kind, count, reason = "gpu", 0, f"the native extension failed to load: {exc}"
                _probe = (int(count), str(reason), kind)
    return _probe


def refresh() -> None:
    """Read ``PLAIT_XPU_DEVICE_TYPE`` again at the next device query (tests switch it). The
    devices already selected in this process stay what they are: asking for another non-empty
    type then reports the conflict instead of devices."""
    global _probe, _device_infos
    with _lock:
        _probe = None
        _device_infos = None


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


_device_infos: list[dict[str, Any]] | None = None


def device_info(index: int | None) -> dict[str, Any]:
    """The :func:`devices` entry of ``xpu:<index>`` (None: 0), read once per process."""
    global _device_infos
    if _device_infos is None:
        _device_infos = devices()
    return _device_infos[index or 0]


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
    """Wait for everything queued on ``device`` (default: the current device)."""
    index = _kit.devices.checked(device)
    if native().is_initialized(index):
        native().synchronize(index)
    from . import losses  # (light: nothing native)

    losses.raise_pending()  # a deferred check's error, as PyTorch's device asserts


def get_device_name(device: Any = None) -> str:
    """The OpenCL name of ``device``."""
    return devices()[_kit.devices.checked(device)]["name"]


@dataclass(frozen=True)
class DeviceProperties:
    """What ``torch.xpu.get_device_properties`` gives: PyTorch's XPU fields where OpenCL has
    them (``gpu_eu_count`` and sub-group details are Level Zero's, not OpenCL 1.2's: absent)."""

    name: str
    platform_name: str
    vendor: str
    type: str
    version: str
    driver_version: str
    opencl_c_version: str
    total_memory: int
    max_compute_units: int
    max_work_group_size: int
    max_clock_frequency: int  # MHz
    local_mem_size: int
    max_mem_alloc_size: int
    has_fp16: bool
    has_fp64: bool

    def __repr__(self) -> str:
        return (f"_XpuDeviceProperties(name='{self.name}', platform_name='{self.platform_name}', "
                f"type='{self.type}', driver_version='{self.driver_version}', "
                f"total_memory={self.total_memory // 2**20}MB, "
                f"max_compute_units={self.max_compute_units}, has_fp16={int(self.has_fp16)}, "
                f"has_fp64={int(self.has_fp64)})")


def get_device_properties(device: Any = None) -> DeviceProperties:
    """The properties of ``device`` (default: the current device)."""
    d = devices()[_kit.devices.checked(device)]
    return DeviceProperties(
        name=d["name"], platform_name=d["platform"], vendor=d["vendor"], type=d["type"],
        version=d["version"], driver_version=d["driver_version"],
        opencl_c_version=d["opencl_c_version"], total_memory=d["global_memory"],
        max_compute_units=d["compute_units"], max_work_group_size=d["max_work_group_size"],
        max_clock_frequency=d["max_clock_mhz"], local_mem_size=d["local_memory"],
        max_mem_alloc_size=d["max_allocation"], has_fp16=d["fp16"], has_fp64=d["fp64"],
    )


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """bfloat16 is 16-bit storage with float arithmetic on every OpenCL device: emulated."""
    return bool(including_emulation) and is_available()


def is_tf32_supported() -> bool:
    """OpenCL has no TF32 math mode: float32 matmuls compute in float32."""
    return False


def get_device_capability(device: Any = None) -> dict[str, Any]:
    """PyTorch's XPU capability: a dict of ``device``'s properties (not CUDA's tuple)."""
    return asdict(get_device_properties(device))


def get_arch_list() -> list[str]:
    """The architectures the wheel was compiled for: none, OpenCL C is built at run time for
    the device at hand (PyTorch's answer for a build without ahead-of-time kernels)."""
    return []


def get_gencode_flags() -> str:
    """The ahead-of-time compiler flags of the build: none (see :func:`get_arch_list`)."""
    return ""


def can_device_access_peer(device: Any, peer: Any) -> bool:
    """Whether ``device`` reads ``peer``'s memory directly: never (OpenCL 1.2 contexts share
    no buffer; copies between devices go through the host). Both indices are checked."""
    _kit.devices.checked(device)
    _kit.devices.checked(peer)
    return False


def set_stream(stream: Any) -> None:
    """Make ``stream`` current: each device has one in-order queue, so this selects the
    stream's device (``None`` does nothing, as in PyTorch)."""
    if stream is not None:
        set_device(stream.device_index)


def is_current_stream_capturing() -> bool:
    """No graph capture on OpenCL queues."""
    return False


# -- the kit: device, Stream, Event (placeholders until queues land) ---------------------------

# Made below the functions it binds; the ones above use it only when called.
_kit = devicekit.DeviceKit(
    DEVICE_TYPE,
    device_count=device_count,
    require=require_device,
    synchronize=synchronize,
)

# device, Stream, Event, current_stream, stream and the random functions (manual_seed,
# seed, get_rng_state, ..., default_generator): the kit's, under PyTorch's names
globals().update(render_runtime_device.kit_names(_kit))


# -- memory: the native caching allocator's statistics ------------------------------------


def _stats(device: Any) -> dict[str, int]:
    """The native statistics of ``device``; zeros where nothing was ever allocated."""
    if not is_available():
        return {}
    return native().memory_stats(_kit.devices.checked(device))


def memory_stats(device: Any = None) -> dict[str, int]:
    """PyTorch's ``memory_stats`` keys that the allocator keeps (bytes and counts)."""
    s = _stats(device)
    if not s:
        return {}
    return {
        "active.all.current": s["active_blocks"],
        "active_bytes.all.current": s["allocated_bytes"],
        "allocated_bytes.all.current": s["allocated_bytes"],
        "allocated_bytes.all.peak": s["allocated_bytes_peak"],
        "inactive_split.all.current": s["cached_blocks"],
        "num_alloc_retries": s["alloc_retries"],
        "num_device_alloc": s["device_allocations"],
        "num_device_free": s["device_frees"],
        "num_ooms": s["ooms"],
        "requested_bytes.all.current": s["requested_bytes"],
        "reserved_bytes.all.current": s["reserved_bytes"],
        "reserved_bytes.all.peak": s["reserved_bytes_peak"],
        "segment.all.current": s["active_blocks"] + s["cached_blocks"],
    }


def memory_allocated(device: Any = None) -> int:
    """Bytes held by live tensors' blocks (their size classes) on ``device``."""
    return _stats(device).get("allocated_bytes", 0)


def max_memory_allocated(device: Any = None) -> int:
    """The peak of :func:`memory_allocated` since start or :func:`reset_peak_memory_stats`."""
    return _stats(device).get("allocated_bytes_peak", 0)


def memory_reserved(device: Any = None) -> int:
    """Bytes the allocator holds from OpenCL: live blocks and the cache."""
    return _stats(device).get("reserved_bytes", 0)


def max_memory_reserved(device: Any = None) -> int:
    """The peak of :func:`memory_reserved`."""
    return _stats(device).get("reserved_bytes_peak", 0)


def reset_peak_memory_stats(device: Any = None) -> None:
    """Start the peaks again from the current values."""
    if is_available():
        native().reset_peak_memory_stats(_kit.devices.checked(device))


def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
    """:func:`memory_stats` with its dotted keys as nested dicts, as PyTorch's."""
    nested: dict[str, Any] = {}
    for key, value in memory_stats(device).items():
        *path, last = key.split(".")
        node = nested
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    return nested


def empty_cache() -> None:
    """Give the cached, unused blocks of every device back to OpenCL."""
    if is_available():
        native().empty_cache(-1)


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """``(free, total)`` bytes as far as Plait knows: OpenCL 1.2 cannot ask the driver what
    other processes use, so free is the device's memory less what this process reserved."""
    total = get_device_properties(device).total_memory
    return max(total - memory_reserved(device), 0), total


def device_memory_used(device: Any = None) -> int:
    """Bytes of the device's memory in use as far as Plait knows (``total - free`` of
    :func:`mem_get_info`: what this process reserved; OpenCL 1.2 cannot see other processes,
    where PyTorch asks Level Zero's Sysman)."""
    free, total = mem_get_info(device)
    return total - free


def reset_accumulated_memory_stats(device: Any = None) -> None:
    """Zero the counters that only grow (``num_device_alloc``, ``num_device_free``,
    ``num_alloc_retries``, ``num_ooms``); current and peak values stay."""
    if is_available():
        native().reset_accumulated_memory_stats(_kit.devices.checked(device))


# device index -> the fraction set_per_process_memory_fraction gave it (1.0 until then)
_memory_fractions: dict[int, float] = {}


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    """Let the caching allocator reserve at most ``fraction`` of the device's memory (0 to 1):
    a request past it empties the cache and, still past it, raises out-of-memory."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    require_device()
    index = _kit.devices.checked(device)
    total = get_device_properties(index).total_memory
    # (the native limit 0 means none: a fraction of 0 limits to 1 byte, which no block fits)
    native().set_memory_limit(index, max(int(total * fraction), 1) if fraction < 1.0 else 0)
    _memory_fractions[index] = fraction


def get_per_process_memory_fraction(device: Any = None) -> float:
    """The fraction of the device's memory the allocator may reserve (1.0 unless set)."""
    require_device()
    return _memory_fractions.get(_kit.devices.checked(device), 1.0)


def memory_snapshot(mempool_id: Any = None) -> list[dict[str, Any]]:
    """The allocator's segments on every initialised device, in PyTorch's snapshot form: one
    segment per OpenCL buffer (this allocator never splits one), holding one block, active or
    cached. No stacks are recorded, so ``frames`` are empty; ``requested_size`` is the block's
    size class (the allocator keeps the bytes asked for only as a total); ``mempool_id`` other
    than None names a pool this allocator does not have: no segments."""
    if not is_available() or mempool_id is not None:
        return []
    segments = []
    for index in range(device_count()):
        if not native().is_initialized(index):
            continue
        for address, size, active in native().memory_blocks(index):
            state = "active_allocated" if active else "inactive"
            segments.append({
                "device": index, "address": address, "total_size": size,
                "allocated_size": size if active else 0, "active_size": size if active else 0,
                "requested_size": size if active else 0, "stream": 0,
                "segment_type": "small" if size <= _SMALL_SEGMENT else "large",
                "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
                "blocks": [{"address": address, "size": size,
                            "requested_size": size if active else 0, "state": state,
                            "frames": []}],
            })
    return segments


_SMALL_SEGMENT = 1 << 20  # the allocator's 512-byte size classes end here (memory.cpp)


# -- programs ------------------------------------------------------------------------------

_programs: Any = None


def programs() -> Any:
    """The process's :class:`~plait_backend_xpu.programs.ProgramCache` (needs a device)."""
    global _programs
    if _programs is None:
        require_device()
        from .programs import ProgramCache, builder

        with _lock:
            if _programs is None:
                _programs = ProgramCache(builder(native(), device_info))
    return _programs


# -- autocast ------------------------------------------------------------------------------


def get_amp_supported_dtype() -> list[Any]:
    import torch

    return [torch.bfloat16, torch.float16]


def __getattr__(name: str) -> Any:
    """``default_generators``: one generator per device, counted at the first question (a
    module attribute in PyTorch, filled when the device initialises)."""
    if name == "default_generators":
        if not is_available():
            return ()
        return tuple(_kit.random.default_generator(i) for i in range(device_count()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
