"""``torch.backends.openmp``: whether the CPU kernels are built with OpenMP (Plait's are not;
they run their own threads)."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether OpenMP is built in: never, in Plait."""
    return False
