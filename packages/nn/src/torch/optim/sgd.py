"""``torch.optim.SGD``: stochastic gradient descent with momentum, dampening, Nesterov momentum,
weight decay and maximisation, as PyTorch documents the algorithm."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor

from .optimizer import Optimizer, _scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum).

    For each parameter ``p`` with gradient ``g``: ``g = -g`` when maximizing; ``g += wd * p``;
    with momentum, ``b = g`` on the first step and ``b = momentum * b + (1 - dampening) * g``
    after, then ``g = g + momentum * b`` (Nesterov) or ``g = b``; finally ``p -= lr * g``.
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float | Tensor = 0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient once; ``closure`` re-evaluates the loss
        (with gradients enabled) and its result is returned."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        with torch.no_grad():
            for group in self.param_groups:
                self._update_group(group)
        return loss

    def _update_group(self, group: dict[str, Any]) -> None:
        # Scaled operands are multiplied out (``g * c``) rather than passed as ``alpha=c``:
        # the same roundings (a product, then a sum) through the in-place operators' direct
        # path, where an ``alpha`` takes the general one (compute, then copy), several times
        # slower per parameter.
        lr = _scalar(group["lr"])
        wd = _scalar(group["weight_decay"])
        momentum = group["momentum"]
        dampening = group["dampening"]
        nesterov = group["nesterov"]
        maximize = group["maximize"]
        state_of = self.state
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            g = -grad if maximize else grad
            if wd != 0:
                g = g + p * wd
            if momentum != 0:
                state = state_of[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    # (the step runs without grad: the clone records nothing and needs no
                    # detach, whose result here would leave the direct in-place path)
                    buf = g.clone()
                    state["momentum_buffer"] = buf
                else:
                    buf.mul_(momentum)
                    buf.add_(g if dampening == 0 else g * (1 - dampening))
                g = g + buf * momentum if nesterov else buf
            p.add_(g * -lr)
