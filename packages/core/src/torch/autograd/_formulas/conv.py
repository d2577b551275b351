"""Derivative formulas: convolution and its backward (``torch/_conv.py``).

``convolution(x, w)`` is bilinear, so its backward is another bilinear op,
``convolution_backward``, whose derivative is written in both of them again: every order of
derivative comes out of two operators.
"""

from __future__ import annotations

from typing import Any

from ..._aten import conv as _conv
from . import derivative

# Positions of the parameters shared by both operators' schemas, after the tensors.
_CONV_PARAMS = ("stride", "padding", "dilation", "transposed", "output_padding", "groups")


def _arguments(ctx: Any, names: tuple[str, ...]) -> list[Any]:
    """The call's arguments by schema position (a caller may have passed some by name)."""
    args = list(ctx.args)
    return args + [ctx.kwargs[name] for name in names[len(args):]]


@derivative("aten::convolution")
def _(ctx, grad):
    names = ("input", "weight", "bias") + _CONV_PARAMS
    input, weight, bias, *params = _arguments(ctx, names)
    need = ctx.needs_input_grad + (False,) * (len(names) - len(ctx.needs_input_grad))
    mask = [bool(need[0]), bool(need[1]), bias is not None and bool(need[2])]
    bias_sizes = list(bias.shape) if bias is not None else None
    grads = _conv.ATEN["convolution_backward"](grad, input, weight, bias_sizes, *params, mask)
    return (grads[0], grads[1], grads[2]) + (None,) * len(_CONV_PARAMS)


@derivative("aten::convolution_backward")
def _(ctx, gg_input, gg_weight, gg_bias):
    # With y = conv(x, w): gx = dy/dx^T g, gw = dy/dw^T g, gb = sum(g), all linear in g. So
    # d<gg, (gx, gw, gb)>/dg = conv(gg_x, w) + conv(x, gg_w) + gg_b, and the x (w) part is the
    # input (weight) gradient of conv with weight gg_w (input gg_x).
    names = ("grad_output", "input", "weight", "bias_sizes") + _CONV_PARAMS + ("output_mask",)
    grad_output, input, weight, _bias_sizes, *rest = _arguments(ctx, names)
    params = rest[:len(_CONV_PARAMS)]
    need = ctx.needs_input_grad
    conv = _conv.ATEN["convolution"]
    backward = _conv.ATEN["convolution_backward"]
    d_grad = d_input = d_weight = None
    if need[0]:
        parts = []
        if gg_input is not None:
            parts.append(conv(gg_input, weight, None, *params))
        if gg_weight is not None:
            parts.append(conv(input, gg_weight, None, *params))
        if gg_bias is not None:
            shape = (1, -1) + (1,) * (grad_output.ndim - 2)
            parts.append(gg_bias.reshape(shape).expand(grad_output.shape))
        for part in parts:
            d_grad = part if d_grad is None else d_grad + part
    if need[1] and gg_weight is not None:
        d_input = backward(grad_output, input, gg_weight, None, *params, [True, False, False])[0]
    if need[2] and gg_input is not None:
        d_weight = backward(grad_output, gg_input, weight, None, *params,
                            [False, True, False])[1]
    return (d_grad, d_input, d_weight) + (None,) * (len(names) - 3)
