"""``torch.cpu.amp``: PyTorch's deprecated spelling of ``torch.amp.autocast("cpu", ...)``."""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch.amp.autocast_mode import autocast as _autocast

__all__ = ["autocast"]


class autocast(_autocast):
    """``torch.cpu.amp.autocast(enabled=True, dtype=torch.bfloat16, cache_enabled=True)``:
    warns that it is deprecated, then works as ``torch.amp.autocast("cpu", ...)``."""

    def __init__(self, enabled: bool = True, dtype: Any = None,
                 cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", dtype=torch.bfloat16 if dtype is None else dtype,
                         enabled=enabled, cache_enabled=cache_enabled)
