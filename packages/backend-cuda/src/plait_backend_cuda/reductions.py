"""The cuda reductions (sum, prod, amax, amin, any, all, argmax, argmin) and scans (cumsum,
cumprod, cummax, cummin), rendered by the shared :mod:`._render.render_reduce`.

A block of threads per output (a strided loop, then a tree in shared memory) for rows of
:data:`GROUP_ROWS` or more, one thread per output for short rows; when a few long rows would
leave most multiprocessors idle, each row is cut into chunks reduced by a block each into a
scratch of accumulators, which a second launch reduces. Scans run one thread per line.
Complex values run sum, prod, cumsum and cumprod (joins on pairs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch.backends import contract

from ._render import render, render_reduce
from .kernels import (
    CALLS,
    DIALECT,
    MAX_RANK,
    buffer_args,
    cached_kernel,
    dtype_name,
    launch_1d,
    merge,
)

GROUP_ROWS = 128  # rows at least this long get a block
MAX_GROUP = 256
BLOCKS_WANTED = 1024  # blocks a split reduction aims for (enough for every multiprocessor)
MIN_CHUNK = 4096  # elements a block reduces at least when a row is split
# the scratch's dtype for each accumulator type
_SCRATCH = {"f32": "float32", "f64": "float64", "u64": "int64", "i64": "int64",
            "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8", "c64": "complex64",
            "c128": "complex128"}


def lines_along(a: Any, dim: int, operands: Sequence[Any]
                ) -> tuple[int, list[int], list[int], list[list[int]]]:
    """The lines of ``a`` along ``dim``: their length, each operand's stride along them, and
    the merged sizes and strides of the other dims (Decline beyond the kernels' rank)."""
    if a.dim() == 0:
        return 1, [0] * len(operands), [], [[] for _ in operands]
    keep = [k for k in range(a.dim()) if k != dim]
    sizes, strides = merge([a.shape[k] for k in keep],
                           [[t.stride(k) for k in keep] for t in operands])
    if len(sizes) > MAX_RANK:
        raise contract.Decline
    return a.shape[dim], [t.stride(dim) for t in operands], sizes, strides


def _group_size(rows: int, length: int) -> int:
    """Threads per output: 0 (one thread loops alone) for short rows, else a power of two no
    larger than the row or :data:`MAX_GROUP`."""
    if length < GROUP_ROWS and not (length >= 16 and rows < 64):
        return 0
    group = 1
    while group * 2 <= min(MAX_GROUP, length):
        group *= 2
    return group


def _parts(op: str, n_out: int, r: int, group: int) -> int:
    """Chunks per row: more than one when few long rows would leave blocks idle."""
    if not group or op in render_reduce.ARG_BETTER or n_out >= BLOCKS_WANTED:
        return 1
    return max(1, min(BLOCKS_WANTED // n_out, r // MIN_CHUNK))


def _reduce(op: str, out: Any, a: Any, dims: Sequence[int]) -> None:
    names = [dtype_name(out), dtype_name(a)]
    if render.COMPLEX & set(names) and (op not in render_reduce.COMPLEX_JOINS
                                        or names[0] != names[1]):
        raise contract.Decline  # complex values: sum and prod (PyTorch refuses the others)
    reduced = set(dims)
    shape, a_st, out_st = list(a.shape), list(a.stride()), list(out.stride())
    outer_dims = [k for k in range(len(shape)) if k not in reduced]
    inner_dims = [k for k in range(len(shape)) if k in reduced]
    osizes, (ost_out, ost_a) = merge([shape[k] for k in outer_dims],
                                     [[out_st[k] for k in outer_dims],
                                      [a_st[k] for k in outer_dims]])
    isizes, (ist_a,) = merge([shape[k] for k in inner_dims], [[a_st[k] for k in inner_dims]])
    if len(osizes) > MAX_RANK or len(isizes) > MAX_RANK:
        raise contract.Decline
    n_out = out.numel()
    CALLS[op] += 1
    if n_out == 0:
        return
    r = 1
    for s in isizes:
        r *= s
    index = out.device.index or 0
    group = _group_size(n_out, r)
    parts = _parts(op, n_out, r, group)
    if parts > 1:
        _reduce_in_two_passes(op, out, a, names, osizes, ost_out, ost_a, isizes, ist_a, r,
                              group, parts)
        return
    key = ("reduce", index, op, tuple(names), len(osizes), len(isizes), group, 0)
    kernel = cached_kernel(key, index, lambda: render_reduce.render_reduction(
        DIALECT, op, names[0], names[1], len(osizes), len(isizes), group))
    (out_buf, a_buf), (off_out, off_a) = buffer_args([out, a])
    args = [out_buf, a_buf, n_out, r, off_out, off_a, *osizes, *ost_out, *ost_a, *isizes, *ist_a]
    if group:
        kernel((n_out * group,), (group,), *args)
    else:
        launch_1d(kernel, n_out, args)


def _reduce_in_two_passes(op: str, out: Any, a: Any, names: list[str], osizes: list[int],
                          ost_out: list[int], ost_a: list[int], isizes: list[int],
                          ist_a: list[int], r: int, group: int, parts: int) -> None:
    """Each row cut into ``parts`` chunks reduced by one block each into a scratch of
    accumulators, then the scratch's rows reduced into ``out`` by the same op."""
    index = out.device.index or 0
    n_out = out.numel()
    row = render_reduce.REDUCTIONS[op]
    acc = render_reduce.accumulator_type(row.accumulator, render.DTYPES[names[1]])
    scratch_name = _SCRATCH[acc]
    scratch = contract.empty((n_out * parts,), contract.dtype(scratch_name), out.device)
    chunk = -(-r // parts)
    key = ("reduce", index, op, (scratch_name, names[1]), len(osizes), len(isizes), group, 1)
    first = cached_kernel(key, index, lambda: render_reduce.render_reduction(
        DIALECT, op, scratch_name, names[1], len(osizes), len(isizes), group, split=True))
    (scratch_buf, a_buf), (_, off_a) = buffer_args([scratch, a])
    first((n_out * parts * group,), (group,), scratch_buf, a_buf, n_out, r, 0, off_a,
          *osizes, *ost_out, *ost_a, *isizes, *ist_a, parts, chunk)
    # the scratch is (outer..., parts) in row-major order
    scratch_strides, step = [], parts
    for size in reversed(osizes):
        scratch_strides.insert(0, step)
        step *= size
    key = ("reduce", index, op, (names[0], scratch_name), len(osizes), 1, 0, 0)
    second = cached_kernel(key, index, lambda: render_reduce.render_reduction(
        DIALECT, op, names[0], scratch_name, len(osizes), 1, 0))
    (out_buf,), (off_out,) = buffer_args([out])
    launch_1d(second, n_out, [out_buf, scratch_buf, n_out, parts, off_out, 0, *osizes,
                              *ost_out, *scratch_strides, parts, 1])


def _reduction(op: str) -> Callable[..., None]:
    @contract.may_decline
    def kernel(out: Any, a: Any, dims: Sequence[int]) -> None:
        _reduce(op, out, a, dims)

    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = f"``{contract.schema(op)}`` on cuda."
    return kernel


def _arg_reduction(op: str) -> Callable[..., None]:
    @contract.may_decline
    def kernel(out: Any, a: Any, dim: int) -> None:
        if dtype_name(out) != "int64":
            raise contract.Decline
        _reduce(op, out, a, [dim] if a.dim() else [])

    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = f"``{contract.schema(op)}`` on cuda."
    return kernel


def _scan_run(op: str, outputs: Sequence[Any], a: Any, dim: int) -> None:
    name = dtype_name(a)
    if ((name in render.COMPLEX and op not in render_reduce.COMPLEX_JOINS)
            or any(t.dtype != a.dtype for t in outputs[:1])):
        raise contract.Decline
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
    launch_1d(kernel, lines, args)


def _scan(op: str) -> Callable[..., None]:
    @contract.may_decline
    def kernel(out: Any, a: Any, dim: int) -> None:
        _scan_run(op, [out], a, dim)

    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = f"``{contract.schema(op)}`` on cuda."
    return kernel


def _cum_extreme(op: str) -> Callable[..., None]:
    @contract.may_decline
    def kernel(values: Any, indices: Any, a: Any, dim: int) -> None:
        if dtype_name(indices) != "int64":
            raise contract.Decline
        _scan_run(op, [values, indices], a, dim)

    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = f"``{contract.schema(op)}`` on cuda."
    return kernel


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the reductions and scans."""
    table: dict[str, Callable[..., None]] = {op: _reduction(op)
                                              for op in render_reduce.REDUCTIONS}
    table.update({op: _arg_reduction(op) for op in render_reduce.ARG_BETTER})
    table.update({op: _scan(op) for op in render_reduce.SCANS})
    table.update({op: _cum_extreme(op) for op in render_reduce.CUM_EXTREME})
    return table
