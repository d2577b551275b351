"""``torch.utils.hooks.RemovableHandle``: what every ``register_*_hook`` returns, for tensors,
autograd nodes, modules and optimizers alike. Defined in autograd, the lowest layer that
registers hooks; :mod:`torch.utils.hooks` re-exports this same class."""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["RemovableHandle"]


def _ref(d: dict[int, Any]) -> Callable[[], dict[int, Any] | None]:
    """A weak reference where the dict allows one (so a handle never keeps the hooks' owner
    alive), else a strong one (plain ``dict`` takes no weak references)."""
    try:
        return weakref.ref(d)
    except TypeError:
        return lambda: d


class RemovableHandle:
    """``handle.remove()`` takes hook ``handle.id`` out of ``hooks_dict`` and out of every
    ``extra_dict`` (tables of per-hook flags, such as a module's ``with_kwargs`` set)."""

    _ids = itertools.count()

    def __init__(self, hooks_dict: dict[int, Any], *,
                 extra_dict: dict[int, Any] | Iterable[dict[int, Any]] | None = None) -> None:
        self.id = next(RemovableHandle._ids)
        extras = () if extra_dict is None else (
            (extra_dict,) if isinstance(extra_dict, dict) else tuple(extra_dict))
        self._refs = [_ref(d) for d in (hooks_dict, *extras)]

    def remove(self) -> None:
        """Unregister the hook (a second call does nothing)."""
        for ref in self._refs:
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


RemovableHandle.__module__ = "torch.utils.hooks"  # its public home, as in PyTorch
