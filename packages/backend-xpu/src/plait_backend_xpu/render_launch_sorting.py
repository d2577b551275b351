"""The ``sort`` and ``topk`` primitives of the GPU backends (kernels rendered by
:mod:`.render_sort`), one source for plait-backend-xpu and plait-backend-cuda, each passing its
:class:`~.render_launch.LaunchBackend`.

Both sort every line along the dim stably (NaN largest) in scratch buffers on the device;
``topk`` writes the first ``k`` of the descending (``largest``) or ascending order, always
sorted (PyTorch leaves the order unspecified for ``sorted=False``). Complex inputs are
declined.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.backends import contract

from . import render, render_sort
from .render_launch import LaunchBackend

# the dtype of the scratch values: the compute type's
_SCRATCH = {"float16": "float32", "bfloat16": "float32", "bool": "uint8"}


def _sort_lines(b: LaunchBackend, op: str, values: Any, indices: Any, a: Any, dim: int,
                descending: bool, k: int) -> None:
    name = b.dtype_name(a)
    if (name in render.COMPLEX or values.dtype != a.dtype or b.dtype_name(indices) != "int64"):
        raise contract.Decline
    b.require_fp64(a, [name])
    operands = [values, indices, a]
    length, along, sizes, strides = b.lines_along(a, dim, operands)
    b.calls[op] += 1
    n = a.numel()
    if n == 0 or k == 0:
        return
    lines = n // length
    device = a.device
    scratch = contract.dtype(_SCRATCH.get(name, name))
    int64 = contract.dtype("int64")
    temps = [contract.empty((n,), scratch, device), contract.empty((n,), int64, device),
             contract.empty((n,), scratch, device), contract.empty((n,), int64, device)]
    i = device.index or 0
    kernel = b.cached_kernel(("sort", i, name, len(sizes), bool(descending)), i,
                             lambda: render_sort.render_sort(b.dialect, name, len(sizes),
                                                             bool(descending)))
    buffers, offsets = b.buffer_args(operands)
    temp_buffers, _ = b.buffer_args(temps)
    args = [*buffers, *temp_buffers, lines, length, k, *offsets, *along, *sizes]
    for st in strides:
        args += st
    b.launch_1d(kernel, lines, i, args)


def kernels(b: LaunchBackend) -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the sort group on backend ``b`` (searchsorted is in
    :mod:`.render_launch_indexing`)."""

    @contract.may_decline
    def sort(values: Any, indices: Any, a: Any, dim: int, descending: bool = False,
             stable: bool = True) -> None:
        """``sort(Tensor(a!) values, Tensor(b!) indices, Tensor a, int dim, bool descending=False,
        bool stable=True)`` (always stable)."""
        _sort_lines(b, "sort", values, indices, a, dim, descending,
                    a.shape[dim] if a.dim() else 1)


    @contract.may_decline
    def topk(values: Any, indices: Any, a: Any, k: int, dim: int, largest: bool = True,
             sorted: bool = True) -> None:
        """``topk(Tensor(a!) values, Tensor(b!) indices, Tensor a, int k, int dim, bool
        largest=True, bool sorted=True)``."""
        _sort_lines(b, "topk", values, indices, a, dim, largest, k)

    return {"sort": sort, "topk": topk}
