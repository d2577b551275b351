"""``torch.backends.cudnn``: cuDNN switches; available only when a CUDA backend that ships
cuDNN support is loaded and a device is present."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from .._core import registry as _registry

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """Whether a CUDA backend with cuDNN support is loaded and has a device."""
    if "cudnn" not in _registry.capabilities("cuda"):
        return False
    mod = _registry.device_module("cuda")
    return bool(mod is not None and mod.is_available())


def version() -> Any:
    """The cuDNN version the CUDA backend reports, or None without one."""
    if not is_available():
        return None
    mod = _registry.device_module("cuda")
    return getattr(mod, "cudnn_version", lambda: None)()


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True, fp32_precision: str = "none",
          depthwise_kernel: str = "auto") -> Iterator[None]:
    """Set the switches for a block, restoring the previous values after it (PyTorch's
    defaults: everything off but TF32, as its ``flags`` context)."""
    module = sys.modules[__name__]
    values = {"enabled": bool(enabled), "benchmark": bool(benchmark),
              "benchmark_limit": int(benchmark_limit), "deterministic": bool(deterministic),
              "allow_tf32": bool(allow_tf32)}
    saved = {name: getattr(module, name) for name in values}
    for name, value in values.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)
