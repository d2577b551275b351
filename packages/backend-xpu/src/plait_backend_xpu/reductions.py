"""The xpu reductions (sum, prod, amax, amin, any, all, argmax, argmin) and scans (cumsum,
cumprod, cummax, cummin), rendered by :mod:`.render_reduce`.

A reduction splits the input's dims into kept ones (outer: the output's elements) and reduced
ones (inner), drops size-1 dims and merges neighbours that step as one, so most calls have one
dim of each. Long rows get a work-group each (a tree in local memory); many short rows a work
item each. Complex values run sum, prod, cumsum and cumprod (joins on pairs); the other
reductions of complex values are declined (PyTorch refuses them before a kernel).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch.backends import contract

from . import device_module, render, render_reduce
from .kernels import (
    CALLS,
    DIALECT,
    MAX_RANK,
    buffer_args,
    cached_kernel,
    dtype_name,
    launch_1d,
    merge,
    require_fp64,
)

GROUP_ROWS = 128  # rows at least this long get a work-group
MAX_GROUP = 256


def lines_along(a: Any, dim: int, operands: Sequence[Any]
                ) -> tuple[int, list[int], list[int], list[list[int]]]:
    """The lines of ``a`` along ``dim`` that a per-line kernel walks: their length, each
    operand's stride along them, and the merged sizes and strides of the other dims (Decline
    beyond the kernels' rank)."""
    if a.dim() == 0:
        return 1, [0] * len(operands), [], [[] for _ in operands]
    keep = [k for k in range(a.dim()) if k != dim]
    sizes, strides = merge([a.shape[k] for k in keep],
                           [[t.stride(k) for k in keep] for t in operands])
    if len(sizes) > MAX_RANK:
        raise contract.Decline
    return a.shape[dim], [t.stride(dim) for t in operands], sizes, strides


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


def _reduce(op: str, out: Any, a: Any, dims: Sequence[int]) -> None:
    names = [dtype_name(out), dtype_name(a)]
    if render.COMPLEX & set(names) and (op not in render_reduce.COMPLEX_JOINS
                                        or names[0] != names[1]):
        raise contract.Decline
    require_fp64(out, names)
    index = out.device.index or 0
    planned = plan_reduction(op, index, list(a.shape), list(a.stride()), list(out.stride()), dims)
    if planned is None:
        raise contract.Decline
    osizes, ost_out, ost_a, isizes, ist_a, n_out, r, group, parts, lanes = planned
    CALLS[op] += 1
    if n_out == 0:
        return
    if parts > 1:
        _reduce_in_two_passes(op, out, a, names, osizes, ost_out, ost_a, isizes, ist_a, r,
                              group, parts, lanes)
        return
    kernel = reduction_kernel(op, index, names, len(osizes), len(isizes), group, lanes)
    (out_buf, a_buf), (off_out, off_a) = buffer_args([out, a])
    args = [out_buf, a_buf, n_out, r, off_out, off_a, *osizes, *ost_out, *ost_a, *isizes, *ist_a]
    if group:
        kernel((n_out * group,), (group,), *args)
    else:
        launch_1d(kernel, n_out, index, args)


def plan_reduction(op: str, index: int, shape: list[int], a_st: list[int], out_st: list[int],
                   dims: Sequence[int]) -> tuple[Any, ...] | None:
    """How :func:`_reduce` runs ``op`` over ``dims`` of an input of ``shape`` and strides
    ``a_st`` into an output of strides ``out_st`` (its reduced dims of size 1) on
    ``xpu:<index>``: the merged outer sizes, the output's and input's strides over them, the
    merged inner sizes and the input's strides over them, the outputs' count, the row length,
    the work-group size (0: one item per output), the chunks per row (more than 1: two
    passes) and the accumulator lanes; None beyond the kernels' rank."""
    reduced = set(dims)
    outer_dims = [k for k in range(len(shape)) if k not in reduced]
    inner_dims = [k for k in range(len(shape)) if k in reduced]
    osizes, (ost_out, ost_a) = merge([shape[k] for k in outer_dims],
                                     [[out_st[k] for k in outer_dims],
                                      [a_st[k] for k in outer_dims]])
    isizes, (ist_a,) = merge([shape[k] for k in inner_dims], [[a_st[k] for k in inner_dims]])
    if len(osizes) > MAX_RANK or len(isizes) > MAX_RANK:
        return None
    n_out = 1
    for k in outer_dims:
        n_out *= shape[k]
    r = 1
    for size in isizes:
        r *= size
    group, parts, lanes = 0, 1, 1
    if n_out:
        plan = _cpu_plan(op, index, n_out, r, ist_a)
        if plan:
            group, parts, lanes = *plan, CPU_LANES
        else:
            group = _group_size(n_out, r)
            parts, lanes = _parts(op, index, n_out, r, group), 1
    return osizes, ost_out, ost_a, isizes, ist_a, n_out, r, group, parts, lanes


def reduction_kernel(op: str, index: int, names: Sequence[str], outer: int, inner: int,
                     group: int, lanes: int) -> Any:
    """The one-pass kernel of ``op`` from ``names[1]`` into ``names[0]`` over ``outer``
    merged outer and ``inner`` merged inner dims. Arguments: out, a, n_out, r, the two
    offsets, the outer sizes, the output's and the input's outer strides, the inner sizes,
    the input's inner strides."""
    key = ("reduce", index, op, tuple(names), outer, inner, group, 0, lanes)
    return cached_kernel(key, index, lambda: render_reduce.render_reduction(
        DIALECT, op, names[0], names[1], outer, inner, group, lanes=lanes))


