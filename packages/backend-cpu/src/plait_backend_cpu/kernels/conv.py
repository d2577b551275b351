"""Wrappers of the native convolution kernels: the ``convolution`` primitive and a fused
``aten::convolution_backward`` (im2col / col2im + OpenBLAS GEMM, float32/float64 and
float16/bfloat16 through float32 buffers; the primitive also takes the integer dtypes, exact
and wrapping like PyTorch).

bool, more than ``_MAX_SPATIAL`` spatial dims and non-contiguous outputs run core's reference
kernel (the primitive) or composite (the backward, which is native for the float dtypes only:
integer tensors have no gradients).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import UNKNOWN_DTYPE, Kernel, dtype_error, layout_error, null_pointer_error
from .linalg import load_blas

_MAX_SPATIAL = 16
_FLOATS = ("float32", "float64", "float16", "bfloat16")
_INTEGERS = ("uint8", "int8", "int16", "int32", "int64")


def _check_layout(out: Any, input: Any, weight: Any, stride: Any, padding: Any,
                  dilation: Any, groups: int) -> None:
    rank = len(weight.shape)
    if rank < 3 or len(input.shape) != rank or len(out.shape) != rank:
        raise layout_error(
            "convolution",
            f"input, weight and output of {len(input.shape)}, {rank} and {len(out.shape)} "
            "dimensions; all need the same number, at least 3",
        )
    nd = rank - 2
    if len(stride) != nd or len(padding) != nd or len(dilation) != nd:
        raise layout_error(
            "convolution", f"stride, padding and dilation need {nd} values each"
        )
    if groups < 1:
        raise layout_error("convolution", f"groups={groups} is not positive")


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """``convolution`` and ``aten::convolution_backward``."""
    load_blas(native)
    unknown = UNKNOWN_DTYPE
    native_conv = native.convolution
    native_backward = native.convolution_backward
    float_codes = {code for code, name in enumerate(native.DTYPES) if name in _FLOATS}
    forward_codes = float_codes | {code for code, name in enumerate(native.DTYPES)
                                   if name in _INTEGERS}

    def convolution(out: Any, input: Any, weight: Any, stride: Any, padding: Any,
                    dilation: Any, transposed: bool, groups: int) -> None:
        _check_layout(out, input, weight, stride, padding, dilation, groups)
        if input.dtype != out.dtype or weight.dtype != out.dtype:
            raise dtype_error("convolution", out, (input, weight))
        ptrs = (out.data_ptr(), input.data_ptr(), weight.data_ptr())
        if any(not p and t.numel() for p, t in zip(ptrs, (out, input, weight))):
            raise null_pointer_error("convolution")
        code = dtype_codes.get(out.dtype, unknown)
        target = out
        if code in forward_codes and out.numel() and not out.is_contiguous():
            # the native kernel writes row-major: run it into a fresh block, then copy
            import torch

            target = torch.empty(tuple(out.shape), dtype=out.dtype, device=out.device)
        if (
            code not in forward_codes
            or len(out.shape) - 2 > _MAX_SPATIAL
            or not native_conv(
                code, tuple(target.shape), target.data_ptr(), target.stride(),
                tuple(input.shape), ptrs[1], input.stride(), tuple(weight.shape), ptrs[2],
                weight.stride(), list(stride), list(padding), list(dilation),
                bool(transposed), int(groups),
            )
        ):
            reference("convolution")(out, input, weight, stride, padding, dilation,
                                     transposed, groups)
        elif target is not out:
            from torch.backends import contract

            contract.primitive("copy_")(out, target)

    convolution.__name__ = convolution.__qualname__ = "convolution"

    def convolution_backward(grad_output: Any, input: Any, weight: Any, bias_sizes: Any,
                             stride: Any, padding: Any, dilation: Any, transposed: bool,
                             output_padding: Any, groups: int, output_mask: Any) -> Any:
        import torch
        from torch.backends import contract

        stride, padding, dilation, _ = contract.check_convolution_backward(
            grad_output, input, weight, stride, padding, dilation, transposed,
            output_padding, groups)
        code = dtype_codes.get(input.dtype, unknown)
        if code not in float_codes or input.dim() - 2 > _MAX_SPATIAL:
            return contract.composite("aten::convolution_backward")(
                grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                output_padding, groups, output_mask)

        def empty(shape: Any, wanted: bool) -> Any:
            return torch.empty(tuple(shape), dtype=input.dtype, device=input.device) \
                if wanted else None

        grad_input = empty(input.shape, output_mask[0])
        grad_weight = empty(weight.shape, output_mask[1])
        grad_bias = empty((grad_output.shape[1],), output_mask[2])
        ok = native_backward(
            code, tuple(grad_output.shape), grad_output.data_ptr(), grad_output.stride(),
            tuple(input.shape), input.data_ptr(), input.stride(), tuple(weight.shape),
            weight.data_ptr(), weight.stride(), stride, padding, dilation, bool(transposed),
            int(groups), *(t.data_ptr() if t is not None else 0
                           for t in (grad_input, grad_weight, grad_bias)),
        )
        if not ok:
            return contract.composite("aten::convolution_backward")(
                grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                output_padding, groups, output_mask)
        return grad_input, grad_weight, grad_bias

    convolution_backward.__name__ = convolution_backward.__qualname__ = "convolution_backward"
    return {"convolution": convolution, "aten::convolution_backward": convolution_backward}
