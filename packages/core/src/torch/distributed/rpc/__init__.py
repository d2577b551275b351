"""``torch.distributed.rpc``: importable, answering as PyTorch built without RPC support does.

PyTorch defines the RPC API only where it was built with it; elsewhere this package holds
:func:`is_available` alone, and libraries check it (or ``hasattr(rpc, "api")``) before use.
"""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether the RPC framework is built in: not in Plait."""
    return False
