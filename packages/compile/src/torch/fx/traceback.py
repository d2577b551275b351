"""``torch.fx.traceback``: the node metadata that passes carry from old nodes to new ones.

Plait's :class:`~torch.fx.Transformer` copies each node's ``meta`` into the node that replaces
it in every case, so :func:`preserve_node_meta` has nothing to switch on; the functions exist
for code written against PyTorch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["format_stack", "get_current_meta", "has_preserved_node_meta",
           "preserve_node_meta", "set_current_meta"]

_state: dict[str, Any] = {"preserve": 0, "current": {}}


@contextlib.contextmanager
def preserve_node_meta(enable: bool = True) -> Iterator[None]:
    """A block inside which node metadata is preserved (always the case in Plait)."""
    _state["preserve"] += 1
    try:
        yield
    finally:
        _state["preserve"] -= 1


def has_preserved_node_meta() -> bool:
    """Whether a :func:`preserve_node_meta` block is active."""
    return bool(_state["preserve"])


@contextlib.contextmanager
def set_current_meta(node: Any, pass_name: str = "") -> Iterator[None]:
    """Make ``node``'s meta the current meta for the block."""
    previous = _state["current"]
    _state["current"] = dict(getattr(node, "meta", {}) or {})
    try:
        yield
    finally:
        _state["current"] = previous


def get_current_meta() -> dict[str, Any]:
    """The meta set by the innermost :func:`set_current_meta` block (empty outside)."""
    return _state["current"]


def format_stack() -> list[str]:
    """The stack trace recorded in the current meta, as lines."""
    trace = _state["current"].get("stack_trace")
    return [trace] if trace else []
