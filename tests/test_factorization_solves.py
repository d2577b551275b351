"""Solves with computed factorizations: torch.lu_unpack, torch.linalg.lu_solve/solve_ex/vander,
torch.cholesky_solve/cholesky_inverse and the legacy torch.triangular_solve. Each result is
checked by multiplying back (A X = B) or against hand-written values; PyTorch 2.13 gives the
same (checked when written)."""

from __future__ import annotations

import pytest

import torch

A = [[2.0, 1.0, 0.0], [4.0, 3.0, 1.0], [0.0, 1.0, 5.0]]
B = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def _a() -> torch.Tensor:
    return torch.tensor(A, dtype=torch.float64)


def _b() -> torch.Tensor:
    return torch.tensor(B, dtype=torch.float64)


def test_lu_unpack_rebuilds_the_matrix():
    LU, pivots = torch.linalg.lu_factor(_a())
    P, L, U = torch.lu_unpack(LU, pivots)
    # LAPACK's pivots [2, 3, 3]: rows 1 and 2 swapped, then 2 and 3
    assert P.tolist() == [[0, 0, 1], [1, 0, 0], [0, 1, 0]]
    assert torch.allclose(L.diagonal(), torch.ones(3, dtype=torch.float64))
    assert torch.equal(L, L.tril()) and torch.equal(U, U.triu())
    assert torch.allclose(P @ L @ U, _a())
    wide = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]])
    P, L, U = torch.lu_unpack(*torch.linalg.lu_factor(wide))
    assert (P.shape, L.shape, U.shape) == ((2, 2), (2, 2), (2, 3))
    assert torch.allclose(P @ L @ U, wide)
    batch = torch.stack([_a(), _a().T + 3 * torch.eye(3, dtype=torch.float64)])
    P, L, U = torch.lu_unpack(*torch.linalg.lu_factor(batch))
    assert torch.allclose(P @ L @ U, batch)
    only_p = torch.lu_unpack(*torch.linalg.lu_factor(_a()), unpack_data=False)
    assert only_p.L.numel() == 0 and only_p.U.numel() == 0 and only_p.P.shape == (3, 3)


def test_lu_solve_in_all_four_forms():
    A_, B_ = _a(), _b()
    LU, pivots = torch.linalg.lu_factor(A_)
    assert torch.allclose(A_ @ torch.linalg.lu_solve(LU, pivots, B_), B_)
    assert torch.allclose(A_.T @ torch.linalg.lu_solve(LU, pivots, B_, adjoint=True), B_)
    assert torch.allclose(torch.linalg.lu_solve(LU, pivots, B_.T, left=False) @ A_, B_.T)
    assert torch.allclose(
        torch.linalg.lu_solve(LU, pivots, B_.T, left=False, adjoint=True) @ A_.T, B_.T)
    leaf = B_.clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda b: torch.linalg.lu_solve(LU, pivots, b), (leaf,))


def test_solve_ex_and_vander():
    result, info = torch.linalg.solve_ex(_a(), _b())
    assert torch.allclose(_a() @ result, _b()) and info.dtype == torch.int32 and info.item() == 0
    assert torch.linalg.vander(torch.tensor([1, 2, 3])).tolist() == [[1, 1, 1], [1, 2, 4],
                                                                     [1, 3, 9]]
    batched = torch.linalg.vander(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), N=3)
    assert batched.tolist() == [[[1, 1, 1], [1, 2, 4]], [[1, 3, 9], [1, 4, 16]]]
    with pytest.raises(RuntimeError, match="greater than 1"):
        torch.linalg.vander(torch.tensor([1.0, 2.0]), N=1)


def test_cholesky_solve_and_inverse():
    spd = _a() @ _a().T + torch.eye(3, dtype=torch.float64)
    L = torch.linalg.cholesky(spd)
    assert torch.allclose(spd @ torch.cholesky_solve(_b(), L), _b())
    assert torch.allclose(spd @ torch.cholesky_solve(_b(), L.T, upper=True), _b())
    assert torch.allclose(torch.cholesky_inverse(L) @ spd, torch.eye(3, dtype=torch.float64))
    assert torch.allclose(torch.cholesky_inverse(L.T, upper=True), torch.linalg.inv(spd))


def test_triangular_solve_legacy_form():
    upper = _a().triu()
    solution, coefficient = torch.triangular_solve(_b(), upper)
    assert torch.allclose(upper @ solution, _b()) and torch.equal(coefficient, upper)
    assert coefficient.data_ptr() != upper.data_ptr()  # a copy, as PyTorch returns
    transposed = torch.triangular_solve(_b(), upper, transpose=True).solution
    assert torch.allclose(upper.T @ transposed, _b())
    unit = _a().tril(-1) + torch.eye(3, dtype=torch.float64)
    lower = torch.triangular_solve(_b(), _a().tril(), upper=False, unitriangular=True)
    assert torch.allclose(unit @ lower.solution, _b())
    assert lower.solution.tolist() == [[1.0, 2.0], [-1.0, -4.0], [6.0, 10.0]]
