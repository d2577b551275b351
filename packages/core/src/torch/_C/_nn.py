"""``torch._C._nn``: the argument parsing PyTorch's native nn module exposes and libraries call
(``torch._C._nn._parse_to`` reads ``Module.to``'s arguments)."""

from __future__ import annotations

from typing import Any

from .._core.device import device as _device
from .._core.dtype import dtype as _dtype
from .._core.tensor import Tensor

__all__ = ["_parse_to"]


def _parse_to(*args: Any, **kwargs: Any) -> tuple[Any, Any, bool, Any]:
    """``Module.to``'s (and ``Tensor.to``'s) arguments as ``(device, dtype, non_blocking,
    memory_format)``: ``to(device)``, ``to(dtype)``, ``to(tensor)``, ``to(device, dtype)`` and
    the keyword forms."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    memory_format = kwargs.pop("memory_format", None)
    kwargs.pop("copy", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments: "
                        f"{', '.join(kwargs)}")
    for a in args:
        if isinstance(a, _dtype):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, bool):
            non_blocking = a
        elif a is not None:
            device = _device(a)
    if device is not None:
        device = _device(device)
    return device, dtype, non_blocking, memory_format
