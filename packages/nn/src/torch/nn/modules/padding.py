"""Padding layers: zero, constant, reflection, replication and circular (1-3 d), over
``F.pad``."""

from __future__ import annotations

from typing import Any

from torch import Tensor
from torch.nn import functional as F

from .module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d",
]


class _PadNd(Module):
    _n = 0
    _mode = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        # a sequence is kept as given (F.pad checks its length), an int repeats
        self.padding = (tuple(int(v) for v in padding) if isinstance(padding, (list, tuple))
                        else (int(padding),) * (2 * self._n))

    def _check_input_dim(self, input: Tensor) -> None:
        if not isinstance(input, Tensor):
            return  # a tensor-like (an fx Proxy) has no dims yet: F.pad hands it on
        if self._mode != "constant" and input.dim() not in (self._n + 1, self._n + 2):
            raise ValueError(f"expected {self._n + 1}D or {self._n + 2}D input (got "
                             f"{input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        # through F (not _ops): a tensor-like input (an fx Proxy) reaches its __torch_function__
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with a constant."""

    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with a constant."""

    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with a constant."""

    _n = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros."""

    _n = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last 2 dims with zeros."""

    _n = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last 3 dims with zeros."""

    _n = 3


class _ReflectionPadNd(_PadNd):
    """The reflection paddings' base (PyTorch's name, which layer code checks with
    isinstance)."""

    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Pad the last dim with its reflection (the edge is not repeated)."""

    _n = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Pad the last 2 dims with their reflection."""

    _n = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pad the last 3 dims with their reflection."""

    _n = 3


class _ReplicationPadNd(_PadNd):
    """The replication paddings' base (PyTorch's name, which layer code checks with
    isinstance)."""

    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Pad the last dim by repeating its edge values."""

    _n = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Pad the last 2 dims by repeating their edge values."""

    _n = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pad the last 3 dims by repeating their edge values."""

    _n = 3


class _CircularPadNd(_PadNd):
    """The circular paddings' base (PyTorch's name, which layer code checks with
    isinstance)."""

    _mode = "circular"


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around."""

    _n = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dims by wrapping around."""

    _n = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dims by wrapping around."""

    _n = 3
