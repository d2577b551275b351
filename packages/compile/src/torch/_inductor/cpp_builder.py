"""Build generated C++ into shared libraries: on a background thread, cached on disk.

The cache key is a hash of the source, the compiler (its path and ``--version``), the flags
and what ``-march=native`` means on this machine, so a changed compiler, flag or CPU builds
anew (a cache directory shared between machines never hands one a library with instructions
its CPU lacks). A library is written under a temporary
name and moved into place with ``os.replace``: a second process (or a concurrent one) finds
either nothing or a complete file, and a process that finds the file compiles nothing.
Libraries are loaded with ctypes, so no Python headers are needed.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from . import config

log = logging.getLogger("torch._inductor")

#: What the builder did in this process (tests read it: "a second process compiles nothing").
counters: dict[str, int] = {"builds": 0, "disk_hits": 0, "memory_hits": 0, "failures": 0}

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_loaded: dict[str, Future[Any]] = {}
_versions: dict[str, str | None] = {}
_native_targets: dict[str, str] = {}

ARGTYPES = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
            ctypes.c_void_p]


def _compiler_version(cxx: str) -> str | None:
    """``cxx --version``'s first line, or ``None`` when the compiler cannot run."""
    if cxx not in _versions:
        try:
            done = subprocess.run([cxx, "--version"], capture_output=True, text=True,
                                  timeout=30, check=False)
            first = done.stdout.splitlines()[0] if done.returncode == 0 and done.stdout else None
            _versions[cxx] = first
        except (OSError, subprocess.SubprocessError):
            _versions[cxx] = None
    return _versions[cxx]


def _native_target(cxx: str) -> str:
    """The target options ``-march=native`` expands to for ``cxx`` on this machine (the driver's
    ``-###`` dry run names them), or ``""`` when the driver does not say."""
    if cxx not in _native_targets:
        try:
            done = subprocess.run([cxx, "-march=native", "-###", "-E", "-x", "c++", os.devnull],
                                  capture_output=True, text=True, timeout=30, check=False)
            lines = [ln for ln in done.stderr.splitlines() if "-march=" in ln and "native" not in
                     ln.split("-march=", 1)[1][:8]]
            _native_targets[cxx] = lines[-1].strip() if lines else ""
        except (OSError, subprocess.SubprocessError):
            _native_targets[cxx] = ""
    return _native_targets[cxx]


def _flags() -> list[str]:
    flags = list(config.cxx_flags)
    if config.openmp:
        flags += ["-fopenmp-simd"]
    return flags


def cache_key(source: str) -> str | None:
    """The disk cache key of ``source`` with the configured compiler, or ``None`` (no compiler)."""
    version = _compiler_version(config.cxx)
    if version is None:
        return None
    flags = _flags()
    target = _native_target(config.cxx) if "-march=native" in flags else ""
    text = "\0".join([source, shutil.which(config.cxx) or config.cxx, version, target, *flags])
    return hashlib.sha256(text.encode()).hexdigest()


def library_path(key: str) -> str:
    """Where the library of ``key`` lives in the cache directory."""
    return os.path.join(config.resolved_cache_dir(), key[:2], key + ".so")


def run_compiler(command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run one compiler command (a seam for tests that hold a build back)."""
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


def _build(source: str, key: str) -> str | None:
    """Compile ``source`` into the cache; the library's path, or ``None`` on failure."""
    target = library_path(key)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="plait-inductor-") as work:
        src = os.path.join(work, "kernel.cpp")
        with open(src, "w") as handle:
            handle.write(source)
        out = os.path.join(work, "kernel.so")
        base = [config.cxx, *_flags(), src, "-o", out]
        # glibc's vector math first; a toolchain without libmvec builds scalar calls.
        attempts = [base + ["-lmvec"], base + ["-DPLAIT_NO_MVEC"]]
        for command in attempts:
            done = run_compiler(command)
            if done.returncode == 0:
                break
            log.debug("inductor build failed: %s\n%s", " ".join(command), done.stderr)
        else:
            return None
        staged = f"{target}.tmp{os.getpid()}.{threading.get_ident()}"
        shutil.copyfile(out, staged)
        os.replace(staged, target)
    with _lock:
        counters["builds"] += 1
    return target


def pool_address() -> int | None:
    """The address of the CPU backend's thread-pool C entry, which its ``torch_backend_codegen``
    hook gives for ``target="thread_pool"`` (plait-backend-cpu: ``plait_cpu_parallel_for``,
    ``void (*)(int64_t n, int64_t grain, void (*fn)(int64_t begin, int64_t end, void* ctx),
    void* ctx)``), or ``None`` when ``config.cpu_thread_pool`` is off or the backend serving the
    CPU offers none (kernels then run serially)."""
    if not config.cpu_thread_pool:
        return None
    from torch._core import registry

    plugin = registry._serving("cpu")
    if plugin is None:
        return None
    address = registry._call_owner(plugin, "torch_backend_codegen", device_type="cpu",
                                   target="thread_pool")
    return int(address) if address else None


def _load(path: str, name: str) -> Any:
    library = ctypes.CDLL(path)
    # Every load sets the pool pointer: a library loaded again (after clear()) under another
    # setting follows the setting in force now.
    init = library.plait_inductor_init
    init.argtypes = [ctypes.c_void_p]
    init.restype = None
    init(pool_address())
    function = getattr(library, name)
    function.argtypes = ARGTYPES
    function.restype = None
    return function


def _compile_and_load(source: str, key: str, name: str) -> Any:
    try:
        path = _build(source, key)
    except (OSError, subprocess.SubprocessError) as error:
        log.debug("inductor build could not run: %s", error)
        path = None
    if path is None:
        with _lock:
            counters["failures"] += 1
        return None
    return _load(path, name)


def _background() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="plait-inductor")
        return _executor


def load_kernel(source: str, name: str = "kernel") -> Future[Any]:
    """A future of the ctypes function built from ``source`` (``None`` when no build is
    possible). A library already on disk (or in this process) is ready at once; otherwise the
    build runs on the background thread, or before returning when
    ``config.compile_in_background`` is off."""
    key = cache_key(source)
    if key is None:
        ready: Future[Any] = Future()
        ready.set_result(None)
        with _lock:
            counters["failures"] += 1
        return ready
    with _lock:
        known = _loaded.get(key)
        if known is not None:
            counters["memory_hits"] += 1
            return known
    path = library_path(key)
    if os.path.exists(path):
        ready = Future()
        ready.set_result(_load(path, name))
        with _lock:
            counters["disk_hits"] += 1
            _loaded[key] = ready
        return ready
    if config.compile_in_background:
        future = _background().submit(_compile_and_load, source, key, name)
    else:
        future = Future()
        future.set_result(_compile_and_load(source, key, name))
    with _lock:
        _loaded[key] = future
    return future


def clear() -> None:
    """Forget the libraries loaded in this process (the disk cache stays)."""
    with _lock:
        _loaded.clear()
        _versions.clear()
        _native_targets.clear()
