"""``torch.testing``: ``assert_close``, ``make_tensor`` and the op database (``_opdb``)."""

from __future__ import annotations

from ._comparison import assert_close
from ._creation import make_tensor

__all__ = ["assert_close", "make_tensor"]
