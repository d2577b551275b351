"""OpenCL programs: built from OpenCL C source at first use, cached in memory and on disk.

In memory a program is keyed by ``(device index, source hash)``, where the hash covers the
build options and the source. On disk its device binary (``clGetProgramInfo``) is stored at
``<cache>/<device key>/<source hash>.bin``, where the device key hashes the platform, the
device, its OpenCL versions and the driver version, so a driver update starts a new folder.
``<cache>`` is ``PLAIT_XPU_CACHE_DIR``, else ``$XDG_CACHE_HOME/plait/xpu``, else
``~/.cache/plait/xpu``; ``PLAIT_XPU_DISK_CACHE=0`` turns the disk cache off. The disk cache is
never needed for correctness: a binary that cannot be read or that the driver rejects is
rebuilt from source and written again. A build error raises ``RuntimeError`` with the log.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

from . import __version__

ENV_CACHE_DIR = "PLAIT_XPU_CACHE_DIR"
ENV_DISK_CACHE = "PLAIT_XPU_DISK_CACHE"
_OFF = {"0", "false", "no", "off"}


def source_hash(source: str, options: str = "") -> str:
    """The hex digest that names a program: its build options and source."""
    return hashlib.sha256(f"{options}\0{source}".encode()).hexdigest()


def cache_root() -> Path | None:
    """The disk cache's folder, or ``None`` when ``PLAIT_XPU_DISK_CACHE=0``."""
    if os.environ.get(ENV_DISK_CACHE, "").strip().lower() in _OFF:
        return None
    chosen = os.environ.get(ENV_CACHE_DIR)
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "plait" / "xpu"


def device_key(properties: dict[str, Any]) -> str:
    """What a device binary depends on besides its source, hashed: the device and its driver."""
    fields = ("platform", "vendor", "name", "version", "opencl_c_version", "driver_version")
    text = "\n".join(str(properties.get(f, "")) for f in fields) + f"\nplait-xpu {__version__}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class ProgramCache:
    """Programs and kernels of every device, built once per process (and once per driver on
    disk). ``stats`` counts ``source_builds``, ``binary_loads`` and ``memory_hits``."""

    def __init__(self, native: ModuleType, properties: Any) -> None:
        self._native = native
        self._properties = properties  # device index -> its _C.devices() dict
        self._programs: dict[tuple[int, str], Any] = {}
        self._kernels: dict[tuple[int, str, str], Any] = {}
        self._lock = threading.Lock()
        self.stats: Counter[str] = Counter()

    def program(self, device: int, source: str, options: str = "") -> Any:
        """The ``_C.Program`` of ``source`` on ``xpu:<device>``, built at its first use."""
        digest = source_hash(source, options)
        found = self._programs.get((device, digest))
        if found is not None:
            self.stats["memory_hits"] += 1
            return found
        with self._lock:  # one build per program, even when two threads ask at once
            found = self._programs.get((device, digest))
            if found is None:
                found = self._build(device, source, options, digest)
                self._programs[(device, digest)] = found
        return found

    def kernel(self, device: int, source: str, name: str, signature: str,
               options: str = "") -> Any:
        """Kernel ``name`` of ``source`` on ``xpu:<device>``, with its argument letters
        (``_C.Kernel``: b buffer, i/I 32-bit int, l/L 64-bit, f float, d double)."""
        key = (device, source_hash(source, options), name)
        found = self._kernels.get(key)
        if found is None:
            found = self._native.Kernel(self.program(device, source, options), name, signature)
            self._kernels[key] = found
        return found

    def binary_path(self, device: int, digest: str) -> Path | None:
        """Where the device binary of a program lives on disk (None: no disk cache)."""
        root = cache_root()
        if root is None:
            return None
        return root / device_key(self._properties(device)) / f"{digest}.bin"

    def _build(self, device: int, source: str, options: str, digest: str) -> Any:
        path = self.binary_path(device, digest)
        cached = b""
        if path is not None:
            try:
                cached = path.read_bytes()
            except OSError:
                cached = b""  # not there yet (or unreadable): build from source
        program = self._native.Program(device, source, options, cached)
        if program.from_binary:
            self.stats["binary_loads"] += 1
            return program
        self.stats["source_builds"] += 1
        if path is not None:
            _write_atomically(path, program.binary())
        return program


def _write_atomically(path: Path, data: bytes) -> None:
    """Write through a temporary file and a rename, so a reader never sees half a binary; a
    cache that cannot be written is skipped (the program works without it)."""
    if not data:
        return
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
