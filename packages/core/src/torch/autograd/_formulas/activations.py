"""Derivative formulas: the activations of ``torch._aten.activations`` and the pointwise
losses of ``torch._aten.losses``.

As in PyTorch's derivatives table, each forward's rule calls its ``*_backward`` operator (so a
dispatch mode sees ``aten::leaky_relu_backward`` in the backward pass), and each backward
operator's rule gives the second derivative: the backward is linear in ``grad_output`` (its
gradient is the backward operator again, applied to the incoming gradient) and its derivative
in the input is ``grad * grad_output * f''(x)``, zero for the piecewise-linear activations.
All written in differentiable ops, so third derivatives work too.
"""

from __future__ import annotations

from typing import Any

from ..._aten import elementwise as _ew, shape as _shape
from ..._aten.activations import ATEN, glu_halves
from ..._aten.factories import zeros_like
from ..._aten.losses import ATEN as _LOSSES
from ..._core.tensor import Tensor
from . import derivative
from .elementwise import _param, _wants


def _padded(ctx: Any, *grads: Tensor | None) -> tuple[Tensor | None, ...]:
    """``grads`` followed by ``None`` for the call's remaining (non-tensor) positional
    arguments, each entry kept only when that argument wants a gradient."""
    kept = tuple(g if _wants(ctx, i) else None for i, g in enumerate(grads))
    return kept + (None,) * max(0, len(ctx.args) - len(grads))


def _zero_second(ctx: Any, x: Tensor) -> Tensor | None:
    """The input's gradient of a piecewise-linear activation's backward: zero (PyTorch's
    ``zeros_like``), computed only when wanted."""
    return zeros_like(x) if _wants(ctx, 1) else None


# -- forwards: call the backward operator --------------------------------------------------


