"""Convolution layers ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d`` (PyTorch's
initialisation, padding modes and repr)."""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor
from torch.nn import _ops, init
from torch.nn.parameter import Parameter, UninitializedParameter

from .lazy import LazyModuleMixin
from .module import Module

__all__ = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
    "LazyConvTranspose3d",
]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _n = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ops.ntuple(kernel_size, n, "kernel_size")
        self.stride = _ops.ntuple(stride, n, "stride")
        self.dilation = _ops.ntuple(dilation, n, "dilation")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding: Any = padding
        else:
            self.padding = _ops.ntuple(padding, n, "padding")
        self.groups = groups
        self.padding_mode = padding_mode
        self.transposed = False
        self.output_padding = (0,) * n
        self.weight = Parameter(torch.empty((out_channels, in_channels // groups,
                                             *self.kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(torch.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _explicit_padding(self) -> list[int]:
        """(before, after) per spatial dim, last dim first (F.pad's order)."""
        if self.padding == "valid":
            return [0] * (2 * self._n)
        if self.padding == "same":
            out: list[int] = []
            for k, d in zip(reversed(self.kernel_size), reversed(self.dilation)):
                total = d * (k - 1)
                out += [total // 2, total - total // 2]
            return out
        return [p for p in reversed(self.padding) for _ in range(2)]

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = getattr(torch, f"conv{self._n}d")
        if self.padding_mode != "zeros":
            padded = _ops.pad(input, self._explicit_padding(), mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * self._n:
            s += ", padding={padding}"
        if self.dilation != (1,) * self._n:
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * self._n:
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__, bias=self.bias)


class Conv1d(_ConvNd):
    """1-d convolution over (N, C_in, L)."""

    _n = 1


class Conv2d(_ConvNd):
    """2-d convolution over (N, C_in, H, W)."""

    _n = 2


class Conv3d(_ConvNd):
    """3-d convolution over (N, C_in, D, H, W)."""

    _n = 3


class _ConvTransposeNd(_ConvNd):
    """Transposed convolution: weight (C_in, C_out/groups, *kernel), the gradient of the
    matching convolution with respect to its input."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        if isinstance(padding, str):
            raise ValueError(f"padding={padding!r} is not supported for "
                             f"{type(self).__name__}")
        Module.__init__(self)
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ops.ntuple(kernel_size, n, "kernel_size")
        self.stride = _ops.ntuple(stride, n, "stride")
        self.padding = _ops.ntuple(padding, n, "padding")
        self.dilation = _ops.ntuple(dilation, n, "dilation")
        self.transposed = True
        self.output_padding = _ops.ntuple(output_padding, n, "output_padding")
        self.groups = groups
        self.padding_mode = padding_mode
        self.weight = Parameter(torch.empty((in_channels, out_channels // groups,
                                             *self.kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(torch.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple[int, ...]:
        """The output padding that makes the output ``output_size`` (spatial dims, or with the
        batch/channel dims in front)."""
        if output_size is None:
            return self.output_padding
        n = self._n
        size = [int(v) for v in output_size]
        if len(size) in (n + 1, n + 2):
            size = size[-n:]
        if len(size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must "
                             f"have {n} or {n + 2} elements (got {len(output_size)})")
        spatial = input.shape[-n:]
        lows = [(spatial[i] - 1) * self.stride[i] - 2 * self.padding[i]
                + self.dilation[i] * (self.kernel_size[i] - 1) + 1 for i in range(n)]
        highs = [low + s - 1 for low, s in zip(lows, self.stride)]
        if any(not lo <= v <= hi for v, lo, hi in zip(size, lows, highs)):
            raise ValueError(f"requested an output size of {size}, but valid sizes range from "
                             f"{lows} to {highs} (for an input of {spatial})")
        out = [v - lo for v, lo in zip(size, lows)]
        return tuple(out)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        if input.dim() not in (self._n + 1, self._n + 2):
            raise RuntimeError(f"Expected {self._n + 1}D (unbatched) or {self._n + 2}D (batched) "
                               f"input to conv_transpose{self._n}d, but got input of size: "
                               f"{list(input.shape)}")
        op = getattr(torch, f"conv_transpose{self._n}d")
        return op(input, self.weight, self.bias, self.stride, self.padding,
                  self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution over (N, C_in, L)."""

    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution over (N, C_in, H, W)."""

    _n = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution over (N, C_in, D, H, W)."""

    _n = 3


class _LazyConvMixin(LazyModuleMixin):
    """``in_channels`` comes from the first input (dim 1, or dim 0 when unbatched)."""

    _n = 0
    in_channels: int
    out_channels: int
    groups: int
    kernel_size: tuple[int, ...]
    transposed: bool
    weight: Any
    bias: Any

    def _lazy_setup(self, bias: bool, device: Any, dtype: Any) -> None:
        # the parent constructor ran with 0 channels; placeholders replace its parameters
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        batched = input.dim() == self._n + 2
        self.in_channels = int(input.shape[1] if batched else input.shape[0])
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        with torch.no_grad():
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _lazy_conv(base: type, n: int) -> type:
    def __init__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        # LazyModuleMixin.__init__ registers the hook, then runs base.__init__ (next in the MRO)
        _LazyConvMixin.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups,
                                False, padding_mode)
        self.out_channels = out_channels
        self._lazy_setup(bias, device, dtype)

    name = f"LazyConv{n}d"
    return type(name, (_LazyConvMixin, base), {
        "__init__": __init__, "cls_to_become": base, "_n": n, "__module__": __name__,
        "__qualname__": name,
        "__doc__": f"A ``Conv{n}d`` whose ``in_channels`` is taken from the first input."})


def _lazy_conv_transpose(base: type, n: int) -> type:
    def __init__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        _LazyConvMixin.__init__(self, 0, 0, kernel_size, stride, padding, output_padding,
                                groups, False, dilation, padding_mode)
        self.out_channels = out_channels
        self._lazy_setup(bias, device, dtype)

    name = f"LazyConvTranspose{n}d"
    return type(name, (_LazyConvMixin, base), {
        "__init__": __init__, "cls_to_become": base, "_n": n, "__module__": __name__,
        "__qualname__": name,
        "__doc__": f"A ``ConvTranspose{n}d`` whose ``in_channels`` is taken from the first "
                   "input."})


LazyConv1d = _lazy_conv(Conv1d, 1)
LazyConv2d = _lazy_conv(Conv2d, 2)
LazyConv3d = _lazy_conv(Conv3d, 3)
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d, 3)
