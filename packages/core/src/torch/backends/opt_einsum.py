"""``torch.backends.opt_einsum``: whether the ``opt_einsum`` package is installed, and the
contraction-order switches PyTorch reads from it (``enabled``, ``strategy``). Plait's einsum
contracts in the order written, so the switches are recorded for programs that set them."""

from __future__ import annotations

import importlib.util
from types import ModuleType

__all__ = ["enabled", "get_opt_einsum", "is_available", "strategy"]


def is_available() -> bool:
    """Whether the ``opt_einsum`` package can be imported."""
    return importlib.util.find_spec("opt_einsum") is not None


def get_opt_einsum() -> ModuleType | None:
    """The ``opt_einsum`` package, or None when it is not installed."""
    return importlib.import_module("opt_einsum") if is_available() else None


# As in PyTorch: on when the package is there; "auto" strategy then, None without it.
enabled: bool = is_available()
strategy: str | None = "auto" if enabled else None
