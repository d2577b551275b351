"""Observers: modules that watch the tensors passing through them and compute the
quantization parameters what they saw calls for (``MinMaxObserver``,
``PerChannelMinMaxObserver``, ``PlaceholderObserver``), with PyTorch's formulas: the range is
widened to hold zero; symmetric schemes center it (scale ``max|x| / ((qmax - qmin) / 2)``,
zero point 0, or the middle of an unsigned range); affine schemes map ``[min, max]`` onto
``[qmin, qmax]``; a scale never falls below ``eps``."""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from typing import Any

import torch
from torch import Tensor
from torch.nn import Module

__all__ = ["MinMaxObserver", "ObserverBase", "PerChannelMinMaxObserver", "PlaceholderObserver",
           "default_dynamic_quant_observer",
           "default_per_channel_weight_observer", "default_weight_observer"]

_SYMMETRIC = (torch.per_tensor_symmetric, torch.per_channel_symmetric)
# the integer range of each quantized dtype (and its plain integer twins)
_QRANGE = {torch.qint8: (-128, 127), torch.quint8: (0, 255),
           torch.qint32: (-(2 ** 31), 2 ** 31 - 1), torch.int8: (-128, 127),
           torch.uint8: (0, 255), torch.int32: (-(2 ** 31), 2 ** 31 - 1)}


class _PartialWrapper:
    """What ``Observer.with_args(...)`` returns: a factory of observers with bound arguments,
    shown as PyTorch shows it (``functools.partial(<class ...>, dtype=torch.qint8){}``)."""

    def __init__(self, partial: functools.partial) -> None:
        self.p = partial
        self.callable_args: dict[str, Any] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.p(*args, **kwargs)

    def __repr__(self) -> str:
        return repr(self.p) + repr(self.callable_args)

    def with_args(self, **kwargs: Any) -> _PartialWrapper:
        return _PartialWrapper(functools.partial(self.p, **kwargs))


class ObserverBase(ABC, Module):
    """The base of observers: ``forward`` records statistics of its input and returns it;
    ``calculate_qparams`` gives the ``(scale, zero_point)`` they call for."""

    def __init__(self, dtype: torch.dtype, is_dynamic: bool = False) -> None:
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    @abstractmethod
    def forward(self, x: Tensor) -> Tensor:
        """Record statistics of ``x`` and return it."""

    @abstractmethod
    def calculate_qparams(self, **kwargs: Any) -> Any:
        """The ``(scale, zero_point)`` the observed statistics call for."""

    @classmethod
    def with_args(cls, **kwargs: Any) -> _PartialWrapper:
        """A factory of this observer with ``kwargs`` bound (what a ``QConfig`` holds)."""
        return _PartialWrapper(functools.partial(cls, **kwargs))


class _ObserverWithRange(ObserverBase):
    """An observer of an integer dtype with a scheme, a range and ``eps``."""

    eps: Tensor

    def __init__(self, dtype: torch.dtype = torch.quint8,
                 qscheme: Any = torch.per_tensor_affine, reduce_range: bool = False,
                 quant_min: int | None = None, quant_max: int | None = None,
                 eps: float = torch.finfo(torch.float32).eps, is_dynamic: bool = False,
                 **_: Any) -> None:
        super().__init__(dtype, is_dynamic)
        if dtype not in _QRANGE:
            raise ValueError(f"Default Observer only works for qint8, quint8 and qint32 "
                             f"quantization types, got {dtype}")
        self.qscheme = qscheme
        self.reduce_range = reduce_range
        self.register_buffer("eps", torch.tensor([eps]))
        if quant_min is not None and quant_max is not None:
            self.has_customized_qrange = True
            self.quant_min, self.quant_max = quant_min, quant_max
        else:
            self.has_customized_qrange = False
            low, high = _QRANGE[dtype]
            if reduce_range:  # one bit fewer, as fbgemm's kernels need
                low, high = low // 2, high // 2
            self.quant_min, self.quant_max = low, high

    def _calculate_qparams(self, min_val: Tensor, max_val: Tensor) -> tuple[Tensor, Tensor]:
        min_neg = torch.clamp(min_val, max=0.0)
        max_pos = torch.clamp(max_val, min=0.0)
        eps = self.eps.to(min_neg.dtype)
        if self.qscheme in _SYMMETRIC:
            bound = torch.maximum(-min_neg, max_pos)
            scale = torch.maximum(bound / ((self.quant_max - self.quant_min) / 2), eps)
            middle = (self.quant_min + self.quant_max) // 2 if self.dtype in (
                torch.quint8, torch.uint8) else 0
            zero_point = torch.full(min_neg.shape, middle, dtype=torch.int64)
        else:
            scale = torch.maximum((max_pos - min_neg) / float(self.quant_max - self.quant_min),
                                  eps)
            zero_point = self.quant_min - torch.round(min_neg / scale).to(torch.int32)
            zero_point = torch.clamp(zero_point, self.quant_min, self.quant_max)
        if scale.dim() == 0:  # a per-tensor result is one-element tensors
            scale = scale.reshape(1)
            zero_point = zero_point.reshape(1)
        return scale, zero_point


