"""``torch._C``: the few names of PyTorch's native module that subclass code spells through it.

Code written against PyTorch opts a Tensor subclass out of ``__torch_function__`` with
``__torch_function__ = torch._C._disabled_torch_function_impl`` and turns subclass dispatch off
with ``torch._C.DisableTorchFunctionSubclass()``; libraries annotate with ``_TensorMeta`` and
``TensorBase`` and call ``_log_api_usage_once``; registration code names dispatch keys
(``DispatchKey``, ``DispatchKeySet``, ``_ExcludeDispatchKeyGuard``: see torch._dispatch_keys).
These are those names, nothing more. Plait has no native core module.
"""

import enum
import importlib
from typing import Any

from .._core.tensor import Tensor, _disabled_torch_function_impl

# PyTorch's Tensor has a native base class and metaclass; Plait's Tensor is its own base.
_TensorMeta = type(Tensor)
TensorBase = Tensor
_TensorBase = Tensor


# What this build has, as PyTorch's flags say it (torch.has_lapack...): linear algebra and
# FFTs run everywhere; MKL and OpenMP are PyTorch's CPU libraries, which Plait does not use.
has_lapack = True
has_spectral = True
has_mkl = False
has_openmp = False


def _is_vulkan_available() -> bool:
    """Whether the Vulkan backend is built in: never in Plait."""
    return False


def _log_api_usage_once(event: str) -> None:
    """PyTorch's usage logging hook: Plait logs nothing."""


def _get_tracing_state() -> Any:
    """The tracer's state while ``torch.jit.trace`` (or ``_get_trace_graph``) records on this
    thread (it has ``push_scope``/``pop_scope``), else ``None``."""
    from ..jit._recording import current_recorder

    return current_recorder()


# The native module's submodules that libraries import by name (``from torch._C._functorch
# import is_batchedtensor``), loaded on first use: torch._C is a package so that such imports
# resolve.
_SUBMODULES = ("_functorch", "_nn")


# PyTorch's IR classes -> what torch.jit._get_trace_graph's graphs are made of
_IR_CLASSES = {"Graph": "IRGraph", "Node": "IRNode", "Value": "IRValue",
               "TensorType": "TensorType"}


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in ("DispatchKey", "DispatchKeySet", "_ExcludeDispatchKeyGuard"):
        from .. import _dispatch_keys

        value = globals()[name] = getattr(_dispatch_keys, name)
        return value
    if name in _IR_CLASSES:  # the IR of traced graphs (annotations, isinstance checks)
        from ..jit import _ir

        value = globals()[name] = getattr(_ir, _IR_CLASSES[name])
        return value
    raise AttributeError(f"module 'torch._C' has no attribute '{name}'")


def _is_alias_of(tensor: Tensor, other: Tensor) -> bool:
    """Whether ``tensor`` and ``other`` share their memory (views of one storage)."""
    if not (isinstance(tensor, Tensor) and isinstance(other, Tensor)):
        raise TypeError("_is_alias_of(): arguments must be Tensors")
    a, b = getattr(tensor, "_storage", None), getattr(other, "_storage", None)
    if a is None or b is None:  # (wrapper subclasses hold no storage of their own)
        return False
    return a is b or (a.nbytes() > 0 and a.data_ptr() == b.data_ptr()
                      and tensor.device == other.device)


def _are_functorch_transforms_active() -> bool:
    """Whether a ``torch.func.vmap`` is running on this thread."""
    from .._functorch import vmap

    return vmap._levels.depth > 0


def _is_torch_function_mode_enabled() -> bool:
    """Whether a ``TorchFunctionMode`` is active (and not disabled) on this thread."""
    from .. import overrides

    return overrides._is_torch_function_mode_enabled()


def DisableTorchFunctionSubclass() -> Any:  # PyTorch's name
    """A context manager: subclass ``__torch_function__`` overrides off on this thread."""
    from .. import _torch_function

    return _torch_function.disable_subclass()


def DisableTorchFunction() -> Any:  # PyTorch's name
    """A context manager: every ``__torch_function__`` override off on this thread, modes
    included."""
    from .. import _torch_function

    return _torch_function.disable_all()


# -- the mode stacks, as PyTorch's C++ exposes them (introspection by libraries) ------------


class _TorchDispatchModeKey(enum.Enum):
    """The kinds of infrastructure dispatch modes ``_get_dispatch_mode`` looks up."""

    FAKE = 0
    PROXY = 1
    FUNCTIONAL = 2


