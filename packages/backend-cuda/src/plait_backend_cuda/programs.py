"""CUDA programs: rendered source compiled by NVRTC at first use, cached in memory and on disk.

A program is compiled for the exact architecture of its device (``sm_90`` on an H100/H200), as
a cubin, never as PTX: a cubin from a newer NVRTC of the same major version runs on an older
driver of that major version, where PTX would need the driver's own compiler to be as new.
On disk a cubin lives at ``<cache>/<nvrtc version>-<arch>/<source hash>.cubin``. ``<cache>`` is
``PLAIT_CUDA_CACHE_DIR``, else ``$XDG_CACHE_HOME/plait/cuda``, else ``~/.cache/plait/cuda``;
``PLAIT_CUDA_DISK_CACHE=0`` turns the disk cache off. The disk cache is never needed for
correctness: an unreadable or rejected binary is compiled again and rewritten.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from . import __version__, nvrtc

ENV_CACHE_DIR = "PLAIT_CUDA_CACHE_DIR"
ENV_DISK_CACHE = "PLAIT_CUDA_DISK_CACHE"
_OFF = {"0", "false", "no", "off"}


def source_hash(source: str) -> str:
    """The hex digest naming a program (the package version included: options may change)."""
    return hashlib.sha256(f"plait-cuda {__version__}\0{source}".encode()).hexdigest()


def cache_root() -> Path | None:
    """The disk cache's folder, or ``None`` when ``PLAIT_CUDA_DISK_CACHE=0``."""
    if os.environ.get(ENV_DISK_CACHE, "").strip().lower() in _OFF:
        return None
    chosen = os.environ.get(ENV_CACHE_DIR)
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "plait" / "cuda"


class ProgramCache:
    """Libraries and kernels of every device, compiled once per process (and once per NVRTC
    version and architecture on disk). ``stats`` counts ``compiles``, ``disk_loads`` and
    ``memory_hits``."""

    def __init__(self, native: ModuleType, arch_of: Callable[[int], str]) -> None:
        self._native = native
        self._arch_of = arch_of  # device index -> "sm_XY"
        self._libraries: dict[tuple[int, str], Any] = {}
        self._kernels: dict[tuple[int, str, str], Any] = {}
        self._lock = threading.Lock()
        self.stats: Counter[str] = Counter()

    def library(self, device: int, source: str) -> Any:
        """The ``_C.Library`` of ``source`` for ``cuda:<device>``, compiled at first use."""
        digest = source_hash(source)
        found = self._libraries.get((device, digest))
        if found is not None:
            self.stats["memory_hits"] += 1
            return found
        with self._lock:  # one compile per program, even when two threads ask at once
            found = self._libraries.get((device, digest))
            if found is None:
                found = self._load(device, source, digest)
                self._libraries[(device, digest)] = found
        return found

    def kernel(self, device: int, source: str, name: str, signature: str) -> Any:
        """Kernel ``name`` of ``source`` on ``cuda:<device>`` with its argument letters."""
        key = (device, source_hash(source), name)
        found = self._kernels.get(key)
        if found is None:
            found = self._native.Kernel(self.library(device, source), name, signature)
            self._kernels[key] = found
        return found

    def _load(self, device: int, source: str, digest: str) -> Any:
        """The library from the disk cache, else compiled (and written there)."""
        arch = self._arch_of(device)
        root = cache_root()
        path = None
        if root is not None:
            major, minor = nvrtc.version()
            path = root / f"nvrtc{major}.{minor}-{arch}" / f"{digest}.cubin"
            try:
                image = path.read_bytes()
            except OSError:
                image = b""  # not there yet (or unreadable): compile
            if image:
                try:
                    library = self._native.Library(image, device)
                except RuntimeError:
                    pass  # a damaged or foreign file: compile again and overwrite it
                else:
                    self.stats["disk_loads"] += 1
                    return library
        image = nvrtc.compile_source(source, arch, name=f"plait_{digest[:12]}.cu").image
        self.stats["compiles"] += 1
        library = self._native.Library(image, device)
        if path is not None:
            _write_atomically(path, image)
        return library


def _write_atomically(path: Path, data: bytes) -> None:
    """Write through a temporary file and a rename, so that a reader never sees half a
    binary; a cache that cannot be written is skipped (programs work without it)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(temporary, path)
        except OSError:
            os.unlink(temporary)
            raise
    except OSError:
        return
