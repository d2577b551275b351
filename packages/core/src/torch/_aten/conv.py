"""Convolutions: ``convolution``, ``conv1d/2d/3d`` and ``conv_transpose1d/2d/3d``.

Two aten operators, both CompositeExplicitAutograd over the ``convolution`` primitive:

- ``aten::convolution``: argument checks, output allocation, one primitive call, bias added
  by broadcasting; its derivative calls ``aten::convolution_backward``;
- ``aten::convolution_backward``: the input gradient is the convolution's adjoint (the
  primitive with ``transposed`` flipped), the weight gradient the primitive on rearranged
  operands (batch and channels swapped, stride and dilation swapped), the bias gradient a sum.
  Its own derivative is written in these two operators, so every order of derivative works.

A backend may override either operator with a fused kernel (the CPU backend does); these stay
the reference. The public functions convert PyTorch's argument spellings (ints or tuples,
``padding="same"``, unbatched inputs) and call ``aten::convolution``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._core import dispatch as _dispatch, dtype as _dtype, layout as _layout
from .._core.alloc import PRIMS, new_tensor
from .._core.promotion import common_device
from .._core.tensor import Tensor
from .convert import clone, scalar_type_name

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "convolution"]

IntList = Sequence[int]


def _expand(name: str, value: Any, nd: int) -> list[int]:
    """A parameter list of one value per spatial dim (a single value is repeated)."""
    values = [int(value)] if isinstance(value, int) else [int(v) for v in value]
    if len(values) == 1 and nd != 1:
        return values * nd
    if len(values) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={values}")
    return values


def _sizes(shape: Sequence[int]) -> str:
    return " x ".join(str(s) for s in shape)


def output_size(input_shape: Sequence[int], weight_shape: Sequence[int], stride: IntList,
                padding: IntList, dilation: IntList, transposed: bool,
                output_padding: IntList, groups: int) -> tuple[int, ...]:
    """The shape of ``convolution``'s result (arguments already checked and expanded)."""
    spatial = []
    for d in range(len(input_shape) - 2):
        s, k = input_shape[d + 2], weight_shape[d + 2]
        if transposed:
            size = ((s - 1) * stride[d] - 2 * padding[d] + dilation[d] * (k - 1)
                    + output_padding[d] + 1)
        else:
            size = (s + 2 * padding[d] - dilation[d] * (k - 1) - 1) // stride[d] + 1
        spatial.append(size)
    channels = weight_shape[1] * groups if transposed else weight_shape[0]
    return (input_shape[0], channels, *spatial)


