"""The xpu backend's launch hooks, as the shared launch modules (``render_launch_*``)
take them."""

from __future__ import annotations

from typing import Any

from . import kernels as _k, render_index
from .reductions import lines_along
from .render_launch import LaunchBackend


def _sort(*args: Any) -> None:
    from .sorting import sort  # sorting imports this package's reductions: load it late

    sort(*args)


BACKEND = LaunchBackend(
    name="xpu", dialect=_k.DIALECT, calls=_k.CALLS, max_rank=_k.MAX_RANK, dtype_name=_k.dtype_name,
    buffer_args=_k.buffer_args, cached_kernel=_k.cached_kernel, launch_1d=_k.launch_1d,
    require_fp64=_k.require_fp64, has_fp64=_k.has_fp64,
    complex_scatter_reduce=render_index.COMPLEX_SCATTER_REDUCE, sort=_sort, lines_along=lines_along)
