"""Placeholders for the parts of torch.distributed that are not built yet (DTensor, FSDP,
DeviceMesh: docs/distributed.md, "Later"). Libraries import these names at module level when
``torch.distributed.is_available()`` is true; the names exist so their modules load, and using
one raises ``NotImplementedError`` saying what is missing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

__all__ = ["not_built_class", "not_built_function"]


def _refuse(what: str) -> NoReturn:
    raise NotImplementedError(f"{what} is not built in Plait yet: torch.distributed offers "
                              f"process groups, collectives and DistributedDataParallel")


def not_built_class(name: str, what: str) -> type:
    """A class whose construction raises (``isinstance`` checks simply answer False)."""

    def refuse(cls: type, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse(what)

    return type(name, (), {"__new__": refuse, "__doc__": f"{what}: not built yet."})


def not_built_function(name: str, what: str) -> Callable[..., NoReturn]:
    """A function that raises when called."""

    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        _refuse(what)

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"{what}: not built yet."
    return refuse
