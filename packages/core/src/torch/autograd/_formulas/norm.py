"""Derivative formulas: the backward ops of softmax / log_softmax (second derivatives), layer
norm and negative log-likelihood.

The first derivatives call the aten backward ops (``native_layer_norm_backward``,
``nll_loss_backward``), which a backend may fuse; the rules of those backward ops (second
derivatives) are written in differentiable ``torch`` ops, so higher orders work too.
"""

from __future__ import annotations

from ..._core import config as _config
from ..._fused import losses as _losses, norms as _norms
from . import derivative

_MODULES = {"_fused.norms": _norms, "_fused.losses": _losses}


def _aten(module, name):
    return _MODULES[module].ATEN[name]


def _args(ctx, names):
    """The call's arguments by position, where a caller may have passed some by keyword."""
    args = list(ctx.args[:len(names)])
    return args + [ctx.kwargs.get(n) for n in names[len(args):]]


def _row_dims(ndim, normalized_shape):
    axis = ndim - len(normalized_shape)
    return axis, list(range(axis, ndim)), list(range(axis))


# -- softmax / log_softmax backward -----------------------------------------------------------


@derivative("aten::_softmax_backward_data")
def _softmax_backward_data(ctx, w):
    # out = y * (g - sum(g * y)); w is the cotangent of out
    g, y, dim = _args(ctx, ("grad_output", "output", "dim"))
    wy = (w * y).sum(dim, keepdim=True)
    dg = y * (w - wy) if ctx.needs_input_grad[0] else None
    dy = (w * (g - (g * y).sum(dim, keepdim=True)) - g * wy) if ctx.needs_input_grad[1] \
        else None
    return dg, dy, None, None


@derivative("aten::_log_softmax_backward_data")
def _log_softmax_backward_data(ctx, w):
    # out = g - exp(y) * sum(g)
    g, y, dim = _args(ctx, ("grad_output", "output", "dim"))
    e = y.exp()
    dg = w - (w * e).sum(dim, keepdim=True) if ctx.needs_input_grad[0] else None
    dy = -w * e * g.sum(dim, keepdim=True) if ctx.needs_input_grad[1] else None
    return dg, dy, None, None


# -- layer norm --------------------------------------------------------------------------------


@derivative("aten::native_layer_norm", outputs=(0,), result=(1, 2))
def _native_layer_norm(ctx, grad, _grad_mean, _grad_rstd):
    # mean and rstd are not differentiable outputs (as in PyTorch): their gradients are zero
    x, shape, weight, bias, _eps = _args(ctx, ("input", "normalized_shape", "weight", "bias",
                                               "eps"))
    _out, mean, rstd = ctx.result
    needs = ctx.needs_input_grad
    mask = [needs[0], weight is not None and needs[2], bias is not None and needs[3]]
    if _config.is_grad_enabled():
        # create_graph: the double backward differentiates mean and rstd as functions of x
        # (native_layer_norm_backward's rule), not through this node's outputs. Without a
        # graph nothing records, and the backward op takes them as saved (as PyTorch's does,
        # with no detach calls a dispatch mode would see).
        mean, rstd = mean.detach(), rstd.detach()
    dx, dw, db = _aten("_fused.norms", "native_layer_norm_backward")(
        grad, x, shape, mean, rstd, weight, bias, mask)
    return dx, None, dw, db, None


@derivative("aten::native_layer_norm_backward")
def _native_layer_norm_backward(ctx, u, v, t):
    """Second derivatives. With h = g * weight, xhat = (x - mean) * rstd and per-row means
    A = mean(h), C = mean(h * xhat) over the normalised dims, the backward computes
    dx = rstd * (h - A - xhat * C), dweight = sum_batch(g * xhat), dbias = sum_batch(g).
    ``u``, ``v``, ``t`` are the cotangents of dx, dweight, dbias (None when that output was
    not computed). mean and rstd are taken as the functions of x they are (PyTorch's
    layer_norm_double_backward does the same), so their part goes into x's gradient."""
    g, x, shape, mean, rstd, weight = _args(ctx, ("grad_out", "input", "normalized_shape",
                                                  "mean", "rstd", "weight"))
    _axis, dims, batch = _row_dims(x.ndim, shape)
    n = 1
    for s in shape:
        n *= s

    def row_mean(a):
        return a.mean(dims, keepdim=True)

    def batch_sum(a):
        return a.sum(batch) if batch else a

    xc = x - mean
    xhat = xc * rstd
    h = g if weight is None else g * weight
    d_xhat = dh = d_rstd = dg = dw = None
    if u is not None and n:
        c = row_mean(h * xhat)
        uc = row_mean(u * xhat)
        d_xhat = -rstd * (u * c + uc * h)
        dh = rstd * (u - row_mean(u) - xhat * uc)
        d_rstd = (u * (h - row_mean(h) - xhat * c)).sum(dims, keepdim=True)
    if v is not None and weight is not None:  # dweight = sum_batch(g * xhat)
        d_xhat = v * g if d_xhat is None else d_xhat + v * g
        dg = v * xhat
    if t is not None:  # dbias = sum_batch(g)
        dg = t if dg is None else dg + t
    if dh is not None:
        gh = dh if weight is None else dh * weight
        dg = gh if dg is None else dg + gh
        if weight is not None:
            dw = batch_sum(dh * g)
    dx = None
    if d_xhat is not None:
        d_mean = -(rstd * d_xhat).sum(dims, keepdim=True)
        d_rstd = (d_xhat * xc).sum(dims, keepdim=True) + (0 if d_rstd is None else d_rstd)
        # mean = mean(x) and rstd = (var(x) + eps)^-1/2: d rstd / dx = -rstd^3 (x - mean) / n
        dx = rstd * d_xhat + d_mean / n - d_rstd * rstd ** 3 * xc / n
    needs = ctx.needs_input_grad
    return (dg if needs[0] else None, dx if needs[1] else None, None, None, None,
            dw if needs[5] else None, None, None)


