"""The indexing, search and random primitives of the GPU backends: ``gather``, ``scatter_``,
``searchsorted``, ``random_bits_`` and ``nonzero`` (kernels rendered by :mod:`.render_index`),
one source for plait-backend-xpu and plait-backend-cuda, each passing its
:class:`~.render_launch.LaunchBackend`.

Core checks index dtypes, shapes and bounds before calling a kernel, so these kernels trust
the indices. Complex operands of ``searchsorted`` and ``nonzero`` are declined (the CPU
fallback serves them), as are those of ``scatter_`` bar the backend's complex reductions;
``gather`` moves raw words, so every dtype runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.backends import contract

from . import render, render_index
from .render_geometry import merge
from .render_launch import LaunchBackend

_WRAP64 = 1 << 64
NONZERO_BLOCK = 4096  # elements per work item of nonzero's passes


def _shape(t: Any) -> list[int]:
    return list(t.shape) if t.dim() else [1]


def _strides(t: Any) -> list[int]:
    return list(t.stride()) if t.dim() else [1]


def kernels(b: LaunchBackend) -> dict[str, Callable[..., Any]]:
    """Primitive name -> kernel for the indexing, search and random groups on backend ``b``."""

    @contract.may_decline
    def gather(out: Any, a: Any, dim: int, index: Any) -> None:
        """``gather(Tensor(a!) out, Tensor a, int dim, Tensor index)``."""
        name = b.dtype_name(out)
        if (a.dtype != out.dtype or b.dtype_name(index) != "int64"
                or max(index.dim(), 1) > b.max_rank):
            raise contract.Decline
        b.calls["gather"] += 1
        n = index.numel()
        if n == 0:
            return
        sizes = _shape(index)
        rank = len(sizes)
        a_strides = _strides(a)
        along = a_strides[dim]
        a_strides[dim] = 0  # the index value gives this coordinate
        strides = [*_strides(out), *_strides(index), *a_strides]
        i = out.device.index or 0
        kernel = b.cached_kernel(("gather", i, name, rank), i,
                                 lambda: render_index.render_gather(b.dialect, name, rank))
        (out_b, a_b, index_b), (off_out, off_a, off_index) = b.buffer_args([out, a, index])
        b.launch_1d(kernel, n, i, [out_b, a_b, index_b, n, off_out, off_a, off_index, along, *sizes,
                                   *strides])


    @contract.may_decline
    def scatter_(out: Any, dim: int, index: Any, src: Any, reduce: str = "none",
                 include_self: bool = True) -> None:
        """``scatter_(Tensor(a!) out, int dim, Tensor index, Tensor src, str reduce="none",
        bool include_self=True)``."""
        name = b.dtype_name(out)
        if (src.dtype != out.dtype or b.dtype_name(index) != "int64"
                or (reduce != "none" and (reduce not in render_index.SCATTER_REDUCE
                                          or (name in render.COMPLEX and reduce
                                              not in b.complex_scatter_reduce)))
                or max(index.dim(), 1) > b.max_rank):
            raise contract.Decline  # an unknown reduce: the reference raises PyTorch's error
        if reduce != "none":
            b.require_fp64(out, [name])
        b.calls["scatter_"] += 1
        if index.numel() == 0:
            return
        sizes = _shape(index)
        length = sizes[dim]
        keep = [k for k in range(len(sizes)) if k != dim]
        line_sizes = [sizes[k] for k in keep]
        lines = index.numel() // length
        rank = len(line_sizes)
        i = out.device.index or 0
        if reduce == "none":
            operands = [out, index, src]
            kernel = b.cached_kernel(("scatter", i, name, rank), i,
                                     lambda: render_index.render_scatter(b.dialect, name, rank))
            buffers, offsets = b.buffer_args(operands)
            args = [*buffers, lines, length, *offsets, *(_strides(t)[dim] for t in operands),
                    *line_sizes]
            for t in operands:
                args += [_strides(t)[k] for k in keep]
            b.launch_1d(kernel, lines, i, args)
            return
        # sort each line's indices (stably, with their positions), then reduce runs
        int64 = contract.dtype("int64")
        shape = tuple(sizes)
        keys = contract.empty(shape, int64, out.device)
        positions = contract.empty(shape, int64, out.device)
        b.sort(keys, positions, index if index.dim() else index.reshape(1), dim, False, True)
        key = ("scatter_reduce", i, name, rank, reduce, bool(include_self))
        kernel = b.cached_kernel(key, i, lambda: render_index.render_scatter_reduce(
            b.dialect, name, rank, reduce, bool(include_self)))
        (out_b, keys_b, pos_b, src_b), (off_out, _, _, off_src) = b.buffer_args(
            [out, keys, positions, src])
        args = [out_b, keys_b, pos_b, src_b, lines, length, off_out, off_src, _strides(out)[dim],
                keys.stride(dim), _strides(src)[dim], *line_sizes]
        for t in (out, keys, src):
            args += [_strides(t)[k] for k in keep]
        b.launch_1d(kernel, lines * length, i, args)


    @contract.may_decline
    def searchsorted(out: Any, sorted_sequence: Any, values: Any, right: bool = False) -> None:
        """``searchsorted(Tensor(a!) out, Tensor sorted_sequence, Tensor values, bool right=False)``
       : rows of the sequence and of the values share their leading dims (or the sequence
        has one row)."""
        name = b.dtype_name(values)
        if (name in render.COMPLEX or sorted_sequence.dtype != values.dtype
                or b.dtype_name(out) != "int64"):
            raise contract.Decline
        b.require_fp64(out, [name])
        n = sorted_sequence.shape[-1] if sorted_sequence.dim() else 1
        m = values.shape[-1] if values.dim() else 1
        rows = values.numel() // m if m else 0

        def row_stride(t: Any) -> int | None:
            """The stride between rows: the leading dims must flatten to one (else None)."""
            sizes, (strides,) = merge(list(t.shape[:-1]), [list(t.stride()[:-1])])
            if len(sizes) > 1:
                return None
            return strides[0] if sizes else 0

        if rows == 0 or m == 0 or n == 0:
            b.calls["searchsorted"] += 1
            if out.numel():  # an empty sequence: every insertion point is 0
                contract.primitive("fill_")(out, 0)
            return
        seq_rows = sorted_sequence.numel() // n
        strides = [row_stride(sorted_sequence), row_stride(values), row_stride(out)]
        if None in strides or seq_rows not in (1, rows):
            raise contract.Decline  # leading dims that do not flatten: the CPU serves them
        if seq_rows == 1:
            strides[0] = 0
        b.calls["searchsorted"] += 1
        i = out.device.index or 0
        kernel = b.cached_kernel(("searchsorted", i, name, bool(right)), i,
                                 lambda: render_index.render_searchsorted(b.dialect, name,
                                                                          bool(right)))
        buffers, offsets = b.buffer_args([out, sorted_sequence, values])
        last = [t.stride(-1) if t.dim() else 1 for t in (sorted_sequence, values, out)]
        b.launch_1d(kernel, rows * m, i, [*buffers, rows, n, m, offsets[0], offsets[1], offsets[2],
                                          strides[0], last[0], strides[1], last[1], strides[2],
                                          last[2]])


    @contract.may_decline
    def random_bits_(out: Any, seed: int, offset: int) -> None:
        """``random_bits_(Tensor(a!) out, int seed, int offset)``: Philox4x32-10 words,
        the CPU's for the same (seed, offset)."""
        if b.dtype_name(out) != "int64" or out.dim() > b.max_rank:
            raise contract.Decline
        b.calls["random_bits_"] += 1
        n = out.numel()
        if n == 0:
            return
        rank = 0 if out.is_contiguous() else out.dim()
        i = out.device.index or 0
        kernel = b.cached_kernel(("random_bits", i, rank), i,
                                 lambda: render_index.render_random_bits(b.dialect, rank))
        (buffer,), (offset_out,) = b.buffer_args([out])
        geometry = [*out.shape, *out.stride()] if rank else []
        b.launch_1d(kernel, (n + 3) // 4, i, [buffer, n, offset_out, seed % _WRAP64,
                                              offset % _WRAP64, *geometry])


    @contract.may_decline
    def nonzero(a: Any) -> Any:
        """``nonzero(Tensor a) -> Tensor``: the int64 coordinates (n, ndim) of the nonzero
        elements in row-major order, laid out as PyTorch lays them out (each dim's coordinates
        contiguous). Counting blocks, a prefix sum of the counts on the host (the result's size
        must be known there anyway), then writing."""
        import numpy as np

        name = b.dtype_name(a)
        if name in render.COMPLEX or a.dim() > b.max_rank:
            raise contract.Decline
        b.require_fp64(a, [name])
        b.calls["nonzero"] += 1
        rank = a.dim()
        n = a.numel()
        int64 = contract.dtype("int64")
        device = a.device
        if n == 0:
            return contract.empty((rank, 0), int64, device).t()
        sizes, strides = (list(a.shape), list(a.stride())) if rank else ([1], [1])
        blocks = -(-n // NONZERO_BLOCK)
        i = device.index or 0
        (a_buffer,), (off_a,) = b.buffer_args([a])
        counts = contract.empty((blocks,), int64, device)
        count = b.cached_kernel(("nonzero", i, name, len(sizes), False), i,
                                lambda: render_index.render_nonzero(b.dialect, name, len(sizes),
                                                                    False))
        (counts_buffer,), _ = b.buffer_args([counts])
        b.launch_1d(count, blocks, i, [counts_buffer, a_buffer, n, NONZERO_BLOCK, 0, off_a, *sizes,
                                       *strides])
        per_block = counts.cpu().numpy()
        starts = np.concatenate([[0], np.cumsum(per_block)[:-1]]).astype(np.int64)
        total = int(per_block.sum())
        out = contract.empty((rank, total), int64, device)
        if total and rank:
            write = b.cached_kernel(("nonzero", i, name, len(sizes), True), i,
                                    lambda: render_index.render_nonzero(b.dialect, name, len(sizes),
                                                                        True))
            import torch

            starts_device = torch.from_numpy(starts).to(device)
            (out_buffer, starts_buffer), _ = b.buffer_args([out, starts_device])
            b.launch_1d(write, blocks, i, [out_buffer, a_buffer, starts_buffer, n, NONZERO_BLOCK,
                                           total, off_a, *sizes, *strides])
        return out.t()

    return {"gather": gather, "scatter_": scatter_, "searchsorted": searchsorted,
            "random_bits_": random_bits_, "nonzero": nonzero}
