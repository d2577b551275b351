"""``torch.cpu.amp``: PyTorch's deprecated spellings of ``torch.amp.autocast("cpu", ...)`` and
``torch.amp.GradScaler("cpu", ...)`` (autocast's dtype defaults to bfloat16)."""

from __future__ import annotations

import torch
from torch.amp._deprecated_aliases import aliases as _aliases

__all__ = ["GradScaler", "autocast"]

_names = _aliases("cpu", default_dtype=torch.bfloat16)
autocast = _names["autocast"]
GradScaler = _names["GradScaler"]
del _names
