"""``torch.fx.subgraph_rewriter``: find a pattern in a graph and replace each occurrence.

The pattern and the replacement are functions (traced with ``symbolic_trace``) or graphs.
A match maps every node the pattern's outputs depend on to a distinct node of the graph with
the same kind and target and matching arguments; the pattern's inputs (placeholders) match any
node. A match is used only when nothing outside it reads the values it computes internally
(they disappear), and matches never overlap: the graph is searched in order and the first
match wins. The replacement is inserted after the last matched node, its inputs bound in
order to the nodes the pattern's inputs matched, and the users of the pattern's outputs are
rewired to the replacement's outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from torch import nn
from torch.fx.graph import Graph
from torch.fx.graph_module import GraphModule, _copy_attr
from torch.fx.node import Node

__all__ = ["Match", "ReplacedPatterns", "replace_pattern", "replace_pattern_with_filters"]


class Match(NamedTuple):
    """One replaced occurrence: ``anchor`` (the graph node the pattern's last output
    matched) and ``nodes_map`` (pattern node -> graph node)."""

    anchor: Node
    nodes_map: dict[Node, Node]


@dataclass
class ReplacedPatterns:
    """One replaced occurrence with the nodes inserted in its place."""

    anchor: Node
    nodes_map: dict[Node, Node]
    replacements: list[Node]


@dataclass
class InternalMatch:
    """A match as filters see it (PyTorch's ``InternalMatch``)."""

    anchors: list[Node]
    nodes_map: dict[Node, Node] = field(default_factory=dict)
    placeholder_nodes: list[Node] = field(default_factory=list)
    returning_nodes: list[Node] = field(default_factory=list)


def _as_graph(obj: Callable[..., Any] | Graph | GraphModule) -> tuple[Graph, nn.Module | None]:
    if isinstance(obj, GraphModule):
        return obj.graph, obj
    if isinstance(obj, Graph):
        return obj, obj.owning_module
    from torch.fx._symbolic_trace import symbolic_trace

    traced = symbolic_trace(obj)
    return traced.graph, traced


class _Matcher:
    def __init__(self, pattern: Graph, ignore_literals: bool) -> None:
        self.pattern = pattern
        self.ignore_literals = ignore_literals
        output = next(n for n in reversed(pattern.nodes) if n.op == "output")
        self.returning: list[Node] = _flatten_nodes(output.args[0])
        self.placeholders = [n for n in pattern.nodes if n.op == "placeholder"]
        if not self.returning:
            raise ValueError("the pattern returns no node")

    def match_node(self, pn: Node, gn: Any, m: dict[Node, Node]) -> bool:
        if pn in m:
            return m[pn] is gn
        if not isinstance(gn, Node):
            return False
        if pn.op == "placeholder":
            m[pn] = gn
            return True
        if pn.op != gn.op or pn.op == "output":
            return False
        if pn.target != gn.target and not _same_callable(pn.target, gn.target):
            return False
        if len(pn.args) != len(gn.args) or set(pn.kwargs) != set(gn.kwargs):
            return False
        m[pn] = gn
        return all(self.match_arg(a, b, m) for a, b in zip(pn.args, gn.args)) and \
            all(self.match_arg(pn.kwargs[k], gn.kwargs[k], m) for k in pn.kwargs)

    def match_arg(self, pa: Any, ga: Any, m: dict[Node, Node]) -> bool:
        if isinstance(pa, Node):
            return self.match_node(pa, ga, m)
        if isinstance(ga, Node):
            return False
        if isinstance(pa, (list, tuple)) and isinstance(ga, (list, tuple)):
            return len(pa) == len(ga) and all(self.match_arg(a, b, m) for a, b in zip(pa, ga))
        if self.ignore_literals:
            return True
        return type(pa) is type(ga) and pa == ga

    def find(self, graph: Graph) -> list[InternalMatch]:
        found: list[InternalMatch] = []
        claimed: set[Node] = set()
        candidates = [n for n in graph.nodes if n.op not in ("placeholder", "output")]
        for anchor in candidates:
            m = self._match_from(anchor, candidates, {})
            if m is None:
                continue
            internal = {g for p, g in m.items() if p.op != "placeholder"}
            if internal & claimed:
                continue
            found.append(InternalMatch(
                anchors=[m[r] for r in self.returning], nodes_map=m,
                placeholder_nodes=[m[p] for p in self.placeholders if p in m],
                returning_nodes=[m[r] for r in self.returning]))
            claimed |= internal
        return found

    def _match_from(self, anchor: Node, candidates: list[Node],
                    m: dict[Node, Node]) -> dict[Node, Node] | None:
        """Match the pattern's outputs with the first at ``anchor`` and the others anywhere
        (backtracking over candidates); None when no complete, self-contained match."""
        first, *others = self.returning
        trial = dict(m)
        if not self.match_node(first, anchor, trial):
            return None
        return self._match_rest(others, candidates, trial)

    def _match_rest(self, others: Sequence[Node], candidates: list[Node],
                    m: dict[Node, Node]) -> dict[Node, Node] | None:
        if not others:
            return m if self._self_contained(m) else None
        head, *tail = others
        for cand in candidates:
            trial = dict(m)
            if self.match_node(head, cand, trial):
                done = self._match_rest(tail, candidates, trial)
                if done is not None:
                    return done
        return None

    def _self_contained(self, m: dict[Node, Node]) -> bool:
        internal = [p for p in m if p.op != "placeholder"]
        images = [m[p] for p in internal]
        if len(set(images)) != len(images):
            return False  # two pattern nodes on one graph node
        if any(m[p] in images for p in m if p.op == "placeholder"):
            return False  # an input of the match computed inside it
        inside = set(images)
        returning = set(self.returning)
        for p in internal:
            if p in returning:
                continue
            if any(user not in inside for user in m[p].users):
                return False  # an internal value read outside the match
        return True


def _same_callable(a: Any, b: Any) -> bool:
    return getattr(a, "__fx_orig__", a) is getattr(b, "__fx_orig__", b)


def _flatten_nodes(arg: Any) -> list[Node]:
    if isinstance(arg, Node):
        return [arg]
    if isinstance(arg, (list, tuple)):
        return [n for a in arg for n in _flatten_nodes(a)]
    return []


def _stable_topological_sort(graph: Graph) -> None:
    """Reorder nodes so each follows its inputs, keeping the existing order otherwise."""
    position = {n: i for i, n in enumerate(graph.nodes)}
    if all(position[i] < position[n] for n in graph.nodes for i in n._input_nodes):
        return
    placed: set[Node] = set()
    order: list[Node] = []
    for start in list(graph.nodes):
        stack = [start]
        while stack:
            node = stack[-1]
            if node in placed:
                stack.pop()
                continue
            pending = [i for i in node._input_nodes if i not in placed]
            if pending:
                stack.extend(reversed(pending))
                continue
            placed.add(node)
            order.append(node)
            stack.pop()
    for node in order:
        graph._root.prepend(node)


def replace_pattern_with_filters(
        gm: GraphModule, pattern: Callable[..., Any] | Graph | GraphModule,
        replacement: Callable[..., Any] | Graph | GraphModule | None = None,
        match_filters: list[Callable[[InternalMatch, Graph, Graph], bool]] | None = None,
        ignore_literals: bool = False) -> list[ReplacedPatterns]:
    """Replace every occurrence of ``pattern`` in ``gm`` with ``replacement`` where every
    filter ``f(match, original_graph, pattern_graph)`` accepts the match.

    :param ignore_literals: let literal arguments (numbers, strings) match any literal.
    :returns: one entry per replaced occurrence.
    """
    if replacement is None:
        raise ValueError("replace_pattern_with_filters needs a replacement")
    original = gm.graph
    pattern_graph, _ = _as_graph(pattern)
    replacement_graph, replacement_module = _as_graph(replacement)
    matcher = _Matcher(pattern_graph, ignore_literals)
    matches = [m for m in matcher.find(original)
               if all(f(m, original, pattern_graph) for f in match_filters or ())]
    replacement_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(replacement_placeholders) != len(matcher.placeholders):
        raise ValueError(f"the pattern takes {len(matcher.placeholders)} inputs and the "
                         f"replacement {len(replacement_placeholders)}")
    if replacement_module is not None:
        for node in replacement_graph.nodes:
            if node.op in ("get_attr", "call_module") and not _has(gm, str(node.target)):
                _copy_attr(replacement_module, gm, str(node.target))

    results: list[ReplacedPatterns] = []
    # an earlier replacement's outputs stand for the nodes it removed, which a later match
    # may have taken as inputs
    replaced_by: dict[Node, Node] = {}
    for match in matches:
        m = {p: replaced_by.get(g, g) for p, g in match.nodes_map.items()}
        val_map = {rp: m[pp] for rp, pp in zip(replacement_placeholders, matcher.placeholders)}
        matched = [g for p, g in m.items() if p.op != "placeholder"]
        position = {n: i for i, n in enumerate(original.nodes)}
        last = max(matched, key=position.__getitem__)
        before = set(original.nodes)
        with original.inserting_after(last):
            copied = original.graph_copy(replacement_graph, val_map)
        new_outputs = _flatten_nodes(copied)
        if len(new_outputs) != len(matcher.returning):
            raise ValueError(f"the pattern returns {len(matcher.returning)} values and the "
                             f"replacement {len(new_outputs)}")
        for pattern_out, new in zip(matcher.returning, new_outputs):
            m[pattern_out].replace_all_uses_with(new)
            replaced_by[m[pattern_out]] = new
        for node in sorted(matched, key=position.__getitem__, reverse=True):
            if not node.users:
                original.erase_node(node)
        inserted = [n for n in original.nodes if n not in before]
        results.append(ReplacedPatterns(anchor=m[matcher.returning[-1]], nodes_map=dict(m),
                                        replacements=inserted))
    _stable_topological_sort(original)
    gm.recompile()
    return results


def replace_pattern(gm: GraphModule, pattern: Callable[..., Any] | GraphModule,
                    replacement: Callable[..., Any] | GraphModule) -> list[Match]:
    """Replace every occurrence of ``pattern`` in ``gm`` with ``replacement`` (see the module
    docstring); returns the matches, each with its anchor and node map."""
    replaced = replace_pattern_with_filters(gm, pattern, replacement)
    return [Match(anchor=r.anchor, nodes_map=r.nodes_map) for r in replaced]


def _has(module: nn.Module, path: str) -> bool:
    obj: Any = module
    for part in path.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True
