"""Op database rows: linalg."""

from __future__ import annotations

from . import OpInfo

OPS: list[OpInfo] = []
