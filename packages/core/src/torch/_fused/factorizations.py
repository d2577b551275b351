"""Solves with factorizations already computed: ``torch.lu_unpack`` (the P, L, U of
``linalg.lu_factor``'s packed result), ``torch.cholesky_solve`` / ``cholesky_inverse`` (from a
Cholesky factor) and the legacy ``torch.triangular_solve``.

Composites of the triangular solver and indexing, so autograd differentiates them. The pivots
of ``lu_factor`` are LAPACK's (1-based row swaps, applied in order), read on the host to build
the permutation, as PyTorch's own unpacking does.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from .._aten.creation import eye
from .._aten.factories import tensor as _tensor
from .._aten.linalg_ops import solve_triangular
from .._core import dtype as _dtype
from .._core.tensor import Tensor

__all__ = ["cholesky_inverse", "cholesky_solve", "lu_unpack", "triangular_solve"]


def _result_type(name: str, fields: str) -> Any:
    cls = namedtuple(name, fields)  # type: ignore[misc]
    cls.__module__ = "torch.return_types"  # PyTorch's home of named result tuples
    return cls


_LUUnpackResult = _result_type("lu_unpack", "P L U")
_TriangularSolveResult = _result_type("triangular_solve", "solution cloned_coefficient")


def permutation_rows(pivots: Tensor, rows: int) -> Tensor:
    """For LAPACK pivots (*, k), the (*, rows) int64 row order ``perm`` with
    ``A[..., perm, :] = L U``: row swaps i <-> pivots[i] - 1 applied in order to 0..rows-1."""
    batch = tuple(pivots.shape[:-1])
    flat = pivots.reshape(-1, pivots.shape[-1]).tolist()
    orders = []
    for swaps in flat:
        order = list(range(rows))
        for i, p in enumerate(swaps):
            order[i], order[p - 1] = order[p - 1], order[i]
        orders.append(order)
    return _tensor(orders, dtype=_dtype.int64, device=pivots.device).reshape(*batch, rows)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> Any:
    """``(P, L, U)`` with ``A = P L U`` from ``torch.linalg.lu_factor(A)``'s packed ``LU`` and
    ``pivots``; a part not unpacked is an empty tensor, as in PyTorch."""
    rows, cols = LU_data.shape[-2], LU_data.shape[-1]
    k = min(rows, cols)
    empty = LU_data.new_empty((0,))
    if unpack_data:
        unit = eye(rows, k, dtype=LU_data.dtype, device=LU_data.device)
        L = LU_data[..., :, :k].tril(-1) + unit  # (*, rows, k), unit diagonal
        U = LU_data[..., :k, :].triu()  # (*, k, cols)
    else:
        L = U = empty
    if unpack_pivots:
        order = permutation_rows(LU_pivots, rows)  # A[perm] = L U, so P = I[perm]^T
        identity = eye(rows, dtype=LU_data.dtype, device=LU_data.device)
        P = identity[order].transpose(-2, -1)
    else:
        P = empty
    return _LUUnpackResult(P, L, U)


def _adjoint(t: Tensor) -> Tensor:
    return t.transpose(-2, -1).conj()


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False, *,
                   out: Tensor | None = None) -> Tensor:
    """The solution X of ``A X = B`` for ``A = L L^H`` given its Cholesky factor ``L`` (``A =
    U^H U`` with ``upper=True``)."""
    if upper:  # U^H (U X) = B
        inner = solve_triangular(_adjoint(L), B, upper=False)
        result = solve_triangular(L, inner, upper=True)
    else:  # L (L^H X) = B
        inner = solve_triangular(L, B, upper=False)
        result = solve_triangular(_adjoint(L), inner, upper=True)
    return result if out is None else out.copy_(result)


def cholesky_inverse(L: Tensor, upper: bool = False, *, out: Tensor | None = None) -> Tensor:
    """The inverse of ``A = L L^H`` (``U^H U`` with ``upper=True``) from its Cholesky factor."""
    identity = eye(L.shape[-1], dtype=L.dtype, device=L.device)
    result = cholesky_solve(identity.expand(L.shape), L, upper)
    return result if out is None else out.copy_(result)


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Any:
    """``(solution, cloned_coefficient)``: X with ``A X = b`` (``A^T X = b`` with
    ``transpose``) for triangular ``A``, and a copy of ``A`` (PyTorch's legacy form of
    ``torch.linalg.solve_triangular``)."""
    matrix, reads_upper = (A.mT, not upper) if transpose else (A, upper)
    solution = solve_triangular(matrix, b, upper=reads_upper, unitriangular=unitriangular)
    return _TriangularSolveResult(solution, A.clone())
