"""The xpu ``sort`` and ``topk`` primitives: the shared :mod:`.render_launch_sorting`
driven by this backend's launch hooks."""

from __future__ import annotations

from collections.abc import Callable

from . import render_launch_sorting
from .launch_backend import BACKEND

_KERNELS = render_launch_sorting.kernels(BACKEND)
sort = _KERNELS["sort"]  # scatter_ with a reduction sorts its indices first


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the sort group (searchsorted is in :mod:`.indexing`)."""
    return dict(_KERNELS)
