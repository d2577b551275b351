"""The facade's switches: defaults, determinism, matmul precision, warnings, threads.

Thread-local, as in PyTorch: the default device and the stack of active ``with
torch.device(...)`` contexts (which take precedence over the default device); each new thread
starts on the CPU. Process-wide: everything else, the default dtype included (PyTorch keeps it
in one global, so a worker thread's tensors follow the main thread's setting).

The eager hot path must not read thread-local state on every call (each read costs ~30 ns), so
the process-wide counters in :data:`state` say whether any thread has a non-default setting
that the fast path has to respect; only then does the slow path read the thread-local value.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings

from . import dtype as _dtype

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from typing import Any


class _Local(threading.local):
    """This thread's settings, each set to its default when a thread first reads one: a
    thread-local attribute that is missing costs ~0.9 us to look up (an AttributeError is
    raised and dropped), one that is there ~0.1 us, and ``is_grad_enabled`` runs on most
    dispatcher calls."""

    def __init__(self) -> None:
        self.grad = True
        self.inference = False
        self.device: Any = None
        self.device_stack: list[Any] | None = None


_local = _Local()


class _State:
    """Process-wide values the fast paths read without touching thread-locals."""

    __slots__ = (
        "anomaly",
        "anomaly_check_nan",
        "deterministic",
        "deterministic_warn_only",
        "float32_matmul_precision",
        "inference_active",
        "keys_active",
        "modes_active",
        "no_grad_active",
        "num_threads",
        "warn_always",
    )

    def __init__(self) -> None:
        self.deterministic = False
        self.deterministic_warn_only = False
        self.float32_matmul_precision = "highest"
        self.warn_always = False
        # Counters: how many threads currently have a dispatch mode / grad disabled.
        self.modes_active = 0
        self.no_grad_active = 0
        # Non-zero while the dispatcher must take its full path for every call: a dispatch
        # mode or an autocast region is active on some thread, or a Tensor subclass defining
        # ``__torch_dispatch__`` exists (the Python and Autocast keys). Dispatch modes and
        # autocast regions also count in ``modes_active``, which makes the fast tiers step
        # aside; a subclass does not need that (the tiers take plain Tensors only).
        self.keys_active = 0
        self.inference_active = 0
        self.anomaly = False
        self.anomaly_check_nan = True
        self.num_threads = _initial_num_threads()


def _initial_num_threads() -> int:
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "")))
    except ValueError:
        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)


state = _State()

_DEFAULT_DTYPES = (_dtype.float32, _dtype.float64, _dtype.float16, _dtype.bfloat16)


# -- grad modes (thread-local; process-wide counters for the fast paths) ---------------------

_counter_lock = threading.Lock()


def is_grad_enabled() -> bool:
    """Whether operations record the autograd graph in this thread."""
    return _local.grad


def set_grad_state(mode: bool) -> bool:
    """Turn graph recording on or off for this thread; returns the previous setting."""
    prev = _local.grad
    if prev != mode:
        _local.grad = mode
        with _counter_lock:
            state.no_grad_active += -1 if mode else 1
    return prev


def is_inference_mode_enabled() -> bool:
    return _local.inference


def set_inference_state(mode: bool) -> bool:
    prev = _local.inference
    if prev != mode:
        _local.inference = mode
        with _counter_lock:
            state.inference_active += 1 if mode else -1
    return prev


# -- default dtype -------------------------------------------------------------------------


# Process-wide, as PyTorch's: one module global, read without a thread-local lookup.
_default_dtype: _dtype.dtype = _dtype.float32


def get_default_dtype() -> _dtype.dtype:
    """The floating dtype that factory functions and Python floats default to."""
    return _default_dtype


def set_default_dtype(d: _dtype.dtype) -> None:
    """Set the process-wide default floating dtype (float32, float64, float16 or bfloat16)."""
    if not isinstance(d, _dtype.dtype):
        raise TypeError(f"invalid dtype object: only floating-point types are supported as the "
                        f"default type, got {type(d).__name__}")
    if d not in _DEFAULT_DTYPES:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    global _default_dtype
    _default_dtype = d


def get_default_complex_dtype() -> _dtype.dtype:
    """complex128 when the default dtype is float64, else complex64."""
    return _dtype.complex128 if get_default_dtype() is _dtype.float64 else _dtype.complex64


def set_default_tensor_type(t: Any) -> None:
    """Deprecated PyTorch API: sets the default dtype from a tensor type name or class."""
    warnings.warn(
        "torch.set_default_tensor_type() is deprecated; use torch.set_default_dtype() and "
        "torch.set_default_device() instead.",
        UserWarning,
        stacklevel=2,
    )
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    table = {"FloatTensor": _dtype.float32, "DoubleTensor": _dtype.float64,
             "HalfTensor": _dtype.float16, "BFloat16Tensor": _dtype.bfloat16}
    short = name.rsplit(".", 1)[-1]
    if short not in table:
        raise TypeError(f"invalid type: '{name}'; only floating tensor types can be the default")
    set_default_dtype(table[short])
    if name.startswith("torch.cuda."):
        set_default_device("cuda")


# -- default device ------------------------------------------------------------------------


def _device_stack() -> list[Any]:
    stack = _local.device_stack
    if stack is None:
        stack = _local.device_stack = []
    return stack


_cpu: Any = None  # torch.device("cpu"), once _device has loaded


def get_default_device() -> Any:
    """The device factory functions use: the innermost ``with torch.device(...)`` context of
    this thread, else this thread's ``set_default_device`` value, else ``cpu``."""
    stack = _local.device_stack
    if stack:
        return stack[-1]
    d = _local.device
    if d is None:
        global _cpu
        if _cpu is None:  # (a function-level import costs ~0.2 us a call)
            from .device import CPU

            _cpu = CPU
        return _cpu
    if d.index is None and d.type not in ("cpu", "meta"):
        d = _with_current_index(d)
    return d


