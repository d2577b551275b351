"""``torch.backends.cuda``: the CUDA switches programs set at start-up (``matmul.allow_tf32``,
the scaled-dot-product-attention kernel choices), available whatever backend is installed.

``matmul.allow_tf32`` is another view of ``torch.set_float32_matmul_precision``, as in PyTorch
("highest" means no TF32). The attention switches are recorded for the CUDA backend to read; the
reference and CPU kernels have one attention path and ignore them, as PyTorch's CPU build does.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from .._core import config as _config, registry as _registry

__all__ = ["cudnn_sdp_enabled", "enable_cudnn_sdp", "enable_flash_sdp", "enable_math_sdp",
           "enable_mem_efficient_sdp", "flash_sdp_enabled", "is_built", "math_sdp_enabled",
           "matmul", "mem_efficient_sdp_enabled", "sdp_kernel"]


def is_built() -> bool:
    """Whether a CUDA backend is installed and loaded (PyTorch: built with CUDA)."""
    return _registry.device_module("cuda") is not None


class _CublasSwitches:
    """``torch.backends.cuda.matmul``: cuBLAS switches; unknown names raise, as in PyTorch."""

    _NAMES = ("allow_tf32", "allow_fp16_reduced_precision_reduction",
              "allow_bf16_reduced_precision_reduction", "allow_fp16_accumulation")

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {"allow_fp16_reduced_precision_reduction": True,
                                            "allow_bf16_reduced_precision_reduction": True,
                                            "allow_fp16_accumulation": False})

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            return _config.get_float32_matmul_precision() != "highest"
        if name in self._NAMES:
            return self._flags[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            _config.set_float32_matmul_precision("high" if value else "highest")
        elif name in self._NAMES:
            self._flags[name] = bool(value)
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = _CublasSwitches()

# scaled_dot_product_attention kernel choices, all allowed by default
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled() -> bool:
    """Whether the flash attention kernel may be chosen."""
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid the flash attention kernel."""
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient attention kernel may be chosen."""
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow or forbid the memory-efficient attention kernel."""
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    """Whether the plain (math) attention path may be chosen."""
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the plain (math) attention path."""
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    """Whether the cuDNN attention kernel may be chosen."""
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allow or forbid the cuDNN attention kernel."""
    _sdp["cudnn"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash: bool = True, enable_math: bool = True,
               enable_mem_efficient: bool = True, enable_cudnn: bool = True) -> Iterator[None]:
    """Deprecated: set the attention kernel choices for a block, restoring them after."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                  "context manager will be removed. Please see "
                  "`torch.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature.", FutureWarning, stacklevel=3)
    saved = dict(_sdp)
    _sdp.update(flash=bool(enable_flash), math=bool(enable_math),
                mem_efficient=bool(enable_mem_efficient), cudnn=bool(enable_cudnn))
    try:
        yield
    finally:
        _sdp.update(saved)