def _check(input: Tensor, weight: Tensor, bias: Tensor | None, stride: list[int],
           padding: list[int], dilation: list[int], transposed: bool,
           output_padding: list[int], groups: int) -> None:
    """PyTorch's checks of a convolution's arguments, in its order and words."""
    nd = weight.ndim - 2
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    w_shape, in_shape = list(weight._shape), list(input._shape)
    if input.ndim != weight.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight {w_shape}, but got {input.ndim}-dimensional "
                           f"input of size {in_shape} instead")
    if w_shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {w_shape} instead")
    if w_shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{w_shape}] instead")
    if any(k <= 0 for k in w_shape[2:]):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel size: "
                           f"({_sizes(w_shape[2:])})")
    if not transposed:
        expected = w_shape[1] * groups
        if in_shape[1] != expected:
            raise RuntimeError(f"Given groups={groups}, weight of size {w_shape}, expected "
                               f"input{in_shape} to have {expected} channels, but got "
                               f"{in_shape[1]} channels instead")
        bias_size = w_shape[0]
    else:
        if in_shape[1] != w_shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {w_shape}, expected "
                               f"input{in_shape} to have {w_shape[0]} channels, but got "
                               f"{in_shape[1]} channels instead")
        bias_size = w_shape[1] * groups
    if bias is not None and (bias.ndim != 1 or bias._shape[0] != bias_size):
        raise RuntimeError(f"Given weight of size {w_shape}, expected bias to be 1-dimensional "
                           f"with {bias_size} elements, but got bias of size "
                           f"{list(bias._shape)} instead")
    if not transposed:
        padded = [in_shape[d + 2] + 2 * padding[d] for d in range(nd)]
        kernel = [dilation[d] * (w_shape[d + 2] - 1) + 1 for d in range(nd)]
        if any(k > p for k, p in zip(kernel, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: ({_sizes(padded)}). "
                               f"Kernel size: ({_sizes(kernel)}). Kernel size can't be greater "
                               f"than actual input size")
    else:
        for d in range(nd):
            if output_padding[d] >= stride[d] and output_padding[d] >= dilation[d]:
                raise RuntimeError(f"output padding must be smaller than either stride or "
                                   f"dilation, but got output_padding={output_padding}, "
                                   f"stride={stride}, dilation={dilation}")
        out = output_size(in_shape, w_shape, stride, padding, dilation, True, output_padding,
                          groups)
        if any(s <= 0 for s in out[2:]):
            raise RuntimeError(f"Given input size per channel: ({_sizes(in_shape[2:])}). "
                               f"Calculated output size per channel: ({_sizes(out[2:])}). "
                               f"Output size is too small")


def _check_dtypes(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    if input._dtype is not weight._dtype:
        raise RuntimeError(f"Input type ({_legacy(input)}) and weight type ({_legacy(weight)}) "
                           f"should be the same or input should be a MKLDNN tensor and weight "
                           f"is a dense tensor")
    if bias is not None and bias._dtype is not input._dtype:
        raise RuntimeError(f"Input type ({_cpp(input._dtype)}) and bias type "
                           f"({_cpp(bias._dtype)}) should be the same")


def _check_integer_paths(input: Tensor, weight: Tensor, dilation: list[int],
                         transposed: bool) -> None:
    """PyTorch's CPU kernels for dilated and transposed convolutions take int64 as their only
    integer type (its plain convolution takes them all); none takes bool."""
    dt = input._dtype
    if dt._category > _dtype.INT or dt is _dtype.int64 or input.numel() == 0:
        return  # (an empty input returns before PyTorch picks a kernel)
    name = scalar_type_name(dt)
    if transposed:
        kernel = "slow_conv_transpose3d_out_cpu" if weight.ndim == 5 else \
            "slow_conv_transpose2d_out_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")
    if any(d != 1 for d in dilation):
        raise NotImplementedError(f"\"slow_conv_dilated<>\" not implemented for '{name}'")
    if dt is _dtype.bool_:
        kernel = "compute_columns3d" if weight.ndim == 5 else "slow_conv2d_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def _legacy(t: Tensor) -> str:
    return f"torch.{scalar_type_name(t._dtype)}Tensor"


def _cpp(dt: _dtype.dtype) -> str:
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16"}.get(dt._name, dt._name)


def _params(weight: Tensor, stride: Any, padding: Any, dilation: Any,
            output_padding: Any) -> tuple[list[int], ...]:
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    nd = weight.ndim - 2
    return (_expand("stride", stride, nd), _expand("padding", padding, nd),
            _expand("dilation", dilation, nd), _expand("output_padding", output_padding, nd))


def _convolution_kernel(input: Tensor, weight: Tensor, bias: Tensor | None, stride: IntList,
                        padding: IntList, dilation: IntList, transposed: bool,
                        output_padding: IntList, groups: int) -> Tensor:
    stride, padding, dilation, output_padding = _params(weight, stride, padding, dilation,
                                                        output_padding)
    _check(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    _check_dtypes(input, weight, bias)
    _check_integer_paths(input, weight, dilation, transposed)
    shape = output_size(input._shape, weight._shape, stride, padding, dilation, transposed,
                        output_padding, groups)
    dev = common_device([input, weight] + ([bias] if bias is not None else []))
    out = new_tensor(shape, input._dtype, dev)
    PRIMS.convolution(out, input, weight, stride, padding, dilation, bool(transposed), groups)
    if bias is not None and out.numel():
        # (C,) -> (1, C, 1, ...) broadcast with stride 0, added in place
        view = bias.reshape((1, shape[1]) + (1,) * (len(shape) - 2)).expand(shape)
        PRIMS.add(out, out, view)
    return out


def _weight_grad(input: Tensor, grad_output: Tensor, weight_shape: Sequence[int],
                 stride: list[int], padding: list[int], dilation: list[int],
                 groups: int) -> Tensor:
    """d<grad_output, conv(input, w)>/dw for the plain convolution: the primitive with the
    batch and channel dims swapped and stride and dilation exchanged.

    With input (N, G*Ci, *S) rearranged to (Ci, G*N, *S) and grad_output (N, G*Co, *O)
    transposed to (G*Co, N, *O), a grouped convolution gives (Ci, G*Co, *K); its
    ``[c, g*Co+o, k]`` is ``sum_{n,y} input[n, g*Ci+c, y*stride - padding + k*dilation] *
    grad_output[n, g*Co+o, y]``, the weight gradient transposed.
    """
    n, cin_total = input._shape[:2]
    spatial = tuple(input._shape[2:])
    ci = cin_total // groups
    x = input.reshape((n, groups, ci) + spatial).transpose(0, 2)  # (Ci, G, N, *S)
    x = x.reshape((ci, groups * n) + spatial)
    g = grad_output.transpose(0, 1)  # (G*Co, N, *O)
    out = new_tensor((ci, weight_shape[0]) + tuple(weight_shape[2:]), input._dtype,
                     common_device([input, grad_output]))
    PRIMS.convolution(out, x, g, dilation, padding, stride, False, groups)
    return out.transpose(0, 1).contiguous()  # (G*Co, Ci, *K)


def check_backward(grad_output: Tensor, input: Tensor, weight: Tensor, stride: IntList,
                   padding: IntList, dilation: IntList, transposed: bool,
                   output_padding: IntList, groups: int) -> tuple[list[int], ...]:
    """The checks of ``aten::convolution_backward`` (shared with fused backend kernels):
    returns stride, padding, dilation and output_padding with one value per spatial dim."""
    stride, padding, dilation, output_padding = _params(weight, stride, padding, dilation,
                                                        output_padding)
    _check(input, weight, None, stride, padding, dilation, transposed, output_padding, groups)
    _check_dtypes(input, weight, None)
    if input._dtype is _dtype.bool_:
        _check_integer_paths(input, weight, dilation, transposed)
    expected = output_size(input._shape, weight._shape, stride, padding, dilation, transposed,
                           output_padding, groups)
    if tuple(grad_output._shape) != expected:
        raise RuntimeError(f"convolution_backward: expected grad_output of size "
                           f"{list(expected)}, but got {list(grad_output._shape)}")
    if grad_output._dtype is not input._dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input._dtype)} but found "
                           f"{scalar_type_name(grad_output._dtype)}")
    return stride, padding, dilation, output_padding


