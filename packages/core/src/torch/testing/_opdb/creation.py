"""Op database rows: creation."""

from __future__ import annotations

from . import OpInfo

OPS: list[OpInfo] = []
