"""``torch.fx.experimental``: ``proxy_tensor.make_fx`` (aten-level graphs)."""

from __future__ import annotations

__all__: list[str] = []
