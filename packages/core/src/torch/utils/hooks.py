"""``torch.utils.hooks``: :class:`RemovableHandle`, what every ``register_*_hook`` returns
(defined in :mod:`torch.autograd`, the lowest layer that registers hooks; the same class), and
the marks for hooks that a saved tensor cannot carry."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ..autograd._handles import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``f`` as a hook that is not saved with its tensor, so that
    :func:`warn_if_has_hooks` stays silent about it."""
    f.__torch_unserializable__ = True  # type: ignore[attr-defined]
    return f


def warn_if_has_hooks(tensor: Any) -> None:
    """Warn for each backward hook of ``tensor`` that is not marked
    :func:`unserializable_hook`: serialization drops hooks."""
    hooks = getattr(tensor, "_backward_hooks", None)
    if not hooks:
        return
    for hook in hooks.values():
        if not getattr(hook, "__torch_unserializable__", False):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                          "is expected, you can decorate the function with "
                          "@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)
