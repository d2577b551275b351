"""The xpu spectral primitives ``fft_c2c``, ``fft_r2c`` and ``fft_c2r``: the shared
:mod:`.render_launch_fft` driven by this backend's launch hooks."""

from __future__ import annotations

from collections.abc import Callable

from . import render_launch_fft
from .launch_backend import BACKEND


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the spectral group."""
    return render_launch_fft.kernels(BACKEND)