def convolution_backward_composite(grad_output: Tensor, input: Tensor, weight: Tensor,
                                   bias_sizes: IntList | None, stride: IntList,
                                   padding: IntList, dilation: IntList, transposed: bool,
                                   output_padding: IntList, groups: int,
                                   output_mask: Sequence[bool]
                                   ) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """``aten::convolution_backward`` over the primitive: the reference, and what a fused
    backend kernel falls back to."""
    stride, padding, dilation, output_padding = check_backward(
        grad_output, input, weight, stride, padding, dilation, transposed, output_padding,
        groups)
    dev = common_device([grad_output, input, weight])
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        # the adjoint in the input: the same convolution with `transposed` flipped
        grad_input = new_tensor(tuple(input._shape), input._dtype, dev)
        PRIMS.convolution(grad_input, grad_output, weight, stride, padding, dilation,
                      not transposed, groups)
    if output_mask[1]:
        if transposed:
            # conv_transpose(x, w) is the adjoint of conv(., w): <g, convT(x, w)> =
            # <conv(g, w), x>, so its weight gradient is conv's with input g, grad x
            grad_weight = _weight_grad(grad_output, input, weight._shape, stride, padding,
                                       dilation, groups)
        else:
            grad_weight = _weight_grad(input, grad_output, weight._shape, stride, padding,
                                       dilation, groups)
    if output_mask[2]:
        dims = [0] + list(range(2, grad_output.ndim))
        grad_bias = grad_output.sum(dims)
    return grad_input, grad_weight, grad_bias


ATEN = _dispatch.define_aten({
    "convolution": ("convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
                    "SymInt[] padding, SymInt[] dilation, bool transposed, "
                    "SymInt[] output_padding, SymInt groups) -> Tensor", _convolution_kernel),
    "convolution_backward": ("convolution_backward(Tensor grad_output, Tensor input, "
                             "Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, "
                             "SymInt[] padding, SymInt[] dilation, bool transposed, "
                             "SymInt[] output_padding, SymInt groups, bool[3] output_mask) "
                             "-> (Tensor, Tensor, Tensor)", convolution_backward_composite),
})


# -- public functions ------------------------------------------------------------------------


def _check_tensor(fn: str, name: str, x: Any) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(x).__name__}")


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: IntList,
                padding: IntList, dilation: IntList, transposed: bool,
                output_padding: IntList, groups: int) -> Tensor:
    """An N-d convolution (or transposed convolution) of a batched ``input``
    ``(N, C_in, *spatial)`` with ``weight``, plus ``bias``: ``aten::convolution``."""
    _check_tensor("convolution", "input", input)
    _check_tensor("convolution", "weight", weight)
    return ATEN["convolution"](input, weight, bias, list(stride), list(padding),
                               list(dilation), bool(transposed), list(output_padding),
                               int(groups))


def _batched(fn: str, input: Tensor, nd: int) -> bool:
    """Whether ``input`` has a batch dim (else it is unbatched and gets one)."""
    if input.ndim == nd + 2:
        return True
    if input.ndim == nd + 1:
        return False
    raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, "
                       f"but got input of size: {list(input._shape)}")


