"""``torch.testing``: ``assert_close``, ``make_tensor`` and the op database (``_opdb``)."""

from __future__ import annotations
