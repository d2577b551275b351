"""``torch._C``: the few names of PyTorch's native module that subclass code spells through it.

Code written against PyTorch opts a Tensor subclass out of ``__torch_function__`` with
``__torch_function__ = torch._C._disabled_torch_function_impl`` and turns subclass dispatch off
with ``torch._C.DisableTorchFunctionSubclass()``; these are those names, nothing more. Plait has
no native core module.
"""

from typing import Any

from ._core.tensor import _disabled_torch_function_impl


def __getattr__(name: str) -> Any:
    # torch._C._functorch: the batched-tensor queries, loaded on first use
    if name == "_functorch":
        from ._functorch import c_api

        globals()["_functorch"] = c_api
        return c_api
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


__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass",
           "_disabled_torch_function_impl"]
