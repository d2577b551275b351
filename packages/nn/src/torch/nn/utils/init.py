"""``torch.nn.utils.init``: build a module without running its parameter initialisation."""

from __future__ import annotations

import inspect
from typing import Any, TypeVar

from torch.nn.modules.module import Module

__all__ = ["skip_init"]

_ModuleT = TypeVar("_ModuleT", bound=Module)


def skip_init(module_cls: type[_ModuleT], *args: Any, **kwargs: Any) -> _ModuleT:
    """Instantiate ``module_cls(*args, **kwargs)`` with uninitialised parameters and buffers.

    The module is built on the meta device (so its initialisers touch no memory) and then
    given empty storage on ``kwargs["device"]`` (default ``"cpu"``); the class must accept a
    ``device`` keyword, as PyTorch requires.
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
