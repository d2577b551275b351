"""The distributed package's error types (all ``RuntimeError``s, as PyTorch's are)."""

from __future__ import annotations

__all__ = ["DistBackendError", "DistError", "DistNetworkError", "DistStoreError"]


class DistError(RuntimeError):
    """An error of the distributed package."""


class DistBackendError(DistError):
    """The engine failed a collective (a timeout, a peer that is gone)."""


class DistNetworkError(DistError):
    """A connection between processes failed."""


class DistStoreError(DistError):
    """A store operation failed or timed out."""