GROUPS_PER_UNIT = 4  # work-groups per compute unit a split reduction aims for
CPU_LANES = 16  # accumulators per work item on a CPU device: two AVX2 vectors of float32
CPU_CHUNK = 1 << 14  # elements a CPU work item reduces at least when a row is split


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

# accumulator type -> the dtype of a split reduction's scratch (int64 holds u64's bits)
_SCRATCH = {"f32": "float32", "f64": "float64", "u64": "int64", "i64": "int64",
            "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8", "c64": "complex64",
            "c128": "complex128"}


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


def _reduce_in_two_passes(op: str, out: Any, a: Any, names: list[str], osizes: list[int],
                          ost_out: list[int], ost_a: list[int], isizes: list[int],
                          ist_a: list[int], r: int, group: int, parts: int,
                          lanes: int) -> None:
    """Each row cut into ``parts`` chunks reduced by one work-group each into a scratch of
    accumulators, then the scratch's rows reduced into ``out`` by the same op (every join
    also joins two accumulators)."""
    index = out.device.index or 0
    n_out = out.numel()
    row = render_reduce.REDUCTIONS[op]
    acc = render_reduce.accumulator_type(row.accumulator, render.DTYPES[names[1]])
    scratch_name = _SCRATCH[acc]
    scratch = contract.empty((n_out * parts,), contract.dtype(scratch_name), out.device)
    chunk = -(-r // parts)
    key = ("reduce", index, op, (scratch_name, names[1]), len(osizes), len(isizes), group, 1,
           lanes)
    first = cached_kernel(key, index, lambda: render_reduce.render_reduction(
        DIALECT, op, scratch_name, names[1], len(osizes), len(isizes), group, split=True,
        lanes=lanes))
    (scratch_buf, a_buf), (_, off_a) = buffer_args([scratch, a])
    first((n_out * parts * group,), (group,), scratch_buf, a_buf, n_out, r, 0, off_a,
          *osizes, *ost_out, *ost_a, *isizes, *ist_a, parts, chunk)
    # the scratch is (outer..., parts) in row-major order
    scratch_strides, step = [], parts
    for size in reversed(osizes):
        scratch_strides.insert(0, step)
        step *= size
    key = ("reduce", index, op, (names[0], scratch_name), len(osizes), 1, 0, 0, 1)
    second = cached_kernel(key, index, lambda: render_reduce.render_reduction(
        DIALECT, op, names[0], scratch_name, len(osizes), 1, 0))
    (out_buf,), (off_out,) = buffer_args([out])
    launch_1d(second, n_out, index, [out_buf, scratch_buf, n_out, parts, off_out, 0, *osizes,
                                     *ost_out, *scratch_strides, parts, 1])


def _reduction(op: str) -> Callable[..., None]:
    @contract.may_decline
    def kernel(out: Any, a: Any, dims: Sequence[int]) -> None:
        _reduce(op, out, a, dims)

    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = f"``{contract.schema(op)}`` on xpu."
    return kernel


def _arg_reduction(op: str) -> Callable[..., None]:
    @contract.may_decline
    def kernel(out: Any, a: Any, dim: int) -> None:
        if dtype_name(out) != "int64":
            raise contract.Decline
        _reduce(op, out, a, [dim] if a.dim() else [])

    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = f"``{contract.schema(op)}`` on xpu."
    return kernel


def _scan_run(op: str, outputs: Sequence[Any], a: Any, dim: int) -> None:
    name = dtype_name(a)
    if ((name in render.COMPLEX and op not in render_reduce.COMPLEX_JOINS)
            or any(t.dtype != a.dtype for t in outputs[:1])):
        raise contract.Decline
    require_fp64(a, [name])
    operands = [*outputs, a]
    length, along, outer_sizes, outer_strides = lines_along(a, dim, operands)
    CALLS[op] += 1
    n = a.numel()
    if n == 0:
        return
    lines = n // length
    index = a.device.index or 0
    key = ("scan", index, op, name, len(outer_sizes))
    kernel = cached_kernel(key, index, lambda: render_reduce.render_scan(
        DIALECT, op, name, len(outer_sizes)))
    buffers, offsets = buffer_args(operands)
    args = [*buffers, lines, length, *offsets, *along, *outer_sizes]
    for st in outer_strides:
        args += st
    launch_1d(kernel, lines, index, args)


def _scan(op: str) -> Callable[..., None]:
    @contract.may_decline
    def kernel(out: Any, a: Any, dim: int) -> None:
        _scan_run(op, [out], a, dim)

    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = f"``{contract.schema(op)}`` on xpu."
    return kernel


def _cum_extreme(op: str) -> Callable[..., None]:
    @contract.may_decline
    def kernel(values: Any, indices: Any, a: Any, dim: int) -> None:
        if dtype_name(indices) != "int64":
            raise contract.Decline
        _scan_run(op, [values, indices], a, dim)

    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = f"``{contract.schema(op)}`` on xpu."
    return kernel


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the reductions and scans."""
    table: dict[str, Callable[..., None]] = {op: _reduction(op)
                                              for op in render_reduce.REDUCTIONS}
    table.update({op: _arg_reduction(op) for op in render_reduce.ARG_BETTER})
    table.update({op: _scan(op) for op in render_reduce.SCANS})
    table.update({op: _cum_extreme(op) for op in render_reduce.CUM_EXTREME})
    return table
