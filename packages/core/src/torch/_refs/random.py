"""Reference kernels of the random group: Philox4x32-10 random bits."""

from __future__ import annotations

from collections.abc import Callable

KERNELS: dict[str, Callable[..., object]] = {}
