"""The cuda ``convolution`` primitive (the direct kernel of :mod:`.render_conv`), forward
and transposed, N-d, grouped. Complex dtypes are declined (the CPU fallback serves them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch.backends import contract

from ._render import render, render_conv
from .kernels import (
    CALLS,
    DIALECT,
    buffer_args,
    cached_kernel,
    dtype_name,
    launch_1d,
)

MAX_SPATIAL = 3


@contract.may_decline
def convolution(out: Any, input: Any, weight: Any, stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                groups: int) -> None:
    """``convolution(Tensor(a!) out, Tensor input, Tensor weight, int[] stride, int[]
    padding, int[] dilation, bool transposed, int groups)`` on cuda."""
    name = dtype_name(out)
    spatial = input.dim() - 2
    if (name in render.COMPLEX or input.dtype != out.dtype or weight.dtype != out.dtype
            or not 1 <= spatial <= MAX_SPATIAL):
        raise contract.Decline
    CALLS["convolution"] += 1
    total = out.numel()
    if total == 0:
        return
    dt = render.DTYPES[name]
    accumulator = "f64" if dt.is_float else "u64"
    batch = out.shape[0]
    co = out.shape[1] // groups
    ci = input.shape[1] // groups
    geometry: list[int] = []
    for k in range(spatial):
        geometry += [input.shape[2 + k], out.shape[2 + k], weight.shape[2 + k], stride[k],
                     padding[k], dilation[k]]
    i = out.device.index or 0
    key = ("convolution", i, name, spatial, bool(transposed), accumulator)
    kernel = cached_kernel(key, i, lambda: render_conv.render_convolution(
        DIALECT, name, spatial, bool(transposed), accumulator))
    buffers, offsets = buffer_args([out, input, weight])
    strides = [*out.stride(), *input.stride(), *weight.stride()]
    launch_1d(kernel, total, [*buffers, total, batch, groups, ci, co, *offsets, *geometry,
                              *strides])


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the convolution group."""
    return {"convolution": convolution}
