"""The xpu reductions and scans: the shared :mod:`.render_launch_reductions` driven by this
backend's launch hooks, and how this backend spreads a reduction's rows over an OpenCL device
(:func:`plan_rows`: work-groups within the device's limit, split rows by its compute units, and
one vectorised work item per row on a CPU device)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import device_module, render_launch_reductions, render_reduce

GROUP_ROWS = 128  # rows at least this long get a work-group
MAX_GROUP = 256
GROUPS_PER_UNIT = 4  # work-groups per compute unit a split reduction aims for
CPU_LANES = 16  # accumulators per work item on a CPU device: two AVX2 vectors of float32
CPU_CHUNK = 1 << 14  # elements a CPU work item reduces at least when a row is split


def _group_size(rows: int, length: int) -> int:
    """Work items per output: 0 (one item loops alone) for short rows, else a power of two
    no larger than the row, the device's limit or :data:`MAX_GROUP`."""
    if length < GROUP_ROWS and not (length >= 16 and rows < 64):
        return 0
    limit = min(MAX_GROUP, int(device_module.device_info(0)["max_work_group_size"]))
    group = 1
    while group * 2 <= min(limit, length):
        group *= 2
    return group


def _parts(op: str, index: int, n_out: int, r: int, group: int) -> int:
    """Chunks per row: more than one when a few long rows would leave compute units idle
    (one work-group per row runs on one unit); argmax/argmin keep one (their index)."""
    if not group or op in render_reduce.ARG_BETTER:
        return 1
    units = int(device_module.device_info(index)["compute_units"])
    wanted = units * GROUPS_PER_UNIT
    if n_out >= wanted:
        return 1
    return max(1, min(wanted // n_out, r // (group * 4)))


def _cpu_plan(op: str, index: int, n_out: int, r: int, ist_a: list[int]
              ) -> tuple[int, int] | None:
    """(group, parts) on a CPU device for a contiguous row reduction, run with
    :data:`CPU_LANES` accumulators per work item: a work item per row (group 0) when rows
    are enough to fill the compute units, else each row cut into chunks of one work item
    each (group 1) and a second pass. None elsewhere (the work-group tree). PoCL runs a
    work-group's items as a loop, so a tree in local memory costs barriers and vectorises
    nothing, while one item's contiguous loop vectorises."""
    if (op in render_reduce.ARG_BETTER or ist_a != [1]
            or device_module.device_info(index)["type"] != "cpu"):
        return None
    wanted = int(device_module.device_info(index)["compute_units"]) * GROUPS_PER_UNIT
    if n_out >= wanted or r < 2 * CPU_CHUNK:
        return 0, 1
    return 1, max(1, min(-(-wanted // n_out), r // CPU_CHUNK))


def plan_rows(op: str, index: int, n_out: int, r: int, ist_a: list[int]
              ) -> tuple[int, int, int]:
    """``(work-group size, chunks per row, accumulator lanes)`` for ``n_out`` rows of ``r``
    elements (input strides ``ist_a`` over them) on ``xpu:<index>``."""
    plan = _cpu_plan(op, index, n_out, r, ist_a)
    if plan:
        return (*plan, CPU_LANES)
    group = _group_size(n_out, r)
    return group, _parts(op, index, n_out, r, group), 1


def plan_reduction(op: str, index: int, shape: list[int], a_st: list[int], out_st: list[int],
                   dims: Sequence[int]) -> tuple[Any, ...] | None:
    """:func:`.render_launch_reductions.plan_reduction` on xpu (the fast path's plans)."""
    from .launch_backend import BACKEND

    return render_launch_reductions.plan_reduction(BACKEND, op, index, shape, a_st, out_st,
                                                   dims)


def reduction_kernel(op: str, index: int, names: Sequence[str], outer: int, inner: int,
                     group: int, lanes: int) -> Any:
    """:func:`.render_launch_reductions.reduction_kernel` on xpu (the fast path's kernels)."""
    from .launch_backend import BACKEND

    return render_launch_reductions.reduction_kernel(BACKEND, op, index, names, outer, inner,
                                                     group, lanes)


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the reductions and scans."""
    from .launch_backend import BACKEND

    return render_launch_reductions.kernels(BACKEND)
