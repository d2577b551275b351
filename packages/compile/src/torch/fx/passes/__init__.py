"""``torch.fx.passes``: analyses and rewrites over graphs (``shape_prop``)."""

from __future__ import annotations

__all__: list[str] = []
