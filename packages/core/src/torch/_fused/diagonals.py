"""``diag``, ``diag_embed`` and ``diagflat``: matrices built from a diagonal, and the diagonal
copied out of a matrix. Composites over ``diagonal``/``diagonal_scatter``, so their gradients
are those of the views they are made of."""

from __future__ import annotations

from .._aten.factories import zeros
from .._aten.shape import diagonal_scatter
from .._core.tensor import Tensor, wrap_dim

__all__ = ["diag", "diag_embed", "diagflat"]


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose (``dim1``, ``dim2``) planes hold the last dim of ``input`` on their
    ``offset`` diagonal, zeros elsewhere; the planes are ``n + |offset|`` square."""
    out_ndim = input.ndim + 1
    d1, d2 = wrap_dim(dim1, out_ndim), wrap_dim(dim2, out_ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    side = input.shape[-1] + abs(offset)
    batch = list(input.shape[:-1])
    shape = []
    for d in range(out_ndim):
        shape.append(side if d in (d1, d2) else batch.pop(0))
    base = zeros(shape, dtype=input.dtype, device=input.device)
    return diagonal_scatter(base, input, offset, d1, d2)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """From a vector: the square matrix with it on the ``diagonal``-th diagonal. From a
    matrix: a copy of its ``diagonal``-th diagonal."""
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return input.diagonal(diagonal).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The square matrix with the flattened ``input`` on its ``offset``-th diagonal."""
    return diag_embed(input.reshape(-1), offset, 0, 1)


METHODS = {"diag": diag, "diag_embed": diag_embed, "diagflat": diagflat}
