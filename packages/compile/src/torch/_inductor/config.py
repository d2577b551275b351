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
#: Turn ``addmm(bias, x, t(w))`` into ``linear(x, w, bias)`` in compiled graphs: the CPU
#: backend's linear writes the bias into the output and adds the product onto it in one GEMM,
#: where addmm is a product and a second pass for the bias.
linear_epilogue: bool = True
#: Build the views of a compiled graph (view, reshape, t, transpose, permute, (un)squeeze,
#: expand, slice, select) while grad mode is off from the layout the operator gave the last
#: time for an input of the same shape and strides, instead of calling the operator again.
direct_views: bool = True
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


# -- PyTorch's settings that programs set (gpt-fast, nanoGPT, tutorials) ----------------------
# Kept so such programs run; this code generator reads none of them (it has no Triton, no
# autotuner and no graph cache of its own to tune): the rows say what each would change.

#: Autotune tile sizes by coordinate descent (Triton kernels).
coordinate_descent_tuning: bool = False
#: Cache compiled FX graphs on disk (here the AOT cache and the kernel cache always are).
fx_graph_cache: bool = True
#: Fold parameters into constants for inference graphs.
freezing: bool = False
#: Benchmark kernel choices (``mode="max-autotune"`` sets the same).
max_autotune: bool = False
max_autotune_gemm: bool = False
max_autotune_pointwise: bool = False
#: Fuse pointwise epilogues into matmul templates.
epilogue_fusion: bool = True
#: Pad matmul shapes to aligned sizes.
shape_padding: bool = True
#: Fuse int8 matmuls with the scale multiply after them.
force_fuse_int_mm_with_mul: bool = False
use_mixed_mm: bool = True
#: Generated random numbers as eager's (here they are eager's: random ops stay calls).
fallback_random: bool = False
aggressive_fusion: bool = False
permute_fusion: bool = False
split_reductions: bool = True
layout_optimization: bool = True
size_asserts: bool = True
debug: bool = False
benchmark_kernel: bool = False
compile_threads: int = 1
emulate_precision_casts: bool = False


class _Namespace:
    """A group of settings (``config.triton.cudagraphs``); settings may be added."""

    def __init__(self, **settings: object) -> None:
        self.__dict__.update(settings)

    def __repr__(self) -> str:
        return f"namespace({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"


#: Triton (GPU kernels PyTorch generates; CUDA C++ through NVRTC here).
triton = _Namespace(cudagraphs=False, cudagraph_trees=True, unique_kernel_names=False,
                    descriptive_names="original_aten", max_tiles=2, autotune_pointwise=True,
                    use_block_ptr=False)
#: The CPU C++ generator.
cpp = _Namespace(threads=-1, simdlen=None, dynamic_threads=False, enable_kernel_profile=False,
                 fallback_scatter_reduce_sum=True)
#: Debug traces of compiled graphs.
trace = _Namespace(enabled=False, debug_log=False, info_log=False, graph_diagram=False)
#: Ahead-of-time compiled packages.
aot_inductor = _Namespace(output_path="", debug_compile=False)


def _setting_owner(name: str) -> tuple[object, str]:
    """(the module or namespace holding the dotted setting ``name``, its last part)."""
    import sys

    owner: object = sys.modules[__name__]
    *path, last = name.split(".")
    for part in path:
        owner = getattr(owner, part)
    if not hasattr(owner, last):
        raise AttributeError(f"torch._inductor.config has no option {name!r}")
    return owner, last


class patch:  # (PyTorch's name: a class used as a function)
    """Set settings for a block or a function: ``with config.patch(max_autotune=True):``,
    ``config.patch({"triton.cudagraphs": False})`` or ``config.patch("debug", True)``."""

    def __init__(self, arg1: str | dict[str, object] | None = None, arg2: object = None,
                 **changes: object) -> None:
        if isinstance(arg1, str):
            changes[arg1] = arg2
        elif isinstance(arg1, dict):
            changes.update(arg1)
        self.changes = changes
        self.saved: list[tuple[object, str, object]] = []

    def __enter__(self) -> None:
        for name, value in self.changes.items():
            owner, last = _setting_owner(name)
            self.saved.append((owner, last, getattr(owner, last)))
            setattr(owner, last, value)

    def __exit__(self, *exc: object) -> None:
        while self.saved:
            owner, last, value = self.saved.pop()
            setattr(owner, last, value)

    def __call__(self, fn: object) -> object:
        import functools

        @functools.wraps(fn)  # type: ignore[arg-type]
        def patched(*args: object, **kwargs: object) -> object:
            with patch(**self.changes):
                return fn(*args, **kwargs)  # type: ignore[operator]

        return patched
