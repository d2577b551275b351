"""``torch.fx``: graphs of tensor programs (plait-compile, docs/architecture.md).

This distribution adds ``torch.fx`` to plait-core's ``torch`` package. ``Graph``, ``Node``,
``GraphModule``, ``symbolic_trace``, ``Interpreter`` and readable ``.code`` arrive with the
compile issue. Until then the names libraries mention in signatures and ``isinstance`` checks
exist (so they import), and creating one raises ``NotImplementedError`` saying so.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Graph", "GraphModule", "Node"]

_NOT_YET = ("torch.fx.{name} is not implemented in Plait yet (it arrives with plait-compile's "
            "graph capture)")


class _NotYet:
    """A torch.fx class that cannot be created yet: no instance ever exists, so ``isinstance``
    answers False and annotations resolve."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(_NOT_YET.format(name=cls.__name__))


class Graph(_NotYet):
    """A graph of operations (not implemented yet)."""


class Node(_NotYet):
    """One operation of a :class:`Graph` (not implemented yet)."""


class GraphModule(_NotYet):
    """A module whose forward runs a :class:`Graph` (not implemented yet)."""
