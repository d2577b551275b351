"""Derivative formulas: the pooling operators of ``torch._aten.pooling``.

As in PyTorch's derivatives table, the max poolings' indices are not differentiable and their
gradients go through the backward operators, which add each output gradient into the input
position the forward picked; those backward operators are linear in the gradient, so their
own derivative (second order) gathers the cotangent at the same indices. ``avg_pool2d`` and
``avg_pool2d_backward`` are adjoint linear maps: each one's gradient is the other, as are
``_adaptive_avg_pool2d`` and its backward, and
``im2col`` and ``col2im`` (``torch._aten.im2col``).
"""

from __future__ import annotations

from typing import Any

from ..._aten.im2col import ATEN as _BLOCKS
from ..._aten.pooling import ATEN
from ..._core.tensor import Tensor
from . import derivative
from .shape import arg, needs, positional

_MAX_POOL_ARGS = (("kernel_size", ()), ("stride", ()), ("padding", 0), ("dilation", 1),
                  ("ceil_mode", False))
_AVG_POOL_ARGS = (("kernel_size", ()), ("stride", ()), ("padding", 0), ("ceil_mode", False),
                  ("count_include_pad", True), ("divisor_override", None))


def _settings(ctx: Any, first: int, names: tuple[tuple[str, Any], ...]) -> list[Any]:
    return [arg(ctx, first + i, name, default) for i, (name, default) in enumerate(names)]


def _gather_at(u: Tensor, indices: Tensor) -> Tensor:
    """The entries of ``u`` (an input-shaped cotangent) at the flat plane positions
    ``indices`` names: the adjoint of adding into them."""
    lead = list(indices.shape[:-2])
    plane, pooled = u.shape[-2] * u.shape[-1], indices.shape[-2] * indices.shape[-1]
    return u.reshape(*lead, plane).gather(-1, indices.reshape(*lead, pooled)).reshape(
        indices.shape)


@derivative("aten::max_pool2d_with_indices", outputs=(0,), result=(1,))
def _max_pool2d_with_indices(ctx: Any, grad: Tensor, _grad_indices: Any) -> tuple[Any, ...]:
    if not needs(ctx, 0):
        return positional(ctx)
    settings = _settings(ctx, 1, _MAX_POOL_ARGS)
    return positional(ctx, ATEN["max_pool2d_with_indices_backward"](
        grad, arg(ctx, 0, "self"), *settings, ctx.result[1]))


@derivative("aten::max_pool2d_with_indices_backward", args=True, result=False)
def _max_pool2d_with_indices_backward(ctx: Any, u: Tensor) -> tuple[Any, ...]:
    if not needs(ctx, 0):
        return positional(ctx)
    return positional(ctx, _gather_at(u, arg(ctx, 7, "indices")))


@derivative("aten::adaptive_max_pool2d", outputs=(0,), result=(1,))
def _adaptive_max_pool2d(ctx: Any, grad: Tensor, _grad_indices: Any) -> tuple[Any, ...]:
    if not needs(ctx, 0):
        return positional(ctx)
    return positional(ctx, ATEN["adaptive_max_pool2d_backward"](
        grad, arg(ctx, 0, "self"), ctx.result[1]))


@derivative("aten::adaptive_max_pool2d_backward", result=False)
def _adaptive_max_pool2d_backward(ctx: Any, u: Tensor) -> tuple[Any, ...]:
    if not needs(ctx, 0):
        return positional(ctx)
    return positional(ctx, _gather_at(u, arg(ctx, 2, "indices")))


@derivative("aten::avg_pool2d", result=False)
def _avg_pool2d(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    if not needs(ctx, 0):
        return positional(ctx)
    return positional(ctx, ATEN["avg_pool2d_backward"](
        grad, arg(ctx, 0, "self"), *_settings(ctx, 1, _AVG_POOL_ARGS)))


@derivative("aten::avg_pool2d_backward", result=False)
def _avg_pool2d_backward(ctx: Any, u: Tensor) -> tuple[Any, ...]:
    if not needs(ctx, 0):
        return positional(ctx)
    return positional(ctx, ATEN["avg_pool2d"](u, *_settings(ctx, 2, _AVG_POOL_ARGS)))


@derivative("aten::im2col", result=False)
def _im2col(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    if not needs(ctx, 0):
        return positional(ctx)
    settings = [arg(ctx, 1 + i, name) for i, name in
                enumerate(("kernel_size", "dilation", "padding", "stride"))]
    return positional(ctx, _BLOCKS["col2im"](grad, list(ctx.args[0].shape[-2:]), *settings))


@derivative("aten::col2im", args=False, result=False)
def _col2im(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    if not needs(ctx, 0):
        return positional(ctx)
    settings = [arg(ctx, 2 + i, name) for i, name in
                enumerate(("kernel_size", "dilation", "padding", "stride"))]
    return positional(ctx, _BLOCKS["im2col"](grad, *settings))


@derivative("aten::_adaptive_avg_pool2d", result=False)
def _adaptive_avg_pool2d(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    if not needs(ctx, 0):
        return positional(ctx)
    return positional(ctx, ATEN["_adaptive_avg_pool2d_backward"](grad, arg(ctx, 0, "self")))


@derivative("aten::_adaptive_avg_pool2d_backward")
def _adaptive_avg_pool2d_backward(ctx: Any, u: Tensor) -> tuple[Any, ...]:
    # linear in grad_output, the adjoint of the forward: its gradient is the forward again
    if not needs(ctx, 0):
        return positional(ctx)
    sizes = list(arg(ctx, 0, "grad_output").shape[-2:])
    return positional(ctx, ATEN["_adaptive_avg_pool2d"](u, sizes))
