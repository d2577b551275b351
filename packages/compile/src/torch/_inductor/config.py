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

#: Vectorise with ``#pragma omp simd`` (``-fopenmp-simd``: no OpenMP runtime is linked) and
#: glibc's vector math (libmvec) when the compiler accepts them.
openmp: bool = True

#: Split loops over the CPU backend's thread pool (the address its ``torch_backend_codegen``
#: hook gives for ``target="thread_pool"``, handed to each library when it loads; it follows
#: ``torch.set_num_threads``). False, or no backend with a pool, runs every kernel on the
#: calling thread.
cpu_thread_pool: bool = True

#: Generate a kernel for a CPU group of one pointwise operator. False (default): such a
#: node stays a library call, since nothing is fused and the backend's own kernel was faster
#: here (nanoGPT's gelu 0.16 ms against 0.28 ms generated, its residual adds 14 us against
#: 24 us: vectorised erf of its own, no ctypes call); groups of two operators or more, and
#: groups on other devices, are generated as before.
cpu_single_op_groups: bool = False
#: Compute a CPU layer norm over the last dimension in the kernel of the pointwise group
#: before it (``x + f(x)`` and the layer norm after it: one pass over the rows, no separate
#: library call).
fuse_layer_norm: bool = True
#: Run CPU library operators that have a kernel template (``torch._inductor.templates``:
#: the layer norm backward) through it; False calls the operators.
cpu_templates: bool = True
#: Elements up to which a compiled kernel stays on the calling thread.
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
