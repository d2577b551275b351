"""PyTorch's older spellings of the autocast state, per device (``torch.is_autocast_cpu_enabled``,
``torch.get_autocast_gpu_dtype``...), each warning as PyTorch's do that it is deprecated, and
the nesting counter traced autocast code keeps (``torch.autocast_increment_nesting``)."""

from __future__ import annotations

import warnings

from torch._core import dtype as _dtype

from . import autocast_mode as _mode

__all__ = ["autocast_decrement_nesting", "autocast_increment_nesting", "get_autocast_cpu_dtype",
           "get_autocast_gpu_dtype", "is_autocast_cpu_enabled", "set_autocast_cpu_dtype",
           "set_autocast_cpu_enabled", "set_autocast_gpu_dtype"]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    """``torch.is_autocast_enabled("cpu")``."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _mode.is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """``torch.set_autocast_enabled("cpu", enabled)``."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _mode.set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> _dtype.dtype:
    """``torch.get_autocast_dtype("cpu")``."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _mode.get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype: _dtype.dtype) -> None:
    """``torch.set_autocast_dtype("cpu", dtype)``."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _mode.set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> _dtype.dtype:
    """``torch.get_autocast_dtype("cuda")``: float16 until set, as in PyTorch, whether or not a
    CUDA backend is installed."""
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _mode._local.dtypes.get("cuda", _dtype.float16)


def set_autocast_gpu_dtype(dtype: _dtype.dtype) -> None:
    """``torch.set_autocast_dtype("cuda", dtype)``."""
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    _mode.set_autocast_dtype("cuda", dtype)


def autocast_increment_nesting() -> int:
    """Enter one autocast level on this thread; returns the new depth."""
    _mode._local.depth += 1
    return _mode._local.depth


def autocast_decrement_nesting() -> int:
    """Leave one autocast level; the cast cache is cleared when the depth comes back to 0.
    Returns the new depth."""
    local = _mode._local
    local.depth = max(local.depth - 1, 0)
    if local.depth == 0:
        local.cache.clear()
    return local.depth
