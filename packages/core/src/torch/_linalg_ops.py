"""Matrix products and friends: mm, bmm, matmul, mv, addmm, baddbmm, einsum, tensordot, kron, dot,
outer, cross, trace."""

from __future__ import annotations

from typing import Any

# Public functions of torch defined here (the facade serves them lazily).
__all__: list[str] = []
# Tensor method name -> function, bound onto Tensor when the op surface loads.
METHODS: dict[str, Any] = {}
