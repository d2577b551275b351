"""Split a joint forward+backward graph into a forward graph and a backward graph.

The joint graph's placeholders are the primals followed by the tangents; its output is the
forward outputs followed by the input gradients. A node belongs to the forward when it does
not depend on any tangent. The forward returns its outputs and then the *saved* values; the
backward takes the saved values and then the tangents.

* :func:`default_partition` saves every forward value the backward reads.
* :func:`min_cut_rematerialization_partition` saves a minimum-size set of values and
  recomputes the rest in the backward: cheap operators (a row of :data:`RECOMPUTABLE`) may be
  recomputed, everything else (matmul, convolution, reductions, random draws) is computed
  once, in the forward. The choice is a minimum cut of the forward graph between the values
  that must be computed in the forward and those the backward reads (docs/compile.md, "AOT
  autograd").
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Iterable
from typing import Any

import torch
from torch.fx import Graph, GraphModule, Node

__all__ = ["RECOMPUTABLE", "default_partition", "min_cut_rematerialization_partition"]

# op family -> the aten operators (base names) the backward may recompute instead of saving
# their result: each is elementwise or moves no data, so recomputing costs one pass that the
# backward's fused kernels absorb.
RECOMPUTABLE: dict[str, frozenset[str]] = {
    "pointwise": frozenset((
        "add", "sub", "mul", "div", "neg", "abs", "reciprocal", "exp", "expm1", "log", "log1p",
        "sqrt", "rsqrt", "sin", "cos", "tanh", "erf", "sigmoid", "silu", "gelu", "relu",
        "leaky_relu", "clamp", "clamp_min", "clamp_max", "square", "pow", "maximum", "minimum",
        "where", "logical_not", "logical_and", "logical_or", "eq", "ne", "lt", "le", "gt", "ge",
        "_to_copy", "sign", "masked_fill", "tanh_backward", "sigmoid_backward",
        "threshold_backward", "gelu_backward", "silu_backward")),
    "view": frozenset((
        "view", "_unsafe_view", "reshape", "_reshape_alias", "t", "permute", "unsqueeze",
        "squeeze", "transpose", "slice", "select", "alias", "detach", "as_strided",
        "contiguous", "clone")),
    "broadcast": frozenset(("expand", "expand_as", "broadcast_to")),
    "creation": frozenset(("full_like", "zeros_like", "ones_like", "scalar_tensor", "full",
                           "zeros", "ones")),
    # sizes of symbolic shapes (graph inputs' sizes and arithmetic on them)
    "symbolic": frozenset(("sym_size", "sym_stride", "sym_numel")),
}
_RECOMPUTABLE_NAMES = frozenset().union(*RECOMPUTABLE.values())
# random draws: never recomputed (a second draw differs) and never dropped from the forward
# (each draw advances the generator as eager's does)
_RANDOM = frozenset((
    "bernoulli", "rand", "randn", "rand_like", "randn_like", "randint", "randint_like",
    "randperm", "normal", "uniform", "exponential", "cauchy", "geometric", "log_normal",
    "random", "multinomial", "native_dropout"))


def _base_name(node: Node) -> str:
    """``add`` for ``aten.add.Tensor``; ``bernoulli`` for the twin ``functional.aten_bernoulli``."""
    name = str(getattr(node.target, "name", getattr(node.target, "__name__", "")))
    base = name.partition(".")[0]
    namespace = getattr(node.target, "namespace", "")
    if namespace == "functional":
        base = base.partition("_")[2]
    return base.rstrip("_")


def _is_random(node: Node) -> bool:
    return node.op == "call_function" and _base_name(node) in _RANDOM


def _recomputable(node: Node) -> bool:
    if node.op != "call_function":
        return False
    target = node.target
    if target is operator.getitem:
        return True
    if getattr(target, "namespace", None) == "aten":
        return _base_name(node) in _RECOMPUTABLE_NAMES
    # Python arithmetic on symbolic sizes (operator.mul, torch.sym_sum...)
    return not isinstance(node.meta.get("val"), (torch.Tensor, tuple, list))


def _family(node: Node) -> str | None:
    if node.op != "call_function" or getattr(node.target, "namespace", None) != "aten":
        return None
    base = _base_name(node)
    return next((family for family, names in RECOMPUTABLE.items() if base in names), None)


#: "view" rows that copy their input (a layout change): like a pointwise value, recomputing one
#: that a non-pointwise backward operator reads writes it to memory all the same.
_COPIES = frozenset(("clone", "contiguous"))


def _writes_memory(node: Node) -> bool:
    """Whether recomputing ``node`` produces a new buffer (pointwise values and copies)."""
    return _family(node) == "pointwise" or (_family(node) == "view"
                                            and _base_name(node) in _COPIES)


def _materialized_in_backward(node: Node, backward: set[Node]) -> bool:
    """Whether a backward operator that is not pointwise (a matmul...) reads ``node``'s value,
    through views or not: recomputing it there would write it to memory all the same, so it
    is saved instead (as PyTorch's partitioner bans such recomputation)."""
    # views of it the backward formulas take (``reshape``, ``t``) depend on no tangent: they
    # are forward nodes, followed through like the backward's own views
    stack = list(node.users)
    seen: set[Node] = set()
    while stack:
        user = stack.pop()
        if user in seen:
            continue
        seen.add(user)
        family = _family(user)
        if family in ("view", "broadcast"):
            stack.extend(user.users)
        elif user in backward and family != "pointwise" and user.op != "output":
            return True
    return False


def _weight(node: Node) -> int | None:
    """Bytes of the value a node computes; None when it cannot be saved as one value (a
    tuple of results: its items are saved instead)."""
    value = node.meta.get("val")
    if isinstance(value, torch.Tensor):
        count = 1
        for size in value.shape:
            count *= int(size.node.hint) if isinstance(size, torch.SymInt) else int(size)
        return max(count * value.element_size(), 1)
    if isinstance(value, (tuple, list)):
        return None
    return 1  # a symbolic size or another scalar


def _split(joint_module: GraphModule, num_fwd_outputs: int, num_primals: int | None
           ) -> tuple[list[Node], list[Node], list[Any], list[Any], set[Node]]:
    graph = joint_module.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    if num_primals is None:
        num_primals = len(placeholders) - num_fwd_outputs
    primals, tangents = placeholders[:num_primals], placeholders[num_primals:]
    output = next(n for n in graph.nodes if n.op == "output")
    outs = list(output.args[0])
    dependent: set[Node] = set(tangents)
    for node in graph.nodes:
        if node.op != "output" and any(a in dependent for a in node.all_input_nodes):
            dependent.add(node)
    return primals, tangents, outs[:num_fwd_outputs], outs[num_fwd_outputs:], dependent


def _needed_by_backward(graph: Graph, backward: set[Node], grads: list[Any]) -> list[Node]:
    """The forward nodes a backward node (or a gradient output) reads directly."""
    needed = []
    for node in graph.nodes:
        if node in backward or node.op == "output":
            continue
        if any(user in backward for user in node.users) or node in grads:
            needed.append(node)
    return needed


def _build(joint_module: GraphModule, saved: list[Node], recomputed: set[Node],
           tangents: list[Node], fw_outs: list[Any], grads: list[Any], backward: set[Node],
           prune_forward: bool) -> tuple[GraphModule, GraphModule]:
    graph = joint_module.graph
    keep: set[Node] | None = None
    if prune_forward:
        keep = _ancestors(graph, [n for n in fw_outs if isinstance(n, Node)] + saved)
    fw_graph = Graph()
    env: dict[Node, Node] = {}
    for node in graph.nodes:
        if node.op == "output" or node in backward:
            continue
        if keep is not None and node not in keep and node.op != "placeholder" and \
                not _is_random(node):
            continue
        env[node] = fw_graph.node_copy(node, lambda n: env[n])
    fw_graph.output(tuple(env[n] if isinstance(n, Node) else n for n in fw_outs)
                    + tuple(env[n] for n in saved))

    bw_graph = Graph()
    benv: dict[Node, Node] = {}
    for node in saved:
        benv[node] = bw_graph.placeholder(node.name)
        benv[node].meta.update(node.meta)
    for node in tangents:
        benv[node] = bw_graph.placeholder(node.name)
        benv[node].meta.update(node.meta)
    for node in graph.nodes:
        if node.op == "placeholder" or node in benv:
            continue
        if node in backward or node in recomputed:
            benv[node] = bw_graph.node_copy(node, lambda n: benv[n])
    bw_graph.output(tuple(benv[n] if isinstance(n, Node) else n for n in grads))
    return GraphModule(joint_module, fw_graph), GraphModule(joint_module, bw_graph)


def _ancestors(graph: Graph, roots: Iterable[Node]) -> set[Node]:
    seen: set[Node] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(node.all_input_nodes)
    return seen


def default_partition(joint_module: GraphModule, _joint_inputs: object = None, *,
                      num_fwd_outputs: int, num_primals: int | None = None
                      ) -> tuple[GraphModule, GraphModule]:
    """Forward = every node not depending on a tangent; saved = the forward nodes the backward
    reads. Returns ``(forward_module, backward_module)``: the forward returns its outputs then
    the saved values, the backward takes the saved values then the tangents."""
    _primals, tangents, fw_outs, grads, backward = _split(joint_module, num_fwd_outputs,
                                                          num_primals)
    saved = _needed_by_backward(joint_module.graph, backward, grads)
    return _build(joint_module, saved, set(), tangents, fw_outs, grads, backward, False)


class _FlowNetwork:
    """A directed graph with integer capacities, for one maximum flow (Edmonds-Karp: BFS
    augmenting paths; joint graphs have hundreds to a few thousand nodes)."""

    def __init__(self) -> None:
        self.edges: list[list[int]] = []  # [to, capacity left]; edge i ^ 1 is its reverse
        self.out: dict[Any, list[int]] = {}

    def add(self, u: Any, v: Any, capacity: int) -> None:
        self.out.setdefault(u, []).append(len(self.edges))
        self.edges.append([v, capacity])
        self.out.setdefault(v, []).append(len(self.edges))
        self.edges.append([u, 0])

    def _path(self, source: Any, sink: Any) -> list[int] | None:
        via: dict[Any, int] = {source: -1}
        queue = deque([source])
        while queue:
            u = queue.popleft()
            for index in self.out.get(u, ()):
                v, capacity = self.edges[index]
                if capacity > 0 and v not in via:
                    via[v] = index
                    if v == sink:
                        path = []
                        while v != source:
                            path.append(via[v])
                            v = self.edges[via[v] ^ 1][0]
                        return path
                    queue.append(v)
        return None

    def source_side(self, source: Any, sink: Any) -> set[Any]:
        """Saturate every augmenting path, then the nodes still reachable from ``source``."""
        while (path := self._path(source, sink)) is not None:
            push = min(self.edges[i][1] for i in path)
            for i in path:
                self.edges[i][1] -= push
                self.edges[i ^ 1][1] += push
        reached = {source}
        queue = deque([source])
        while queue:
            u = queue.popleft()
            for index in self.out.get(u, ()):
                v, capacity = self.edges[index]
                if capacity > 0 and v not in reached:
                    reached.add(v)
                    queue.append(v)
        return reached


def min_cut_rematerialization_partition(joint_module: GraphModule, _joint_inputs: object = None,
                                        *, num_fwd_outputs: int, num_primals: int | None = None
                                        ) -> tuple[GraphModule, GraphModule]:
    """Like :func:`default_partition` (same contract), saving the fewest bytes: the saved
    values are a minimum cut of the forward graph, where each value costs its size, values of
    non-:data:`RECOMPUTABLE` operators (and the primals) must come from the forward, and the
    values the backward reads must reach it; what lies past the cut is recomputed in the
    backward. A pointwise value or a copy that a non-pointwise backward operator reads
    (``gelu``'s output feeding the weight gradient's matmul; attention's transposed output
    made contiguous for the projection) is not recomputed: the backward would write it to
    memory all the same (PyTorch's partitioner bans that recomputation too)."""
    _primals, tangents, fw_outs, grads, backward = _split(joint_module, num_fwd_outputs,
                                                          num_primals)
    graph = joint_module.graph
    needed = _needed_by_backward(graph, backward, grads)
    forward = [n for n in graph.nodes if n.op != "output" and n not in backward]
    weights = {n: _weight(n) for n in forward}
    infinite = sum(w for w in weights.values() if w is not None) + 1
    network = _FlowNetwork()
    source, sink = ("source",), ("sink",)
    for node in forward:
        weight = weights[node]
        network.add((node, "in"), (node, "out"), infinite if weight is None else weight)
        if node.op != "call_function" or not _recomputable(node) or (
                _writes_memory(node) and _materialized_in_backward(node, backward)):
            network.add(source, (node, "in"), infinite)
        for user in node.users:
            if user in weights:
                network.add((node, "out"), (user, "in"), infinite)
    for node in needed:
        network.add((node, "out"), sink, infinite)
    reached = network.source_side(source, sink)
    saved = [n for n in forward if (n, "in") in reached and (n, "out") not in reached]
    # what the backward reads past the cut, back to the saved values
    kept = set(saved)
    recomputed: set[Node] = set()
    stack = [n for n in needed if n not in kept]
    while stack:
        node = stack.pop()
        if node in recomputed:
            continue
        recomputed.add(node)
        stack.extend(n for n in node.all_input_nodes if n not in kept)
    return _build(joint_module, saved, recomputed, tangents, fw_outs, grads, backward, True)
