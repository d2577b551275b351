"""``Wishart``: the distribution of ``sum_k x_k x_k^T`` for ``df`` Gaussian vectors of
covariance ``covariance_matrix`` (extended to real ``df > dim - 1``)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import torch

from . import constraints
from .distribution import Distribution
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property

__all__ = ["Wishart"]


def _multi_digamma(a: torch.Tensor, p: int) -> torch.Tensor:
    """The multivariate digamma ``sum_{i=1..p} digamma(a + (1 - i) / 2)``."""
    steps = torch.arange(p, dtype=a.dtype, device=a.device) * 0.5
    return torch.digamma(a.unsqueeze(-1) - steps).sum(-1)


class Wishart(Distribution):
    """A Wishart distribution with ``df`` degrees of freedom and scale given by exactly one of
    ``covariance_matrix``, ``precision_matrix`` and ``scale_tril``; samples use the Bartlett
    decomposition and are reparameterised."""

    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky,
                       "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True

    def __init__(self, df: Any, covariance_matrix: torch.Tensor | None = None,
                 precision_matrix: torch.Tensor | None = None,
                 scale_tril: torch.Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        matrix = next(m for m in (scale_tril, covariance_matrix, precision_matrix)
                      if m is not None)
        if matrix.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        p = matrix.shape[-1]
        if isinstance(df, Number):
            df = torch.tensor(float(df), dtype=matrix.dtype, device=matrix.device)
        batch_shape = torch.broadcast_shapes(df.shape, matrix.shape[:-2])
        event_shape = matrix.shape[-2:]
        self.df = df.expand(batch_shape)
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(batch_shape + (-1, -1))
        else:
            assert precision_matrix is not None
            self.precision_matrix = precision_matrix.expand(batch_shape + (-1, -1))
        validate = validate_args if validate_args is not None else self._validate_args
        if validate and bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        # Validate the matrix before factoring it, so a bad one reports which constraint fails.
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = torch.Size(batch_shape)
        matrix_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(matrix_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self) -> torch.Tensor:
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self) -> torch.Tensor:
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self) -> torch.Tensor:
        tril = self._unbroadcasted_scale_tril
        eye = torch.eye(tril.shape[-1], dtype=tril.dtype, device=tril.device)
        inv = torch.linalg.solve_triangular(tril, eye.expand(tril.shape), upper=False)
        return (inv.mT @ inv).expand(self._batch_shape + self._event_shape)

    def _df_matrix(self) -> torch.Tensor:
        return self.df.view(self._batch_shape + (1, 1))

    @property
    def mean(self) -> torch.Tensor:
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self) -> torch.Tensor:
        p = self._event_shape[-1]
        factor = (self.df - p - 1).view(self._batch_shape + (1, 1))
        return torch.where(factor > 0, factor * self.covariance_matrix, math.nan)

    @property
    def variance(self) -> torch.Tensor:
        cov = self.covariance_matrix
        diagonal = cov.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (cov.pow(2) + diagonal.unsqueeze(-1) * diagonal.unsqueeze(-2))

    def rsample(self, sample_shape: Any = (), max_try_correction: int | None = None
                ) -> torch.Tensor:
        """A reparameterised sample ``L A A^T L^T`` (Bartlett): ``A`` is lower triangular with
        ``A_ii^2 ~ Chi2(df - i)`` and standard normal entries below the diagonal.
        ``max_try_correction`` is accepted for PyTorch compatibility; the Bartlett factor is
        nonsingular by construction, so no retry is needed."""
        sample_shape = torch.Size(sample_shape)
        p = self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        shape = self._extended_shape(sample_shape)
        steps = torch.arange(p, dtype=tril.dtype, device=tril.device)
        half_dof = (0.5 * (self.df.unsqueeze(-1) - steps)).expand(sample_shape
                                                                    + self._batch_shape + (p,))
        chi2 = 2 * torch._standard_gamma(half_dof)
        noise = torch.randn(shape, dtype=tril.dtype, device=tril.device).tril(-1)
        bartlett = noise + torch.diag_embed(chi2.sqrt())
        factor = tril @ bartlett
        return factor @ factor.mT

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        log_det_cov = 2 * tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        log_det_value = 2 * torch.linalg.cholesky(value).diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # tr(S^{-1} X) = ||L^{-1} chol(X)||_F^2
        value_tril = torch.linalg.cholesky(value)
        shape = torch.broadcast_shapes(tril.shape, value_tril.shape)
        solved = torch.linalg.solve_triangular(tril.expand(shape), value_tril.expand(shape),
                                               upper=False)
        trace = solved.pow(2).sum((-2, -1))
        return (0.5 * (nu - p - 1) * log_det_value - 0.5 * trace
                - 0.5 * nu * p * math.log(2) - 0.5 * nu * log_det_cov
                - torch.mvlgamma(0.5 * nu, p))

    def entropy(self) -> torch.Tensor:
        nu = self.df
        p = self._event_shape[-1]
        log_det_cov = 2 * self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (0.5 * (p + 1) * log_det_cov + 0.5 * p * (p + 1) * math.log(2)
                + torch.mvlgamma(0.5 * nu, p) - 0.5 * (nu - p - 1) * _multi_digamma(0.5 * nu, p)
                + 0.5 * nu * p)
