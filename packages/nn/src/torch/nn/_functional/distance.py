"""``cosine_similarity``, ``pairwise_distance`` and ``pdist`` of ``nn.functional``: the
``torch.*`` functions of the same names (one implementation, in core's op library), as in
PyTorch."""

from __future__ import annotations

from torch import cosine_similarity, pairwise_distance, pdist

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]
