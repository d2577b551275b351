"""``torch.toy``: two pretend devices."""

from __future__ import annotations

from typing import Any

_current = 0


def is_available() -> bool:
    return True


def device_count() -> int:
    return 2


def current_device() -> int:
    return _current


def set_device(index: int) -> None:
    global _current
    if not 0 <= index < device_count():
        raise RuntimeError(f"toy device index {index} out of range [0, {device_count()})")
    _current = index


def synchronize(device: Any = None) -> None:
    import torch
    from torch.backends import _registry

    index = _current if device is None else torch.device(device).index or 0
    _registry.synchronize("toy", index)
