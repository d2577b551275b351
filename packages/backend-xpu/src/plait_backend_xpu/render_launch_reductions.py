"""A GPU backend's reductions (sum, prod, amax, amin, any, all, argmax, argmin) and scans
(cumsum, cumprod, cummax, cummin), rendered by :mod:`.render_reduce`: one source for
plait-backend-xpu and plait-backend-cuda, driven by a :class:`~.render_launch.LaunchBackend`.

A reduction splits the input's dims into kept ones (outer: the output's elements) and reduced
ones (inner), drops size-1 dims and merges neighbours that step as one, so most calls have one
dim of each. How the rows are spread over the device is the backend's ``plan_rows``: a
work-group (block) per output for long rows (a tree in local or shared memory), one work item
per output for short ones, and each row cut into chunks reduced into a scratch of accumulators
and reduced again by a second launch when a few long rows would leave the device idle. Scans
run one work item per line. Complex values run sum, prod, cumsum and cumprod (joins on
pairs); the other reductions of complex values are declined (PyTorch refuses them before a
kernel).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch.backends import contract

from . import render, render_reduce
from .render_geometry import merge
from .render_launch import LaunchBackend

# accumulator type -> the dtype of a split reduction's scratch (int64 holds u64's bits)
_SCRATCH = {"f32": "float32", "f64": "float64", "u64": "int64", "i64": "int64",
            "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8", "c64": "complex64",
            "c128": "complex128"}


def lines_along(max_rank: int, a: Any, dim: int, operands: Sequence[Any]
                ) -> tuple[int, list[int], list[int], list[list[int]]]:
    """The lines of ``a`` along ``dim`` that a per-line kernel walks: their length, each
    operand's stride along them, and the merged sizes and strides of the other dims (Decline
    beyond ``max_rank``, the kernels' rank)."""
    if a.dim() == 0:
        return 1, [0] * len(operands), [], [[] for _ in operands]
    keep = [k for k in range(a.dim()) if k != dim]
    sizes, strides = merge([a.shape[k] for k in keep],
                           [[t.stride(k) for k in keep] for t in operands])
    if len(sizes) > max_rank:
        raise contract.Decline
    return a.shape[dim], [t.stride(dim) for t in operands], sizes, strides


def plan_reduction(b: LaunchBackend, op: str, index: int, shape: list[int], a_st: list[int],
                   out_st: list[int], dims: Sequence[int]) -> tuple[Any, ...] | None:
    """How ``op`` runs over ``dims`` of an input of ``shape`` and strides ``a_st`` into an
    output of strides ``out_st`` (its reduced dims of size 1) on device ``index``: the merged
    outer sizes, the output's and input's strides over them, the merged inner sizes and the
    input's strides over them, the outputs' count, the row length, the work-group size (0:
    one item per output), the chunks per row (more than 1: two passes) and the accumulator
    lanes; None beyond the kernels' rank."""
    reduced = set(dims)
    outer_dims = [k for k in range(len(shape)) if k not in reduced]
    inner_dims = [k for k in range(len(shape)) if k in reduced]
    osizes, (ost_out, ost_a) = merge([shape[k] for k in outer_dims],
                                     [[out_st[k] for k in outer_dims],
                                      [a_st[k] for k in outer_dims]])
    isizes, (ist_a,) = merge([shape[k] for k in inner_dims], [[a_st[k] for k in inner_dims]])
    if len(osizes) > b.max_rank or len(isizes) > b.max_rank:
        return None
    n_out = 1
    for k in outer_dims:
        n_out *= shape[k]
    r = 1
    for size in isizes:
        r *= size
    group, parts, lanes = b.plan_rows(op, index, n_out, r, ist_a) if n_out else (0, 1, 1)
    return osizes, ost_out, ost_a, isizes, ist_a, n_out, r, group, parts, lanes


def reduction_kernel(b: LaunchBackend, op: str, index: int, names: Sequence[str], outer: int,
                     inner: int, group: int, lanes: int) -> Any:
    """The one-pass kernel of ``op`` from ``names[1]`` into ``names[0]`` over ``outer``
    merged outer and ``inner`` merged inner dims. Arguments: out, a, n_out, r, the two
    offsets, the outer sizes, the output's and the input's outer strides, the inner sizes,
    the input's inner strides."""
    key = ("reduce", index, op, tuple(names), outer, inner, group, 0, lanes)
    return b.cached_kernel(key, index, lambda: render_reduce.render_reduction(
        b.dialect, op, names[0], names[1], outer, inner, group, lanes=lanes))