def _with_current_index(d: Any) -> Any:
    """``cuda`` -> ``cuda:<current device>`` (0 when nothing serves the type yet), as PyTorch
    reports the default device."""
    from . import registry as _registry
    from .device import device

    mod = _registry.device_module(d.type)
    index = 0
    if mod is not None and hasattr(mod, "current_device"):
        try:
            index = int(mod.current_device())
        except RuntimeError:  # no device present: the first use will say so properly
            index = 0
    return device(d.type, index)


def set_default_device(device: Any) -> None:
    """Set this thread's default device (``None`` resets it to ``cpu``)."""
    if device is None:
        _local.device = None
        return
    from .device import device as _device

    _local.device = _device(device)


def push_device(d: Any) -> None:
    _device_stack().append(d)


def pop_device() -> None:
    _device_stack().pop()


# -- determinism ---------------------------------------------------------------------------

_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Make nondeterministic kernels raise (or warn, with ``warn_only=True``) instead of run."""
    if not isinstance(mode, bool):
        raise TypeError("use_deterministic_algorithms expects a bool, but got "
                        f"{type(mode).__name__}")
    state.deterministic = mode
    state.deterministic_warn_only = bool(warn_only) and mode


def are_deterministic_algorithms_enabled() -> bool:
    return state.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return state.deterministic_warn_only


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """0/"default": off; 1/"warn": warn on nondeterministic ops; 2/"error": raise."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, "
                           f"but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not state.deterministic:
        return 0
    return 1 if state.deterministic_warn_only else 2


def alert_not_deterministic(op_name: str) -> None:
    """Called by kernels that would be nondeterministic: raise, or warn in warn-only mode."""
    if not state.deterministic:
        return
    msg = (f"{op_name} does not have a deterministic implementation, but you set "
           "'torch.use_deterministic_algorithms(True)'.")
    if state.deterministic_warn_only:
        warnings.warn(msg, UserWarning, stacklevel=external_stacklevel())
    else:
        raise RuntimeError(msg)


def external_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first frame outside ``torch``,
    whatever depth of core calls sits in between. Import-machinery frames are not counted:
    ``warnings`` skips those itself."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module != "torch" and not module.startswith("torch."):
            if not module.startswith("importlib"):
                break
        else:
            level += 1
        frame = frame.f_back
    return level


# -- matmul precision, warnings, threads ----------------------------------------------------

_PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision: str) -> None:
    """"highest" (full float32), "high" (TF32 or bf16x3 allowed), "medium" (bf16 allowed)."""
    if precision not in _PRECISIONS:
        raise RuntimeError(f"Invalid float32 matmul precision {precision!r}; expected one of "
                           f"{', '.join(map(repr, _PRECISIONS))}")
    state.float32_matmul_precision = precision


def get_float32_matmul_precision() -> str:
    return state.float32_matmul_precision


def set_warn_always(b: bool) -> None:
    """Emit warnings that normally appear once every time instead."""
    state.warn_always = bool(b)


def is_warn_always_enabled() -> bool:
    return state.warn_always


def set_num_threads(n: int) -> None:
    """The number of threads backends use for intra-op parallelism."""
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise RuntimeError(f"set_num_threads expects a positive integer, but got {n!r}")
    state.num_threads = n
    from . import registry as _registry  # imports _config: loaded lazily

    _registry.set_num_threads(n)


def get_num_threads() -> int:
    return state.num_threads


def init_num_threads() -> None:
    """Initialise the calling thread's intra-op settings (PyTorch's worker-thread hook): the
    backends' pools read :func:`get_num_threads` whenever they run, so nothing is left to do."""


def set_flush_denormal(mode: bool) -> bool:
    """Whether flushing denormal floats to zero could be set: False, Plait's kernels keep
    IEEE denormals (the flush is a per-thread CPU flag PyTorch sets on x86), so results stay
    as they were; True is returned only where the mode was applied."""
    return False


# Plait runs no inter-op thread pool (ops run one after another on the calling thread); the
# setting is kept for PyTorch's API, including its rule that it can be set once.
_interop_threads: int | None = None


def set_num_interop_threads(n: int) -> None:
    """The number of threads for inter-op parallelism: settable once, as in PyTorch."""
    global _interop_threads
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise RuntimeError(f"Expected positive number of threads, but got {n!r}")
    if _interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _interop_threads = n


def get_num_interop_threads() -> int:
    """The inter-op thread count: as set, or the machine's CPU count."""
    return _interop_threads if _interop_threads is not None else (os.cpu_count() or 1)
