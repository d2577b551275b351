"""``cosine_similarity``, ``pairwise_distance`` and ``pdist`` of ``nn.functional``."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` (broadcast) along ``dim``; each norm is
    clamped below by ``eps``."""
    a, b = torch.broadcast_tensors(x1, x2)
    na = a.norm(2, dim=dim, keepdim=True).clamp_min(eps)
    nb = b.norm(2, dim=dim, keepdim=True).clamp_min(eps)
    return ((a / na) * (b / nb)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim (inputs broadcast)."""
    out_dim = max(x1.dim(), x2.dim())
    diff = x1 - x2 + eps
    if out_dim == 0:
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
        return torch.zeros(0, dtype=input.dtype, device=input.device)
    ij = torch.triu_indices(rows, rows, 1).to(input.device)
    diff = input.index_select(0, ij[0]) - input.index_select(0, ij[1])
    return diff.norm(p, dim=1)