def _reduce(b: LaunchBackend, op: str, out: Any, a: Any, dims: Sequence[int]) -> None:
    names = [b.dtype_name(out), b.dtype_name(a)]
    if render.COMPLEX & set(names) and (op not in render_reduce.COMPLEX_JOINS
                                        or names[0] != names[1]):
        raise contract.Decline
    b.require_fp64(out, names)
    index = out.device.index or 0
    planned = plan_reduction(b, op, index, list(a.shape), list(a.stride()), list(out.stride()),
                             dims)
    if planned is None:
        raise contract.Decline
    osizes, ost_out, ost_a, isizes, ist_a, n_out, r, group, parts, lanes = planned
    b.calls[op] += 1
    if n_out == 0:
        return
    if parts > 1:
        _reduce_in_two_passes(b, op, out, a, names, osizes, ost_out, ost_a, isizes, ist_a, r,
                              group, parts, lanes)
        return
    kernel = reduction_kernel(b, op, index, names, len(osizes), len(isizes), group, lanes)
    (out_buf, a_buf), (off_out, off_a) = b.buffer_args([out, a])
    args = [out_buf, a_buf, n_out, r, off_out, off_a, *osizes, *ost_out, *ost_a, *isizes, *ist_a]
    if group:
        kernel((n_out * group,), (group,), *args)
    else:
        b.launch_1d(kernel, n_out, index, args)


def _reduce_in_two_passes(b: LaunchBackend, op: str, out: Any, a: Any, names: list[str],
                          osizes: list[int], ost_out: list[int], ost_a: list[int],
                          isizes: list[int], ist_a: list[int], r: int, group: int, parts: int,
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
    first = b.cached_kernel(key, index, lambda: render_reduce.render_reduction(
        b.dialect, op, scratch_name, names[1], len(osizes), len(isizes), group, split=True,
        lanes=lanes))
    (scratch_buf, a_buf), (_, off_a) = b.buffer_args([scratch, a])
    first((n_out * parts * group,), (group,), scratch_buf, a_buf, n_out, r, 0, off_a,
          *osizes, *ost_out, *ost_a, *isizes, *ist_a, parts, chunk)
    # the scratch is (outer..., parts) in row-major order
    scratch_strides, step = [], parts
    for size in reversed(osizes):
        scratch_strides.insert(0, step)
        step *= size
    second = reduction_kernel(b, op, index, (names[0], scratch_name), len(osizes), 1, 0, 1)
    (out_buf,), (off_out,) = b.buffer_args([out])
    b.launch_1d(second, n_out, index, [out_buf, scratch_buf, n_out, parts, off_out, 0, *osizes,
                                       *ost_out, *scratch_strides, parts, 1])


def _named(kernel: Callable[..., None], op: str, b: LaunchBackend) -> Callable[..., None]:
    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = f"``{contract.schema(op)}`` on {b.name}."
    return kernel


def _reduction(b: LaunchBackend, op: str) -> Callable[..., None]:
    @contract.may_decline
    def kernel(out: Any, a: Any, dims: Sequence[int]) -> None:
        _reduce(b, op, out, a, dims)

    return _named(kernel, op, b)


def _arg_reduction(b: LaunchBackend, op: str) -> Callable[..., None]:
    @contract.may_decline
    def kernel(out: Any, a: Any, dim: int) -> None:
        if b.dtype_name(out) != "int64":
            raise contract.Decline
        _reduce(b, op, out, a, [dim] if a.dim() else [])

    return _named(kernel, op, b)


def _scan_run(b: LaunchBackend, op: str, outputs: Sequence[Any], a: Any, dim: int) -> None:
    name = b.dtype_name(a)
    if ((name in render.COMPLEX and op not in render_reduce.COMPLEX_JOINS)
            or any(t.dtype != a.dtype for t in outputs[:1])):
        raise contract.Decline
    b.require_fp64(a, [name])
    operands = [*outputs, a]
    length, along, outer_sizes, outer_strides = lines_along(b.max_rank, a, dim, operands)
    b.calls[op] += 1
    n = a.numel()
    if n == 0:
        return
    lines = n // length
    index = a.device.index or 0
    key = ("scan", index, op, name, len(outer_sizes))
    kernel = b.cached_kernel(key, index, lambda: render_reduce.render_scan(
        b.dialect, op, name, len(outer_sizes)))
    buffers, offsets = b.buffer_args(operands)
    args = [*buffers, lines, length, *offsets, *along, *outer_sizes]
    for st in outer_strides:
        args += st
    b.launch_1d(kernel, lines, index, args)


def _scan(b: LaunchBackend, op: str) -> Callable[..., None]:
    @contract.may_decline
    def kernel(out: Any, a: Any, dim: int) -> None:
        _scan_run(b, op, [out], a, dim)

    return _named(kernel, op, b)


def _cum_extreme(b: LaunchBackend, op: str) -> Callable[..., None]:
    @contract.may_decline
    def kernel(values: Any, indices: Any, a: Any, dim: int) -> None:
        if b.dtype_name(indices) != "int64":
            raise contract.Decline
        _scan_run(b, op, [values, indices], a, dim)

    return _named(kernel, op, b)


def kernels(b: LaunchBackend) -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the reductions and scans on ``b``."""
    table: dict[str, Callable[..., None]] = {op: _reduction(b, op)
                                              for op in render_reduce.REDUCTIONS}
    table.update({op: _arg_reduction(b, op) for op in render_reduce.ARG_BETTER})
    table.update({op: _scan(b, op) for op in render_reduce.SCANS})
    table.update({op: _cum_extreme(b, op) for op in render_reduce.CUM_EXTREME})
    return table
