"""Derivative formulas: the layout-changing nn operators of ``torch._aten.nn_layout`` and the
nearest and bilinear upsampling of ``torch._aten.resample``.

As in PyTorch's derivatives table, a constant pad's gradient is the incoming gradient cropped
back (``constant_pad_nd`` with the negated pads: the padded cells, constants, get nothing),
and ``pixel_shuffle`` / ``pixel_unshuffle`` are each other's gradient, as are
``upsample_nearest2d`` / ``upsample_bilinear2d`` and their backwards. All are linear, so
the rules differentiate again through the same operators.
"""

from __future__ import annotations

from typing import Any

from ..._aten.nn_layout import ATEN
from ..._aten.resample import ATEN as _RESAMPLE
from ..._core.tensor import Tensor
from . import derivative
from .shape import arg, needs, positional


@derivative("aten::constant_pad_nd", args=False, result=False)
def _constant_pad_nd(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    pad = [-int(p) for p in arg(ctx, 1, "pad")]
    return positional(ctx, ATEN["constant_pad_nd"](grad, pad) if needs(ctx, 0) else None)


@derivative("aten::pixel_shuffle", args=False, result=False)
def _pixel_shuffle(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    factor = arg(ctx, 1, "upscale_factor")
    return positional(ctx, ATEN["pixel_unshuffle"](grad, factor) if needs(ctx, 0) else None)


@derivative("aten::pixel_unshuffle", args=False, result=False)
def _pixel_unshuffle(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    factor = arg(ctx, 1, "downscale_factor")
    return positional(ctx, ATEN["pixel_shuffle"](grad, factor) if needs(ctx, 0) else None)


# reads the input's shape (PyTorch keeps only its sizes; here the node keeps the input)
@derivative("aten::upsample_nearest2d", result=False)
def _upsample_nearest2d(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    if not needs(ctx, 0):
        return positional(ctx)
    return positional(ctx, _RESAMPLE["upsample_nearest2d_backward"](
        grad, arg(ctx, 1, "output_size"), list(ctx.args[0].shape),
        arg(ctx, 2, "scales_h"), arg(ctx, 3, "scales_w")))


@derivative("aten::upsample_nearest2d_backward", args=False, result=False)
def _upsample_nearest2d_backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    if not needs(ctx, 0):
        return positional(ctx)
    return positional(ctx, _RESAMPLE["upsample_nearest2d"](
        grad, arg(ctx, 1, "output_size"), arg(ctx, 3, "scales_h"), arg(ctx, 4, "scales_w")))


@derivative("aten::upsample_bilinear2d", result=False)
def _upsample_bilinear2d(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    if not needs(ctx, 0):
        return positional(ctx)
    return positional(ctx, _RESAMPLE["upsample_bilinear2d_backward"](
        grad, arg(ctx, 1, "output_size"), list(ctx.args[0].shape),
        arg(ctx, 2, "align_corners"), arg(ctx, 3, "scales_h"), arg(ctx, 4, "scales_w")))


@derivative("aten::upsample_bilinear2d_backward", args=False, result=False)
def _upsample_bilinear2d_backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    if not needs(ctx, 0):
        return positional(ctx)
    return positional(ctx, _RESAMPLE["upsample_bilinear2d"](
        grad, arg(ctx, 1, "output_size"), arg(ctx, 3, "align_corners"),
        arg(ctx, 4, "scales_h"), arg(ctx, 5, "scales_w")))
