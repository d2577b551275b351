"""The cuda indexing, search and random primitives: the shared
:mod:`.render_launch_indexing` driven by this backend's launch hooks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import kernels as _k
from ._render import render_launch_indexing
from ._render.render_launch import LaunchBackend


def _sort(*args: Any) -> None:
    from .sorting import sort  # sorting imports this package's reductions: load it late

    sort(*args)



def _launch_1d(kernel: Any, n: int, index: int, args: Sequence[Any]) -> None:
    _k.launch_1d(kernel, n, args)  # the current device runs it: the index is not needed


def _no_fp64_check(t: Any, names: Sequence[str]) -> None:
    """Every CUDA device has double precision."""


_BACKEND = LaunchBackend(
    dialect=_k.DIALECT, calls=_k.CALLS, max_rank=_k.MAX_RANK, dtype_name=_k.dtype_name,
    buffer_args=_k.buffer_args, cached_kernel=_k.cached_kernel, launch_1d=_launch_1d,
    require_fp64=_no_fp64_check, complex_scatter_reduce=frozenset(), sort=_sort)


def kernels() -> dict[str, Callable[..., Any]]:
    """Primitive name -> kernel for the indexing, search and random groups."""
    return render_launch_indexing.kernels(_BACKEND)