# the class names of the infrastructure modes (looked up by name: they live in upper layers)
_INFRA_MODE_CLASSES = {_TorchDispatchModeKey.FAKE: ("FakeTensorMode",),
                       _TorchDispatchModeKey.PROXY: ("ProxyTorchDispatchMode",),
                       _TorchDispatchModeKey.FUNCTIONAL: ("FunctionalTensorMode",)}


def _get_dispatch_mode(key: _TorchDispatchModeKey) -> Any:
    """The active dispatch mode of kind ``key`` (the innermost), or None."""
    from .._core import dispatch

    names = _INFRA_MODE_CLASSES[key]
    for mode in reversed(dispatch.mode_stack()):
        if any(k.__name__ in names for k in type(mode).__mro__):
            return mode
    return None


def _len_torch_dispatch_stack() -> int:
    """How many dispatch modes are active on this thread."""
    from .._core import dispatch

    return len(dispatch.mode_stack())


def _get_dispatch_stack_at(index: int) -> Any:
    """The dispatch mode at ``index`` of this thread's stack (0: the outermost)."""
    from .._core import dispatch

    return dispatch.mode_stack()[index]


def _push_on_torch_dispatch_stack(mode: Any) -> None:
    """Make ``mode`` the innermost dispatch mode (what ``with mode:`` does)."""
    from .._core import dispatch

    dispatch.push_mode(mode)


def _pop_torch_dispatch_stack(key: Any = None) -> Any:
    """Remove and return the innermost dispatch mode."""
    from .._core import dispatch

    return dispatch.pop_mode()


def _len_torch_function_stack() -> int:
    """How many TorchFunctionModes are active on this thread."""
    from .. import _torch_function

    return len(_torch_function.mode_stack())


def _get_function_stack_at(index: int) -> Any:
    """The TorchFunctionMode at ``index`` of this thread's stack (0: the outermost)."""
    from .. import _torch_function

    return _torch_function.mode_stack()[index]


def _push_on_torch_function_stack(mode: Any) -> None:
    """Make ``mode`` the innermost TorchFunctionMode."""
    from .. import _torch_function

    _torch_function.push_mode(mode)


def _pop_torch_function_stack() -> Any:
    """Remove and return the innermost TorchFunctionMode."""
    from .. import _torch_function

    return _torch_function.pop_mode()


def _is_torch_function_enabled() -> bool:
    """Whether subclass ``__torch_function__`` overrides are on (not inside
    ``DisableTorchFunctionSubclass`` or ``DisableTorchFunction``)."""
    from .. import _torch_function

    local = _torch_function._local
    return not (local.subclass_disabled or local.all_disabled)


def _is_torch_function_all_disabled() -> bool:
    """Whether this thread is inside ``DisableTorchFunction``."""
    from .. import _torch_function

    return bool(_torch_function._local.all_disabled)


def _has_torch_function(args: Any) -> bool:
    """``torch.overrides.has_torch_function``."""
    from .. import overrides

    return overrides.has_torch_function(args)


def _has_torch_function_unary(arg: Any) -> bool:
    """``torch.overrides.has_torch_function_unary``."""
    from .. import overrides

    return overrides.has_torch_function((arg,))


def _has_torch_function_variadic(*args: Any) -> bool:
    """``torch.overrides.has_torch_function_variadic``."""
    from .. import overrides

    return overrides.has_torch_function(args)


def _DisableTorchDispatch() -> Any:
    """A context manager: this thread's dispatch modes off for the block
    (``torch.utils._mode_utils.no_dispatch``)."""
    from ..utils import _python_dispatch

    return _python_dispatch._disable_current_modes()


__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass", "TensorBase", "_TensorBase",
           "_TensorMeta", "_are_functorch_transforms_active", "_disabled_torch_function_impl",
           "_get_tracing_state", "_is_alias_of", "_is_torch_function_mode_enabled",
           "_DisableTorchDispatch", "_TorchDispatchModeKey", "_get_dispatch_mode",
           "_get_dispatch_stack_at", "_get_function_stack_at", "_has_torch_function",
           "_has_torch_function_unary", "_has_torch_function_variadic",
           "_is_torch_function_all_disabled", "_is_torch_function_enabled",
           "_len_torch_dispatch_stack", "_len_torch_function_stack",
           "_pop_torch_dispatch_stack", "_pop_torch_function_stack",
           "_push_on_torch_dispatch_stack", "_push_on_torch_function_stack",
           "_log_api_usage_once"]
