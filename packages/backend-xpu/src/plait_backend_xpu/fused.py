"""Fused aten kernels of xpu: the shared :mod:`.render_launch_fused` (softmax and
log-softmax, forward and backward) driven by this backend's launch hooks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.backends import contract

from . import render_launch_fused
from .launch_backend import BACKEND


def fused_kernels() -> dict[str, Callable[..., Any]]:
    """aten operator -> fused kernel."""
    return render_launch_fused.fused_kernels(BACKEND)


def register(dispatch_key: str) -> None:
    """Register :func:`fused_kernels` over core's composites under ``dispatch_key``, and the
    nll-loss kernels whose target range check waits for a synchronisation (:mod:`.losses`)."""
    from torch.library import Library

    from . import losses

    render_launch_fused.register(BACKEND, dispatch_key)
    for qualname, kernel in losses.KERNELS.items():
        ns, _, name = qualname.partition("::")
        contract.composite(qualname)  # defines the op (and checks it has a composite)
        lib = _LIBRARIES.get(ns)
        if lib is None:
            lib = _LIBRARIES[ns] = Library(ns, "IMPL", dispatch_key)
        lib.impl(name, kernel)


# Libraries holding the nll-loss registrations, kept alive with the process.
_LIBRARIES: dict[str, Any] = {}
