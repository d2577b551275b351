"""``torch.utils._contextlib``: the base of context managers that also decorate functions
(``torch.no_grad`` and the others), which libraries subclass for their own switches."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch._core.grad_mode import (
    _DecoratorContextManager,
    _NoParamDecorator as _NoParamDecoratorContextManager,
)

__all__ = ["_DecoratorContextManager", "_NoParamDecoratorContextManager", "context_decorator"]


def context_decorator(ctx: Callable[[], Any], func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` run inside a fresh ``ctx()`` at each call (generators: around each step)."""

    class _Factory(_DecoratorContextManager):
        def clone(self) -> Any:
            return ctx()

    return _Factory()(func)
