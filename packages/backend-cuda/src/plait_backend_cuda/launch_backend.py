"""The cuda backend's launch hooks, as the shared launch modules (``render_launch_*``)
take them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import kernels as _k
from ._render import render_launch_reductions
from ._render.render_launch import LaunchBackend
from .reductions import plan_rows


def _sort(*args: Any) -> None:
    from .sorting import sort  # sorting imports this module: load it late

    sort(*args)


def _launch_1d(kernel: Any, n: int, index: int, args: Sequence[Any]) -> None:
    _k.launch_1d(kernel, n, args)  # cuda's launch takes no device index


def _lines_along(a: Any, dim: int, operands: Sequence[Any]
                 ) -> tuple[int, list[int], list[int], list[list[int]]]:
    return render_launch_reductions.lines_along(_k.MAX_RANK, a, dim, operands)


def _no_fp64_check(t: Any, names: Sequence[str]) -> None:
    """Every CUDA device has double precision."""


def _has_fp64(t: Any) -> bool:
    return True  # every CUDA device has double precision


BACKEND = LaunchBackend(
    name="cuda", dialect=_k.DIALECT, calls=_k.CALLS, max_rank=_k.MAX_RANK, dtype_name=_k.dtype_name,
    buffer_args=_k.buffer_args, cached_kernel=_k.cached_kernel, launch_1d=_launch_1d,
    require_fp64=_no_fp64_check, has_fp64=_has_fp64, complex_scatter_reduce=frozenset(),
    sort=_sort, lines_along=_lines_along, plan_rows=plan_rows,
    elementwise_kernel=_k.elementwise_kernel, parameter_words=_k.PARAMETER_WORDS)
