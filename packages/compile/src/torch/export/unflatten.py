"""``torch.export.unflatten``: an exported program as a module tree like the original one.

The root runs the whole program (as ``ExportedProgram.module()`` does); each submodule holds
its own parameters and buffers and, when export saw it called once with tensors in and out,
a graph of its own cut from the program's: the nodes made during that call, taking the
call's inputs and the state it read, returning its outputs.
"""

from __future__ import annotations

from typing import Any

import torch.nn as nn
import torch.utils._pytree as pytree
from torch.fx import Graph, GraphModule

from .exported_program import ExportedProgram, _ExportedModule
from .graph_signature import InputKind

__all__ = ["FlatArgsAdapter", "InterpreterModule", "UnflattenedModule", "unflatten"]


class FlatArgsAdapter:
    """PyTorch's hook for adapting flat inputs to a changed signature; accepted and unused
    (the unflattened module takes the inputs export took)."""


def _hide(module: nn.Module, name: str, value: Any) -> None:
    """Set an attribute that is not a child (named_children lists the original tree only)."""
    module._modules.pop(name, None)
    object.__setattr__(module, name, value)


class InterpreterModule(nn.Module):
    """A submodule of an unflattened program: its state, and the graph export recorded for
    its call (``graph_module``; None when the call could not be cut out on its own)."""

    def __init__(self, graph_module: GraphModule | None = None, why: str = "") -> None:
        super().__init__()
        self.graph_module = graph_module
        self._why = why
        self._state_names: list[str] = []
        self._in_spec: Any = None
        self._out_spec: Any = None
        self._state: Any = None

    @property
    def graph(self) -> Graph | None:
        """The submodule's ``torch.fx.Graph`` (None when it has none)."""
        return None if self.graph_module is None else self.graph_module.graph

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if self.graph_module is None:
            raise NotImplementedError(f"torch.export.unflatten: this submodule cannot be called "
                                      f"on its own ({self._why}); call the root module")
        flat, spec = pytree.tree_flatten((args, kwargs))
        if spec != self._in_spec:
            raise TypeError(f"Trying to flatten user inputs with exported input tree spec:\n"
                            f"{self._in_spec}\nbut actually got inputs with tree spec of:\n"
                            f"{spec}")
        state = self._state()
        outputs = self.graph_module(*[state[n] for n in self._state_names], *flat)
        return pytree.tree_unflatten(list(outputs), self._out_spec)


class UnflattenedModule(_ExportedModule):
    """The root of an unflattened program: runs the whole graph, buffer updates included."""

    _child_class = InterpreterModule

    def __init__(self, program: ExportedProgram) -> None:
        super().__init__(program)
        _hide(self, "graph_module", program.graph_module)


def _state_of(root: UnflattenedModule) -> Any:
    """A function giving the root's current state by fully qualified name."""
    def state() -> dict[str, Any]:
        values: dict[str, Any] = dict(root.named_parameters(remove_duplicate=False))
        values.update(root.named_buffers(remove_duplicate=False))
        values.update(root._program.constants)
        return values
    return state


def _cut(program: ExportedProgram, made: set[Any], inputs: Any, outputs: Any
         ) -> tuple[GraphModule | None, list[str], str]:
    """A graph of one call's nodes: placeholders for the state it reads, then its inputs.

    Returns the graph module (None and the reason when the call reads a value that is
    neither its input nor state, or its inputs or outputs were not all tensors)."""
    if inputs[0] is None or outputs[0] is None:
        return None, [], "its inputs or outputs are not all traced tensors"
    state_nodes = {}
    placeholders = [n for n in program.graph.nodes if n.op == "placeholder"]
    for spec, node in zip(program.graph_signature.input_specs, placeholders):
        if spec.kind is not InputKind.USER_INPUT:
            state_nodes[node] = spec.target
    graph = Graph()
    env: dict[Any, Any] = {}
    read_state: list[str] = []
    body = [n for n in program.graph.nodes if n in made and n.op == "call_function"]
    for node in body:
        for used in node.all_input_nodes:
            if used in made or used in env or used in inputs[0]:
                continue
            if used not in state_nodes:
                return None, [], f"it reads {used.name}, computed outside it"
            env[used] = graph.placeholder(used.name)
            env[used].meta.update(used.meta)
            read_state.append(state_nodes[used])
    for index, node in enumerate(inputs[0]):
        if node not in env:
            env[node] = graph.placeholder(f"input_{index}")
            env[node].meta.update(node.meta)
    for node in body:
        env[node] = graph.node_copy(node, lambda n: env[n])
    if any(n not in env for n in outputs[0]):
        return None, [], "an output of it is computed outside it"
    graph.output(tuple(env[n] for n in outputs[0]))
    # placeholders first: the state's, then the inputs (in that order, as forward passes them)
    return GraphModule(nn.Module(), graph), read_state, ""


def unflatten(module: ExportedProgram, flat_args_adapter: FlatArgsAdapter | None = None
              ) -> UnflattenedModule:
    """The exported program as a module with the original's submodule tree: the root runs
    the program; each submodule export saw called once runs its own part of the graph."""
    del flat_args_adapter
    root = UnflattenedModule(module)
    state = _state_of(root)
    counts: dict[str, int] = {}
    for name, *_ in getattr(module, "_module_calls", []):
        counts[name] = counts.get(name, 0) + 1
    for name, made, inputs, outputs in getattr(module, "_module_calls", []):
        owner: nn.Module = root
        for part in name.split("."):
            child = owner._modules.get(part)
            if child is None:
                child = InterpreterModule()
                owner.add_module(part, child)
            owner = child
        if not isinstance(owner, InterpreterModule) or owner.graph_module is not None:
            continue
        if counts[name] > 1:
            owner._why = "export saw it called more than once"
            continue
        gm, read_state, why = _cut(module, made, inputs, outputs)
        _hide(owner, "graph_module", gm)
        owner._why = why
        owner._state_names = read_state
        owner._in_spec, owner._out_spec = inputs[1], outputs[1]
        owner._state = state
    for child in root.modules():
        if isinstance(child, InterpreterModule) and child._state is None:
            child._state = state
            child._why = child._why or "export saw no call of it"
    return root
