"""The cuda matmul: cuBLAS for float dtypes where it takes the layout (:mod:`.cublas`), else
the shared renderer's tiled kernel (16 x 16 tiles staged in shared memory, batch dims decoded
from the block's z index), which takes every dtype (complex with pair products) and layout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.backends import contract

from . import cublas
from ._render import render_matmul
from .kernels import CALLS, DIALECT, MAX_RANK, buffer_args, cached_kernel, dtype_name, merge

TILE = 16  # a 16 x 16 block: 256 threads
MAX_BATCHES = 65535  # CUDA's grid limit along z, where the batch index lives


@contract.may_decline
def matmul(out: Any, a: Any, b: Any) -> None:
    """``matmul(Tensor(a!) out, Tensor a, Tensor b)`` on cuda: a (..., n, k) @ b (..., k, m)."""
    name = dtype_name(out)
    if a.dtype != out.dtype or b.dtype != out.dtype or out.dim() < 2:
        raise contract.Decline
    n, m = out.shape[-2], out.shape[-1]
    k = a.shape[-1]
    batch = list(out.shape[:-2])
    sizes, (bst_out, bst_a, bst_b) = merge(batch, [list(t.stride()[:-2]) for t in (out, a, b)])
    batches = out.numel() // (n * m) if n * m else 0
    if len(sizes) > MAX_RANK or batches > MAX_BATCHES:
        raise contract.Decline
    CALLS["matmul"] += 1
    if out.numel() == 0:
        return
    index = out.device.index or 0
    buffers, offsets = buffer_args([out, a, b])
    if cublas.gemm(out, a, b, sizes, [bst_out, bst_a, bst_b], buffers, offsets):
        return
    key = ("matmul", index, name, len(sizes), TILE)
    kernel = cached_kernel(key, index, lambda: render_matmul.render_matmul(
        DIALECT, name, len(sizes), TILE))
    strides = [out.stride(-2), out.stride(-1), a.stride(-2), a.stride(-1), b.stride(-2),
               b.stride(-1)]
    args = [*buffers, n, k, m, *offsets, *strides, *sizes, *bst_out, *bst_a, *bst_b]
    grid = (-(-m // TILE) * TILE, -(-n // TILE) * TILE, batches)
    kernel(grid, (TILE, TILE, 1), *args)


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the linear algebra group."""
    return {"matmul": matmul}
