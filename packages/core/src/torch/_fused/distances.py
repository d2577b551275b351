"""``cdist`` (the distances between every row of one batch of points and every row of another),
``dist`` (the norm of a difference), and ``cosine_similarity``, ``pairwise_distance`` and
``pdist`` (torch.* names that ``nn.functional`` re-exports). Composites: ``cdist`` takes the
norm of the pairwise differences, whose gradient is 0 where two points coincide, as PyTorch's;
for p=2 on more than 25 points a side without gradients it expands
``|a-b|^2 = |a|^2 + |b|^2 - 2ab`` into a matrix product, as PyTorch's default ``compute_mode``
does."""

from __future__ import annotations

from typing import Any

from .._aten.creation import triu_indices
from .._aten.factories import zeros
from .._aten.linalg_ops import vector_norm
from .._aten.shape import broadcast_tensors
from .._core import config as _config
from .._core.tensor import LEGACY_TYPE_NAMES, Tensor

__all__ = ["cdist", "cosine_similarity", "dist", "pairwise_distance", "pdist"]

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


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` (broadcast) along ``dim``; each norm is
    clamped below by ``eps``."""
    a, b = broadcast_tensors(x1, x2)
    na = a.norm(2, dim=dim, keepdim=True).clamp_min(eps)
    nb = b.norm(2, dim=dim, keepdim=True).clamp_min(eps)
    return ((a / na) * (b / nb)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim (inputs broadcast)."""
    diff = x1 - x2 + eps
    if max(x1.dim(), x2.dim()) == 0:
        return diff.abs()
    return diff.norm(p, dim=-1, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between the rows of (N, M) ``input``, pairs (i < j) in row-major
    order: N*(N-1)/2 values."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    rows = input.shape[0]
    if rows < 2:
        return zeros(0, dtype=input.dtype, device=input.device)
    pairs = triu_indices(rows, rows, 1).to(input.device)  # (2, N*(N-1)/2)
    diff = input.index_select(0, pairs[0]) - input.index_select(0, pairs[1])
    return diff.norm(p, dim=1)


METHODS = {"dist": dist}
