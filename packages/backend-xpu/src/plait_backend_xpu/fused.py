"""Fused aten kernels of xpu: the shared :mod:`.render_launch_fused` (softmax and
log-softmax, forward and backward) driven by this backend's launch hooks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import render_launch_fused
from .launch_backend import BACKEND


def fused_kernels() -> dict[str, Callable[..., Any]]:
    """aten operator -> fused kernel."""
    return render_launch_fused.fused_kernels(BACKEND)


def register(dispatch_key: str) -> None:
    """Register :func:`fused_kernels` over core's composites under ``dispatch_key``, and the
    nll-loss kernels whose target range check waits for a synchronisation (:mod:`.losses`)."""
    from . import losses

    render_launch_fused.register(BACKEND, dispatch_key)
    render_launch_fused.register_kernels(losses.KERNELS, dispatch_key)
