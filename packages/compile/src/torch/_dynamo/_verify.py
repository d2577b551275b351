"""``torch.compile(..., options={"verify": True})``: run each graph eagerly beside the compiled
one and name the first node whose output differs (issue 15, item 7)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch._core.tensor import Tensor
from torch.fx.graph_module import GraphModule

__all__ = ["VerificationError", "verify_graph"]


class VerificationError(RuntimeError):
    """The compiled graph's value of a node differs from eager's."""


def _every_node_graph(gm: GraphModule) -> tuple[GraphModule, list[str]]:
    """A copy of ``gm`` that returns every op node's tensor value, in order."""
    graph = torch.fx.Graph()
    env: dict[Any, Any] = {}
    named: list[tuple[str, Any]] = []
    for node in gm.graph.nodes:
        if node.op == "output":
            continue
        new = graph.node_copy(node, lambda n: env[n])
        env[node] = new
        if node.op in ("call_function", "call_method") and isinstance(
                node.meta.get("example_value"), Tensor):
            named.append((node.name, new))
    graph.output(tuple(n for _, n in named))
    return GraphModule(gm, graph), [name for name, _ in named]


def verify_graph(backend: Callable[..., Any], gm: GraphModule, inputs: list[Tensor],
                 fakes: list[Any]) -> None:
    """Run ``gm`` eagerly and through ``backend`` on copies of ``inputs`` and compare each
    node's value.

    :raises VerificationError: naming the first node whose values differ.
    """
    full, names = _every_node_graph(gm)
    compiled = backend(full, fakes)

    def copies() -> list[Tensor]:
        return [t.detach().clone() for t in inputs]

    with torch.no_grad():
        expected = full(*copies())
        got = compiled(*copies())
    for name, e, g in zip(names, expected, got):
        same = e.shape == g.shape and e.dtype == g.dtype and bool(
            torch.allclose(e, g, rtol=1e-4, atol=1e-5, equal_nan=True)
            if e.dtype.is_floating_point or e.dtype.is_complex else torch.equal(e, g))
        if not same:
            raise VerificationError(f"compiled graph diverges from eager at node '{name}': "
                                    f"eager {e!r}, compiled {g!r}")
