"""The xpu backend's launch hooks, as the shared launch modules (``render_launch_*``)
take them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import kernels as _k, render_index, render_launch_reductions
from .reductions import plan_rows
from .render_launch import LaunchBackend


def _sort(*args: Any) -> None:
    from .sorting import sort  # sorting imports this module: load it late

    sort(*args)


def _lines_along(a: Any, dim: int, operands: Sequence[Any]
                 ) -> tuple[int, list[int], list[int], list[list[int]]]:
    return render_launch_reductions.lines_along(_k.MAX_RANK, a, dim, operands)


BACKEND = LaunchBackend(
    name="xpu", dialect=_k.DIALECT, calls=_k.CALLS, max_rank=_k.MAX_RANK, dtype_name=_k.dtype_name,
    buffer_args=_k.buffer_args, cached_kernel=_k.cached_kernel, launch_1d=_k.launch_1d,
    require_fp64=_k.require_fp64, has_fp64=_k.has_fp64,
    complex_scatter_reduce=render_index.COMPLEX_SCATTER_REDUCE, sort=_sort,
    lines_along=_lines_along, plan_rows=plan_rows, elementwise_kernel=_k.elementwise_kernel,
    parameter_words=_k.PARAMETER_WORDS)
