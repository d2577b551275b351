"""Derivative formulas: the pointwise losses of ``torch._aten.losses`` beyond ``mse_loss``, and
the randomized leaky ReLU of ``torch._aten.sampling``.

As in PyTorch's derivatives table, each loss's rule calls its ``*_backward`` operator where
PyTorch has one (so a dispatch mode sees ``aten::smooth_l1_loss_backward`` in the backward
pass), and each backward operator's rule gives the second derivative in differentiable ops:
the backward is linear in ``grad_output`` (the engine sums that gradient down to
``grad_output``'s shape), and its input derivative is ``grad * grad_output * f''``.
``binary_cross_entropy_with_logits`` has no backward operator in PyTorch: its rule is written
in elementwise ops, so higher derivatives come from their own rules.
"""

from __future__ import annotations

from typing import Any

from ..._aten import activations as _act, elementwise as _ew
from ..._aten.factories import zeros_like
from ..._aten.losses import (
    _BCE_EPS,
    ATEN,
    _clamped_log,
    _huber_slope,
    _mean_scale,
    _smooth_l1_slope,
)
from ..._aten.sampling import ATEN as _SAMPLING
from ..._core.tensor import Tensor
from . import derivative
from .elementwise import _param, _wants


def _kept(ctx: Any, *grads: Tensor | None) -> tuple[Tensor | None, ...]:
    """``grads``, each kept only when its argument wants a gradient, then ``None`` for the
    call's remaining (non-tensor) arguments."""
    kept = tuple(g if _wants(ctx, i) else None for i, g in enumerate(grads))
    return kept + (None,) * max(0, len(ctx.args) - len(grads))


def _scaled(ctx: Any, grad: Tensor, reduction: int, like: Tensor) -> Tensor:
    """``grad`` times the mean's 1/n (n: the elements of the unreduced loss ``like``)."""
    return grad * _mean_scale(reduction, like.numel())


# -- smooth L1 and Huber: odd slopes of the difference ---------------------------------------


