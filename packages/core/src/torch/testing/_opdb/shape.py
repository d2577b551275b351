"""Op database rows: shape."""

from __future__ import annotations

from . import OpInfo

OPS: list[OpInfo] = []
