"""Reference kernels of the linear-algebra group: batched matmul."""

from __future__ import annotations

from collections.abc import Callable

KERNELS: dict[str, Callable[..., object]] = {}
