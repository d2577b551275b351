"""``torch.fx._compatibility``: the marker PyTorch puts on fx APIs, which libraries that extend
fx (transformers' tracer among them) apply to their own classes. Here it only records the
promise on the object."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["compatibility"]

_T = TypeVar("_T")


def compatibility(is_backward_compatible: bool) -> Callable[[_T], _T]:
    """A decorator that marks a function or class as (not) backward compatible and returns
    it unchanged."""

    def mark(fn: _T) -> _T:
        try:
            fn._fx_backward_compatible = is_backward_compatible  # type: ignore[attr-defined]
        except (AttributeError, TypeError):
            pass
        return fn

    return mark
