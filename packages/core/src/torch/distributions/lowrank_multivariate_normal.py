"""``LowRankMultivariateNormal``: a Gaussian over vectors whose covariance is a low-rank
factor plus a diagonal, ``W W^T + D``; densities go through the Woodbury identity and the
matrix determinant lemma, so nothing of size ``n x n`` is factored."""

from __future__ import annotations

import math
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _capacitance_tril(cov_factor: torch.Tensor, cov_diag: torch.Tensor) -> torch.Tensor:
    """The Cholesky factor of ``I + W^T D^{-1} W`` (rank x rank)."""
    rank = cov_factor.size(-1)
    scaled = cov_factor / cov_diag.unsqueeze(-1)
    capacitance = torch.matmul(cov_factor.transpose(-1, -2), scaled)
    eye = torch.eye(rank, dtype=cov_factor.dtype, device=cov_factor.device)
    return torch.linalg.cholesky(capacitance + eye)


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal with mean ``loc`` and covariance
    ``cov_factor @ cov_factor.T + diag(cov_diag)``.

    :param loc: mean, shape ``batch_shape + (n,)``.
    :param cov_factor: the low-rank factor, shape ``batch_shape + (n, rank)``.
    :param cov_diag: the diagonal part, shape ``batch_shape + (n,)``.
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: torch.Tensor, cov_factor: torch.Tensor, cov_diag: torch.Tensor,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        loc_ = loc.unsqueeze(-1)
        cov_diag_ = cov_diag.unsqueeze(-1)
        try:
            loc_, self.cov_factor, cov_diag_ = torch.broadcast_tensors(loc_, cov_factor,
                                                                       cov_diag_)
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = torch.Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> torch.Tensor:
        return self.loc

    @property
    def mode(self) -> torch.Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> torch.Tensor:  # type: ignore[override]
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self) -> torch.Tensor:
        """``W W^T + diag(D)``, broadcast over the batch."""
        factor = self._unbroadcasted_cov_factor
        covariance = (torch.matmul(factor, factor.transpose(-1, -2))
                      + torch.diag_embed(self._unbroadcasted_cov_diag))
        n = self._event_shape[0]
        return covariance.expand(self._batch_shape + (n, n))

    @lazy_property
    def scale_tril(self) -> torch.Tensor:
        """The lower Cholesky factor of the covariance."""
        return torch.linalg.cholesky(self.covariance_matrix)

    @lazy_property
    def precision_matrix(self) -> torch.Tensor:
        """The inverse covariance, by Woodbury:
        ``D^{-1} - D^{-1} W (I + W^T D^{-1} W)^{-1} W^T D^{-1}``."""
        factor = self._unbroadcasted_cov_factor
        inv_diag = self._unbroadcasted_cov_diag.reciprocal()
        scaled_t = (factor * inv_diag.unsqueeze(-1)).transpose(-1, -2)  # W^T D^{-1}
        solved = torch.linalg.solve_triangular(self._capacitance_tril, scaled_t, upper=False)
        precision = torch.diag_embed(inv_diag) - torch.matmul(solved.transpose(-1, -2), solved)
        n = self._event_shape[0]
        return precision.expand(self._batch_shape + (n, n))

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        rank_shape = shape[:-1] + self.cov_factor.shape[-1:]
        eps_factor = torch.randn(rank_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_diag = torch.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        low_rank = torch.matmul(self._unbroadcasted_cov_factor,
                                eps_factor.unsqueeze(-1)).squeeze(-1)
        return self.loc + low_rank + self._unbroadcasted_cov_diag.sqrt() * eps_diag

    def _log_det(self) -> torch.Tensor:
        # det(W W^T + D) = det(I + W^T D^{-1} W) det(D)
        capacitance_half = self._capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return 2 * capacitance_half + self._unbroadcasted_cov_diag.log().sum(-1)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        inv_diag = self._unbroadcasted_cov_diag.reciprocal()
        # Woodbury: diff^T S^{-1} diff = diff^T D^{-1} diff - |L^{-1} W^T D^{-1} diff|^2
        projected = torch.matmul(self._unbroadcasted_cov_factor.transpose(-1, -2),
                                 (diff * inv_diag).unsqueeze(-1))
        shape = torch.broadcast_shapes(self._capacitance_tril.shape[:-2],
                                       projected.shape[:-2])
        rank = projected.shape[-2]
        solved = torch.linalg.solve_triangular(
            self._capacitance_tril.expand(shape + (rank, rank)),
            projected.expand(shape + (rank, 1)), upper=False)
        maha = (diff.pow(2) * inv_diag).sum(-1) - solved.squeeze(-1).pow(2).sum(-1)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + self._log_det() + maha)

    def entropy(self) -> torch.Tensor:
        n = self._event_shape[0]
        h = 0.5 * (n * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h.expand(self._batch_shape) if len(self._batch_shape) else h
