"""``bound_nop``: the ``nop`` compiler without the generated code's operator lookups.

A GraphModule's generated ``forward`` names each operator as ``torch.ops.aten.<name>.<overload>``
and resolves that chain at every call (several microseconds per node here). ``aot_eager``
compiles its graphs with :func:`bound_nop` instead: the nodes run in order with their
targets resolved once, and each value is dropped after its last use (as the generated code
does), so a graph's intermediates are freed as early.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.fx import GraphModule, Node

__all__ = ["bound_nop"]


def _loader(value: Any) -> Callable[[dict[Node, Any]], Any]:
    """A function reading ``value`` (a node, a constant, or a list/tuple/dict of them) from
    the environment."""
    if isinstance(value, Node):
        return lambda env: env[value]
    if isinstance(value, (list, tuple)) and any(isinstance(v, Node) for v in _leaves(value)):
        parts = [_loader(v) for v in value]
        if isinstance(value, list):  # fx's immutable lists too: a plain list serves
            return lambda env: [p(env) for p in parts]
        if hasattr(value, "_fields"):  # a named tuple
            kind = type(value)
            return lambda env: kind(*(p(env) for p in parts))
        return lambda env: tuple(p(env) for p in parts)
    if isinstance(value, dict) and any(isinstance(v, Node) for v in _leaves(value)):
        parts_by_key = {k: _loader(v) for k, v in value.items()}
        return lambda env: {k: p(env) for k, p in parts_by_key.items()}
    return lambda env: value


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [value]


def bound_nop(gm: GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    """Run ``gm`` as it is (its nodes, eagerly), with each operator resolved once. A graph
    with ``call_module`` or ``call_method`` nodes is returned as it is."""
    del example_inputs
    nodes = list(gm.graph.nodes)
    if any(n.op in ("call_module", "call_method") for n in nodes):
        return gm
    placeholders = [n for n in nodes if n.op == "placeholder"]
    constants: dict[Node, Any] = {}
    last_use: dict[Node, Node] = {}
    for node in nodes:
        for used in node.all_input_nodes:
            last_use[used] = node
        if node.op == "get_attr":
            value: Any = gm
            for part in str(node.target).split("."):
                value = getattr(value, part)
            constants[node] = value
    steps = []
    output: Callable[[dict[Node, Any]], Any] = _loader(None)
    for node in nodes:
        if node.op == "call_function":
            free = tuple(n for n in node.all_input_nodes if last_use.get(n) is node)
            steps.append((node, node.target, _loader(tuple(node.args)),
                          _loader(dict(node.kwargs)), free))
        elif node.op == "output":
            output = _loader(node.args[0])

    def run(*args: Any) -> Any:
        env: dict[Node, Any] = dict(constants)
        env.update(zip(placeholders, args))
        for node, target, load_args, load_kwargs, free in steps:
            env[node] = target(*load_args(env), **load_kwargs(env))
            for dead in free:
                del env[dead]
        return output(env)

    return run
