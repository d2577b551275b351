"""A logging dispatch mode for the tests that check which aten overloads a call reaches."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode


class OpLog(TorchDispatchMode):
    """Records the overload names of every call."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


def ops_seen(call: Callable[[], Any]) -> list[str]:
    """The overload names ``call()`` reaches, in order."""
    log = OpLog()
    with log:
        call()
    return log.names
