"""Op database rows: indexing."""

from __future__ import annotations

from . import OpInfo

OPS: list[OpInfo] = []
