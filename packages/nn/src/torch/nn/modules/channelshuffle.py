"""``torch.nn.modules.channelshuffle``: PyTorch's path for ``ChannelShuffle`` (defined with the
pixel shuffles), the module name pickles record for it."""

from __future__ import annotations

from .pixelshuffle import ChannelShuffle

__all__ = ["ChannelShuffle"]

ChannelShuffle.__module__ = __name__
