"""``MultivariateNormal``: a Gaussian over vectors, given one of a covariance matrix, a
precision matrix or a lower-triangular Cholesky factor of the covariance."""

from __future__ import annotations

import math
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mahalanobis(scale_tril: torch.Tensor, diff: torch.Tensor) -> torch.Tensor:
    """``diff^T (L L^T)^{-1} diff`` for each batch: one triangular solve, then a squared norm."""
    shape = torch.broadcast_shapes(scale_tril.shape[:-2], diff.shape[:-1])
    n = diff.shape[-1]
    tril = scale_tril.expand(shape + (n, n))
    solved = torch.linalg.solve_triangular(tril, diff.expand(shape + (n,)).unsqueeze(-1),
                                           upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(precision: torch.Tensor) -> torch.Tensor:
    # Flip, factor, flip: the lower Cholesky factor of the inverse without forming it.
    flipped = torch.flip(precision, (-2, -1))
    lf = torch.linalg.cholesky(flipped)
    l_inv = torch.transpose(torch.flip(lf, (-2, -1)), -2, -1)
    eye = torch.eye(precision.shape[-1], dtype=precision.dtype, device=precision.device)
    return torch.linalg.solve_triangular(l_inv, eye.expand(l_inv.shape), upper=False)


class MultivariateNormal(Distribution):
    """A multivariate normal with mean ``loc`` and exactly one of ``covariance_matrix``,
    ``precision_matrix`` and ``scale_tril``."""

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: torch.Tensor, covariance_matrix: torch.Tensor | None = None,
                 precision_matrix: torch.Tensor | None = None,
                 scale_tril: torch.Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        matrix = next(m for m in (scale_tril, covariance_matrix, precision_matrix)
                      if m is not None)
        names = {id(scale_tril): "scale_tril", id(covariance_matrix): "covariance_matrix",
                 id(precision_matrix): "precision_matrix"}
        name = names[id(matrix)]
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        batch_shape = torch.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = torch.Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self) -> torch.Tensor:
        return self._unbroadcasted_scale_tril.expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self) -> torch.Tensor:
        tril = self._unbroadcasted_scale_tril
        return torch.matmul(tril, tril.transpose(-1, -2)).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self) -> torch.Tensor:
        tril = self._unbroadcasted_scale_tril
        eye = torch.eye(tril.shape[-1], dtype=tril.dtype, device=tril.device)
        inv = torch.linalg.solve_triangular(tril, eye.expand(tril.shape), upper=False)
        return torch.matmul(inv.transpose(-1, -2), inv).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self) -> torch.Tensor:
        return self.loc

    @property
    def mode(self) -> torch.Tensor:
        return self.loc

    @property
    def variance(self) -> torch.Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape: Any = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        eps = torch.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + torch.matmul(self._unbroadcasted_scale_tril,
                                       eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> torch.Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        maha = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + maha) - self._half_log_det()

    def entropy(self) -> torch.Tensor:
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(self._batch_shape) if len(self._batch_shape) else h
