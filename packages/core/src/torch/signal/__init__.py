"""``torch.signal``: signal-processing helpers, as PyTorch's namespace has them (its
``windows`` module)."""

from __future__ import annotations

from . import windows

__all__ = ["windows"]
