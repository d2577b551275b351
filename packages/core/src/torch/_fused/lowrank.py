"""Randomized low-rank factorizations: ``torch.svd_lowrank`` and ``torch.pca_lowrank``.

The range finder of Halko, Martinsson and Tropp (2011, algorithms 4.4 and 5.1): a Gaussian
test matrix ``R`` (n x q) gives ``Q = qr(A R)``, refined by ``niter`` subspace iterations
(``Q = qr(A^H Q)``, then ``qr(A Q)``), so that ``A ~ Q Q^H A``; the SVD of the small
``Q^H A`` (q x n) then gives ``A``'s leading singular triplets. A wide matrix is factorized
through its adjoint, whose range is the smaller one. Composites of ``qr``, ``svd`` and
products, so autograd, batches and every backend serve them. The test matrix comes from the
default generator: results depend on the seed, as PyTorch's do (its stream differs from
Plait's, so the factors agree with PyTorch's only up to the approximation).
"""

from __future__ import annotations

from typing import Any

from .._aten.creation import complex as _complex
from .._aten.linalg import matmul
from .._aten.linalg_ops import qr, svd
from .._aten.random import randn
from .._core import dtype as _dtype
from .._core.layout import strided
from .._core.tensor import Tensor

__all__ = ["pca_lowrank", "svd_lowrank"]


def _adjoint(t: Tensor) -> Tensor:
    return t.mT.conj() if t.is_complex() else t.mT


def _range_basis(A: Tensor, q: int, niter: int) -> Tensor:
    """An orthonormal (..., m, q) basis whose span approximates the range of ``A``."""
    real = A.real.dtype if A.is_complex() else A.dtype
    R = randn(A.shape[-1], q, dtype=real, device=A.device)
    if A.is_complex():
        R = _complex(R, randn(A.shape[-1], q, dtype=real, device=A.device))
    Q = qr(matmul(A, R)).Q
    for _ in range(niter):
        Q = qr(matmul(_adjoint(A), Q)).Q
        Q = qr(matmul(A, Q)).Q
    return Q


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int = 2,
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """An approximate rank-``q`` SVD ``(U, S, V)`` of ``A - M`` (``M`` broadcast to ``A``;
    None for zero): ``A - M ~ U diag(S) V^H`` with ``U`` (..., m, q), ``S`` (..., q) and
    ``V`` (..., n, q). ``niter`` subspace iterations sharpen the approximation when the
    singular values decay slowly."""
    if not isinstance(A, Tensor):
        raise TypeError(f"svd_lowrank(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.layout is not strided:
        A = A.to_dense()
    if A.dim() < 2:
        raise RuntimeError(f"svd_lowrank: expected a tensor of at least 2 dimensions, got "
                           f"{A.dim()}")
    if not (A.is_floating_point() or A.is_complex()) or A.dtype in (_dtype.float16,
                                                                    _dtype.bfloat16):
        raise RuntimeError(f"svd_lowrank: expected a float32, float64 or complex tensor, got "
                           f"{A.dtype}")
    m, n = A.shape[-2:]
    q = 6 if q is None else int(q)
    if not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if M is not None:
        if M.layout is not strided:
            M = M.to_dense()
        A = A - M.broadcast_to(A.shape)
    if m < n:  # factorize the adjoint, whose range is the smaller one, and swap the factors
        V, S, U = svd_lowrank(_adjoint(A), q, niter)
        return U, S, V
    Q = _range_basis(A, q, niter)
    U_small, S, Vh = svd(matmul(_adjoint(Q), A), full_matrices=False)
    return matmul(Q, U_small), S, _adjoint(Vh)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """The principal components of the rows of ``A`` (..., m, n): ``(U, S, V)`` of
    :func:`svd_lowrank` over ``A`` less its column means (when ``center``), ``q`` components
    (``min(6, m, n)`` by default). ``V``'s columns are the principal directions and
    ``S**2 / (m - 1)`` the variances along them."""
    if not isinstance(A, Tensor):
        raise TypeError(f"pca_lowrank(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.layout is not strided:
        A = A.to_dense()
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else int(q)
    if not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    means: Any = A.mean(dim=-2, keepdim=True) if center else None
    return svd_lowrank(A, q, niter=niter, M=means)
