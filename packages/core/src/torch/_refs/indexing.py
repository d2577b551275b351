"""Reference kernels of the indexing group: gather, scatter_, nonzero."""

from __future__ import annotations

from collections.abc import Callable

KERNELS: dict[str, Callable[..., object]] = {}
