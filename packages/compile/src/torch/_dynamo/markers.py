"""The markers libraries put on functions and tensors for graph capture.

With graph capture not implemented yet (every model runs eagerly), they leave what they mark
unchanged; ``torch.compiler`` (in core) answers the same for the public names.
"""

from __future__ import annotations

from typing import Any

from torch.compiler import allow_in_graph, assume_constant_result, disable, is_compiling

__all__ = ["allow_in_graph", "assume_constant_result", "disable", "is_compiling",
           "mark_dynamic", "mark_static", "mark_static_address", "maybe_mark_dynamic", "reset"]


def mark_static_address(t: Any, guard: bool = True) -> None:
    """Mark ``t``'s storage as fixed between calls (for CUDA graphs); nothing to record yet."""


def mark_dynamic(t: Any, index: Any, *, min: int | None = None, max: int | None = None) -> None:
    """Mark dimension(s) ``index`` of ``t`` as dynamic for tracing; nothing to record yet."""


def maybe_mark_dynamic(t: Any, index: Any) -> None:
    """Hint that dimension(s) ``index`` of ``t`` may vary; nothing to record yet."""


def mark_static(t: Any, index: Any = None) -> None:
    """Mark dimension(s) ``index`` of ``t`` as static for tracing; nothing to record yet."""


def reset() -> None:
    """Clear compiled code caches: there are none until graph capture."""
