"""Plait: a PyTorch-compatible framework. This module is the facade.

It re-exports, configures and autoloads; the work lives in the modules it names. Heavy parts
(numpy, the op surface, the dispatcher) load on first use through module ``__getattr__`` so that
``import torch`` stays fast. Subpackages shipped by other distributions (``torch.nn`` from
plait-nn, ``torch.fx`` from plait-compile) join this package through ``__path__``.
"""

from __future__ import annotations

import time as _time

_t0 = _time.perf_counter()

import importlib as _importlib
import sys as _sys
import threading as _threading

from . import _subpackages

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from typing import Any as _Any

__path__ = _subpackages.extend_path(__path__, __name__)

from . import _builtin_backends, _device_modules as _dm, backends
from ._compile_api import compile
from ._core import (
    config as _config,
    dtype as _dtype,
    layout as _layout,
    registry as _backend_registry,
    upcalls as _upcalls,
)
from ._core.config import (
    alert_not_deterministic as _alert_not_deterministic,
    are_deterministic_algorithms_enabled,
    get_default_device,
    get_default_dtype,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    get_num_interop_threads,
    get_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_warn_always_enabled,
    set_default_device,
    set_default_dtype,
    set_default_tensor_type,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    set_num_interop_threads,
    set_num_threads,
    set_warn_always,
    use_deterministic_algorithms,
)
from ._core.device import device
from ._core.dtype import (
    bfloat16,
    complex64,
    complex128,
    dtype,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._core.generators import Generator, default_generator, initial_seed, manual_seed, seed
from ._core.layout import (
    _mkldnn,
    channels_last,
    channels_last_3d,
    contiguous_format,
    jagged,
    layout,
    memory_format,
    preserve_format,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from ._core.symbolic import (
    SymBool,
    SymFloat,
    SymInt,
    sym_float,
    sym_int,
    sym_ite,
    sym_max,
    sym_min,
    sym_not,
    sym_sum,
)
from ._core.tensor import Size, Tensor
from ._device_modules import get_device_module, register_device_module as _register_device_module
from ._tensor_str import get_printoptions, set_printoptions

# A str that compares as a version: torch.__version__ >= "2.0" (torch/torch_version.py).
from .torch_version import __version__

# PyTorch's numeric constants (Python floats, as in PyTorch) and its alias for None in indexing.
e = 2.718281828459045
pi = 3.141592653589793
inf = float("inf")
nan = float("nan")
newaxis = None
# PyTorch's package reaches itself as torch.torch (kornia calls torch.torch.deg2rad)
torch = _sys.modules[__name__]


def compiled_with_cxx11_abi() -> bool:
    """Whether the native libraries use the C++11 ABI of libstdc++: Plait's backends do."""
    return True

# Attributes that load their module on first access: name -> (module, attribute or None).
_LAZY: dict[str, tuple[str, str | None]] = {
    "library": ("torch.library", None),
    "overrides": ("torch.overrides", None),
    "_C": ("torch._C", None),
    "amp": ("torch.amp", None),
    "Stream": ("torch._streams", "Stream"),
    "Event": ("torch._streams", "Event"),
    "autocast": ("torch.amp.autocast_mode", "autocast"),
    "is_autocast_enabled": ("torch.amp.autocast_mode", "is_autocast_enabled"),
    "set_autocast_enabled": ("torch.amp.autocast_mode", "set_autocast_enabled"),
    "get_autocast_dtype": ("torch.amp.autocast_mode", "get_autocast_dtype"),
    "set_autocast_dtype": ("torch.amp.autocast_mode", "set_autocast_dtype"),
    "clear_autocast_cache": ("torch.amp.autocast_mode", "clear_autocast_cache"),
    "is_autocast_cache_enabled": ("torch.amp.autocast_mode", "is_autocast_cache_enabled"),
    "set_autocast_cache_enabled": ("torch.amp.autocast_mode", "set_autocast_cache_enabled"),
    "ops": ("torch._ops", "ops"),
    "UntypedStorage": ("torch._core.storage", "UntypedStorage"),
    # PyTorch's native base of UntypedStorage (isinstance checks): the class itself here
    "StorageBase": ("torch._core.storage", "UntypedStorage"),
    "cpu": ("torch.cpu", None),
    "utils": ("torch.utils", None),
    "linalg": ("torch.linalg", None),
    "fft": ("torch.fft", None),
    "signal": ("torch.signal", None),
    "testing": ("torch.testing", None),
    "return_types": ("torch._aten.reductions", "return_types"),
    "autograd": ("torch.autograd", None),
    "is_anomaly_enabled": ("torch.autograd.anomaly_mode", "is_anomaly_enabled"),
    "is_anomaly_check_nan_enabled": ("torch.autograd.anomaly_mode",
                                     "is_anomaly_check_nan_enabled"),
    "set_anomaly_enabled": ("torch.autograd.anomaly_mode", "set_anomaly_enabled"),
    "no_grad": ("torch._core.grad_mode", "no_grad"),
    "enable_grad": ("torch._core.grad_mode", "enable_grad"),
    "set_grad_enabled": ("torch._core.grad_mode", "set_grad_enabled"),
    "inference_mode": ("torch._core.grad_mode", "inference_mode"),
    "serialization": ("torch.serialization", None),
    "save": ("torch.serialization", "save"),
    "load": ("torch.serialization", "load"),
    "finfo": ("torch._core.dtype_info", "finfo"),
    "iinfo": ("torch._core.dtype_info", "iinfo"),
    "get_rng_state": ("torch._core.generators", "get_rng_state"),
    "set_rng_state": ("torch._core.generators", "set_rng_state"),
    "_fused_adam_": ("torch._functions", "_fused_adam_"),
    "_fused_adamw_": ("torch._functions", "_fused_adamw_"),
    "_standard_gamma": ("torch._functions", "_standard_gamma"),
    "version": ("torch.version", None),
    "__config__": ("torch.__config__", None),
    "compiler": ("torch.compiler", None),
    "jit": ("torch.jit", None),
    "onnx": ("torch.onnx", None),
    "distributions": ("torch.distributions", None),
    "profiler": ("torch.profiler", None),
    "special": ("torch.special", None),
    "sparse": ("torch.sparse", None),
    "masked": ("torch.masked", None),
    "nested": ("torch.nested", None),
    "_sparse_coo_tensor_unsafe": ("torch._functions", "_sparse_coo_tensor_unsafe"),
    "OutOfMemoryError": ("torch._core.storage", "OutOfMemoryError"),
    "accelerator": ("torch.accelerator", None),
    "random": ("torch.random", None),
    "types": ("torch.types", None),
    "storage": ("torch.storage", None),
    "hub": ("torch.hub", None),
    "quasirandom": ("torch.quasirandom", None),
    "vmap": ("torch._functorch.vmap", "vmap"),
    "functional": ("torch.functional", None),
    "unravel_index": ("torch.functional", "unravel_index"),
    "einsum": ("torch.functional", "einsum"),
    "distributed": ("torch.distributed", None),
    "futures": ("torch.futures", None),
    "Future": ("torch.futures", "Future"),
    "multiprocessing": ("torch.multiprocessing", None),
    "PyTorchFileReader": ("torch._file_records", "PyTorchFileReader"),
    "PyTorchFileWriter": ("torch._file_records", "PyTorchFileWriter"),
    "ScriptModule": ("torch.jit", "ScriptModule"),
    "ScriptFunction": ("torch.jit", "ScriptFunction"),
    "cond": ("torch._higher_order_ops.cond", "cond"),  # from plait-compile
    "while_loop": ("torch._higher_order_ops.loops", "while_loop"),  # from plait-compile
    "AcceleratorError": ("torch._core.storage", "AcceleratorError"),
    "set_flush_denormal": ("torch._core.config", "set_flush_denormal"),
    "init_num_threads": ("torch._core.config", "init_num_threads"),
    "is_vulkan_available": ("torch._C", "_is_vulkan_available"),
    "DisableTorchFunction": ("torch._C", "DisableTorchFunction"),
    "DisableTorchFunctionSubclass": ("torch._C", "DisableTorchFunctionSubclass"),
    "to_dlpack": ("torch.utils.dlpack", "to_dlpack"),
}
for _name in ("has_lapack", "has_spectral", "has_mkl", "has_openmp"):
    _LAZY[_name] = ("torch._C", _name)
# PyTorch's older per-device autocast spellings (deprecated there too)
for _name in ("is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "get_autocast_cpu_dtype",
              "set_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_gpu_dtype",
              "autocast_increment_nesting", "autocast_decrement_nesting"):
    _LAZY[_name] = ("torch.amp._legacy", _name)
# The legacy typed storage names checkpoints use (torch.FloatStorage...), from torch._utils.
for _name in ("TypedStorage", "BoolStorage", "ByteStorage", "CharStorage", "ShortStorage",
              "IntStorage", "LongStorage", "HalfStorage", "BFloat16Storage", "FloatStorage",
              "DoubleStorage", "ComplexFloatStorage", "ComplexDoubleStorage", "QInt8Storage",
              "QUInt8Storage", "QInt32Storage"):
    _LAZY[_name] = ("torch._utils", _name)
_LAZY["Tag"] = ("torch._core.tags", "Tag")  # operator tags: torch.Tag.pointwise in func.tags
_LAZY["_ops"] = ("torch._ops", None)  # torch._ops.OpOverload, as libraries name it
# The legacy tensor types (torch.FloatTensor...), from torch._legacy_tensor_types.
for _name in ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
              "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"):
    _LAZY[_name] = ("torch._legacy_tensor_types", _name)
# Quantized tensors and their schemes (torch.quantize_per_tensor, torch.per_tensor_affine...)
for _name in ("quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic",
              "dequantize", "qscheme", "per_tensor_affine", "per_channel_affine",
              "per_tensor_symmetric", "per_channel_symmetric",
              "per_channel_affine_float_qparams"):
    _LAZY[_name] = ("torch._quantized", _name)
del _name
_lazy_lock = _threading.RLock()


def __getattr__(name: str) -> _Any:
    spec = _LAZY.get(name)
    if spec is not None:
        with _lazy_lock:
            mod = _importlib.import_module(spec[0])
            value = mod if spec[1] is None else getattr(mod, spec[1])
            globals()[name] = value
            return value
    if name in _subpackages.SUBPACKAGES:
        return _subpackages.import_subpackage(name)
    if name in _backend_registry._plugins:  # torch.<device type> of a plugin's device
        return _dm.plugin_module(name)
    if name.startswith("_foreach_"):
        foreach = _importlib.import_module("torch._foreach")
        if name in foreach.__all__:
            with _lazy_lock:
                value = globals()[name] = getattr(foreach, name)
                return value
    if not name.startswith("_"):
        _functions = _importlib.import_module("torch._functions")
        if name in _functions.__all__:
            with _lazy_lock:
                value = globals()[name] = getattr(_functions, name)
                return value
    # torch.dropout...: defined by plait-nn (the table loads on the first name not found above)
    provided = _importlib.import_module("torch._provided_names")
    if name in provided.PROVIDED:
        with _lazy_lock:
            value = globals()[name] = provided.load(name)
            return value
    raise AttributeError(f"module 'torch' has no attribute '{name}'")


def __dir__() -> list[str]:
    # what __getattr__ would find too, as dir(torch) lists it in PyTorch (this loads the op
    # surface, as the first torch.<op> would)
    _functions = _importlib.import_module("torch._functions")
    provided = _importlib.import_module("torch._provided_names")
    foreach = _importlib.import_module("torch._foreach")
    return sorted({*globals(), *_LAZY, *_functions.__all__, *provided.PROVIDED, *foreach.__all__,
                   *(s for s in _subpackages.SUBPACKAGES if "." not in s)})


def typename(obj: _Any) -> str:
    """The PyTorch type name of ``obj`` (``'torch.FloatTensor'`` for a float32 tensor)."""
    if isinstance(obj, Tensor):
        return obj.type()
    # A class or function names itself (torch.FloatTensor, nn.Linear); anything else its type.
    owner = obj if hasattr(obj, "__qualname__") else type(obj)
    module = getattr(owner, "__module__", "")
    qualname = owner.__qualname__
    return qualname if module in ("builtins", "", None) else f"{module}.{qualname}"


def is_tensor(obj: _Any) -> bool:
    """Whether ``obj`` is a ``torch.Tensor`` (or a subclass)."""
    return isinstance(obj, Tensor)


def is_storage(obj: _Any) -> bool:
    """Whether ``obj`` is a storage. Without numpy loaded no storage can exist yet."""
    storage = _sys.modules.get("torch._core.storage")
    return storage is not None and isinstance(obj, storage.UntypedStorage)


def _assert(condition: _Any, message: str) -> None:
    """An ``assert`` that symbolic tracing records (a traced condition is handed to its
    ``__torch_function__``) and that ``python -O`` keeps."""
    override = getattr(type(condition), "__torch_function__", None)
    if override is not None and not isinstance(condition, Tensor):
        return override(_assert, (type(condition),), (condition, message), {})
    if not condition:
        raise AssertionError(message)
    return None




_subpackages.install_missing_distribution_finder()
_dm.mount(_sys.modules[__name__])
# What core calls up into is installed by the modules that own it (torch._core.upcalls); the
# facade gives it the means to import them on first use, and the op surface's loader.
_upcalls.importer = _importlib.import_module
_upcalls.install(load_op_surface=lambda: _importlib.import_module("torch._functions"))
for _device_type, _plugin in _builtin_backends.BUILTIN_BACKENDS.items():
    _backend_registry.add_builtin(_device_type, _plugin)
_backend_registry.autoload()

# PyTorch's dtype aliases shadow builtins inside this module, so they are bound last.
globals().update(_dtype.ALIASES)
globals().update(_dtype.NAMED_ONLY)  # torch.float8_e4m3fn, torch.uint4...: names, no tensors yet
bool = _dtype.bool_
_import_seconds = _time.perf_counter() - _t0
