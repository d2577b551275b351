"""NVRTC, opened at run time: CUDA C++ source to a device binary (cubin) for one architecture.

The kernels are rendered from the shared tables (:mod:`._render`) for the dtypes, geometry and
variant a call needs, so they are compiled when first used, not at build time, and the
binaries are cached (:mod:`.programs`). NVRTC needs no GPU: the compile checks run on build
machines too.

The library is looked up in this order: ``PLAIT_CUDA_NVRTC`` (a file), the
``nvidia-cuda-nvrtc`` wheel (``nvidia/cu13/lib``, ``nvidia/cuda_nvrtc/lib`` on ``sys.path``),
``$CUDA_HOME/lib64`` and ``/usr/local/cuda/lib64``, then the loader's own search
(``libnvrtc.so.13``, ``libnvrtc.so.12``, ``libnvrtc.so``; ``nvrtc64_*.dll`` on Windows).
Its ``nvrtc-builtins`` library is loaded from the same folder first, since NVRTC finds it by
name only. Calls are made through ``ctypes``: a compile takes milliseconds, so the cost of a
foreign call does not matter, and no NVRTC header is needed to build the wheel.
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

ENV_LIBRARY = "PLAIT_CUDA_NVRTC"
_SONAMES = ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so")
_WHEEL_FOLDERS = ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib", "nvidia/cu13/bin",
                  "nvidia/cuda_nvrtc/bin")
# Flags every program is compiled with: C++17, helper functions device-side by default.
BASE_OPTIONS = ("--std=c++17", "-default-device")

_lock = threading.Lock()
_library: ctypes.CDLL | None = None
_error: str = ""


class NvrtcError(RuntimeError):
    """NVRTC could not be opened, or a program failed to compile (the message has the log)."""


def _candidates() -> list[str]:
    chosen = os.environ.get(ENV_LIBRARY)
    found: list[str] = [chosen] if chosen else []
    pattern = "nvrtc64_*.dll" if sys.platform == "win32" else "libnvrtc.so*"
    folders = [Path(p) / f for p in sys.path if p for f in _WHEEL_FOLDERS]
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        folders.append(Path(home) / "lib64")
    folders.append(Path("/usr/local/cuda/lib64"))
    for folder in folders:
        # the plain name first (libnvrtc.so.13), never the ".alt" variant
        names = sorted((n for n in glob.glob(str(folder / pattern)) if ".alt." not in n),
                       key=len)
        found += names[:1]
    return found + list(_SONAMES)


def _open() -> ctypes.CDLL:
    global _library, _error
    if _library is not None:
        return _library
    with _lock:
        if _library is not None:
            return _library
        if _error:
            raise NvrtcError(_error)
        tried = []
        for candidate in _candidates():
            try:
                folder = os.path.dirname(candidate)
                if folder:  # NVRTC dlopens its builtins by name: load them first, globally
                    for builtins in sorted(glob.glob(os.path.join(folder, "*nvrtc-builtins*"))):
                        if ".alt." not in builtins:
                            ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
                library = ctypes.CDLL(candidate, mode=ctypes.RTLD_GLOBAL)
            except OSError as exc:
                tried.append(f"{candidate}: {exc}")
                continue
            _declare(library)
            _library = library
            return library
        _error = ("NVRTC was not found (install the nvidia-cuda-nvrtc wheel or set "
                  f"{ENV_LIBRARY}); tried: " + "; ".join(tried))
        raise NvrtcError(_error)


def _declare(lib: ctypes.CDLL) -> None:
    p, size, c = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p
    lib.nvrtcCreateProgram.argtypes = [ctypes.POINTER(p), c, c, ctypes.c_int, ctypes.c_void_p,
                                       ctypes.c_void_p]
    lib.nvrtcCompileProgram.argtypes = [p, ctypes.c_int, ctypes.POINTER(c)]
    for name in ("nvrtcGetProgramLogSize", "nvrtcGetCUBINSize", "nvrtcGetPTXSize"):
        getattr(lib, name).argtypes = [p, ctypes.POINTER(size)]
    for name in ("nvrtcGetProgramLog", "nvrtcGetCUBIN", "nvrtcGetPTX"):
        getattr(lib, name).argtypes = [p, ctypes.c_char_p]
    lib.nvrtcDestroyProgram.argtypes = [ctypes.POINTER(p)]
    lib.nvrtcGetErrorString.argtypes = [ctypes.c_int]
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    lib.nvrtcVersion.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]


def available() -> str:
    """``""`` when NVRTC can be opened, else why not."""
    try:
        _open()
    except NvrtcError as exc:
        return str(exc)
    return ""


def version() -> tuple[int, int]:
    """NVRTC's (major, minor)."""
    lib = _open()
    major, minor = ctypes.c_int(), ctypes.c_int()
    _check(lib, lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
    return major.value, minor.value


def _check(lib: ctypes.CDLL, status: int, call: str) -> None:
    if status:
        raise NvrtcError(f"{call} failed: {lib.nvrtcGetErrorString(status).decode()}")


@dataclass(frozen=True)
class Compiled:
    """A compiled program: ``image`` (a cubin, or PTX text when ``ptx``) and NVRTC's log."""

    image: bytes
    log: str
    ptx: bool = False


def compile_source(source: str, arch: str, name: str = "plait.cu",
                   options: tuple[str, ...] = (), check_only: bool = False) -> Compiled:
    """Compile ``source`` for ``arch`` (``"sm_90"``: a cubin; ``"compute_90"``: PTX).
    ``check_only``: stop after the front end's checks (no image; for compile tests).
    Raises :class:`NvrtcError` with the log when it does not compile."""
    lib = _open()
    program = ctypes.c_void_p()
    _check(lib, lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), name.encode(),
                                       0, None, None), "nvrtcCreateProgram")
    try:
        flags = [f"--gpu-architecture={arch}", *BASE_OPTIONS, *options]
        if check_only:
            flags.append("--fdevice-syntax-only")
        array = (ctypes.c_char_p * len(flags))(*(f.encode() for f in flags))
        status = lib.nvrtcCompileProgram(program, len(flags), array)
        log = _read(lib, program, "ProgramLog").rstrip(b"\0").decode(errors="replace")
        if status:
            raise NvrtcError(f"NVRTC could not compile {name} for {arch} "
                             f"({lib.nvrtcGetErrorString(status).decode()}):\n{log}")
        ptx = arch.startswith("compute_")
        if check_only:
            return Compiled(b"", log, ptx)
        image = _read(lib, program, "PTX" if ptx else "CUBIN")
        return Compiled(image, log, ptx)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))


def _read(lib: ctypes.CDLL, program: ctypes.c_void_p, what: str) -> bytes:
    size = ctypes.c_size_t()
    _check(lib, getattr(lib, f"nvrtcGet{what}Size")(program, ctypes.byref(size)),
           f"nvrtcGet{what}Size")
    buffer = ctypes.create_string_buffer(size.value)
    _check(lib, getattr(lib, f"nvrtcGet{what}")(program, buffer), f"nvrtcGet{what}")
    return buffer.raw
