"""``torch._C``: the few names of PyTorch's native module that subclass code spells through it.

Code written against PyTorch opts a Tensor subclass out of ``__torch_function__`` with
``__torch_function__ = torch._C._disabled_torch_function_impl`` and turns subclass dispatch off
with ``torch._C.DisableTorchFunctionSubclass()``; libraries annotate with ``_TensorMeta`` and
``TensorBase`` and call ``_log_api_usage_once``; registration code names dispatch keys
(``DispatchKey``, ``DispatchKeySet``, ``_ExcludeDispatchKeyGuard``: see torch._dispatch_keys).
These are those names, nothing more. Plait has no native core module.
"""

from typing import Any

from ._core.tensor import Tensor, _disabled_torch_function_impl

# PyTorch's Tensor has a native base class and metaclass; Plait's Tensor is its own base.
_TensorMeta = type(Tensor)
TensorBase = Tensor
_TensorBase = Tensor


def _log_api_usage_once(event: str) -> None:
    """PyTorch's usage logging hook: Plait logs nothing."""


def _get_tracing_state() -> None:
    """The TorchScript tracer's state: ``None`` (not tracing)."""
    return None


def __getattr__(name: str) -> Any:
    # torch._C._functorch: the batched-tensor queries, loaded on first use
    if name == "_functorch":
        from ._functorch import c_api

        globals()["_functorch"] = c_api
        return c_api
    if name in ("DispatchKey", "DispatchKeySet", "_ExcludeDispatchKeyGuard"):
        from . import _dispatch_keys

        value = globals()[name] = getattr(_dispatch_keys, name)
        return value
    if name == "_nn":  # torch._C._nn._parse_to
        from . import _native_nn

        globals()["_nn"] = _native_nn
        return _native_nn
    raise AttributeError(f"module 'torch._C' has no attribute '{name}'")


def DisableTorchFunctionSubclass() -> Any:  # PyTorch's name
    """A context manager: subclass ``__torch_function__`` overrides off on this thread."""
    from . import _torch_function

    return _torch_function.disable_subclass()


def DisableTorchFunction() -> Any:  # PyTorch's name
    """A context manager: every ``__torch_function__`` override off on this thread, modes
    included."""
    from . import _torch_function

    return _torch_function.disable_all()


__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass", "TensorBase", "_TensorBase",
           "_TensorMeta", "_disabled_torch_function_impl", "_get_tracing_state",
           "_log_api_usage_once"]
