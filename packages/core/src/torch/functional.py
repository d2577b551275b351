"""``torch.functional``: the module where PyTorch defines some of its top-level functions
(``einsum``, ``stft``, ``meshgrid``, ``split``, ``norm``...). Code reaches them through it
(``torch.functional.stft``); they are the ``torch.*`` functions themselves, except
:func:`einsum` (which puts its arguments in one form before the ``__torch_function__``
protocol sees them) and :func:`unravel_index`, defined here."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import (
    Tensor,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    cdist,
    chain_matmul,
    istft,
    lu,
    meshgrid,
    norm,
    overrides,
    pca_lowrank,
    split,
    stft,
    svd_lowrank,
    tensordot,
    unique,
    unique_consecutive,
)
from torch._aten import linalg as _linalg

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
           "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "istft",
           "lu", "meshgrid", "norm", "pca_lowrank", "split", "stft", "svd_lowrank",
           "tensordot", "unique", "unique_consecutive", "unravel_index"]


def einsum(*args: object) -> Tensor:
    """Sums of products over the labelled dims of the operands (``einsum("ij,jk->ik", a, b)``,
    the operands also as one list, or the sublist form ``einsum(a, [0, 1], b, [1, 2])``).

    A ``__torch_function__`` override sees the call as ``einsum(equation, *operands)``
    whichever form was written, as in PyTorch (so a graph traced through it records one
    form)."""
    equation, operands = _linalg.einsum_arguments(args)
    if overrides.has_torch_function(operands):
        return overrides.handle_torch_function(einsum, operands, equation, *operands)
    return _linalg.einsum(equation, *operands)


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """The coordinates, in a tensor of ``shape``, of each flat (row-major) index in
    ``indices``: one tensor per dim, each shaped like ``indices``. Indices wrap around the
    element count (-1 is the last element), as in PyTorch.

    :raises TypeError: ``indices`` is not an integer tensor, or ``shape`` holds a non-int.
    :raises ValueError: ``shape`` holds a negative size."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a Tensor, but got {type(indices)}")
    if indices.dtype.is_floating_point or indices.dtype.is_complex or \
            indices.dtype == torch.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    for size in dims:
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                            f"{type(size)}")
    if any(size < 0 for size in dims):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(dims)}")
    coords = []
    stride = 1
    flat = indices.to(torch.int64)
    for size in reversed(dims):
        coords.append(torch.remainder(torch.div(flat, stride, rounding_mode="floor"), size)
                      if size else torch.zeros_like(flat))
        stride *= max(size, 1)
    return tuple(reversed(coords))

