"""``torch._dynamo.utils``: ``counters`` (graph breaks by reason, ``stats`` of compiles)."""

from __future__ import annotations

from torch._dynamo._cache import counters

__all__ = ["counters"]
