"""``torch.jit``: the questions and decorators libraries use around TorchScript.

Code written to also run under TorchScript asks ``torch.jit.is_scripting()`` and
``is_tracing()`` and marks functions with ``@torch.jit.ignore``, ``unused`` or ``export``.
Plait runs everything eagerly: the questions answer False and the decorators return what they
decorate. (``script``, ``trace``, ``save`` and ``load`` come with a later issue.)
"""

from __future__ import annotations

from collections.abc import Callable

# Final: TorchScript's name for a constant attribute annotation, typing's own (as in PyTorch).
from typing import Any, Final, TypeVar

__all__ = ["Final", "export", "ignore", "is_scripting", "is_tracing", "unused"]

_F = TypeVar("_F", bound=Callable[..., Any])


def is_scripting() -> bool:
    """Whether the caller is being compiled by TorchScript (never here)."""
    return False


def is_tracing() -> bool:
    """Whether the caller is being traced by ``torch.jit.trace`` (never here)."""
    return False


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """Leave a function to Python when scripting: ``@ignore`` or ``@ignore(drop=True)``.

    :returns: the function unchanged, or a decorator that returns it unchanged.
    """
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: _F) -> _F:
    """Mark a method that scripting should replace by an exception; returned unchanged."""
    return fn


def export(fn: _F) -> _F:
    """Mark a method that scripting should compile as an entry point; returned unchanged."""
    return fn
