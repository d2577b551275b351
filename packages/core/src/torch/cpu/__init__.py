"""``torch.cpu``: the host's device module (always available)."""

from __future__ import annotations

from typing import Any

__all__ = ["Stream", "current_device", "device_count", "is_available", "synchronize"]


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device: Any = None) -> None:
    """CPU work is synchronous: nothing to wait for."""


class Stream:
    """A no-op stream: CPU kernels run in order on the calling thread."""

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream: Stream) -> None:
        pass

    def synchronize(self) -> None:
        pass


def current_stream(device: Any = None) -> Stream:
    return Stream()


def __getattr__(name: str) -> Any:
    """``torch.cpu.amp`` on first access (it loads the op surface)."""
    if name == "amp":
        import importlib

        return importlib.import_module(f"{__name__}.amp")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
