"""``torch.amp.custom_fwd`` / ``torch.amp.custom_bwd``: decorators for the ``forward`` and
``backward`` of an :class:`torch.autograd.Function` so that they run under autocast as
PyTorch's do.

``custom_fwd`` records, on the ``ctx``, whether autocast was on for the device when the forward
ran; with ``cast_inputs`` it runs the forward with autocast off and its floating-point tensor
arguments cast to that dtype. ``custom_bwd`` runs the backward with the autocast state that the
forward recorded (the engine runs backward outside any ``autocast`` region).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["custom_bwd", "custom_fwd"]


def _cast(value: Any, device_type: str, dtype: Any) -> Any:
    """``value`` with its floating-point tensors on ``device_type`` cast to ``dtype``
    (recursing into lists, tuples and dicts)."""
    import torch

    if isinstance(value, torch.Tensor):
        on_device = value.device.type == device_type
        return value.to(dtype) if on_device and value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, device_type, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd: Callable[..., Any] | None = None, *, device_type: str,
               cast_inputs: Any = None) -> Callable[..., Any]:
    """Decorate an autograd Function's ``forward`` (``@custom_fwd(device_type="cuda")``).

    Without ``cast_inputs`` the forward runs in the surrounding autocast state; with it (and
    autocast on for ``device_type``) the forward runs with autocast off and its floating-point
    tensor arguments on that device cast to ``cast_inputs``."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        import torch

        ctx = args[0]
        ctx._dtype = torch.get_autocast_dtype(device_type)
        enabled_outside = torch.is_autocast_enabled(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = enabled_outside
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not enabled_outside:
            return fwd(*args, **kwargs)
        with torch.autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs),
                       **_cast(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd: Callable[..., Any] | None = None, *,
               device_type: str) -> Callable[..., Any]:
    """Decorate an autograd Function's ``backward``: it runs with the autocast state (enabled,
    dtype) that the ``custom_fwd``-decorated forward saw."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        import torch

        ctx = args[0]
        with torch.autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                            dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