@derivative("aten::smooth_l1_loss", result=False)
def _smooth_l1_loss(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    x, target = ctx.args[0], ctx.args[1]
    reduction = _param(ctx, 2, "reduction", 1)
    beta = _param(ctx, 3, "beta", 1.0)
    d = ATEN["smooth_l1_loss_backward"](grad, x, target, reduction, beta)
    return _kept(ctx, d, -d if _wants(ctx, 1) else None)


@derivative("aten::huber_loss", result=False)
def _huber_loss(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    x, target = ctx.args[0], ctx.args[1]
    reduction = _param(ctx, 2, "reduction", 1)
    delta = _param(ctx, 3, "delta", 1.0)
    d = ATEN["huber_loss_backward"](grad, x, target, reduction, delta)
    return _kept(ctx, d, -d if _wants(ctx, 1) else None)


def _difference_backward_rule(ctx: Any, grad: Tensor, curvature: Tensor | float,
                              slope: Any) -> tuple[Tensor | None, ...]:
    """The derivatives of ``g * s * slope(x - t)``: ``grad * s * slope`` for ``g``,
    ``grad * g * s * curvature`` for ``x`` and its negative for ``t``."""
    g, x, target, reduction = ctx.args[:4]
    diff = x - target
    dg = _scaled(ctx, grad, reduction, diff) * slope(diff) if _wants(ctx, 0) else None
    dx = None
    if _wants(ctx, 1) or _wants(ctx, 2):
        dx = _scaled(ctx, grad * g, reduction, diff) * curvature(diff)
    return _kept(ctx, dg, dx, -dx if dx is not None else None)


@derivative("aten::smooth_l1_loss_backward", result=False)
def _smooth_l1_loss_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    beta = ctx.args[4]

    def curvature(diff: Tensor) -> Any:
        # 1/beta on the quadratic piece, 0 on the linear one (and everywhere for beta 0)
        if beta == 0:
            return diff * 0
        return _ew.where(diff.abs() < beta, 1.0 / beta, 0.0).to(diff.dtype)

    return _difference_backward_rule(ctx, grad, curvature,
                                     lambda diff: _smooth_l1_slope(diff, beta))


@derivative("aten::huber_loss_backward", result=False)
def _huber_loss_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    delta = ctx.args[4]
    return _difference_backward_rule(
        ctx, grad, lambda diff: _ew.where(diff.abs() < delta, 1.0, 0.0).to(diff.dtype),
        lambda diff: _huber_slope(diff, delta))


# -- soft margin: log(1 + exp(-y x)), symmetric in x and y ------------------------------------


@derivative("aten::soft_margin_loss", result=False)
def _soft_margin_loss(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    x, target = ctx.args[0], ctx.args[1]
    reduction = _param(ctx, 2, "reduction", 1)
    backward = ATEN["soft_margin_loss_backward"]
    # the loss depends on the product y x only: the target's gradient swaps the roles
    dx = backward(grad, x, target, reduction) if _wants(ctx, 0) else None
    dy = backward(grad, target, x, reduction) if _wants(ctx, 1) else None
    return _kept(ctx, dx, dy)


@derivative("aten::soft_margin_loss_backward", result=False)
def _soft_margin_loss_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    # the backward is -g s y sigmoid(-y x)
    g, x, target, reduction = ctx.args
    p = _ew.sigmoid(-(target * x))
    spread = p * (1 - p)  # d/dz sigmoid(z) at z = -y x
    scaled = _scaled(ctx, grad, reduction, p)
    dg = scaled * (-target * p) if _wants(ctx, 0) else None
    dx = scaled * g * target * target * spread if _wants(ctx, 1) else None
    dy = scaled * g * (target * x * spread - p) if _wants(ctx, 2) else None
    return _kept(ctx, dg, dx, dy)


# -- binary cross-entropy ------------------------------------------------------------------


@derivative("aten::binary_cross_entropy", result=False)
def _binary_cross_entropy(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    x, target = ctx.args[0], ctx.args[1]
    weight = _param(ctx, 2, "weight")
    reduction = _param(ctx, 3, "reduction", 1)
    dx = ATEN["binary_cross_entropy_backward"](grad, x, target, weight, reduction) \
        if _wants(ctx, 0) else None
    dy = dw = None
    if _wants(ctx, 1):
        # PyTorch's target gradient: log(1 - x) - log(x), unclamped (infinite at a saturated x)
        dy = _scaled(ctx, grad, reduction, x) * (_ew.log(1 - x) - _ew.log(x))
        dy = dy if weight is None else dy * weight
    if _wants(ctx, 2):  # the weight scales each element's loss (summed down to its shape)
        loss = -(target * _clamped_log(x) + (1 - target) * _clamped_log(1 - x))
        dw = _scaled(ctx, grad, reduction, x) * loss
    return _kept(ctx, dx, dy, dw)


@derivative("aten::binary_cross_entropy_backward", result=False)
def _binary_cross_entropy_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    # the backward is g s w (x - y) / m, m = max(x (1 - x), eps)
    g, x, target = ctx.args[0], ctx.args[1], ctx.args[2]
    weight = _param(ctx, 3, "weight")
    reduction = _param(ctx, 4, "reduction", 1)
    spread = (1 - x) * x
    m = spread.clamp_min(_BCE_EPS)
    scaled = _scaled(ctx, grad, reduction, x)
    if weight is not None:
        scaled = scaled * weight
    dg = scaled * (x - target) / m if _wants(ctx, 0) else None
    dx = dy = None
    if _wants(ctx, 1):
        # d/dx (x - y) / m: the clamp passes no slope where it holds
        live = _ew.where(spread > _BCE_EPS, 1.0, 0.0).to(x.dtype)
        dx = scaled * g * (1 / m - (x - target) * (1 - 2 * x) * live / (m * m))
    if _wants(ctx, 2):
        dy = -(scaled * g) / m
    dw = None
    if _wants(ctx, 3):
        dw = _scaled(ctx, grad * g, reduction, x) * (x - target) / m
    return _kept(ctx, dg, dx, dy, dw)


@derivative("aten::binary_cross_entropy_with_logits", result=False)
def _binary_cross_entropy_with_logits(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    # loss (1 - y) x - lw log(sigmoid(x)), lw = 1 + (pos_weight - 1) y, times the weight
    x, target = ctx.args[0], ctx.args[1]
    weight = _param(ctx, 2, "weight")
    pos_weight = _param(ctx, 3, "pos_weight")
    reduction = _param(ctx, 4, "reduction", 1)
    # log(sigmoid(x)) enters only the target's (with a pos_weight) and the weights' gradients
    log_sigmoid = _act.ATEN["log_sigmoid_forward"](x)[0] if any(
        _wants(ctx, i) for i in (1, 2, 3)) else None
    scaled = _scaled(ctx, grad, reduction, x * target)
    weighted = scaled if weight is None else scaled * weight
    log_weight: Any = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
    dx = dy = dw = dpw = None
    if _wants(ctx, 0):
        dx = weighted * ((1 - target) - log_weight * _ew.sigmoid(-x))
    if _wants(ctx, 1):
        dy = -x if pos_weight is None else -x - (pos_weight - 1) * log_sigmoid
        dy = weighted * dy
    if _wants(ctx, 2):
        dw = scaled * ((1 - target) * x - log_weight * log_sigmoid)
    if _wants(ctx, 3):
        dpw = weighted * (-target * log_sigmoid)
    return _kept(ctx, dx, dy, dw, dpw)


# -- the randomized leaky ReLU (torch._aten.sampling) -----------------------------------------


@derivative("aten::rrelu_with_noise", result=False)
def _rrelu_with_noise(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    x, noise = ctx.args[0], ctx.args[1]
    lower = _param(ctx, 2, "lower", 0.125)
    upper = _param(ctx, 3, "upper", 1.0 / 3)
    training = _param(ctx, 4, "training", False)
    dx = _SAMPLING["rrelu_with_noise_backward"](grad, x, noise, lower, upper, training, False)
    return _kept(ctx, dx)


@derivative("aten::rrelu_with_noise_backward", result=False)
def _rrelu_with_noise_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    # linear in grad_output with a slope that is piecewise constant in x: no x derivative
    _, x, noise, lower, upper, training, self_is_result = ctx.args
    dg = _SAMPLING["rrelu_with_noise_backward"](grad, x, noise, lower, upper, training,
                                                self_is_result) if _wants(ctx, 0) else None
    return _kept(ctx, dg, zeros_like(x) if _wants(ctx, 1) else None)


# -- the grid sampler (torch._aten.sampling) ---------------------------------------------------


@derivative("aten::grid_sampler_2d", "aten::grid_sampler_3d", result=False)
def _grid_sampler(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    input, grid, interpolation_mode, padding_mode, align_corners = ctx.args[:5]
    mask = [_wants(ctx, 0), _wants(ctx, 1)]
    backward = "grid_sampler_2d_backward" if input.dim() == 4 else "grid_sampler_3d_backward"
    grad_input, grad_grid = _SAMPLING[backward](
        grad, input, grid, interpolation_mode, padding_mode, align_corners, mask)
    return _kept(ctx, grad_input, grad_grid)


@derivative("aten::grid_sampler_2d_backward", "aten::grid_sampler_3d_backward", result=False)
def _grid_sampler_backward(ctx: Any, grad_input_grad: Tensor | None,
                              grad_grid_grad: Tensor | None) -> tuple[Tensor | None, ...]:
    # the second derivative of the forward composite, taken by the engine on fresh leaves (the
    # result is a second derivative: it does not record a third)
    from ..._aten.sampling import _grid_sample_composite
    from .._backward import grad
    from ..grad_mode import enable_grad

    g, input, grid, interpolation_mode, padding_mode, align_corners = ctx.args[:6]
    leaves = tuple(t.detach().requires_grad_() for t in (g, input, grid))
    with enable_grad():
        out = _grid_sample_composite(leaves[1], leaves[2], interpolation_mode, padding_mode,
                                     bool(align_corners))
        firsts = grad(out, leaves[1:], leaves[0], create_graph=True, allow_unused=True)
        pairs = [(f, w) for f, w in zip(firsts, (grad_input_grad, grad_grid_grad))
                 if f is not None and f.requires_grad and w is not None]
        seconds: tuple[Tensor | None, ...] = (None, None, None)
        if pairs:
            seconds = grad([f for f, _ in pairs], leaves, [w for _, w in pairs],
                           allow_unused=True)
    return _kept(ctx, *(s if s is not None else zeros_like(leaf)
                        for s, leaf in zip(seconds, leaves)))


# -- nll_loss2d ------------------------------------------------------------------------------


@derivative("aten::nll_loss2d_forward", result=(1,))
def _nll_loss2d_forward(ctx: Any, grad: Tensor, _grad_total_weight: Any) -> tuple[Any, ...]:
    # no gradient for the class weights, as in PyTorch
    self, target, weight, reduction, ignore_index = ctx.args[:5]
    if not _wants(ctx, 0):
        return (None,) * 5
    return (ATEN["nll_loss2d_backward"](grad, self, target, weight, reduction, ignore_index,
                                       ctx.result[1].detach()), None, None, None, None)


@derivative("aten::nll_loss2d_backward", result=False)
def _nll_loss2d_backward(ctx: Any, w: Tensor) -> tuple[Any, ...]:
    # linear in grad_output, constant in self: d grad_output = nll_loss2d(w), same reduction
    _g, _self, target, weight, reduction, ignore_index = ctx.args[:6]
    dg = None
    if _wants(ctx, 0):
        dg = ATEN["nll_loss2d_forward"](w, target, weight, reduction, ignore_index)[0]
    return (dg,) + (None,) * 6


# -- affine_grid_generator (torch._aten.sampling): linear in theta ----------------------------


@derivative("aten::affine_grid_generator", args=False, result=False)
def _affine_grid_generator(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    size, align_corners = _param(ctx, 1, "size"), _param(ctx, 2, "align_corners")
    return (_SAMPLING["affine_grid_generator_backward"](grad, size, align_corners), None, None)


@derivative("aten::affine_grid_generator_backward", args=False, result=False)
def _affine_grid_generator_backward(ctx: Any, w: Tensor) -> tuple[Any, ...]:
    # the backward is the forward's adjoint, so its own adjoint is the forward
    size, align_corners = _param(ctx, 1, "size"), _param(ctx, 2, "align_corners")
    return (_SAMPLING["affine_grid_generator"](w, size, align_corners), None, None)
