"""Derivative formulas: the random ops of ``torch/_random_ops.py``.

An in-place sampler overwrites its input with values that do not depend on it, so the input
gets a zero gradient (PyTorch's ``self: zeros_like(grad)``); so do bernoulli's probabilities.
``normal`` with tensor ``mean``/``std`` is ``mean + std * z``: ``mean`` gets the gradient and
``std`` gets it times ``z = (result - mean) / std``.
"""

from __future__ import annotations

from ..._aten.factories import zeros_like
from . import derivative

_SAMPLERS = ("aten::uniform_", "aten::normal_", "aten::random_", "aten::random_.from",
             "aten::random_.to", "aten::exponential_", "aten::geometric_", "aten::log_normal_",
             "aten::cauchy_", "aten::bernoulli_.float", "aten::bernoulli_.Tensor",
             "aten::bernoulli", "aten::bernoulli.p")


@derivative(*_SAMPLERS, args=False, result=False)
def _(ctx, grad):
    zero = zeros_like(grad)
    return tuple(zero if need else None for need in ctx.needs_input_grad)


@derivative("aten::normal.Tensor_Tensor", "aten::normal.Tensor_float",
            "aten::normal.float_Tensor")
def _(ctx, grad):
    mean, std = ctx.args[0], ctx.args[1]
    need_mean, need_std = ctx.needs_input_grad[:2]
    return (grad if need_mean else None,
            grad * (ctx.result - mean) / std if need_std else None)
