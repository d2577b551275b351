"""``torch.optim.RMSprop``: RMSprop (Hinton) with the centred variant and momentum, as PyTorch
documents the algorithm."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor

from ._single_tensor import _check, _SingleTensorOptimizer, _step_tensor
from .optimizer import _scalar

__all__ = ["RMSprop"]


class RMSprop(_SingleTensorOptimizer):
    """RMSprop.

    Per parameter: ``g += wd * p``; ``v = alpha * v + (1 - alpha) * g^2``; centred:
    ``a = lerp(a, g, 1 - alpha)`` and ``v~ = v - a^2``, else ``v~ = v``; with momentum
    ``b = momentum * b + g / (sqrt(v~) + eps)`` and ``p -= lr * b``, else
    ``p -= lr * g / (sqrt(v~) + eps)``.
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, group: dict[str, Any], p: Tensor, state: dict[str, Any]) -> None:
        state["step"] = _step_tensor()
        state["square_avg"] = torch.zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = torch.zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = torch.zeros_like(p)

    def _update(self, group: dict[str, Any], p: Tensor, grad: Tensor,
                state: dict[str, Any]) -> None:
        lr, wd, alpha = _scalar(group["lr"]), _scalar(group["weight_decay"]), group["alpha"]
        state["step"].add_(1)
        if wd != 0:
            grad = grad.add(p, alpha=wd)
        square_avg = state["square_avg"]
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(group["eps"])
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf.mul_(group["momentum"]).addcdiv_(grad, avg)
            p.add_(buf, alpha=-lr)
        else:
            p.addcdiv_(grad, avg, value=-lr)
