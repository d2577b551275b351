"""The ``convolution`` primitive of the GPU backends (the direct kernel of
:mod:`.render_conv`), forward and transposed, N-d, grouped; one source for plait-backend-xpu and
plait-backend-cuda, each passing its :class:`~.render_launch.LaunchBackend`. Complex dtypes are
declined (the CPU fallback serves them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch.backends import contract

from . import render, render_conv
from .render_launch import LaunchBackend

MAX_SPATIAL = 3


def kernels(b: LaunchBackend) -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel for the convolution group on backend ``b``."""

    @contract.may_decline
    def convolution(out: Any, input: Any, weight: Any, stride: Sequence[int],
                    padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                    groups: int) -> None:
        """``convolution(Tensor(a!) out, Tensor input, Tensor weight, int[] stride, int[]
        padding, int[] dilation, bool transposed, int groups)``."""
        name = b.dtype_name(out)
        spatial = input.dim() - 2
        if (name in render.COMPLEX or input.dtype != out.dtype or weight.dtype != out.dtype
                or not 1 <= spatial <= MAX_SPATIAL):
            raise contract.Decline
        b.require_fp64(out, [name])
        b.calls["convolution"] += 1
        total = out.numel()
        if total == 0:
            return
        dt = render.DTYPES[name]
        accumulator = ("f64" if b.has_fp64(out) else "f32") if dt.is_float else "u64"
        batch = out.shape[0]
        co = out.shape[1] // groups
        ci = input.shape[1] // groups
        geometry: list[int] = []
        for k in range(spatial):
            geometry += [input.shape[2 + k], out.shape[2 + k], weight.shape[2 + k], stride[k],
                         padding[k], dilation[k]]
        i = out.device.index or 0
        key = ("convolution", i, name, spatial, bool(transposed), accumulator)
        kernel = b.cached_kernel(key, i, lambda: render_conv.render_convolution(
            b.dialect, name, spatial, bool(transposed), accumulator))
        buffers, offsets = b.buffer_args([out, input, weight])
        strides = [*out.stride(), *input.stride(), *weight.stride()]
        b.launch_1d(kernel, total, i, [*buffers, total, batch, groups, ci, co, *offsets,
                                       *geometry, *strides])

    return {"convolution": convolution}
