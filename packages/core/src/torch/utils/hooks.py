"""``torch.utils.hooks``: :class:`RemovableHandle`, what every ``register_*_hook`` returns
(defined in :mod:`torch.autograd`, the lowest layer that registers hooks; the same class)."""

from __future__ import annotations

from ..autograd._handles import RemovableHandle

__all__ = ["RemovableHandle"]
