"""Derivative formulas: softmax and log_softmax (dedicated formulas: stabler and cheaper than
differentiating their decomposition). The first derivatives are the aten ops
``_softmax_backward_data`` / ``_log_softmax_backward_data``, which a backend may fuse; their own
rules (second derivatives) live with the other normalisation formulas in ``norm.py``."""

from __future__ import annotations

from . import derivative


def _aten(name):
    from ..._fused import softmax as _softmax

    return _softmax.ATEN[name]


@derivative("aten::_softmax", args=False)  # (the output and dim: the input is not kept)
def _softmax(ctx, grad):
    y = ctx.result  # the input's dtype (half_to_float is not supported on the CPU)
    return (_aten("_softmax_backward_data")(grad, y, ctx.args[1], y.dtype), None, None)


@derivative("aten::_log_softmax", args=False)  # (the output and dim: the input is not kept)
def _log_softmax(ctx, grad):
    y = ctx.result
    return (_aten("_log_softmax_backward_data")(grad, y, ctx.args[1], y.dtype), None, None)
