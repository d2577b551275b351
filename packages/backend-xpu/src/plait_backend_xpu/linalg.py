"""The xpu ``matmul`` primitive: the tiled kernel of :mod:`.render_matmul`, batched.

Batch dims (already broadcast by core) are merged where all three operands step through them
as one; complex values take the tiled kernel with pair products.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.backends import contract

from . import device_module, render_matmul
from .kernels import (
    CALLS,
    DIALECT,
    MAX_RANK,
    buffer_args,
    cached_kernel,
    dtype_name,
    merge,
    require_fp64,
)

TILE = 16  # a 16 x 16 work-group: 256 work items, within every OpenCL 1.2 GPU's limit
# CPU devices under OpenCL run the vector-blocked kernel (render_matmul_vector) where the
# output has a vector's columns; the scalar block below serves narrower outputs and dialects
# without vector types.
# The register block of a CPU device's work item: 4 rows of 8 columns, 32 accumulators that
# fit AVX2's 16 vector registers as 4 x 8-wide (plus b's row); on PoCL here 8 x 8 ran at
# half its speed, 6 x 16 at a sixth, 4 x 16 the same.
BLOCK = (4, 8)
BLOCKED_GROUP = (4, 4)  # work items of a blocked launch along columns, rows
# rows of the vector-blocked kernel (OpenCL CPU devices): 4 rows of 16 floats (8 doubles)
VECTOR_ROWS = 4
BLOCKED_DTYPES = frozenset({"float32", "float64"})  # storage is the compute type


def _blocked(index: int, name: str, out: Any, b: Any) -> bool:
    """Whether ``matmul`` runs the register-blocked kernel: on CPU devices, where
    work-groups with barriers and local memory become loops the compiler cannot vectorise,
    for float32/float64 with unit column strides in ``out`` and ``b`` and at least one
    block's rows and columns (smaller products take the tiled kernel)."""
    return (name in BLOCKED_DTYPES and out.shape[-2] >= BLOCK[0] and out.shape[-1] >= BLOCK[1]
            and device_module.device_info(index)["type"] == "cpu"
            and out.stride(-1) == 1 and b.stride(-1) == 1)


def _tile(index: int) -> int:
    """The tile side for ``xpu:<index>``: :data:`TILE`, smaller where work-groups are."""
    limit = int(device_module.device_info(index)["max_work_group_size"])
    tile = TILE
    while tile * tile > limit and tile > 1:
        tile //= 2
    return tile


@contract.may_decline
def matmul(out: Any, a: Any, b: Any) -> None:
    """``matmul(Tensor(a!) out, Tensor a, Tensor b)`` on xpu: a (..., n, k) @ b (..., k, m)."""
    name = dtype_name(out)
    if a.dtype != out.dtype or b.dtype != out.dtype or out.dim() < 2:
        raise contract.Decline
    require_fp64(out, [name])
    n, m = out.shape[-2], out.shape[-1]
    k = a.shape[-1]
    batch = list(out.shape[:-2])
    sizes, (bst_out, bst_a, bst_b) = merge(batch, [list(t.stride()[:-2]) for t in (out, a, b)])
    if len(sizes) > MAX_RANK:
        raise contract.Decline
    CALLS["matmul"] += 1
    batches = out.numel() // (n * m) if n * m else 0
    if out.numel() == 0:
        return
    index = out.device.index or 0
    buffers, offsets = buffer_args([out, a, b])
    if _blocked(index, name, out, b) and out.shape[-1] >= render_matmul.VECTOR_COLUMNS[name] \
            and DIALECT.name == "opencl":
        rows, cols = VECTOR_ROWS, render_matmul.VECTOR_COLUMNS[name]
        key = ("matmul_vector", index, name, len(sizes), rows)
        # -w: PoCL's compiler prints a count of warnings to stderr for this kernel's vector
        # code at every first build (the source compiles clean under clang -Wall)
        kernel = cached_kernel(key, index, lambda: render_matmul.render_matmul_vector(
            DIALECT, name, len(sizes), rows), options="-w")
    elif _blocked(index, name, out, b):
        rows, cols = BLOCK
        key = ("matmul_blocked", index, name, len(sizes), rows, cols)
        kernel = cached_kernel(key, index, lambda: render_matmul.render_matmul_blocked(
            DIALECT, name, len(sizes), rows, cols))
    else:
        kernel = None
    if kernel is not None:  # a blocked kernel: each work item a rows x cols block
        args = [*buffers, n, k, m, *offsets, out.stride(-2), a.stride(-2), a.stride(-1),
                b.stride(-2), *sizes, *bst_out, *bst_a, *bst_b]
        # a fixed work-group (PoCL compiles a kernel again for each size it picks itself);
        # the grid rounds up to it and items past the edge return at once
        gx, gy = BLOCKED_GROUP
        grid = (-(-m // (cols * gx)) * gx, -(-n // (rows * gy)) * gy, batches)
        kernel(grid, (gx, gy, 1), *args)
        return
    tile = _tile(index)
    key = ("matmul", index, name, len(sizes), tile)
    kernel = cached_kernel(key, index, lambda: render_matmul.render_matmul(
        DIALECT, name, len(sizes), tile))
    strides = [out.stride(-2), out.stride(-1), a.stride(-2), a.stride(-1), b.stride(-2),
               b.stride(-1)]
    args = [*buffers, n, k, m, *offsets, *strides, *sizes, *bst_out, *bst_a, *bst_b]
    grid = (-(-m // tile) * tile, -(-n // tile) * tile, batches)
    kernel(grid, (tile, tile, 1), *args)


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the linear algebra group."""
    return {"matmul": matmul}
