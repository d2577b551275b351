"""OpenCL programs: the shared :mod:`.render_runtime_programs` cache, built from OpenCL C
source by the driver (``_C.Program``). A binary on disk (``clGetProgramInfo``) lives in a folder
that hashes the platform, the device, its OpenCL versions and the driver version, so a driver
update starts a new folder; the cache's variables are ``PLAIT_XPU_CACHE_DIR`` and
``PLAIT_XPU_DISK_CACHE``."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

from . import __version__
from .render_runtime_programs import ProgramBuilder, ProgramCache, cache_root, source_hash

__all__ = ["ProgramCache", "builder", "cache_root", "device_key", "source_hash"]


def device_key(properties: dict[str, Any]) -> str:
    """What a device binary depends on besides its source, hashed: the device and its driver."""
    fields = ("platform", "vendor", "name", "version", "opencl_c_version", "driver_version")
    text = "\n".join(str(properties.get(f, "")) for f in fields) + f"\nplait-xpu {__version__}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def builder(native: ModuleType, properties: Callable[[int], dict[str, Any]]) -> ProgramBuilder:
    """The OpenCL way to build programs on the devices of ``native`` (``properties``: device
    index -> its ``_C.devices()`` dict)."""

    def build(device: int, source: str, options: str, cached: bytes) -> tuple[Any, bytes | None]:
        # the driver takes the cached binary or, when it rejects it, builds from source; -w:
        # the generated source's warnings help no one, and PoCL's compiler printed their count
        # ("33 warnings generated.") on the program's stderr at each first build
        program = native.Program(device, source, f"{options} -w".strip(), cached)
        return program, None if program.from_binary else program.binary()

    return ProgramBuilder(name="xpu", suffix=".bin",
                          device_folder=lambda device: device_key(properties(device)),
                          build=build, kernel=native.Kernel)
