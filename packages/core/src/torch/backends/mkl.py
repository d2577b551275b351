"""``torch.backends.mkl``: whether Intel MKL is built in (it is not: Plait's CPU kernels are its
own), and the ``verbose`` context programs use around MKL calls."""

from __future__ import annotations

from typing import Any

__all__ = ["VERBOSE_OFF", "VERBOSE_ON", "is_available", "verbose"]

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available() -> bool:
    """Whether PyTorch-style MKL kernels are built in: never, in Plait."""
    return False


class verbose:  # PyTorch's lower-case name
    """``with torch.backends.mkl.verbose(level)``: MKL's call log; nothing to log without
    MKL, so the block runs unchanged."""

    def __init__(self, enable: int) -> None:
        self.enable = enable

    def __enter__(self) -> verbose:
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False
