"""CUDA programs: the shared :mod:`._render.render_runtime_programs` cache, compiled by NVRTC.

A program is compiled for the exact architecture of its device (``sm_90`` on an H100/H200), as
a cubin, never as PTX: a cubin from a newer NVRTC of the same major version runs on an older
driver of that major version, where PTX would need the driver's own compiler to be as new. On
disk a cubin lives in a folder named by this package's version, NVRTC's and the architecture;
the cache's variables are ``PLAIT_CUDA_CACHE_DIR`` and ``PLAIT_CUDA_DISK_CACHE``."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from . import __version__, nvrtc
from ._render.render_runtime_programs import (
    ProgramBuilder,
    ProgramCache,
    cache_root,
    source_hash,
)

__all__ = ["ProgramCache", "builder", "cache_root", "source_hash"]


def builder(native: ModuleType, arch_of: Callable[[int], str]) -> ProgramBuilder:
    """The NVRTC way to build programs for the devices of ``native`` (``arch_of``: device index
    -> ``"sm_XY"``)."""

    def device_folder(device: int) -> str:
        major, minor = nvrtc.version()
        return f"plait{__version__}-nvrtc{major}.{minor}-{arch_of(device)}"

    def build(device: int, source: str, options: str, cached: bytes) -> tuple[Any, bytes | None]:
        if cached:
            try:
                return native.Library(cached, device), None
            except RuntimeError:
                pass  # a damaged or foreign file: compile again and overwrite it
        image = nvrtc.compile_source(source, arch_of(device),
                                     name=f"plait_{source_hash(source, options)[:12]}.cu",
                                     options=tuple(options.split())).image
        return native.Library(image, device), image

    return ProgramBuilder(name="cuda", suffix=".cubin", device_folder=device_folder,
                          build=build, kernel=native.Kernel)
