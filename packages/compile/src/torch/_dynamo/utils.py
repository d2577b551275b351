"""``torch._dynamo.utils``: ``counters`` (graph breaks by reason, ``stats`` of compiles) and
``is_compile_supported``."""

from __future__ import annotations

from typing import Any

from torch._dynamo._cache import counters

__all__ = ["counters", "is_compile_supported"]


def is_compile_supported(device_type: Any) -> bool:
    """Whether ``torch.compile`` can compile code running on ``device_type`` (a type name or
    a ``torch.device``): on every device type a backend serves, since a group of operators no
    code generator takes runs through the fused interpreter over the backend's own kernels
    (docs/compile.md). An unknown device type raises ``RuntimeError``, as ``torch.device``
    does."""
    import torch

    torch.device(device_type)  # validates the name (an unknown type raises)
    return True
