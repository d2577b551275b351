"""Settings of the code generator (``torch._inductor.config``), read at compile time."""

from __future__ import annotations

import os

#: Build C++ for CPU kernel groups (False: every group runs in the fused interpreter).
cpp_codegen: bool = True

#: Build kernels on a background thread; the first calls run in the fused interpreter meanwhile.
#: False builds before the first call returns (the build still falls back on failure).
compile_in_background: bool = True

#: The C++ compiler; ``$CXX`` when set. A compiler that cannot run leaves groups interpreted.
cxx: str = os.environ.get("CXX", "g++")

#: Flags of every build (the cache key includes them). ``-fwrapv``: integer overflow wraps, as
#: torch's integer arithmetic does (signed overflow is otherwise undefined in C++).
cxx_flags: tuple[str, ...] = ("-O3", "-march=native", "-fno-math-errno", "-fwrapv", "-shared",
                              "-fPIC", "-std=c++17")

#: Use OpenMP threads (and SIMD math from glibc's libmvec) when the compiler accepts them.
openmp: bool = True

#: libgomp's wait policy for the kernels' OpenMP threads, set while the first kernel library
#: loads (libgomp reads it then) unless ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` is set.
#: "PASSIVE": a thread that finished its share sleeps at once. libgomp's default spins for
#: milliseconds after every region, which on a machine with few cores takes a core from the
#: library's own worker pool and from the main thread between kernels (a nanoGPT step ran
#: 1.3x slower). ``None`` leaves libgomp's default.
openmp_wait_policy: str | None = "PASSIVE"

#: Elements below which a compiled kernel stays on one thread.
parallel_threshold: int = 131072

#: Elements per block of the fused interpreter.
interpreter_block: int = 1 << 18

#: Where built kernels are kept; ``$TORCHINDUCTOR_CACHE_DIR``, else ``~/.cache/plait/inductor``.
cache_dir: str | None = None


def resolved_cache_dir() -> str:
    """The cache directory in force now (the setting, the environment, then the default)."""
    if cache_dir:
        return cache_dir
    env = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if env:
        return env
    return os.path.join(os.path.expanduser("~"), ".cache", "plait", "inductor")
