"""``DataParallel``: run a module over the devices of the accelerator, the batch split between
them. Plait does not replicate a module over several devices yet: the whole batch runs on the
first device (the same numbers, except for batch statistics, which see the whole batch). With
no accelerator, as on PyTorch's CPU build, there are no device ids and the wrapper calls the
module where it is. The state dict carries the wrapper's ``module.`` prefix."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch.nn.modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


def _accelerator() -> tuple[str | None, list[int]]:
    """The accelerator's device type and the indices of its devices (none without one)."""
    found = torch.accelerator.current_accelerator(check_available=True)
    if found is None:
        return None, []
    return found.type, list(range(torch.accelerator.device_count()))


def _index(device: Any) -> int:
    return device if isinstance(device, int) else torch.device(device).index or 0


def _moved(value: Any, device: torch.device) -> Any:
    """``value`` with the tensors in it (through tuples, lists and dicts) moved to ``device``."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (tuple, list)):
        return type(value)(_moved(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _moved(v, device) for k, v in value.items()}
    return value


class DataParallel(Module):
    """Runs ``module`` (``self.module``) on the batch, on the accelerator's first device."""

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None,
                 output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.dim = dim
        device_type, available = _accelerator()
        ids = available if device_ids is None else [_index(d) for d in device_ids]
        if device_type is None:
            ids = []
        self.device_ids = ids
        self.output_device = _index(output_device if output_device is not None else
                                    ids[0]) if ids else None
        self.src_device_obj = torch.device(device_type, ids[0]) if ids else None
        if self.src_device_obj is not None:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self.src_device_obj is None:
            return self.module(*inputs, **kwargs)
        device = self.src_device_obj
        out = self.module(*_moved(inputs, device), **_moved(kwargs, device))
        if self.output_device != device.index:
            out = _moved(out, torch.device(device.type, self.output_device))
        return out


def data_parallel(module: Module, inputs: Any, device_ids: Sequence[Any] | None = None,
                  output_device: Any = None, dim: int = 0,
                  module_kwargs: dict[str, Any] | None = None) -> Any:
    """The functional form of :class:`DataParallel`: ``module(*inputs, **module_kwargs)``."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))
