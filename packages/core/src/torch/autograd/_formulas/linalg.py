"""Derivative formulas: matrix products and norms (the CompositeExplicitAutograd ops of
``torch/_linalg_ops.py`` and ``torch/linalg``).

Complex inputs follow PyTorch's convention (the gradient is the conjugate Wirtinger
derivative), which is why the transposes below are conjugate transposes. The decompositions
of :mod:`torch.linalg` are not operators; their derivatives live beside them there.
"""

from __future__ import annotations

import math

import torch

from ..._tensor import Tensor
from . import derivative
from .reductions import _arg, _only_first, _reduced_dims, _restore


def _conj(t: Tensor) -> Tensor:
    return t.conj() if t.is_complex() else t


def _h(t: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims."""
    return _conj(t.transpose(-2, -1))


# -- products -------------------------------------------------------------------------------


@derivative("aten::mm")
def _(ctx, grad):
    a, b = ctx.args
    need_a, need_b = ctx.needs_input_grad[:2]
    return (torch.mm(grad, _h(b)) if need_a else None,  # (n, k)
            torch.mm(_h(a), grad) if need_b else None)  # (k, m)


@derivative("aten::bmm")
def _(ctx, grad):
    a, b = ctx.args
    need_a, need_b = ctx.needs_input_grad[:2]
    return (torch.bmm(grad, _h(b)) if need_a else None,  # (B, n, k)
            torch.bmm(_h(a), grad) if need_b else None)  # (B, k, m)


@derivative("aten::mv")
def _(ctx, grad):
    a, vec = ctx.args
    need_a, need_vec = ctx.needs_input_grad[:2]
    return (grad.unsqueeze(1) * _conj(vec).unsqueeze(0) if need_a else None,  # (n, k)
            torch.mv(_h(a), grad) if need_vec else None)  # (k,)


@derivative("aten::dot")
def _(ctx, grad):
    a, b = ctx.args
    need_a, need_b = ctx.needs_input_grad[:2]
    return (grad * _conj(b) if need_a else None, grad * _conj(a) if need_b else None)


@derivative("aten::vdot")
def _(ctx, grad):
    # vdot(a, b) = sum(conj(a) * b)
    a, b = ctx.args
    need_a, need_b = ctx.needs_input_grad[:2]
    return (_conj(grad) * b if need_a else None, grad * a if need_b else None)


@derivative("aten::linalg_cross")
def _(ctx, grad):
    a, b = ctx.args
    dim = ctx.kwargs.get("dim", -1)
    need_a, need_b = ctx.needs_input_grad[:2]
    return (torch.linalg.cross(_conj(b), grad, dim=dim) if need_a else None,
            torch.linalg.cross(grad, _conj(a), dim=dim) if need_b else None)


# -- norms ----------------------------------------------------------------------------------


def _sgn(x: Tensor) -> Tensor:
    return torch.sgn(x) if x.is_complex() else torch.sign(x)


def _vector_norm_grad(x: Tensor, ord: float, dims: list[int], norm: Tensor,
                      grad: Tensor) -> Tensor:
    """d norm / d x for the norm over ``dims``, ``norm`` and ``grad`` keepdim-shaped. Where
    the norm is 0 the gradient is 0 (PyTorch's choice of subgradient)."""
    if ord == 1:
        return _sgn(x) * grad
    if ord == 2:
        return grad * torch.where(torch.eq(norm, 0), 0, x / norm)
    if math.isinf(ord):
        # the max (min) of |x|: ties share the gradient; a NaN takes it
        magnitude = x.abs()
        winners = torch.logical_or(torch.eq(magnitude, norm), torch.isnan(magnitude))
        winners = winners.to(grad.dtype)
        count = winners.sum(dims, keepdim=True) if dims else winners
        return _sgn(x) * (grad / count * winners)
    if ord < 1:
        scaled = _sgn(x) * torch.where(torch.eq(x, 0), 0, x.abs().pow(ord - 1))
        return scaled * grad * norm.pow(1 - ord)
    scale = torch.where(torch.eq(norm, 0), 0, grad / norm.pow(ord - 1))
    if ord < 2:
        return _sgn(x) * x.abs().pow(ord - 1) * scale
    return x * x.abs().pow(ord - 2) * scale


@derivative("aten::linalg_vector_norm")
def _(ctx, grad):
    x = ctx.args[0]
    ord = float(_arg(ctx, 1, "ord", 2))
    if ord == 0:  # a count of nonzeros: PyTorch leaves x without a gradient (None)
        return _only_first(ctx, None)
    dims = _reduced_dims(_arg(ctx, 2, "dim", None), x.ndim)
    keepdim = _arg(ctx, 3, "keepdim", False)
    norm = _restore(ctx.result, dims, keepdim)
    grad = _restore(grad, dims, keepdim)
    return _only_first(ctx, _vector_norm_grad(x, ord, dims, norm, grad))
