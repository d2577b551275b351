"""``torch.nn.parallel.scatter_gather``: split a batch over devices and collect outputs back,
the pieces of data parallelism (captum and other libraries call them directly).

Devices given as integers are the current accelerator's (``torch.accelerator``); a
``torch.device`` or string names any device, the CPU included. Tensors are split into
``len(target_devices)`` chunks along ``dim`` (as ``Tensor.chunk`` does) and each chunk moved to
its device; tuples, named tuples, lists and dicts are scattered element by element, and other
objects go to every device as they are. ``gather`` concatenates along ``dim`` on the target.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

__all__ = ["gather", "is_namedtuple", "scatter", "scatter_kwargs"]


def is_namedtuple(obj: Any) -> bool:
    """Whether ``obj`` is a named tuple (a tuple with ``_fields``)."""
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def _device(target: Any) -> torch.device:
    if isinstance(target, torch.device):
        return target
    if isinstance(target, str):
        return torch.device(target)
    if isinstance(target, int):
        if target == -1:
            return torch.device("cpu")
        accelerator = torch.accelerator.current_accelerator()
        if accelerator is None:
            raise RuntimeError(f"device index {target} names an accelerator device, and no "
                               "accelerator is available")
        return torch.device(accelerator.type, target)
    raise TypeError(f"expected a device, a device string or an index, got {type(target)}")


def scatter(inputs: Any, target_gpus: Sequence[Any], dim: int = 0) -> list[Any]:
    """``inputs`` split over ``target_gpus``: one piece per device (fewer when a tensor has
    fewer slices along ``dim`` than there are devices)."""
    devices = [_device(t) for t in target_gpus]

    def split(obj: Any) -> list[Any]:
        if isinstance(obj, torch.Tensor):
            return [chunk.to(device) for chunk, device in
                    zip(obj.chunk(len(devices), dim), devices)]
        if is_namedtuple(obj):
            return [type(obj)(*parts) for parts in zip(*map(split, obj))]
        if isinstance(obj, tuple) and obj:
            return list(zip(*map(split, obj)))
        if isinstance(obj, list) and obj:
            return [list(parts) for parts in zip(*map(split, obj))]
        if isinstance(obj, dict) and obj:
            return [type(obj)(parts) for parts in zip(*map(split, obj.items()))]
        return [obj for _ in devices]

    return split(inputs)


def scatter_kwargs(inputs: tuple[Any, ...], kwargs: dict[str, Any] | None,
                   target_gpus: Sequence[Any], dim: int = 0
                   ) -> tuple[tuple[Any, ...], tuple[dict[str, Any], ...]]:
    """Positional and keyword arguments scattered alike, padded so that both have one entry
    per piece."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs: Any, target_device: Any, dim: int = 0) -> Any:
    """The per-device ``outputs`` (a list, one per device) joined on ``target_device`` (-1: the
    CPU): tensors concatenated along ``dim``, containers element by element."""
    device = _device(target_device)

    def join(pieces: list[Any]) -> Any:
        first = pieces[0]
        if isinstance(first, torch.Tensor):
            return torch.cat([p.to(device) for p in pieces], dim)
        if first is None:
            return None
        if isinstance(first, dict):
            if not all(len(first) == len(p) for p in pieces):
                raise ValueError("All dicts must have the same number of keys")
            return type(first)((key, join([p[key] for p in pieces])) for key in first)
        if is_namedtuple(first):
            return type(first)._make(map(join, zip(*pieces)))
        return type(first)(map(join, zip(*pieces)))

    return join(list(outputs))
