"""The cuda indexing, search and random primitives: the shared
:mod:`.render_launch_indexing` driven by this backend's launch hooks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._render import render_launch_indexing
from .launch_backend import BACKEND


def kernels() -> dict[str, Callable[..., Any]]:
    """Primitive name -> kernel for the indexing, search and random groups."""
    return render_launch_indexing.kernels(BACKEND)
