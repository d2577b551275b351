"""Op database rows: reductions."""

from __future__ import annotations

from . import OpInfo

OPS: list[OpInfo] = []
