"""Reductions, scans, sorting and statistics: sum/mean/std/var, max/min with indices, cumsum,
sort/topk, unique, searchsorted, histc, bincount."""

from __future__ import annotations

from typing import Any

# Public functions of torch defined here (the facade serves them lazily).
__all__: list[str] = []
# Tensor method name -> function, bound onto Tensor when the op surface loads.
METHODS: dict[str, Any] = {}
