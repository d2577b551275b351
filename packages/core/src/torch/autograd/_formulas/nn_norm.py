"""Derivative formulas: batch and group normalisation (``torch._aten.normalization``).

As in PyTorch's derivatives table, ``native_batch_norm``'s saved statistics are not
differentiable outputs, ``native_group_norm``'s mean and rstd are; both differentiate their
normalised output through their backward operators.
The backward operators' own rules (second derivatives) are written in differentiable ops
over a common form: ``x`` seen so that the statistics reduce over dims ``stat`` and the affine
parameters broadcast over dims ``param`` (batch norm: stat = param = every dim but the
channels; group norm: the (N, G, C/G, HxW) view, stat = (2, 3), param = (0, 3)).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._aten.normalization import ATEN, channel_dims, channel_shape
from ..._core.tensor import Tensor
from . import derivative
from .shape import arg, needs, positional


@derivative("aten::native_batch_norm", "aten::_native_batch_norm_legit_functional",
            outputs=(0,), result=(1, 2))
def _native_batch_norm(ctx: Any, grad: Tensor, *_grad_statistics: Any) -> tuple[Any, ...]:
    # (the functional form's new running statistics are outputs without a derivative too)
    training = bool(arg(ctx, 5, "training"))
    weight = arg(ctx, 1, "weight")
    mask = [needs(ctx, 0), weight is not None and needs(ctx, 1), needs(ctx, 2)]
    if not any(mask):
        return positional(ctx)
    # in training the running statistics (written in place by the call) are not read
    running = (None, None) if training else (arg(ctx, 3, "running_mean"),
                                             arg(ctx, 4, "running_var"))
    _out, mean, invstd = ctx.result[:3]
    dx, dw, db = ATEN["native_batch_norm_backward"](
        grad, arg(ctx, 0, "input"), weight, *running,
        # (the saved statistics have no history: not differentiable outputs)
        mean if training else None, invstd if training else None,
        training, float(arg(ctx, 7, "eps")), mask)
    return positional(ctx, dx, dw, db)


@derivative("aten::native_group_norm", result=(1, 2), takes_none=True)
def _native_group_norm(ctx: Any, grad: Tensor | None, grad_mean: Tensor | None,
                       grad_rstd: Tensor | None) -> tuple[Any, ...]:
    # Unlike batch and layer norm, PyTorch makes group norm's mean and rstd differentiable
    # outputs; their gradients (None when unused: takes_none) reach the input only.
    weight = arg(ctx, 1, "weight")
    mask = [needs(ctx, 0), weight is not None and needs(ctx, 1), needs(ctx, 2)]
    if not any(mask):
        return positional(ctx)
    x = arg(ctx, 0, "input")
    _out, mean, rstd = ctx.result
    sizes = [arg(ctx, i, name) for i, name in ((3, "N"), (4, "C"), (5, "HxW"), (6, "group"))]
    dx = dw = db = None
    if grad is not None:
        dx, dw, db = ATEN["native_group_norm_backward"](
            grad, x, mean, rstd, weight, *sizes, mask)
    if mask[0] and (grad_mean is not None or grad_rstd is not None):
        stats_dx = _group_statistics_grad(x, mean, rstd, grad_mean, grad_rstd, *sizes)
        if stats_dx is not None:
            dx = stats_dx if dx is None else dx + stats_dx
    return positional(ctx, dx, dw, db)


def _group_statistics_grad(x: Tensor, mean: Tensor, rstd: Tensor, grad_mean: Tensor | None,
                           grad_rstd: Tensor | None, n: int, c: int, hxw: int,
                           group: int) -> Tensor | None:
    """The input gradient through group norm's (N, G) mean and rstd: with m elements per
    group, d mean / dx = 1 / m and d rstd / dx = -rstd^3 (x - mean) / m (rstd = (var +
    eps)^-1/2, var the biased variance). None for empty groups (no statistics to move)."""
    per_group = (c // group) * hxw
    if per_group == 0:
        return None
    view, stat = [n, group, per_group], [n, group, 1]
    xv = x.reshape(view)
    total = None
    if grad_mean is not None:
        total = (grad_mean.reshape(stat) / per_group).expand(view)
    if grad_rstd is not None:
        r = rstd.reshape(stat)
        through_rstd = -grad_rstd.reshape(stat) * r * r * r * (xv - mean.reshape(stat)) / per_group
        total = through_rstd if total is None else total + through_rstd
    return None if total is None else total.reshape(x.shape)


def _sum(a: Tensor, dims: Sequence[int]) -> Tensor:
    return a.sum(list(dims), keepdim=True)


def _normalized_second(g: Tensor, x: Tensor, w: Tensor | None, mean: Tensor, rstd: Tensor,
                       stat: Sequence[int], param: Sequence[int], u: Tensor | None,
                       v: Tensor | None, t: Tensor | None,
                       depends: bool) -> tuple[Any, Any, Any]:
    """(d grad_out, d input, d weight) of a normalisation's backward, whose outputs are
    dx = rstd * (h - mean(h) - xhat * mean(h * xhat)) (``depends``: the statistics are
    functions of x; otherwise dx = h * rstd), dweight = sum_param(g * xhat), dbias =
    sum_param(g), with h = g * w and xhat = (x - mean) * rstd; ``u``, ``v``, ``t`` are their
    cotangents (None where not computed), ``v`` and ``t`` already broadcast against x.
    dweight is returned summed over ``param`` (keepdim)."""
    n = 1
    for d in stat:
        n *= x.shape[d]
    xc = x - mean
    xhat = xc * rstd
    h = g if w is None else g * w
    d_xhat = dh = d_rstd = dg = dw = None
    if u is not None and n:
        if depends:
            c = _sum(h * xhat, stat) / n
            uc = _sum(u * xhat, stat) / n
            d_xhat = -rstd * (u * c + uc * h)
            dh = rstd * (u - _sum(u, stat) / n - xhat * uc)
            d_rstd = _sum(u * (h - _sum(h, stat) / n - xhat * c), stat)
        else:
            dh = u * rstd
    if v is not None:
        d_xhat = v * g if d_xhat is None else d_xhat + v * g
        dg = v * xhat
    if t is not None:
        dg = t if dg is None else dg + t
    if dh is not None:
        gh = dh if w is None else dh * w
        dg = gh if dg is None else dg + gh
        if w is not None:
            dw = _sum(dh * g, param)
    dx = None
    if d_xhat is not None:
        dx = rstd * d_xhat
        if depends:
            d_mean = -_sum(rstd * d_xhat, stat)
            d_rstd = _sum(d_xhat * xc, stat) + (0 if d_rstd is None else d_rstd)
            # mean = mean(x), rstd = (var(x) + eps)^-1/2: d rstd / dx = -rstd^3 (x - mean) / n
            dx = dx + d_mean / n - d_rstd * rstd ** 3 * xc / n
    if dg is not None:
        dg = dg.expand(g.shape)
    return dg, dx, dw


@derivative("aten::native_batch_norm_backward")
def _native_batch_norm_backward(ctx: Any, u: Any, v: Any, t: Any) -> tuple[Any, ...]:
    g, x, weight = arg(ctx, 0, "grad_out"), arg(ctx, 1, "input"), arg(ctx, 2, "weight")
    train, eps = bool(arg(ctx, 7, "train")), float(arg(ctx, 8, "eps"))
    shape, dims = channel_shape(x), channel_dims(x)
    if train:
        mean, rstd = arg(ctx, 5, "save_mean"), arg(ctx, 6, "save_invstd")
    else:
        mean = arg(ctx, 3, "running_mean")
        rstd = (arg(ctx, 4, "running_var") + eps).rsqrt()
    dg, dx, dw = _normalized_second(
        g, x, None if weight is None else weight.reshape(shape), mean.reshape(shape),
        rstd.reshape(shape), dims, dims, u, None if v is None else v.reshape(shape),
        None if t is None else t.reshape(shape), train)
    return positional(ctx, dg if needs(ctx, 0) else None, dx if needs(ctx, 1) else None,
                      dw.reshape(weight.shape) if dw is not None and needs(ctx, 2) else None)


@derivative("aten::native_group_norm_backward")
def _native_group_norm_backward(ctx: Any, u: Any, v: Any, t: Any) -> tuple[Any, ...]:
    g, x, weight = arg(ctx, 0, "grad_out"), arg(ctx, 1, "input"), arg(ctx, 4, "weight")
    mean, rstd = arg(ctx, 2, "mean"), arg(ctx, 3, "rstd")
    n, c, hxw, group = (int(arg(ctx, i, name)) for i, name in
                        ((5, "N"), (6, "C"), (7, "HxW"), (8, "group")))
    view, affine = [n, group, c // group, hxw], [1, group, c // group, 1]
    dg, dx, dw = _normalized_second(
        g.reshape(view), x.reshape(view), None if weight is None else weight.reshape(affine),
        mean.reshape(n, group, 1, 1), rstd.reshape(n, group, 1, 1), (2, 3), (0, 3),
        None if u is None else u.reshape(view), None if v is None else v.reshape(affine),
        None if t is None else t.reshape(affine), True)
    return positional(ctx, dg.reshape(x.shape) if dg is not None and needs(ctx, 0) else None,
                      dx.reshape(x.shape) if dx is not None and needs(ctx, 1) else None,
                      None, None,
                      dw.reshape(c) if dw is not None and needs(ctx, 4) else None)
