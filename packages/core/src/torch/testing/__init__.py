"""``torch.testing``: ``assert_close``, ``make_tensor``, the op database (``_opdb``) and the
backend conformance suite (``_conformance``; ``pytest --torch-backend=NAME``).

Attributes load on first use: the conformance suite's pytest plugin imports this package in
every pytest run, and numpy (which the comparisons need) must not slow those down.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["assert_allclose", "assert_close", "coverage", "format_coverage", "make_tensor"]

_LAZY = {
    "assert_close": "._comparison",
    "assert_allclose": "._comparison",
    "make_tensor": "._creation",
    "coverage": "._conformance",
    "format_coverage": "._conformance",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'torch.testing' has no attribute '{name}'")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
