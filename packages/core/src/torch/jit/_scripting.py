"""``torch.jit.script`` and the decorators around it.

Plait does not compile TorchScript: ``script`` returns objects that behave as PyTorch's scripted
ones do from Python (a :class:`~torch.jit.ScriptFunction`, a
:class:`~torch.jit.RecursiveScriptModule` sharing the module's parameters) and run the Python
code itself, which computes what the scripted code would. ``freeze`` and
``optimize_for_inference`` check what PyTorch checks and return the module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["freeze", "interface", "optimize_for_inference", "script", "script_if_tracing",
           "script_method"]

_F = TypeVar("_F", bound=Callable[..., Any])


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """Script a function, module or class.

    :param obj: an ``nn.Module`` (returned as a :class:`~torch.jit.RecursiveScriptModule`
        sharing its parameters and buffers, submodules scripted too), a function (returned as
        a :class:`~torch.jit.ScriptFunction`), or a class, dict or list (returned as it is).
    :returns: the scripted object; calling it runs the Python code.
    """
    from torch.jit._function import ScriptFunction
    from torch.jit._modules import ScriptModule, is_module, script_module

    if isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if is_module(obj):
        return script_module(obj)
    if isinstance(obj, type) or not callable(obj):
        return obj
    return ScriptFunction(obj)


def script_method(fn: _F) -> _F:
    """Mark a method of a ``ScriptModule`` subclass for compilation; returned unchanged."""
    return fn


def script_if_tracing(fn: _F) -> _F:
    """Script ``fn`` only when it is called during a trace; here it runs as Python either
    way, which a trace records operator by operator."""
    return fn


def interface(obj: _F) -> _F:
    """Declare a TorchScript interface type; the class is returned unchanged."""
    return obj


def freeze(mod: Any, preserved_attrs: list[str] | None = None,
           optimize_numerics: bool = True) -> Any:
    """Freeze a scripted or traced module for inference (PyTorch inlines its parameters as
    constants); here the checks PyTorch makes, then the module itself.

    :raises RuntimeError: ``mod`` is not a ScriptModule, or is in training mode.
    """
    from torch.jit._modules import ScriptModule

    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def optimize_for_inference(mod: Any, other_methods: list[str] | None = None) -> Any:
    """Freeze (if in eval mode and not yet frozen) and return the module.

    :raises RuntimeError: ``mod`` is not a ScriptModule.
    """
    from torch.jit._modules import ScriptModule

    if not isinstance(mod, ScriptModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please "
                           "use torch.jit.script or torch.jit.trace to script your "
                           "'nn.Module'.")
    return freeze(mod.eval()) if mod.training else mod
