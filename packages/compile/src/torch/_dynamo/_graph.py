"""A recording turned into the ``torch.fx.GraphModule`` a backend compiles.

Inputs are placeholders named after what the program calls them (``l_x_``,
``l_self_modules_fc_parameters_weight_`` in PyTorch; here the argument or attribute path with
dots as underscores), each op one ``call_function`` / ``call_method`` node whose
``meta["example_value"]`` is its fake result, and the output a tuple of the values the
program still holds.
"""

from __future__ import annotations

import operator
import re
from typing import Any

from torch import nn
from torch.fx.graph import Graph
from torch.fx.graph_module import GraphModule
from torch.fx.node import Node

__all__ = ["OPERATORS", "build_graph_module"]


def _operators() -> dict[str, tuple[Any, bool]]:
    """Tensor dunder method -> (the ``operator`` function PyTorch's graphs call for that
    Python operator, whether the tensor is its second operand): ``x + 1`` is recorded as
    ``x.__add__(1)`` and written ``operator.add(x, 1)``, ``2 * x`` as ``operator.mul(2, x)``,
    so that backends matching ``node.target is operator.add`` find it, as in PyTorch."""
    table: dict[str, tuple[Any, bool]] = {}
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and",
                 "or", "xor", "lshift", "rshift"):
        function = getattr(operator, name if name not in ("and", "or") else f"{name}_")
        table[f"__{name}__"] = (function, False)
        table[f"__r{name}__"] = (function, True)
    for name in ("lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "invert", "getitem",
                 "setitem"):
        table[f"__{name}__"] = (getattr(operator, name), False)
    return table


OPERATORS = _operators()
_ARITY = {"__neg__": 1, "__pos__": 1, "__invert__": 1, "__setitem__": 3}


def _placeholder_name(name: str) -> str:
    return "l_" + re.sub(r"\W", "_", name) + "_"


def build_graph_module(capture: Any, recording: Any, outputs: list[Any],
                       lifted: dict[tuple[int, int], Any] | None = None,
                       dims: dict[Any, tuple[int, int]] | None = None,
                       ints: dict[tuple[Any, ...], int] | None = None) -> GraphModule:
    """A GraphModule that runs ``recording`` on its inputs and returns ``outputs``.

    :param lifted: (op, argument) -> fake 0-dim tensor: the numbers at those positions are
        read from extra placeholders (after the tensor inputs, in position order).
    :param dims: (op, argument, item or None) -> (input, dim): the size arguments at those
        positions are ``input.size(dim)`` nodes (dynamic sizes).
    :param ints: (op, argument, item or None, slice part) -> this call's value: the slice
        bounds at those positions are read from int placeholders (after the numbers')."""
    from torch._dynamo._capture import Ref

    graph = Graph()
    inputs: list[Node] = []
    taken: set[str] = set()
    for i, (t, fake) in enumerate(zip(recording.inputs, recording.input_fakes)):
        name = _placeholder_name(capture.arg_names.get(id(t), f"input{i}"))
        while name in taken:  # two inputs the program calls alike (a name reused)
            name += f"{i}_"
        taken.add(name)
        node = graph.placeholder(name)
        node.meta["example_value"] = fake
        node.meta["val"] = fake
        inputs.append(node)
    scalar_nodes: dict[tuple[int, int], Node] = {}
    for k, (position, fake) in enumerate(sorted((lifted or {}).items())):
        node = graph.placeholder(f"l_scalar_{k}_")
        node.meta["example_value"] = fake
        node.meta["val"] = fake
        scalar_nodes[position] = node
    int_nodes: dict[tuple[Any, ...], Node] = {}
    for k, (position, value) in enumerate((ints or {}).items()):
        # named after the int argument of that value (x[:n]: ``l_n_``), as PyTorch names it
        source = capture.arg_names.get(("int", value))
        name = _placeholder_name(source) if source else f"l_int_{k}_"
        while name in taken:
            name += f"{k}_"
        taken.add(name)
        node = graph.placeholder(name)
        node.meta["example_value"] = value
        int_nodes[position] = node
    nodes: list[Node | None] = []
    getitems: dict[tuple[int, int], Node] = {}

    def resolve(value: Any) -> Any:
        if isinstance(value, Ref):
            if value.op is None:
                return inputs[value.index]  # type: ignore[index]
            node = nodes[value.op]
            assert node is not None
            if value.index is None:
                return node
            item = getitems.get((value.op, value.index))
            if item is None:
                item = graph.call_function(operator.getitem, (node, value.index))
                fake = recording.op_fakes[value.op]
                item.meta["example_value"] = fake[value.index]
                getitems[(value.op, value.index)] = item
            return item
        if isinstance(value, tuple):
            items = [resolve(v) for v in value]
            return value._make(items) if hasattr(value, "_make") else tuple(items)
        if isinstance(value, list):
            return [resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: resolve(v) for k, v in value.items()}
        return value

    size_nodes: dict[tuple[int, int], Node] = {}

    def size_of(i: int, d: int) -> Node:
        node = size_nodes.get((i, d))
        if node is None:
            node = size_nodes[(i, d)] = graph.call_method("size", (inputs[i], d))
            node.meta["example_value"] = recording.input_fakes[i].shape[d]
        return node

    def one(value: Any, where: tuple[Any, ...]) -> Any:
        if isinstance(value, slice):
            parts = [value.start, value.stop, value.step]
            for part in range(3):
                symbolic = int_nodes.get((*where, part))
                found = (dims or {}).get((*where, part))
                if symbolic is not None:
                    parts[part] = symbolic
                elif found is not None:
                    parts[part] = size_of(*found)
            return slice(*parts)
        symbolic = int_nodes.get((*where, None))
        if symbolic is not None:  # a size argument made an int input
            return symbolic
        found = (dims or {}).get((*where, None))
        return size_of(*found) if found is not None else value

    def _read_sizes(index: int, j: int, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            items = [one(v, (index, j, k)) for k, v in enumerate(value)]
            return type(value)(items) if type(value) in (list, tuple) else tuple(items)
        return one(value, (index, j, None))

    for index, ((kind, target, args, kwargs), fake) in enumerate(
            zip(recording.ops, recording.op_fakes)):
        a = resolve(args)
        if scalar_nodes:
            a = tuple(scalar_nodes.get((index, j), v) for j, v in enumerate(a))
        if dims or int_nodes:
            a = tuple(_read_sizes(index, j, v) for j, v in enumerate(a))
        k = resolve(kwargs)
        operator_form = OPERATORS.get(target) if kind == "call_method" and not k else None
        if operator_form is not None and len(a) == _ARITY.get(target, 2):
            function, swapped = operator_form
            node = graph.call_function(function, (a[1], a[0]) if swapped else a)
        elif kind == "call_method":
            node = graph.call_method(target, a, k)
        else:
            node = graph.call_function(target, a, k)
        if fake is not None:
            node.meta["example_value"] = fake
        nodes.append(node)
    graph.output(tuple(resolve(lz.ref) for lz in outputs))
    return GraphModule(nn.Module(), graph)
