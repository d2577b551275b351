"""Reference kernels of the sort group: sort, topk, searchsorted."""

from __future__ import annotations

from collections.abc import Callable

KERNELS: dict[str, Callable[..., object]] = {}
