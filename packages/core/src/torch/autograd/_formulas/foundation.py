"""Derivative formulas: softmax and log_softmax (dedicated formulas: stabler and cheaper than
differentiating their decomposition)."""

from __future__ import annotations

from . import derivative


@derivative("aten::_softmax")
def _softmax(ctx, grad):
    y = ctx.result
    dim = ctx.args[1]
    return (y * (grad - (grad * y).sum(dim, keepdim=True)), None, None)


@derivative("aten::_log_softmax")
def _log_softmax(ctx, grad):
    y = ctx.result
    dim = ctx.args[1]
    return (grad - y.exp() * grad.sum(dim, keepdim=True), None, None)