# -- negative log-likelihood ------------------------------------------------------------------


@derivative("aten::nll_loss_forward", result=(1,))
def _nll_loss_forward(ctx, grad, _grad_total_weight):
    # no gradient for the class weights, as in PyTorch
    self, target, weight, reduction, ignore_index = _args(
        ctx, ("self", "target", "weight", "reduction", "ignore_index"))
    total_weight = ctx.result[1]
    return (_aten("_fused.losses", "nll_loss_backward")(grad, self, target, weight, reduction,
                                                  ignore_index, total_weight.detach()),
            None, None, None, None)


@derivative("aten::nll_loss_backward")
def _nll_loss_backward(ctx, w):
    # linear in grad_output, constant in self: d grad_output = nll_loss(w) with the same
    # reduction (PyTorch's formula)
    _g, _self, target, weight, reduction, ignore_index = _args(
        ctx, ("grad_output", "self", "target", "weight", "reduction", "ignore_index"))
    dg = None
    if ctx.needs_input_grad[0]:
        nll = _aten("_fused.losses", "nll_loss_forward")
        dg = nll(w, target, weight, reduction, ignore_index)[0]
    return (dg,) + (None,) * 6


# -- cross-entropy over logits ------------------------------------------------------------------


@derivative("aten::_cross_entropy_forward", outputs=(0,), result=(1,))
def _cross_entropy_forward(ctx, grad, _grad_logsumexp):
    # no gradient for the class weights, as in PyTorch; the logsumexp output (saved for the
    # backward) is not differentiable
    self, target, weight, reduction, ignore_index = _args(
        ctx, ("self", "target", "weight", "reduction", "ignore_index"))
    if not ctx.needs_input_grad[0]:
        return (None,) * 5
    lse = ctx.result[1]
    if _config.is_grad_enabled():  # create_graph: the backward op's rule takes it as constant
        lse = lse.detach()
    return (_aten("_fused.losses", "_cross_entropy_backward")(grad, self, target, weight, reduction,
                                                        ignore_index, lse),
            None, None, None, None)


@derivative("aten::_cross_entropy_backward")
def _cross_entropy_backward(ctx, w):
    # out = g - softmax(self) * g.sum(-1) with g = nll_loss_backward(grad_output): with
    # v = w - sum(w * p), d grad_output = nll_loss(v) and d self = -g.sum(-1) * p * v
    # (the saved logsumexp is a constant: p is recomputed as a differentiable softmax)
    grad, self, target, weight, reduction, ignore_index, _lse = _args(
        ctx, ("grad_output", "self", "target", "weight", "reduction", "ignore_index",
              "logsumexp"))
    losses = _losses_module()
    p = self.softmax(-1)
    v = w - (w * p).sum(-1, keepdim=True)
    dg = dself = None
    if ctx.needs_input_grad[0]:
        dg = losses.ATEN["nll_loss_forward"](v, target, weight, reduction, ignore_index)[0]
    if ctx.needs_input_grad[1]:
        classes = self.shape[-1]
        total = losses._picked(self, target, weight, ignore_index, classes)[1].sum()
        g = losses.ATEN["nll_loss_backward"](grad, self, target, weight, reduction,
                                             ignore_index, total)
        dself = -g.sum(-1, keepdim=True) * p * v
    return (dg, dself) + (None,) * 5


def _losses_module():
    from importlib import import_module

    return import_module("torch._fused.losses")
