"""The module classes of ``torch.jit``: ``ScriptModule``, ``RecursiveScriptModule`` (what
``script(module)`` returns) and ``TracedModule``/``TopLevelTracedModule`` (what ``trace``
returns). Each is an ``nn.Module`` sharing the original's parameters, buffers and submodules,
so its ``state_dict`` has the original's keys and training one trains the other.

Loaded on first use (it imports ``torch.nn``).
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from torch import nn
from torch.jit._function import no_graph_error, source_of
from torch.jit._graph import Graph
from torch.jit._serialization import refuse_save

__all__ = ["Attribute", "RecursiveScriptModule", "ScriptModule", "TopLevelTracedModule",
           "TracedModule", "is_module", "script_module"]


class Attribute(NamedTuple):
    """``torch.jit.Attribute(value, type)``: an attribute's value with its TorchScript type;
    a ScriptModule stores the value itself."""

    value: Any
    type: Any


def is_module(obj: Any) -> bool:
    """Whether ``obj`` is an ``nn.Module``."""
    return isinstance(obj, nn.Module)


class _Computed:
    """A read-only computed attribute that an instance attribute of the same name (a module
    with its own ``self.graph``) takes precedence over, unlike a property."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self if obj is None else self.fn(obj)


class ScriptModule(nn.Module):
    """Base class of scripted and traced modules, and of modules written for TorchScript
    (``class M(torch.jit.ScriptModule)`` with ``@torch.jit.script_method``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, Attribute):
            value = value.value
        super().__setattr__(name, value)

    @_Computed
    def code(self) -> str:
        """The source of ``forward`` (scripted modules run it as Python)."""
        return source_of(type(self).forward)

    @_Computed
    def graph(self) -> Graph:
        """Scripted modules have no graph (see ``torch.jit.trace``)."""
        raise no_graph_error(f"module '{self.original_name}'")

    @_Computed
    def inlined_graph(self) -> Graph:
        return self.graph

    @_Computed
    def original_name(self) -> str:
        """The name of the class the module was made from."""
        return self.__dict__.get("_original_name", type(self).__name__)

    def save(self, f: Any, _extra_files: Any = None) -> None:
        """Refused until scripted and traced modules have a file format (``torch.jit.save``)."""
        refuse_save()

    def __deepcopy__(self, memo: dict[int, Any]) -> ScriptModule:
        new = object.__new__(type(self))
        memo[id(self)] = new
        for name, value in self.__dict__.items():
            # recorded graphs never change once traced: the copy runs the same ones on its
            # own tensors (they are read by name when a graph runs)
            new.__dict__[name] = dict(value) if name == "_traced_calls" else \
                copy.deepcopy(value, memo)
        return new

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise pickle.PicklingError(
            "ScriptModules cannot be saved with torch.save or pickled (as in PyTorch); save "
            "the weights with torch.save(module.state_dict(), f) instead (torch.jit.save "
            "comes with the compile issue)")

    def define(self, src: str) -> None:
        """Refused: it compiles TorchScript source, which Plait does not."""
        raise RuntimeError("ScriptModule.define compiles TorchScript source, which Plait does "
                           "not do: define the method in Python on the module's class")


class RecursiveScriptModule(ScriptModule):
    """What ``torch.jit.script(module)`` returns: the module (its class, methods, attributes,
    and its parameters and buffers shared), run as Python."""


_scripted_classes: dict[type, type] = {}


def _scripted_class(cls: type) -> type:
    scripted = _scripted_classes.get(cls)
    if scripted is None:
        scripted = type(cls.__name__, (RecursiveScriptModule, cls),
                        {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                         "__doc__": cls.__doc__})
        _scripted_classes[cls] = scripted
    return scripted


def script_module(mod: nn.Module, memo: dict[int, nn.Module] | None = None) -> nn.Module:
    """``mod`` as a :class:`RecursiveScriptModule`, its submodules too (a module reachable
    twice is scripted once). The original stays as it was."""
    if isinstance(mod, ScriptModule):
        return mod
    memo = {} if memo is None else memo
    if id(mod) in memo:
        return memo[id(mod)]
    new = object.__new__(_scripted_class(type(mod)))
    memo[id(mod)] = new
    state = {}
    for name, value in mod.__dict__.items():
        if isinstance(value, Attribute):
            value = value.value
        elif name.startswith("_") and isinstance(value, (dict, set)):
            value = copy.copy(value)  # its own registries and hooks; the tensors are shared
        state[name] = value
    state["_modules"] = {name: None if sub is None else script_module(sub, memo)
                         for name, sub in mod._modules.items()}
    state["_original_name"] = type(mod).__name__
    new.__dict__.update(state)
    return new


class _LiveTensors(Mapping[str, Any]):
    """A module's parameters and buffers by qualified name, read when a graph runs (so that
    ``load_state_dict`` or an assignment is seen)."""

    def __init__(self, module: nn.Module) -> None:
        self.module = module

    def __getitem__(self, name: str) -> Any:
        owner = self.module
        *path, leaf = name.split(".")
        for part in path:
            owner = owner._modules[part]
        if leaf in owner._parameters:
            return owner._parameters[leaf]
        if leaf in owner._buffers:
            return owner._buffers[leaf]
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        for name, _ in self.module.named_parameters():
            yield name
        for name, _ in self.module.named_buffers():
            yield name

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _TracedMethod:
    """A traced method other than ``forward`` (``trace_module``): runs its graph."""

    def __init__(self, module: TracedModule, name: str) -> None:
        self.module = module
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        traced = self.module._traced_calls[self.name]
        return traced(args, kwargs, _LiveTensors(self.module))

    @property
    def graph(self) -> Graph:
        return self.module._traced_calls[self.name].graph

    @property
    def code(self) -> str:
        traced = self.module._traced_calls[self.name]
        return traced.graph.code(traced.arg_names, self.name)


class TracedModule(ScriptModule):
    """What ``torch.jit.trace(module, ...)`` returns: an ``nn.Module`` with the original's
    parameters, buffers and submodules whose traced methods run their recorded graphs."""

    def __init__(self, orig: nn.Module, calls: dict[str, Any]) -> None:
        super().__init__()
        self.training = orig.training
        self._parameters.update(orig._parameters)
        self._buffers.update(orig._buffers)
        self._non_persistent_buffers_set.update(orig._non_persistent_buffers_set)
        self._modules.update(orig._modules)
        setattr_ = object.__setattr__
        setattr_(self, "_traced_calls", calls)
        setattr_(self, "_original_name", type(orig).__name__)
        for name in calls:
            if name != "forward":
                setattr_(self, name, _TracedMethod(self, name))

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        traced = self._traced_calls.get("forward")
        if traced is None:
            raise RuntimeError(f"forward of '{self._original_name}' was not traced "
                               "(trace_module traced " + ", ".join(self._traced_calls) + ")")
        return traced(args, kwargs, _LiveTensors(self))

    @_Computed
    def graph(self) -> Graph:
        """The aten graph ``forward`` runs."""
        return self._traced_calls["forward"].graph

    @_Computed
    def code(self) -> str:
        """``forward``'s graph as Python."""
        traced = self._traced_calls["forward"]
        return traced.graph.code(traced.arg_names)

    def extra_repr(self) -> str:
        return f"original_name={self._original_name}"


class TopLevelTracedModule(TracedModule):
    """The traced module ``trace`` returns (its submodules are the original's)."""
