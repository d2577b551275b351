"""Pooling layers: max, average, power-average, adaptive average/max pooling and max
unpooling (1-3 d)."""

from __future__ import annotations

from typing import Any

from torch import Tensor
from torch.nn import _ops, functional as F
from torch.nn._functional import pooling as _pool

from .module import Module

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d",
    "LPPool2d", "LPPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
    "MaxUnpool3d",
]


class _MaxPoolNd(Module):
    _n = 0

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Any:
        # through F's entry, as PyTorch's modules: graph capture records the call whole
        return getattr(F, f"max_pool{self._n}d")(input, self.kernel_size, self.stride,
                                                 self.padding, self.dilation, self.ceil_mode,
                                                 self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _n = 1


class MaxPool2d(_MaxPoolNd):
    _n = 2


class MaxPool3d(_MaxPoolNd):
    _n = 3


class _AvgPoolNd(Module):
    _n = 0

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        # through F's entry, as PyTorch's modules: graph capture records the call whole
        return getattr(F, f"avg_pool{self._n}d")(input, self.kernel_size, self.stride,
                                                 self.padding, self.ceil_mode,
                                                 self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    _n = 1

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        # (PyTorch's 1-d average pooling has no divisor_override)
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)

    def extra_repr(self) -> str:
        k, s, p = (_ops.ntuple(v, 1) for v in (self.kernel_size, self.stride, self.padding))
        return f"kernel_size={k}, stride={s}, padding={p}"


class AvgPool2d(_AvgPoolNd):
    _n = 2


class AvgPool3d(_AvgPoolNd):
    _n = 3


class _AdaptiveNd(Module):
    _n = 0
    _max = False

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = False

    def forward(self, input: Tensor) -> Any:
        # through F's entries, as PyTorch's modules: graph capture records the call whole
        if self._max:
            return getattr(F, f"adaptive_max_pool{self._n}d")(input, self.output_size,
                                                              self.return_indices)
        return getattr(F, f"adaptive_avg_pool{self._n}d")(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveMaxNd(_AdaptiveNd):
    _max = True

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices


class _AdaptiveAvgPoolNd(_AdaptiveNd):
    """The adaptive average poolings' base (PyTorch's name)."""


# PyTorch's name for the adaptive max poolings' base
_AdaptiveMaxPoolNd = _AdaptiveMaxNd


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    _n = 1


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    _n = 2


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    _n = 3


class AdaptiveMaxPool1d(_AdaptiveMaxNd):
    _n = 1


class AdaptiveMaxPool2d(_AdaptiveMaxNd):
    _n = 2


class AdaptiveMaxPool3d(_AdaptiveMaxNd):
    _n = 3


class _MaxUnpoolNd(Module):
    _n = 0

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        n = self._n
        self.kernel_size = _ops.ntuple(kernel_size, n, "kernel_size")
        self.stride = _ops.ntuple(stride if stride is not None else kernel_size, n, "stride")
        self.padding = _ops.ntuple(padding, n, "padding")

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        fn = getattr(_pool, f"max_unpool{self._n}d")
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool1d``: values go back to the positions of their indices."""

    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool2d``."""

    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool3d``."""

    _n = 3


class _LPPoolNd(Module):
    _n = 0

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        fn = getattr(_pool, f"lp_pool{self._n}d")
        return fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """1-d power-average pooling: (sum of x**p over each window) ** (1/p)."""

    _n = 1


class LPPool2d(_LPPoolNd):
    """2-d power-average pooling."""

    _n = 2


class LPPool3d(_LPPoolNd):
    """3-d power-average pooling."""

    _n = 3


class _FractionalMaxPoolNd(Module):
    _n = 0

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        n = self._n
        self.kernel_size = _ops.ntuple(kernel_size, n, "kernel_size")
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = (_ops.ntuple(output_size, n, "output_size")
                            if output_size is not None else None)
        self.output_ratio = (tuple(float(r) for r in (
            output_ratio if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * n))
            if output_ratio is not None else None)
        if output_size is None and output_ratio is None:
            raise ValueError(f"FractionalMaxPool{n}d requires specifying either an output "
                             "size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        fn = getattr(_pool, f"fractional_max_pool{self._n}d")
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-d fractional max pooling over pseudo-random window positions."""

    _n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-d fractional max pooling over pseudo-random window positions."""

    _n = 3
