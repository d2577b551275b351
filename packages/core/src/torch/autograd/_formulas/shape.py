"""Derivative formulas: the copying shape ops (cat, flip, roll, repeat), the triangles
(tril, triu) and the copies (clone, _to_copy).

The view operators (view, permute, transpose, expand, select, slice, squeeze, unsqueeze,
diagonal, unfold, as_strided, split, unbind...) need no rule: their Autograd kernels record a
view node (torch.autograd._nodes.VIEW_OPS). stack, tile, rot90, hstack, reshape, narrow, ...
reach these through their decompositions.
"""

from __future__ import annotations

from typing import Any

from ..._aten import creation as _creation, factories as _fac, shape as _shape
from . import derivative


def arg(ctx: Any, i: int, name: str, default: Any = None) -> Any:
    """Argument ``i`` of the call (schema name ``name``), given positionally or by keyword."""
    if len(ctx.args) > i:
        return ctx.args[i]
    return ctx.kwargs.get(name, default)


def needs(ctx: Any, i: int) -> bool:
    """Whether positional argument ``i`` wants a gradient (``False`` when it was not given)."""
    flags = ctx.needs_input_grad
    return i < len(flags) and bool(flags[i])


def positional(ctx: Any, *grads: Any) -> tuple[Any, ...]:
    """One entry per positional argument of the call: ``grads`` cut (or padded with ``None``)
    to the number of arguments given positionally."""
    n = len(ctx.args)
    return tuple(grads[:n]) + (None,) * (n - len(grads))


@derivative("aten::cat")
def _cat(ctx: Any, grad: Any) -> tuple[Any, ...]:
    tensors = arg(ctx, 0, "tensors")
    flags = ctx.needs_input_grad[0] if ctx.needs_input_grad else ()
    # cat skips 1-d empty inputs whatever the other shapes (the legacy rule); the first kept
    # input fixes the number of dims, which the result shares
    d = arg(ctx, 1, "dim", 0) % max(grad.ndim, 1)
    grads: list[Any] = []
    at = 0
    for i, t in enumerate(tensors):
        wants = bool(flags[i]) if i < len(flags) else False
        if t.ndim == 1 and t.shape[0] == 0:
            grads.append(_fac.zeros((0,), dtype=grad.dtype, device=grad.device)
                         if wants else None)
            continue
        n = t.shape[d]
        grads.append(grad.narrow(d, at, n) if wants else None)
        at += n
    return positional(ctx, grads, None)


@derivative("aten::stack")
def _stack(ctx: Any, grad: Any) -> tuple[Any, ...]:
    # each input is one index of the new dim
    tensors = arg(ctx, 0, "tensors")
    flags = ctx.needs_input_grad[0] if ctx.needs_input_grad else ()
    d = arg(ctx, 1, "dim", 0) % grad.ndim
    grads = [grad.select(d, i) if i < len(flags) and flags[i] else None
             for i in range(len(tensors))]
    return positional(ctx, grads, None)


@derivative("aten::flip")
def _flip(ctx: Any, grad: Any) -> tuple[Any, ...]:
    return positional(ctx, _shape.flip(grad, list(arg(ctx, 1, "dims"))), None)


@derivative("aten::roll")
def _roll(ctx: Any, grad: Any) -> tuple[Any, ...]:
    shifts = [-s for s in arg(ctx, 1, "shifts")]
    dims = list(arg(ctx, 2, "dims", []) or [])
    return positional(ctx, _shape.roll(grad, shifts, dims if dims else None), None, None)


@derivative("aten::repeat")
def _repeat(ctx: Any, grad: Any) -> tuple[Any, ...]:
    self = ctx.args[0]
    repeats = list(arg(ctx, 1, "repeats"))
    sizes = (1,) * (len(repeats) - self.ndim) + tuple(self.shape)
    # (r0 * s0, r1 * s1, ...) -> (r0, s0, r1, s1, ...): each copy of self is one slab along
    # the even dims, and self's gradient is the sum of the copies' gradients
    split: list[int] = []
    for r, s in zip(repeats, sizes):
        split += [r, s]
    g = grad.reshape(split)
    if repeats:
        g = g.sum(dim=list(range(0, 2 * len(repeats), 2)))
    return positional(ctx, g.reshape(self.shape), None)


@derivative("aten::tril")
def _tril(ctx: Any, grad: Any) -> tuple[Any, ...]:
    return positional(ctx, _creation.tril(grad, arg(ctx, 1, "diagonal", 0)), None)


@derivative("aten::triu")
def _triu(ctx: Any, grad: Any) -> tuple[Any, ...]:
    return positional(ctx, _creation.triu(grad, arg(ctx, 1, "diagonal", 0)), None)


@derivative("aten::clone", args=False, result=False)
def _clone(ctx: Any, grad: Any) -> tuple[Any, ...]:
    return positional(ctx, grad)


@derivative("aten::_to_copy", args=False, result=False)
def _to_copy(ctx: Any, grad: Any) -> tuple[Any, ...]:
    # back to the input's dtype and device, read from the node's input metadata so that the
    # input itself is not kept (it may be written in place afterwards, as in PyTorch)
    _shape, dtype, device = ctx._node._inputs_meta[0]
    if grad._dtype.is_complex and not dtype.is_complex:
        # a real input made complex (torch.fft of a real signal): its gradient is the real
        # part, taken silently as PyTorch does, not a cast that warns about the imaginary part
        grad = grad.real
    return positional(ctx, grad.to(device=device, dtype=dtype))
