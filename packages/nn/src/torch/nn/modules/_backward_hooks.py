"""Full backward hooks of a module call (``register_full_backward_hook`` and ``..._pre_hook``).

The call's tensor inputs and outputs pass through identity autograd functions. The outputs'
one sees the gradients of the outputs first (``grad_output``): pre-hooks run there and may
replace them. The inputs' one sees the gradients of the inputs (``grad_input``): the hooks run
there with both and may replace ``grad_input``. When no input requires grad, the hooks run at
the outputs' node with ``grad_input`` all ``None``, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor


class _Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, hook: Any, *tensors: Tensor) -> Any:
        ctx.hook = hook
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return (None, *ctx.hook(grads))


class BackwardHook:
    """The backward hooks of one module call."""

    def __init__(self, module: Any, hooks: dict[int, Any], pre_hooks: dict[int, Any]) -> None:
        self.module = module
        self.hooks = list(hooks.values())
        self.pre_hooks = list(pre_hooks.values())
        self.grad_output: tuple[Any, ...] | None = None
        self.n_inputs = 0
        self.inputs_need_grad = False

    def _wrap(self, values: Any, on_grads: Any) -> tuple[Any, list[int]]:
        """``values`` (a tensor or a tuple) with its grad-requiring tensors passed through
        one identity node; the positions wrapped."""
        single = isinstance(values, Tensor)
        items = [values] if single else list(values) if isinstance(values, tuple) else None
        if items is None:
            return values, []
        where = [i for i, v in enumerate(items) if isinstance(v, Tensor) and v.requires_grad]
        if not where or not torch.is_grad_enabled():
            return values, []
        outs = _Identity.apply(on_grads, *(items[i] for i in where))
        for i, o in zip(where, outs):
            items[i] = o
        return (items[0] if single else tuple(items)), where

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        self.n_inputs = len(args)
        wrapped, where = self._wrap(args, self._on_grad_input)
        self.inputs_need_grad = bool(where)
        self._input_positions = where
        return wrapped

    def setup_output_hook(self, result: Any) -> Any:
        wrapped, where = self._wrap(result, self._on_grad_output)
        self._output_positions = where
        self._n_outputs = 1 if isinstance(result, Tensor) else len(result) if isinstance(
            result, tuple) else 1
        return wrapped

    def _on_grad_output(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        full = [None] * self._n_outputs
        for i, g in zip(self._output_positions, grads):
            full[i] = g
        grad_output = tuple(full)
        for hook in self.pre_hooks:
            new = hook(self.module, grad_output)
            if new is not None:
                grad_output = tuple(new) if isinstance(new, (tuple, list)) else (new,)
        self.grad_output = grad_output
        if not self.inputs_need_grad:
            grad_input = (None,) * self.n_inputs
            for hook in self.hooks:
                hook(self.module, grad_input, grad_output)
        return tuple(grad_output[i] for i in self._output_positions)

    def _on_grad_input(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        full = [None] * self.n_inputs
        for i, g in zip(self._input_positions, grads):
            full[i] = g
        grad_input = tuple(full)
        grad_output = self.grad_output if self.grad_output is not None else ()
        for hook in self.hooks:
            new = hook(self.module, grad_input, grad_output)
            if new is not None:
                new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
                if len(new) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                       f"got {len(new)}, but expected {len(grad_input)}")
                grad_input = new
        return tuple(grad_input[i] for i in self._input_positions)
