"""Derivative formulas: one rule per ``aten::`` operator, written in differentiable ``torch`` ops
so that the backward pass itself can be differentiated (second and third derivatives).

A rule is registered for one or more operator names (with their overload)::

    @derivative("aten::mul.Tensor")
    def _(ctx, grad):
        a, b = ctx.args
        return grad * b, grad * a

It receives ``ctx`` and the gradient of the output (for ops with several outputs, one gradient
per output; outputs that got none receive zeros), and returns one entry per *positional*
argument of the call, in order: a tensor, ``None`` (no gradient: not a tensor, not
differentiable, or ``not ctx.needs_input_grad[i]``), or for a tensor-list argument (``cat``) a
list of those. The engine then sums each gradient down to its input's shape (undoing
broadcasting) and casts it to the input's dtype, so rules may return broadcast-shaped grads.

``ctx`` holds:

- ``args``, ``kwargs``: the call's arguments as given (tensors are the saved inputs; reading
  one whose version changed since the forward raises PyTorch's in-place modification error);
- ``result``: the op's output (a tuple for several outputs);
- ``needs_input_grad``: one bool per positional argument (a tuple of bools for list args).

Rules live in one module per area of the op surface; importing this package imports them all.
Ops with a ``CompositeImplicitAutograd`` kernel need no rule: they differentiate through their
decomposition. An op with an explicit kernel and no rule records a node whose backward raises.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

Rule = Callable[..., Any]

FORMULAS: dict[str, Rule] = {}
# qualname -> (save the arguments, save the result) for rules that read less than both; a
# node saves only what its rule reads (PyTorch's AddBackward0 keeps no tensor either).
# ``CROSS`` for the arguments: each one is read only for the other arguments' gradients.
SAVES: dict[str, tuple[bool | str, bool | tuple[int, ...]]] = {}
CROSS = "cross"
# ``("cross", i, j)``: the operands of a product with a bias (linear's x and W, addmm's mat1 and
# mat2), each read only for the other's gradient; the bias is never read.
LINEAR_OPERANDS = ("cross", 0, 1)
ADDMM_OPERANDS = ("cross", 1, 2)
# qualname -> the outputs that are differentiable, for ops where only some are (PyTorch's
# output_differentiability): the others come out of the Autograd kernel without history.
OUTPUTS: dict[str, tuple[int, ...]] = {}
# qualnames whose rules take None for an output that received no gradient (instead of zeros).
TAKES_NONE: set[str] = set()
AREAS = ("foundation", "elementwise", "activations", "reductions", "shape", "indexing",
         "linalg", "conv", "attention", "norm", "rnn", "random", "complex", "spectral",
         "sparse", "nn_layout", "nn_norm", "pooling", "losses")


def derivative(*qualnames: str, args: bool | str | tuple[Any, ...] = True,
               result: bool | tuple[int, ...] = True,
               outputs: tuple[int, ...] | None = None,
               takes_none: bool = False) -> Callable[[Rule], Rule]:
    """Register the decorated rule for each ``aten::name[.overload]`` in ``qualnames``.

    ``args=False`` / ``result=False``: the rule never reads ``ctx.args`` tensors /
    ``ctx.result``, so nodes need not keep them (``ctx.kwargs`` and ``needs_input_grad`` are
    always there). ``args=CROSS``: the rule reads an argument only to compute another argument's
    gradient (``mul``), so a node keeps an argument only while some other one requires grad —
    ``(x * 2)`` keeps nothing and ``x`` may be written in place afterwards, as in PyTorch.
    ``args=(0,)``: the rule reads only the arguments at these positions (``where`` reads its
    condition, not its values). ``result=(1, 2)``: of several outputs the rule reads only those
    (the others come back as None from ``ctx.result``), so the others may be written in place
    afterwards (``native_layer_norm``'s rule reads mean and rstd, not the normalised output: an
    in-place ReLU after a layer norm works, as in PyTorch). ``outputs``: the differentiable
    outputs when not every floating output is (``native_layer_norm``'s mean and rstd are not);
    the rule still gets one gradient per output (None for the others). ``takes_none``: the rule
    of a multi-output op takes None for an output that received no gradient, where others get
    zeros."""

    def register(rule: Rule) -> Rule:
        for name in qualnames:
            if name in FORMULAS:
                raise RuntimeError(f"a derivative for {name} is already registered")
            FORMULAS[name] = rule
            if args is not True or result is not True:
                SAVES[name] = (args, result)
            if outputs is not None:
                OUTPUTS[name] = outputs
            if takes_none:
                TAKES_NONE.add(name)
        return rule

    return register


_loaded: tuple[str, ...] = ()  # the areas imported so far


def load() -> dict[str, Rule]:
    """Import every area's rules and return the table."""
    global _loaded
    if _loaded != AREAS:  # (the dispatcher asks on every call of an op without a node)
        for area in AREAS:
            importlib.import_module(f"{__name__}.{area}")
        _loaded = AREAS
    return FORMULAS