def _same_padding(input: Tensor, weight: Tensor, stride: list[int], dilation: list[int]
                  ) -> tuple[list[int], list[tuple[int, int]]]:
    """``padding="same"``: the symmetric padding and, per dim, the output's (start, length)
    when the total padding is odd (the extra zero goes to the end, as in PyTorch)."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    pads, cuts = [], []
    for d in range(weight.ndim - 2):
        total = dilation[d] * (weight._shape[d + 2] - 1)
        left = total // 2
        # an odd total: pad `left + 1` on both sides and drop the first output position
        pads.append(total - left)
        cuts.append((total - left - left, input._shape[d + 2]))
    return pads, cuts


def _conv(fn: str, nd: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
          padding: Any, dilation: Any, groups: int) -> Tensor:
    _check_tensor(fn, "input", input)
    _check_tensor(fn, "weight", weight)
    batched = _batched(fn, input, nd)
    x = input if batched else input.unsqueeze(0)
    w_nd = max(weight.ndim - 2, 1)
    stride_l = _expand("stride", stride, w_nd)
    dilation_l = _expand("dilation", dilation, w_nd)
    cuts: list[tuple[int, int]] = []
    if isinstance(padding, str):
        if padding == "valid":
            padding_l = [0] * w_nd
        elif padding == "same":
            padding_l, cuts = _same_padding(x, weight, stride_l, dilation_l)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding_l = _expand("padding", padding, w_nd)
    out = ATEN["convolution"](x, weight, bias, stride_l, padding_l, dilation_l, False,
                              [0] * w_nd, int(groups))
    if any(start for start, _ in cuts):
        for d, (start, length) in enumerate(cuts):
            out = out.narrow(d + 2, start, length)
        # PyTorch's result is a fresh contiguous tensor (it pads the input instead); a copy
        # even where the cut is "contiguous" already (size-1 dims) but starts at an offset
        out = clone(out, memory_format=_layout.contiguous_format)
    return _follow_channels_last(out, x, weight) if batched else out.squeeze(0)


# output rank -> the channels-last format of that rank
_CHANNELS_LAST_OF_RANK = {4: _layout.channels_last, 5: _layout.channels_last_3d}


def _follow_channels_last(out: Tensor, input: Tensor, weight: Tensor) -> Tensor:
    """``out`` in channels-last layout when the input or the weight is (PyTorch's convolution
    suggests its output's memory format from them), else as it is."""
    fmt = _CHANNELS_LAST_OF_RANK.get(out.ndim)
    if fmt is None or not any(t.is_contiguous(memory_format=fmt) and not t.is_contiguous()
                              for t in (input, weight)):
        return out
    return out.contiguous(memory_format=fmt)


def _conv_transpose(fn: str, nd: int, input: Tensor, weight: Tensor, bias: Tensor | None,
                    stride: Any, padding: Any, output_padding: Any, groups: int,
                    dilation: Any) -> Tensor:
    _check_tensor(fn, "input", input)
    _check_tensor(fn, "weight", weight)
    if isinstance(padding, str):
        raise TypeError(f"{fn}(): argument 'padding' must be tuple of ints, not str")
    batched = _batched(fn, input, nd)
    x = input if batched else input.unsqueeze(0)
    w_nd = max(weight.ndim - 2, 1)
    out = ATEN["convolution"](x, weight, bias, _expand("stride", stride, w_nd),
                              _expand("padding", padding, w_nd),
                              _expand("dilation", dilation, w_nd), True,
                              _expand("output_padding", output_padding, w_nd), int(groups))
    return out if batched else out.squeeze(0)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-d convolution of ``input`` (N, C_in, L) or (C_in, L) with ``weight``
    (C_out, C_in / groups, kL); ``padding`` is ints, ``"valid"`` or ``"same"``."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-d convolution of ``input`` (N, C_in, H, W) or (C_in, H, W) with ``weight``
    (C_out, C_in / groups, kH, kW); ``padding`` is ints, ``"valid"`` or ``"same"``."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-d convolution of ``input`` (N, C_in, D, H, W) or (C_in, D, H, W) with ``weight``
    (C_out, C_in / groups, kD, kH, kW); ``padding`` is ints, ``"valid"`` or ``"same"``."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """1-d transposed convolution ("deconvolution"): the adjoint of :func:`conv1d` in its
    input; ``weight`` is (C_in, C_out / groups, kL)."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """2-d transposed convolution: the adjoint of :func:`conv2d` in its input; ``weight``
    is (C_in, C_out / groups, kH, kW)."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """3-d transposed convolution: the adjoint of :func:`conv3d` in its input; ``weight``
    is (C_in, C_out / groups, kD, kH, kW)."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


METHODS: dict[str, Any] = {}