class MinMaxObserver(_ObserverWithRange):
    """Tracks the running minimum and maximum of everything it sees (buffers ``min_val``,
    ``max_val``)."""

    min_val: Tensor
    max_val: Tensor

    def __init__(self, dtype: torch.dtype = torch.quint8,
                 qscheme: Any = torch.per_tensor_affine, reduce_range: bool = False,
                 quant_min: int | None = None, quant_max: int | None = None,
                 factory_kwargs: Any = None, eps: float = torch.finfo(torch.float32).eps,
                 is_dynamic: bool = False, **kwargs: Any) -> None:
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps, is_dynamic)
        self.register_buffer("min_val", torch.tensor(float("inf")))
        self.register_buffer("max_val", torch.tensor(float("-inf")))

    def forward(self, x_orig: Tensor) -> Tensor:
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        self.min_val.copy_(torch.minimum(torch.amin(x), self.min_val))
        self.max_val.copy_(torch.maximum(torch.amax(x), self.max_val))
        return x_orig

    def calculate_qparams(self, **kwargs: Any) -> tuple[Tensor, Tensor]:
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self) -> None:
        self.min_val.copy_(torch.tensor(float("inf")))
        self.max_val.copy_(torch.tensor(float("-inf")))


class PerChannelMinMaxObserver(_ObserverWithRange):
    """Tracks the running minimum and maximum of each slice along ``ch_axis``."""

    min_val: Tensor
    max_val: Tensor

    def __init__(self, ch_axis: int = 0, dtype: torch.dtype = torch.quint8,
                 qscheme: Any = torch.per_channel_affine, reduce_range: bool = False,
                 quant_min: int | None = None, quant_max: int | None = None,
                 factory_kwargs: Any = None, eps: float = torch.finfo(torch.float32).eps,
                 is_dynamic: bool = False, **kwargs: Any) -> None:
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps, is_dynamic)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", torch.tensor([]))
        self.register_buffer("max_val", torch.tensor([]))

    def forward(self, x_orig: Tensor) -> Tensor:
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        rows = x.movedim(self.ch_axis, 0).reshape(x.shape[self.ch_axis], -1)
        low, high = torch.amin(rows, dim=1), torch.amax(rows, dim=1)
        if self.min_val.numel():
            low = torch.minimum(low, self.min_val)
            high = torch.maximum(high, self.max_val)
        self.min_val = low
        self.max_val = high
        return x_orig

    def calculate_qparams(self, **kwargs: Any) -> tuple[Tensor, Tensor]:
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class PlaceholderObserver(ObserverBase):
    """Observes nothing: it stands for a dtype the kernels handle themselves (the activations
    of dynamic quantization, chosen per call; float16 weights)."""

    def __init__(self, dtype: torch.dtype = torch.float32, custom_op_name: str = "",
                 compute_dtype: Any = None, quant_min: int | None = None,
                 quant_max: int | None = None, qscheme: Any = None, eps: float | None = None,
                 is_dynamic: bool = False) -> None:
        super().__init__(dtype, is_dynamic)
        self.qscheme = torch.per_tensor_affine if qscheme is None else qscheme
        self.quant_min, self.quant_max, self.eps = quant_min, quant_max, eps
        self.custom_op = custom_op_name

    def forward(self, x: Tensor) -> Tensor:
        return x

    def calculate_qparams(self, **kwargs: Any) -> Any:
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")

    def extra_repr(self) -> str:
        return f"dtype={self.dtype}, is_dynamic={self.is_dynamic}"


default_weight_observer = MinMaxObserver.with_args(dtype=torch.qint8,
                                                   qscheme=torch.per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=torch.qint8, qscheme=torch.per_channel_symmetric)
default_dynamic_quant_observer = PlaceholderObserver.with_args(
    dtype=torch.quint8, quant_min=0, quant_max=255, is_dynamic=True)
