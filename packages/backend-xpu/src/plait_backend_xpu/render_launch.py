"""What a GPU backend's launch modules need from it, as one object: the shared launch
modules (``render_launch_*.py``) drive plait-backend-xpu and plait-backend-cuda alike
through it, so each backend states only where it differs (dialect, kernel cache, buffer
arguments, launch geometry, device checks)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from . import render


@dataclass(frozen=True)
class LaunchBackend:
    """One GPU backend's launch hooks.

    ``name`` is the device type (``"xpu"``, ``"cuda"``), which names its fused kernels;
    ``launch_1d(kernel, n, device_index, args)`` enqueues ``n`` work items;
    ``require_fp64(t, dtype_names)`` raises for double precision on a device without it
    (a no-op where every device has it); ``has_fp64(t)`` says whether
    ``t``'s device has it; ``complex_scatter_reduce`` names the scatter reductions whose
    complex kernels the backend runs (the others decline); ``sort`` is the backend's ``sort``
    primitive (``scatter_`` with a reduction sorts indices first); ``lines_along(a, dim,
    operands)`` is the backend's per-line geometry (length, strides along, merged other
    dims); ``plan_rows(op, device_index, outputs, row_length, inner_strides)`` spreads a
    reduction's rows over the device as ``(work-group size, chunks per row, accumulator
    lanes)`` (group 0: one work item per output; more than one chunk: two passes);
    ``elementwise_kernel(op, expression, dtype_names, device_index, rank, raw=, constants=,
    helpers=, float_constants=, result=, vector=)`` is the kernel of an elementwise launch and
    the elements each of its work items takes (``vector``: the expression means the same on
    vectors, where the backend has vector kernels); ``parameter_words`` the 8-byte kernel
    arguments a launch may take."""

    name: str
    dialect: render.Dialect
    calls: dict[str, int]
    max_rank: int
    dtype_name: Callable[[Any], str]
    buffer_args: Callable[[Sequence[Any]], tuple[list[Any], list[int]]]
    cached_kernel: Callable[[tuple[Any, ...], int, Callable[[], render.Rendered]], Any]
    launch_1d: Callable[[Any, int, int, Sequence[Any]], None]
    require_fp64: Callable[[Any, Sequence[str]], None]
    has_fp64: Callable[[Any], bool]
    complex_scatter_reduce: Collection[str]
    sort: Callable[..., None]
    lines_along: Callable[[Any, int, Sequence[Any]],
                          tuple[int, list[int], list[int], list[list[int]]]]
    plan_rows: Callable[[str, int, int, int, list[int]], tuple[int, int, int]]
    elementwise_kernel: Callable[..., tuple[Any, int]]
    parameter_words: int
