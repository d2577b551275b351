"""``torch.fx.passes.split_module``: cut a graph into submodules, as pipeline-parallel
libraries and graph partitioners do.

``split_module(gm, root, split_callback)`` asks ``split_callback(node)`` for the partition of
every node that computes something (``call_function``, ``call_method``, ``call_module``) and
returns a GraphModule whose children ``submod_<partition>`` each run one partition's nodes,
called in an order that respects their dependencies (partitions first seen first). A
partition's inputs are the values it reads from the graph's inputs or other partitions; its
outputs, those read outside it: one value is returned as it is, several as a tuple. A
``get_attr`` node is copied into each partition that reads it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from torch import nn
from torch.fx.graph import Graph
from torch.fx.graph_module import GraphModule
from torch.fx.node import Node, map_arg

__all__ = ["split_module"]


class _Partition:
    """The nodes of one partition and the values crossing its border."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.nodes: list[Node] = []
        self.inputs: dict[Node, None] = {}  # ordered sets
        self.outputs: dict[Node, None] = {}
        self.depends_on: dict[str, None] = {}


def _partition_order(partitions: dict[str, _Partition]) -> list[_Partition]:
    """Partitions in dependency order; among ready ones, the first seen first."""
    done: set[str] = set()
    order: list[_Partition] = []
    pending = list(partitions.values())
    while pending:
        ready = next((p for p in pending if all(d in done for d in p.depends_on)), None)
        if ready is None:
            raise RuntimeError("split_module: the partitions depend on each other in a cycle")
        pending.remove(ready)
        done.add(ready.name)
        order.append(ready)
    return order


def split_module(m: GraphModule, root_m: nn.Module, split_callback: Callable[[Node], Any],
                 qualname_map: dict[str, str] | None = None,
                 keep_original_order: bool = False,
                 keep_original_node_name: bool = False) -> GraphModule:
    """``m``'s graph cut into ``submod_<partition>`` children (see the module docstring).

    :param root_m: the module whose submodules and attributes the graph's ``call_module``
        and ``get_attr`` nodes name (usually the traced module).
    :param split_callback: node -> partition key (an int, or anything ``str`` names).
    :param qualname_map: filled with ``submod_<p>.<target>`` -> original target of each
        ``call_module`` node.
    """
    del keep_original_order, keep_original_node_name
    owner: dict[Node, _Partition] = {}
    partitions: dict[str, _Partition] = {}
    for node in m.graph.nodes:
        if node.op in ("call_function", "call_method", "call_module"):
            key = str(split_callback(node))
            partition = partitions.get(key)
            if partition is None:
                partition = partitions[key] = _Partition(key)
            partition.nodes.append(node)
            owner[node] = partition
    for partition in partitions.values():
        for node in partition.nodes:
            for read in node.all_input_nodes:
                source = owner.get(read)
                if source is partition:
                    continue
                if read.op != "get_attr":  # get_attr is copied in, not passed
                    partition.inputs.setdefault(read)
                if source is not None:
                    source.outputs.setdefault(read)
                    partition.depends_on.setdefault(source.name)
    output = next(n for n in m.graph.nodes if n.op == "output")
    for read in output.all_input_nodes:
        if read in owner:
            owner[read].outputs.setdefault(read)

    top = Graph()
    top_values: dict[Node, Any] = {}
    for node in m.graph.nodes:
        if node.op == "placeholder":
            top_values[node] = top.node_copy(node)
    top_root = nn.Module()
    for partition in _partition_order(partitions):
        sub = Graph()
        values: dict[Node, Node] = {}
        for read in partition.inputs:
            values[read] = sub.placeholder(read.name)
        for node in partition.nodes:
            for read in node.all_input_nodes:
                if read.op == "get_attr" and read not in values:
                    values[read] = sub.node_copy(read)
            values[node] = sub.node_copy(node, values.__getitem__)
            if node.op == "call_module" and qualname_map is not None:
                qualname_map[f"submod_{partition.name}.{node.target}"] = node.target
        results = [values[n] for n in partition.outputs]
        sub.output(results[0] if len(results) == 1 else tuple(results))
        name = f"submod_{partition.name}"
        top_root.add_module(name, GraphModule(root_m, sub))
        call = top.call_module(name, tuple(top_values[n] for n in partition.inputs))
        if len(results) == 1:
            top_values[next(iter(partition.outputs))] = call
        else:
            for index, produced in enumerate(partition.outputs):
                top_values[produced] = top.call_function(operator.getitem, (call, index))

    def top_value(node: Node) -> Any:
        if node not in top_values and node.op == "get_attr":
            top_values[node] = top.node_copy(node)
            _copy_attribute(root_m, top_root, node.target)
        return top_values[node]

    top.output(map_arg(output.args[0], top_value))
    return GraphModule(top_root, top)


def _copy_attribute(source: nn.Module, target: nn.Module, path: str) -> None:
    """Make ``target.<path>`` the object ``source.<path>`` is (submodules made as needed)."""
    *owners, leaf = path.split(".")
    for part in owners:
        source = getattr(source, part)
        child = getattr(target, part, None)
        if child is None:
            child = nn.Module()
            target.add_module(part, child)
        target = child
    value = getattr(source, leaf)
    if isinstance(value, nn.Module):
        target.add_module(leaf, value)
    else:
        setattr(target, leaf, value)
