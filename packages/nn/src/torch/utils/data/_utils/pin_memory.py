"""Pinning a batch for ``DataLoader(pin_memory=True)``: every tensor of a (nested) batch goes
to pinned host memory, so its copy to the accelerator can be asynchronous."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

__all__ = ["pin_memory"]


def pin_memory(data: Any, device: Any = None) -> Any:
    """``data`` with each tensor pinned: tensors, mappings, named tuples, tuples and lists are
    rebuilt with their own types; an object with a ``pin_memory()`` method (a custom batch) is
    asked to pin itself; anything else is returned as it is."""
    if isinstance(data, torch.Tensor):
        return data.pin_memory(device)
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, Mapping):
        pinned = {key: pin_memory(value, device) for key, value in data.items()}
        try:
            return type(data)(pinned)  # type: ignore[call-arg]
        except TypeError:  # a mapping type that cannot be built from a dict
            return pinned
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple
        return type(data)(*(pin_memory(value, device) for value in data))
    if isinstance(data, Sequence):
        items = [pin_memory(value, device) for value in data]
        if isinstance(data, tuple):
            return tuple(items)
        try:
            return type(data)(items)  # type: ignore[call-arg]
        except TypeError:
            return items
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