@derivative("aten::leaky_relu", result=False)
def _leaky_relu(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    slope = _param(ctx, 1, "negative_slope", 0.01)
    return _padded(ctx, ATEN["leaky_relu_backward"](grad, ctx.args[0], slope, False))


@derivative("aten::elu", result=False)
def _elu(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    alpha = _param(ctx, 1, "alpha", 1)
    scale = _param(ctx, 2, "scale", 1)
    input_scale = _param(ctx, 3, "input_scale", 1)
    return _padded(ctx, ATEN["elu_backward"](grad, alpha, scale, input_scale, False,
                                             ctx.args[0]))


@derivative("aten::celu", result=False)
def _celu(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    alpha = _param(ctx, 1, "alpha", 1.0)
    return _padded(ctx, ATEN["elu_backward"](grad, alpha, 1, 1.0 / alpha, False, ctx.args[0]))


@derivative("aten::hardtanh", result=False)
def _hardtanh(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    low, high = _param(ctx, 1, "min_val", -1), _param(ctx, 2, "max_val", 1)
    return _padded(ctx, ATEN["hardtanh_backward"](grad, ctx.args[0], low, high))


@derivative("aten::softplus", result=False)
def _softplus(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    beta, threshold = _param(ctx, 1, "beta", 1), _param(ctx, 2, "threshold", 20)
    return _padded(ctx, ATEN["softplus_backward"](grad, ctx.args[0], beta, threshold))


def _unary_rule(name: str) -> Any:
    """The rule of ``aten::<name>(Tensor self)``: its backward operator."""
    backward = ATEN[f"{name}_backward"]

    def rule(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        return _padded(ctx, backward(grad, ctx.args[0]))

    return rule


for _name in ("hardsigmoid", "hardswish", "mish"):
    derivative(f"aten::{_name}", result=False)(_unary_rule(_name))


@derivative("aten::log_sigmoid_forward", outputs=(0,), result=(1,))
def _log_sigmoid_forward(ctx: Any, grad: Tensor,
                         _grad_buffer: Tensor | None) -> tuple[Tensor | None, ...]:
    buffer = ctx.result[1]
    return _padded(ctx, ATEN["log_sigmoid_backward"](grad, ctx.args[0], buffer))


def _shrink_rule(name: str) -> Any:
    """The rule of ``aten::<name>(Tensor self, Scalar lambd)``: its backward operator."""
    backward = ATEN[f"{name}_backward"]

    def rule(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        return _padded(ctx, backward(grad, ctx.args[0], _param(ctx, 1, "lambd", 0.5)))

    return rule


for _name in ("softshrink", "hardshrink"):
    derivative(f"aten::{_name}", result=False)(_shrink_rule(_name))


@derivative("aten::threshold", result=False)
def _threshold(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    return _padded(ctx, ATEN["threshold_backward"](grad, ctx.args[0], ctx.args[1]))


@derivative("aten::glu", result=False)
def _glu(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    return _padded(ctx, ATEN["glu_backward"](grad, ctx.args[0], _param(ctx, 1, "dim", -1)))


# -- backwards: the second derivative --------------------------------------------------------


def _piecewise_linear_rule(name: str) -> Any:
    """The rule of ``aten::<name>(grad_output, self, *scalars)`` of a piecewise-linear
    activation: linear in ``grad_output``, constant in ``self``."""
    backward = ATEN[name]

    def rule(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        _g, x, *rest = ctx.args
        dg = backward(grad, x, *rest) if _wants(ctx, 0) else None
        return (dg, _zero_second(ctx, x)) + (None,) * len(rest)

    return rule


for _name in ("leaky_relu_backward", "hardtanh_backward", "softshrink_backward",
              "hardshrink_backward", "threshold_backward", "hardsigmoid_backward"):
    derivative(f"aten::{_name}", result=False)(_piecewise_linear_rule(_name))


@derivative("aten::elu_backward", result=False)
def _elu_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    g, alpha, scale, input_scale, is_result, x = ctx.args
    dg = (ATEN["elu_backward"](grad, alpha, scale, input_scale, is_result, x)
          if _wants(ctx, 0) else None)
    dx = None
    if _wants(ctx, 5):
        # strictly below 0 (PyTorch's elu_double_backward): at x == 0 the first derivative
        # is the negative side's but the second the positive side's (0)
        if is_result:  # the negative side's derivative input_scale (y + alpha scale)
            dx = _ew.where(x < 0, grad * g * input_scale, 0.0)
        else:
            curve = _ew.exp(_ew.clamp(x, max=0.0) * input_scale) * (
                input_scale * input_scale * alpha * scale)
            dx = _ew.where(x < 0, grad * g * curve, 0.0)
    return (dg, None, None, None, None, dx)


@derivative("aten::softplus_backward", result=False)
def _softplus_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    g, x, beta, threshold = ctx.args
    dg = ATEN["softplus_backward"](grad, x, beta, threshold) if _wants(ctx, 0) else None
    dx = None
    if _wants(ctx, 1):
        z = x * beta
        s = _ew.sigmoid(z)
        # (zero from z == threshold on, as PyTorch's double backward; the first derivative
        # switches only above it)
        dx = _ew.where(z >= threshold, 0.0, grad * g * (beta * s * (1 - s)))
    return (dg, dx, None, None)


@derivative("aten::hardswish_backward", result=False)
def _hardswish_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    g, x = ctx.args
    dg = ATEN["hardswish_backward"](grad, x) if _wants(ctx, 0) else None
    dx = None
    if _wants(ctx, 1):  # f'' = 1/3 strictly inside (-3, 3), as PyTorch's formula
        dx = _ew.where((x > -3.0) & (x < 3.0), grad * g / 3.0, 0.0)
    return (dg, dx)


@derivative("aten::mish_backward", result=False)
def _mish_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    g, x = ctx.args
    dg = ATEN["mish_backward"](grad, x) if _wants(ctx, 0) else None
    dx = None
    if _wants(ctx, 1):
        # f' = t + x s (1 - t^2), t = tanh(softplus(x)), s = sigmoid(x), t' = s (1 - t^2):
        # f'' = s (1 - t^2) (2 + x (1 - s) - 2 x s t)
        s = _ew.sigmoid(x)
        t = _ew.tanh(ATEN["softplus"](x))
        dx = grad * g * (s * (1 - t * t) * (2 + x * (1 - s) - 2 * x * s * t))
    return (dg, dx)


@derivative("aten::log_sigmoid_backward", result=False)
def _log_sigmoid_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    g, x, buffer = ctx.args
    dg = ATEN["log_sigmoid_backward"](grad, x, buffer) if _wants(ctx, 0) else None
    dx = None
    if _wants(ctx, 1):  # d/dx sigmoid(-x) = -sigmoid(x) (1 - sigmoid(x))
        s = _ew.sigmoid(x)
        dx = -(grad * g * s * (1 - s))
    return (dg, dx, None)


# -- losses ----------------------------------------------------------------------------------


@derivative("aten::mse_loss", result=False)
def _mse_loss(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    x, target = ctx.args[0], ctx.args[1]
    reduction = _param(ctx, 2, "reduction", 1)
    d = _LOSSES["mse_loss_backward"](grad, x, target, reduction)
    # (the engine sums each gradient down to its input's shape when the two broadcast)
    return (d if _wants(ctx, 0) else None, -d if _wants(ctx, 1) else None) + (None,) * (
        len(ctx.args) - 2)


@derivative("aten::mse_loss_backward", result=False)
def _mse_loss_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    # the backward is 2 g (x - t) / n: linear in g, and in x - t
    g, x, target, reduction = ctx.args
    scale = 2.0 / x.numel() if reduction == 1 and x.numel() else 2.0
    dg = grad * (x - target) * scale if _wants(ctx, 0) else None
    dx = grad * g * scale if _wants(ctx, 1) or _wants(ctx, 2) else None
    return (dg, dx if _wants(ctx, 1) else None,
            -dx if dx is not None and _wants(ctx, 2) else None, None)


@derivative("aten::glu_backward", result=False)
def _glu_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    # glu_backward(g, x) = cat(g s, g a s (1 - s)), s = sigmoid(b), for the halves a, b of x;
    # ``grad`` splits into the same halves (ga, gb)
    g, x, dim = ctx.args
    a, b, d = glu_halves(x, dim)
    ga, gb, _d = glu_halves(grad, d)
    s = _ew.sigmoid(b)
    ds = s * (1 - s)
    dg = ga * s + gb * a * ds if _wants(ctx, 0) else None
    dx = None
    if _wants(ctx, 1):
        dx = _shape.cat([gb * g * ds, ga * g * ds + gb * g * a * ds * (1 - 2 * s)], d)
    return (dg, dx, None)
