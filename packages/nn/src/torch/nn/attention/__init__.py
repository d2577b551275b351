"""``torch.nn.attention``: choosing the kernel behind ``scaled_dot_product_attention``.

:class:`SDPBackend` names PyTorch's kernels and :func:`sdpa_kernel` allows only the listed ones
for a block, through the switches of ``torch.backends.cuda`` (``enable_flash_sdp``...), which
it restores afterwards. Plait's CPU attention is one implementation whatever the switches say;
the switches are kept for the backends that choose between kernels. ``flex_attention`` is the
submodule of that name.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from enum import IntEnum

import torch.backends.cuda as _cuda

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "sdpa_kernel"]

# PyTorch warns when a fused kernel cannot be used and this is set; nothing to warn about here.
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(IntEnum):
    """The kernels ``scaled_dot_product_attention`` can run on (PyTorch's values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# backend -> (is it enabled, enable or disable it), through torch.backends.cuda's switches
_SWITCHES = {
    SDPBackend.MATH: (_cuda.math_sdp_enabled, _cuda.enable_math_sdp),
    SDPBackend.FLASH_ATTENTION: (_cuda.flash_sdp_enabled, _cuda.enable_flash_sdp),
    SDPBackend.EFFICIENT_ATTENTION: (_cuda.mem_efficient_sdp_enabled,
                                     _cuda.enable_mem_efficient_sdp),
    SDPBackend.CUDNN_ATTENTION: (_cuda.cudnn_sdp_enabled, _cuda.enable_cudnn_sdp),
}


@contextlib.contextmanager
def sdpa_kernel(backends: SDPBackend | Iterable[SDPBackend],
                set_priority: bool = False) -> Iterator[None]:
    """Allow only ``backends`` for ``scaled_dot_product_attention`` inside the block.

    :param backends: one :class:`SDPBackend` or several.
    :param set_priority: PyTorch's switch to try them in the given order (one kernel here).
    :raises TypeError: ``backends`` holds something other than an :class:`SDPBackend`.
    """
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    for backend in chosen:
        if not isinstance(backend, SDPBackend):
            raise TypeError("Backend must be an instance of SDPBackend")
    saved = {backend: enabled() for backend, (enabled, _) in _SWITCHES.items()}
    for backend, (_, enable) in _SWITCHES.items():
        enable(backend in chosen)
    try:
        yield
    finally:
        for backend, (_, enable) in _SWITCHES.items():
            enable(saved[backend])
