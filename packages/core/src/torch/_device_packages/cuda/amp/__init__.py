"""``torch.cuda.amp``: PyTorch's deprecated spellings of ``torch.amp`` for ``"cuda"``
(``autocast``, ``GradScaler``, ``custom_fwd``, ``custom_bwd``). They work without a CUDA
backend as on PyTorch's CPU-only install: ``autocast(enabled=False)`` is a no-op and
``GradScaler()`` warns that CUDA is unavailable and disables itself."""

from __future__ import annotations

from torch.amp._deprecated_aliases import aliases as _aliases

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]

_names = _aliases("cuda")
autocast = _names["autocast"]
GradScaler = _names["GradScaler"]
custom_fwd = _names["custom_fwd"]
custom_bwd = _names["custom_bwd"]
del _names
