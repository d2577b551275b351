"""torch.svd_lowrank and torch.pca_lowrank against numpy's exact SVD (peft's AdaLoRA/EVA and
scikit-style PCA code call them)."""

import numpy as np
import pytest

import torch


def _low_rank(m: int, n: int, rank: int, dtype: torch.dtype = torch.float64,
              seed: int = 0) -> torch.Tensor:
    rs = np.random.RandomState(seed)
    return torch.from_numpy(rs.standard_normal((m, rank)) @ rs.standard_normal((rank, n))).to(
        dtype)


@pytest.mark.parametrize("shape", [(40, 25), (25, 40)])  # tall, and wide (through A^H)
def test_svd_lowrank_recovers_a_matrix_of_that_rank(shape: tuple[int, int]) -> None:
    A = _low_rank(*shape, rank=5)
    U, S, V = torch.svd_lowrank(A, q=5)
    assert U.shape == (shape[0], 5) and S.shape == (5,) and V.shape == (shape[1], 5)
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(A.numpy(), compute_uv=False)[:5],
                               rtol=1e-10)
    np.testing.assert_allclose((U @ torch.diag(S) @ V.T).numpy(), A.numpy(), atol=1e-10)
    np.testing.assert_allclose((U.T @ U).numpy(), np.eye(5), atol=1e-12)
    np.testing.assert_allclose((V.T @ V).numpy(), np.eye(5), atol=1e-12)


def test_svd_lowrank_approximates_the_leading_values_of_a_full_rank_matrix() -> None:
    rs = np.random.RandomState(1)
    left, _ = np.linalg.qr(rs.standard_normal((60, 60)))
    right, _ = np.linalg.qr(rs.standard_normal((30, 30)))
    values = 2.0 ** -np.arange(30)  # fast decay: 4 iterations make the top 3 exact
    A = torch.from_numpy(left[:, :30] * values @ right.T)
    _, S, _ = torch.svd_lowrank(A, q=8, niter=4)
    np.testing.assert_allclose(S[:3].numpy(), values[:3], rtol=1e-6)


def test_svd_lowrank_subtracts_m_and_takes_batches_and_complex_input() -> None:
    A = _low_rank(30, 20, rank=3)
    M = torch.linspace(-1, 1, 20, dtype=torch.float64)  # broadcast over the rows
    U, S, V = torch.svd_lowrank(A + M, q=3, M=M)
    np.testing.assert_allclose((U @ torch.diag(S) @ V.T).numpy(), A.numpy(), atol=1e-10)

    batch = torch.stack([_low_rank(12, 9, 2, seed=s) for s in range(3)])
    U, S, V = torch.svd_lowrank(batch, q=2)
    assert U.shape == (3, 12, 2) and S.shape == (3, 2) and V.shape == (3, 9, 2)
    np.testing.assert_allclose((U @ torch.diag_embed(S) @ V.mT).numpy(), batch.numpy(),
                               atol=1e-10)

    rs = np.random.RandomState(2)
    Z = rs.standard_normal((15, 3)) + 1j * rs.standard_normal((15, 3))
    Z = torch.from_numpy(Z @ (rs.standard_normal((3, 10)) + 1j * rs.standard_normal((3, 10))))
    U, S, V = torch.svd_lowrank(Z, q=3)
    assert U.dtype == V.dtype == torch.complex128 and S.dtype == torch.float64
    np.testing.assert_allclose((U @ torch.diag(S).to(Z.dtype) @ V.mH).numpy(), Z.numpy(),
                               atol=1e-10)


def test_pca_lowrank_gives_the_principal_directions_of_the_centred_rows() -> None:
    rs = np.random.RandomState(3)
    X = rs.standard_normal((200, 4)) @ np.diag([5.0, 2.0, 1.0, 0.5]) + 10.0
    U, S, V = torch.pca_lowrank(torch.from_numpy(X), q=4)
    assert S.shape == (4,) and V.shape == (4, 4) and U.shape == (200, 4)
    covariance = np.cov(X, rowvar=False)
    variances, directions = np.linalg.eigh(covariance)
    np.testing.assert_allclose((S**2 / 199).numpy(), variances[::-1], rtol=1e-8)
    # each direction up to its sign
    np.testing.assert_allclose(np.abs(V.numpy().T @ directions[:, ::-1]), np.eye(4), atol=1e-8)
    assert torch.pca_lowrank(torch.from_numpy(X))[1].shape == (4,)  # q = min(6, m, n)
    _, S_raw, _ = torch.pca_lowrank(torch.from_numpy(X), q=1, center=False)
    assert S_raw[0] > 100  # uncentred: the offset of 10 dominates


def test_lowrank_errors_and_gradients() -> None:
    A = _low_rank(10, 8, 2)
    with pytest.raises(ValueError, match="not greater than"):
        torch.svd_lowrank(A, q=9)
    with pytest.raises(ValueError, match="niter"):
        torch.svd_lowrank(A, q=2, niter=-1)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        torch.svd_lowrank(torch.ones(5), q=1)
    with pytest.raises(RuntimeError, match="expected a float32"):
        torch.svd_lowrank(torch.ones(4, 4, dtype=torch.int64), q=1)
    x = A.clone().requires_grad_()
    _, S, _ = torch.svd_lowrank(x, q=2)
    S.sum().backward()
    # d(sum of the singular values)/dA = U V^T for the exact rank-2 factorization
    U, _, Vh = np.linalg.svd(A.numpy(), full_matrices=False)
    np.testing.assert_allclose(x.grad.numpy(), U[:, :2] @ Vh[:2], atol=1e-8)
