"""A GPU backend's device programs, built from rendered source at first use and cached in memory
and on disk: one source for plait-backend-xpu (OpenCL programs) and plait-backend-cuda (NVRTC
cubins), which differ only in a :class:`ProgramBuilder`.

In memory a program is keyed by ``(device index, source hash)``, where the hash covers the
build options and the source. On disk its device binary lives at
``<cache>/<device folder>/<source hash><suffix>``; the device folder names what the binary
depends on besides its source (the device and its driver, or the compiler's version and the
architecture), so an update starts a new folder. ``<cache>`` is ``PLAIT_<NAME>_CACHE_DIR``,
else ``$XDG_CACHE_HOME/plait/<name>``, else ``~/.cache/plait/<name>``;
``PLAIT_<NAME>_DISK_CACHE=0`` turns the disk cache off. The disk cache is never needed for
correctness: a binary that cannot be read or that the driver rejects is built again from
source and written again. A build error raises ``RuntimeError`` with the log.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_OFF = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class ProgramBuilder:
    """How one backend builds a program and names its binaries.

    ``name`` is the device type (``"xpu"``, ``"cuda"``): it names the cache's environment
    variables and folder. ``device_folder(device)`` names the folder of ``device``'s binaries.
    ``build(device, source, options, cached)`` returns the program, from the binary ``cached``
    where it is not empty and the driver takes it, else built from source, and the binary to
    write to disk (``None`` when the program came from ``cached``). ``kernel(program, name,
    signature)`` is the native kernel object."""

    name: str
    suffix: str
    device_folder: Callable[[int], str]
    build: Callable[[int, str, str, bytes], tuple[Any, bytes | None]]
    kernel: Callable[[Any, str, str], Any]


def source_hash(source: str, options: str = "") -> str:
    """The hex digest that names a program: its build options and source."""
    return hashlib.sha256(f"{options}\0{source}".encode()).hexdigest()


def cache_root(name: str) -> Path | None:
    """The disk cache's folder of device type ``name``, or ``None`` when
    ``PLAIT_<NAME>_DISK_CACHE=0``."""
    prefix = f"PLAIT_{name.upper()}"
    if os.environ.get(f"{prefix}_DISK_CACHE", "").strip().lower() in _OFF:
        return None
    chosen = os.environ.get(f"{prefix}_CACHE_DIR")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "plait" / name


class ProgramCache:
    """Programs and kernels of every device, built once per process (and once per driver or
    compiler on disk). ``stats`` counts ``source_builds``, ``binary_loads`` and
    ``memory_hits``."""

    def __init__(self, builder: ProgramBuilder) -> None:
        self._builder = builder
        self._programs: dict[tuple[int, str], Any] = {}
        self._kernels: dict[tuple[int, str, str], Any] = {}
        self._lock = threading.Lock()
        self.stats: Counter[str] = Counter()

    def program(self, device: int, source: str, options: str = "") -> Any:
        """The native program of ``source`` on device ``device``, built at its first use."""
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
        """Kernel ``name`` of ``source`` on device ``device``, with its argument letters (b
        buffer, i/I 32-bit int, l/L 64-bit, f float, d double; letters in parentheses, l/L
        only, are one vector argument of the kernel, passed value by value)."""
        key = (device, source_hash(source, options), name)
        found = self._kernels.get(key)
        if found is None:
            found = self._builder.kernel(self.program(device, source, options), name, signature)
            self._kernels[key] = found
        return found

    def binary_path(self, device: int, digest: str) -> Path | None:
        """Where the device binary of a program lives on disk (None: no disk cache)."""
        root = cache_root(self._builder.name)
        if root is None:
            return None
        return root / self._builder.device_folder(device) / f"{digest}{self._builder.suffix}"

    def _build(self, device: int, source: str, options: str, digest: str) -> Any:
        path = self.binary_path(device, digest)
        cached = b""
        if path is not None:
            try:
                cached = path.read_bytes()
            except OSError:
                cached = b""  # not there yet (or unreadable): build from source
        program, binary = self._builder.build(device, source, options, cached)
        if binary is None:
            self.stats["binary_loads"] += 1
            return program
        self.stats["source_builds"] += 1
        if path is not None:
            _write_atomically(path, binary)
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
