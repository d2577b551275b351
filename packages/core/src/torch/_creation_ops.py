"""Creation beyond the basic factories: arange, linspace, logspace, eye, tril/triu, from_numpy,
as_tensor, asarray, complex, polar, DLPack."""

from __future__ import annotations

from typing import Any

# Public functions of torch defined here (the facade serves them lazily).
__all__: list[str] = []
# Tensor method name -> function, bound onto Tensor when the op surface loads.
METHODS: dict[str, Any] = {}
