"""``torch.linalg`` functions written in terms of other ops (so autograd, inference mode and
every backend come through those ops): ``diagonal``, ``tensorinv``, ``tensorsolve``, ``cond``,
``matrix_exp``, ``vander``, ``solve_ex`` and ``lu_solve``."""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import torch
from torch import Tensor
from torch._aten.no_data import has_no_data

__all__ = ["cond", "diagonal", "lu_solve", "matrix_exp", "solve_ex", "tensorinv",
           "tensorsolve", "vander"]

_SolveExResult = namedtuple("linalg_solve_ex", "result info")  # type: ignore[misc]
_SolveExResult.__module__ = "torch.return_types"


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonals of a batch of matrices (a view; ``torch.diagonal`` over the last two
    dimensions by default)."""
    return torch.diagonal(A, offset, dim1, dim2)


def _require_square_split(A: Tensor, at: int, other: str) -> int:
    rows, cols = math.prod(A.shape[:at]), math.prod(A.shape[at:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[{other}:]) "
                           f"== prod(self.shape[:{other}]), but got {cols} != {rows}")
    return rows


def tensorinv(A: Tensor, ind: int = 2, *, out: Tensor | None = None) -> Tensor:
    """The inverse of ``A`` for ``tensordot(.., ind)``: ``A`` read as a square matrix of its
    first ``ind`` dimensions by the rest, inverted, shaped ``A.shape[ind:] + A.shape[:ind]``."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    n = _require_square_split(A, ind, "ind")
    result = torch.linalg.inv(A.reshape(n, n)).reshape(tuple(A.shape[ind:]) +
                                                        tuple(A.shape[:ind]))
    return out.copy_(result) if out is not None else result


def tensorsolve(A: Tensor, B: Tensor, dims: Any = None, *, out: Tensor | None = None) -> Tensor:
    """X with ``tensordot(A, X, X.ndim) == B``; ``dims`` moves those dimensions of ``A`` to
    the end first."""
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        A = torch.movedim(A, dims, list(range(A.ndim - len(dims), A.ndim)))
    n = _require_square_split(A, B.ndim, "other.ndim")
    result_shape = tuple(A.shape[B.ndim:])
    result = torch.linalg.solve(A.reshape(n, n), B.reshape(n)).reshape(result_shape)
    return out.copy_(result) if out is not None else result


def cond(A: Tensor, p: Any = None, *, out: Tensor | None = None) -> Tensor:
    """The condition number of matrices in the norm ``p``: the ratio of the extreme singular
    values for ``p`` None, 2 or -2; else ``norm(A, p) * norm(inv(A), p)``."""
    if p is None or p in (2, -2):
        s = torch.linalg.svdvals(A)
        result = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    else:
        result = (torch.linalg.matrix_norm(A, ord=p) *
                  torch.linalg.matrix_norm(torch.linalg.inv(A), ord=p))
    return out.copy_(result) if out is not None else result


# Terms of the Taylor series after scaling the matrix to a 1-norm of at most 1/2: the
# remainder is below 2**-60 relative, past float64's precision.
_TAYLOR_TERMS = 18


def matrix_exp(A: Tensor) -> Tensor:
    """``exp(A)`` of square matrices (batched): scaling and squaring over a Taylor series, as
    products and sums (differentiable through them)."""
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 "
                           "dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {A.shape[-2]} by {A.shape[-1]} matrices")
    if A.numel() == 0:
        return A.clone()
    if has_no_data(A):  # meta or fake: the scaling below reads a value; the layout only
        return A.new_empty(A.shape)
    # One scaling for the whole batch (the largest 1-norm): the squarings then also act on
    # the batch's smaller matrices, so lower precisions compute in float64 to keep the
    # rounding of those squarings out of the result.
    work = torch.float64 if A.dtype in (torch.float32, torch.float16, torch.bfloat16) else None
    X = A.to(work) if work is not None else A
    norm = float(X.detach().abs().sum(-2).amax())
    squarings = max(0, math.ceil(math.log2(norm)) + 1) if norm > 0 else 0
    scaled = X / (2.0 ** squarings)
    eye = torch.eye(X.shape[-1], dtype=X.dtype, device=X.device).expand(X.shape)
    result, term = eye, eye
    for k in range(1, _TAYLOR_TERMS + 1):
        term = term @ scaled / k
        result = result + term
    for _ in range(squarings):
        result = result @ result
    return result.to(A.dtype) if work is not None else result


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrices of the vectors in ``x`` (*, n): (*, n, N) with column j holding
    x ** j (increasing powers; ``torch.vander`` is the decreasing, 1-D form)."""
    if x.dim() < 1:
        raise RuntimeError("x must be at least 1-dimensional.")
    columns = x.shape[-1] if N is None else N
    if columns <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = torch.ones_like(x).unsqueeze(-1)
    powers = x.unsqueeze(-1).expand(*x.shape, columns - 1).cumprod(-1)  # x, x**2, ...
    return torch.cat([ones, powers], -1)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,
             out: Any = None) -> Any:
    """``(result, info)``: ``torch.linalg.solve(A, B, left=left)`` and a zero int32 ``info``
    per matrix. A singular matrix raises ``LinAlgError`` here whatever ``check_errors`` says
    (PyTorch reports it in ``info`` when ``check_errors`` is False)."""
    result = torch.linalg.solve(A, B, left=left)
    info = torch.zeros(A.shape[:-2], dtype=torch.int32, device=A.device)
    return _SolveExResult(result, info)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
             adjoint: bool = False, out: Tensor | None = None) -> Tensor:
    """The solution X of ``A X = B`` from ``torch.linalg.lu_factor(A)``'s ``(LU, pivots)``
    (``A^H X = B`` with ``adjoint``; ``X A = B`` or ``X A^H = B`` with ``left=False``)."""
    if not left:  # X A = B  <=>  A^H X^H = B^H
        result = lu_solve(LU, pivots, B.mH, adjoint=not adjoint).mH
        return result if out is None else out.copy_(result)
    P, L, U = torch.lu_unpack(LU, pivots)
    if adjoint:  # U^H L^H P^T X = B
        inner = torch.linalg.solve_triangular(U.mH, B, upper=False)
        inner = torch.linalg.solve_triangular(L.mH, inner, upper=True, unitriangular=True)
        result = P @ inner
    else:  # P L U X = B
        inner = torch.linalg.solve_triangular(L, P.mT @ B, upper=False, unitriangular=True)
        result = torch.linalg.solve_triangular(U, inner, upper=True)
    return result if out is None else out.copy_(result)

