"""The cuda ``convolution`` primitive: the shared :mod:`.render_launch_conv` driven by
this backend's launch hooks."""

from __future__ import annotations

from collections.abc import Callable

from ._render import render_launch_conv
from .launch_backend import BACKEND


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the convolution group."""
    return render_launch_conv.kernels(BACKEND)
