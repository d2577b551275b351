"""``torch.jit``: the questions and decorators libraries use around TorchScript.

Code written to also run under TorchScript asks ``torch.jit.is_scripting()`` and
``is_tracing()`` and marks functions with ``@torch.jit.ignore``, ``unused`` or ``export``.
Plait runs Python code as it is: ``is_scripting()`` answers False and the decorators return
what they decorate.

``trace`` runs a function or module once and records the aten operators it reaches into a
graph (``_recording``, ``_graph``); the traced callable runs that graph (``_tracing``).
``script`` returns scripted-looking objects that run the Python code (``_scripting``).
``save``/``load`` refuse with an error until the compile issue gives traced graphs a file
format (``_serialization``). Everything but the questions and decorators loads on first use.
"""

from __future__ import annotations

from collections.abc import Callable

# Final: TorchScript's name for a constant attribute annotation, typing's own (as in PyTorch).
from typing import Any, Final, TypeVar

from torch.jit._recording import TracerWarning, current_recorder

# The future import binds `annotations` here; torch.jit.annotations is the submodule.
del annotations

__all__ = [
    "Attribute", "CompilationUnit", "Error", "Final", "Future", "RecursiveScriptModule",
    "ScriptFunction", "ScriptModule", "ScriptWarning", "TopLevelTracedModule",
    "TracedModule", "TracerWarning", "TracingCheckError", "annotate", "annotations",
    "enable_onednn_fusion", "export", "export_opnames", "fork", "freeze", "fuser", "ignore",
    "interface", "is_scripting", "is_tracing", "isinstance", "last_executed_optimized_graph",
    "load", "onednn_fusion_enabled", "optimize_for_inference", "optimized_execution",
    "run_frozen_optimizations", "save", "script", "script_if_tracing", "script_method",
    "set_fusion_strategy", "strict_fusion", "trace", "trace_module", "unused", "wait",
]

# name -> (module, attribute): loaded on first access (they import torch.nn, or are rarely
# used), so that `import torch` stays fast.
_LAZY = {
    "trace": ("torch.jit._tracing", "trace"),
    "trace_module": ("torch.jit._tracing", "trace_module"),
    "script": ("torch.jit._scripting", "script"),
    "script_method": ("torch.jit._scripting", "script_method"),
    "script_if_tracing": ("torch.jit._scripting", "script_if_tracing"),
    "_script_if_tracing": ("torch.jit._scripting", "script_if_tracing"),  # the older name
    "interface": ("torch.jit._scripting", "interface"),
    "freeze": ("torch.jit._scripting", "freeze"),
    "optimize_for_inference": ("torch.jit._scripting", "optimize_for_inference"),
    "fork": ("torch.jit._async", "fork"),
    "wait": ("torch.jit._async", "wait"),
    "Future": ("torch.futures", "Future"),
    "save": ("torch.jit._serialization", "save"),
    "load": ("torch.jit._serialization", "load"),
    "ScriptFunction": ("torch.jit._function", "ScriptFunction"),
    "ScriptModule": ("torch.jit._modules", "ScriptModule"),
    "RecursiveScriptModule": ("torch.jit._modules", "RecursiveScriptModule"),
    "TracedModule": ("torch.jit._modules", "TracedModule"),
    "TopLevelTracedModule": ("torch.jit._modules", "TopLevelTracedModule"),
    "Attribute": ("torch.jit._modules", "Attribute"),
    "annotations": ("torch.jit.annotations", None),
    "TracingCheckError": ("torch.jit._tracing", "TracingCheckError"),
    "annotate": ("torch.jit._language", "annotate"),
    "isinstance": ("torch.jit._language", "isinstance"),
    "_unwrap_optional": ("torch.jit._language", "_unwrap_optional"),
    "_get_trace_graph": ("torch.jit._ir", "get_trace_graph"),
    **{name: ("torch.jit._settings", name) for name in (
        "enable_onednn_fusion", "onednn_fusion_enabled", "set_fusion_strategy", "fuser",
        "optimized_execution", "strict_fusion", "last_executed_optimized_graph",
        "run_frozen_optimizations", "export_opnames")},
}


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'torch.jit' has no attribute '{name}'")
    import importlib

    module = importlib.import_module(target[0])
    value = module if target[1] is None else getattr(module, target[1])
    globals()[name] = value
    return value


class ScriptWarning(Warning):
    """``torch.jit.ScriptWarning``: a warning about scripted code."""


class Error(RuntimeError):
    """``torch.jit.Error``: the error TorchScript code raises (PyTorch's ``JITException``)."""


class CompilationUnit:
    """``torch.jit.CompilationUnit``: compiles TorchScript source, which Plait does not do."""

    def __init__(self, lang: str | None = None, _frames_up: int = 0) -> None:
        if lang is not None:
            raise RuntimeError("torch.jit.CompilationUnit compiles TorchScript source, which "
                               "Plait does not do: write the functions in Python")

_F = TypeVar("_F", bound=Callable[..., Any])


def is_scripting() -> bool:
    """Whether the caller is being compiled by TorchScript (never here)."""
    return False


def is_tracing() -> bool:
    """Whether the caller is running inside ``torch.jit.trace`` (or ``torch.onnx.export``)."""
    return current_recorder() is not None


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """Leave a function to Python when scripting: ``@ignore`` or ``@ignore(drop=True)``.

    :returns: the function unchanged, or a decorator that returns it unchanged.
    """
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: _F) -> _F:
    """Mark a method that scripting should replace by an exception; returned unchanged."""
    return fn


def export(fn: _F) -> _F:
    """Mark a method that scripting should compile as an entry point; returned unchanged."""
    return fn


def _overload(fn: _F) -> _F:
    """Declare one typed signature of an overloaded function for TorchScript (the last,
    undecorated definition is the one that runs); returned unchanged."""
    return fn


def _overload_method(fn: _F) -> _F:
    """:func:`_overload` for methods; returned unchanged."""
    return fn
