"""Op database rows: elementwise."""

from __future__ import annotations

from . import OpInfo

OPS: list[OpInfo] = []
