"""``torch.distributions``: probability distributions (so far their constraints).

``torch.distributions.constraints`` is here with PyTorch's names; the distributions themselves
(Normal, Categorical, ... with ``rsample``/``log_prob``/``entropy``, ``kl_divergence``) arrive
with their own work. Asking for one of them raises an ``AttributeError`` that says so.
"""

from __future__ import annotations

from typing import Any

from . import constraints
from .constraints import Constraint

__all__ = ["Constraint", "constraints"]


def __getattr__(name: str) -> Any:
    raise AttributeError(f"module 'torch.distributions' has no attribute '{name}' (Plait has "
                         "the constraints of torch.distributions so far, not its distributions)")
