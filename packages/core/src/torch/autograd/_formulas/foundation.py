"""Derivative formulas: foundation."""

from __future__ import annotations

from . import derivative  # noqa: F401
