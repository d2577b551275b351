"""The JIT's optimisation switches (fusion, profiling executor). Plait runs Python code and
recorded graphs as they are, so each switch is kept and answered but changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["enable_onednn_fusion", "export_opnames", "fuser", "last_executed_optimized_graph",
           "onednn_fusion_enabled", "optimized_execution", "run_frozen_optimizations",
           "set_fusion_strategy", "strict_fusion"]


class _Switches:
    onednn_fusion = False
    fusion_strategy: list[tuple[str, int]] = [("STATIC", 2), ("DYNAMIC", 10)]


def enable_onednn_fusion(enabled: bool) -> None:
    """Turn oneDNN graph fusion on or off (recorded; Plait does not fuse in the JIT)."""
    _Switches.onednn_fusion = bool(enabled)


def onednn_fusion_enabled() -> bool:
    """Whether oneDNN graph fusion was turned on."""
    return _Switches.onednn_fusion


def set_fusion_strategy(strategy: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Set the fusion strategy; returns the previous one."""
    previous = _Switches.fusion_strategy
    _Switches.fusion_strategy = list(strategy)
    return previous


@contextmanager
def fuser(name: str) -> Iterator[None]:
    """Choose a fuser (``"fuser0"``, ``"fuser1"``, ``"fuser2"``, ``"fuser3"``, ``"none"``)
    for the block."""
    if name not in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
        raise Exception(f"unrecognized fuser option (name: {name})")  # PyTorch's type
    yield


@contextmanager
def optimized_execution(should_optimize: bool) -> Iterator[None]:
    """Turn the graph executor's optimisations on or off for the block."""
    yield


class strict_fusion:  # a lower-case class: PyTorch's name
    """Inside scripted code, asserts that the block fused; outside it, does nothing."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def last_executed_optimized_graph() -> Any:
    """Refused: no optimised graph is executed by Plait's JIT."""
    raise RuntimeError("torch.jit.last_executed_optimized_graph: Plait's JIT runs recorded "
                       "graphs as traced and keeps no optimised graph")


def run_frozen_optimizations(mod: Any, optimize_numerics: bool = True,
                             preserved_methods: list[str] | None = None) -> None:
    """Run the optimisations of a frozen module (none here)."""


def export_opnames(m: Any) -> list[str]:
    """The operators a traced module's graphs call (``aten::addmm``...), sorted."""
    calls = getattr(m, "_traced_calls", None)
    if calls is None:
        raise RuntimeError("torch.jit.export_opnames lists the operators of a traced module; "
                           "scripted modules run as Python and have no operator list")
    return sorted({node.kind for traced in calls.values() for node in traced.graph.nodes})
