"""``torch.backends.mkldnn``: the oneDNN switches programs set. Plait is not built on oneDNN,
so :func:`is_available` answers False; the switches are kept so that programs which set or
save them (``with torch.backends.mkldnn.flags(enabled=False)``) run unchanged."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

__all__ = ["enabled", "deterministic", "allow_tf32", "flags", "is_available"]

enabled = True
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """Whether oneDNN (MKL-DNN) kernels are built in: never, in Plait."""
    return False


@contextlib.contextmanager
def flags(enabled: bool = False, deterministic: bool = False, allow_tf32: bool = True,
          fp32_precision: str = "none") -> Iterator[None]:
    """Set the switches for a block, restoring the previous values after it."""
    module = sys.modules[__name__]
    names = ("enabled", "deterministic", "allow_tf32")
    saved = {name: getattr(module, name) for name in names}
    for name, value in zip(names, (enabled, deterministic, allow_tf32)):
        setattr(module, name, bool(value))
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)
