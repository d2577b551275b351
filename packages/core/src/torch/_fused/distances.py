"""``cdist`` (the distances between every row of one batch of points and every row of another)
and ``dist`` (the norm of a difference). Composites: ``cdist`` takes the norm of the pairwise
differences, whose gradient is 0 where two points coincide, as PyTorch's; for p=2 on more than
25 points a side without gradients it expands ``|a-b|^2 = |a|^2 + |b|^2 - 2ab`` into a matrix
product, as PyTorch's default ``compute_mode`` does."""

from __future__ import annotations

from typing import Any

from .._aten.linalg_ops import vector_norm
from .._core import config as _config
from .._core.tensor import LEGACY_TYPE_NAMES, Tensor

__all__ = ["cdist", "dist"]

_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
          "donot_use_mm_for_euclid_dist")
# PyTorch's threshold: the matrix product pays off beyond this many points on both sides
_MM_POINTS = 25


def _check(x1: Tensor, x2: Tensor, p: float) -> None:
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{x.ndim}D")
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_scalar_name(x)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(x1)} but found "
                           f"{_scalar_name(x2)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype.itemsize < 4:  # PyTorch's CPU kernel has no half-precision version
        raise NotImplementedError(f'"cdist" not implemented for \'{_scalar_name(x1)}\'')


def _scalar_name(x: Tensor) -> str:
    """PyTorch's scalar-type name (Float, Double, Long...): its legacy type name's stem."""
    return LEGACY_TYPE_NAMES.get(x.dtype._name, "Tensor").removesuffix("Tensor")


def _use_mm(x1: Tensor, x2: Tensor, p: float, mode: str) -> bool:
    if p != 2 or mode == _MODES[2]:
        return False
    if mode == _MODES[1]:
        return True
    needs_grad = _config.is_grad_enabled() and (x1.requires_grad or x2.requires_grad)
    return not needs_grad and x1.shape[-2] > _MM_POINTS and x2.shape[-2] > _MM_POINTS


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The ``p``-norm distances between the rows of ``x1`` (B, P, M) and of ``x2`` (B, R, M):
    a (B, P, R) tensor; the batch dims broadcast."""
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    _check(x1, x2, p)
    if _use_mm(x1, x2, p, compute_mode):
        square1 = x1.pow(2).sum(-1, keepdim=True)
        square2 = x2.pow(2).sum(-1, keepdim=True).transpose(-2, -1)
        cross = x1 @ x2.transpose(-2, -1)
        return (square1 + square2 - 2 * cross).clamp_min(0).sqrt()
    differences = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return vector_norm(differences, float(p), -1)


def dist(input: Tensor, other: Any, p: float = 2) -> Tensor:
    """The ``p``-norm of ``input - other`` (broadcast), a 0-d tensor."""
    return vector_norm(input - other, float(p))


METHODS = {"dist": dist}
