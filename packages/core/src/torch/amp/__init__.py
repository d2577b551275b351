"""``torch.amp``: automatic mixed precision (``autocast``), as in PyTorch."""

from .autocast_mode import autocast, is_autocast_available

__all__ = ["autocast", "is_autocast_available"]
