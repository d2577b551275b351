"""The deprecated per-device spellings of :mod:`torch.amp` (``torch.cuda.amp.autocast``,
``torch.cpu.amp.GradScaler``...): subclasses and wrappers that emit PyTorch's FutureWarning and
then work as ``torch.amp``'s with the device type filled in.

:func:`aliases` makes them for one device type; ``torch.cuda.amp`` and ``torch.cpu.amp`` are
modules that take their names from it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from .autocast_mode import autocast as _autocast
from .custom_autograd import custom_bwd as _custom_bwd, custom_fwd as _custom_fwd
from .grad_scaler import GradScaler as _GradScaler


def _deprecated(what: str, device_type: str, replacement: str) -> None:
    # stacklevel 3: the caller of the alias's constructor or decorator
    warnings.warn(f"`torch.{device_type}.amp.{what}(args...)` is deprecated. Please use "
                  f"`{replacement}` instead.", FutureWarning, stacklevel=3)


def aliases(device_type: str, default_dtype: Any = None) -> dict[str, Any]:
    """``autocast``, ``GradScaler``, ``custom_fwd`` and ``custom_bwd`` bound to
    ``device_type``, each warning that it is deprecated. ``default_dtype`` is the autocast
    dtype when none is given (None: the device's autocast dtype)."""

    class autocast(_autocast):
        """Deprecated: ``torch.amp.autocast(device_type, ...)``."""

        def __init__(self, enabled: bool = True, dtype: Any = None,
                     cache_enabled: bool = True) -> None:
            _deprecated("autocast", device_type,
                        f"torch.amp.autocast('{device_type}', args...)")
            super().__init__(device_type, dtype=default_dtype if dtype is None else dtype,
                             enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(_GradScaler):
        """Deprecated: ``torch.amp.GradScaler(device_type, ...)``."""

        def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                     backoff_factor: float = 0.5, growth_interval: int = 2000,
                     enabled: bool = True) -> None:
            _deprecated("GradScaler", device_type,
                        f"torch.amp.GradScaler('{device_type}', args...)")
            super().__init__(device_type, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval,
                             enabled=enabled)

    def custom_fwd(fwd: Callable[..., Any] | None = None, *,
                   cast_inputs: Any = None) -> Callable[..., Any]:
        """Deprecated: ``torch.amp.custom_fwd(fwd, device_type=..., cast_inputs=...)``."""
        _deprecated("custom_fwd", device_type,
                    f"torch.amp.custom_fwd(args..., device_type='{device_type}')")
        return _custom_fwd(fwd, device_type=device_type, cast_inputs=cast_inputs)

    def custom_bwd(bwd: Callable[..., Any] | None = None) -> Callable[..., Any]:
        """Deprecated: ``torch.amp.custom_bwd(bwd, device_type=...)``."""
        _deprecated("custom_bwd", device_type,
                    f"torch.amp.custom_bwd(args..., device_type='{device_type}')")
        return _custom_bwd(bwd, device_type=device_type)

    prefix = f"torch.{device_type}.amp"
    for obj in (autocast, GradScaler, custom_fwd, custom_bwd):
        obj.__module__ = prefix
        obj.__qualname__ = obj.__name__
    return {"autocast": autocast, "GradScaler": GradScaler, "custom_fwd": custom_fwd,
            "custom_bwd": custom_bwd}
