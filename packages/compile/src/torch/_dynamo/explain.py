"""``torch._dynamo.explain``: run a function once under capture and report its graphs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BreakReason", "ExplainOutput", "GraphCompileReason", "explain"]


@dataclass
class GraphCompileReason:
    """One graph break (PyTorch's class name): why, and the program's source line where it
    happened (``user_stack``, as text)."""

    reason: str
    user_stack: str
    graph_break: bool = True

    def __str__(self) -> str:
        return f"{self.reason}\n    {self.user_stack}"


BreakReason = GraphCompileReason  # the name this package used before


@dataclass
class ExplainOutput:
    """What :func:`explain` found: graphs, breaks and their reasons, ops and guards."""

    graphs: list[Any] = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list[GraphCompileReason] = field(default_factory=list)
    op_count: int = 0
    ops_per_graph: list[list[Any]] = field(default_factory=list)
    out_guards: list[str] = field(default_factory=list)
    compile_times: str = ""

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, br in enumerate(self.break_reasons, 1):
            lines.append(f"  Break Reason {i}:\n    Reason: {br.reason}\n"
                         f"    User Stack:\n      {br.user_stack}")
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines.append(f"  Ops {i}:")
            lines.extend(f"    {_op_text(op)}" for op in ops)
        lines.append("Out Guards:")
        lines.extend(f"  {g}" for g in self.out_guards)
        return "\n".join(lines) + "\n"


def _op_text(target: Any) -> str:
    """An op target as ``str(ExplainOutput)`` lists it (``operator.mul``, ``torch.relu``)."""
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", None)
    module = "operator" if module == "_operator" else module
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))
    return f"{module}.{name}" if module else name


def _counted(node: Any) -> bool:
    """Whether PyTorch's explain counts ``node``: its function calls, Python operators among
    them (``x + 1``, ``operator.add``; an in-place ``x += 1`` stays ``x.__iadd__(1)``), but
    not Tensor methods (``x.sum()``)."""
    if node.op == "call_function":
        return True
    target = node.target
    return node.op == "call_method" and isinstance(target, str) and target.startswith("__") \
        and target.endswith("__")


def explain(f: Callable[..., Any], *extra_args: Any, **extra_kwargs: Any) -> Any:
    """``explain(f)(*args, **kwargs)`` -> :class:`ExplainOutput`: ``f`` runs once, captured,
    with a backend that runs each graph as it is."""
    from torch._dynamo.eval_frame import compile_callable

    def inner(*args: Any, **kwargs: Any) -> ExplainOutput:
        compiled = compile_callable(f, backend="eager")
        frame = compiled.__dict__["_torchdynamo_frame"]
        compiled(*args, **kwargs)
        out = ExplainOutput()
        out.graphs = [g.graph_module for g in frame.graphs]
        out.graph_count = len(frame.graphs)
        out.break_reasons = [GraphCompileReason(r, w) for r, w in frame.breaks]
        out.graph_break_count = len(frame.breaks)
        # each op's target, as PyTorch lists them (operator.mul, torch.relu, "__iadd__")
        out.ops_per_graph = [[n.target for n in g.graph_module.graph.nodes
                              if _counted(n)] for g in frame.graphs]
        out.op_count = sum(len(ops) for ops in out.ops_per_graph)
        out.out_guards = [line for g in frame.graphs for line in g.guards]
        return out

    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner
