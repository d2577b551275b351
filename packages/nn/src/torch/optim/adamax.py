"""``torch.optim.Adamax``: Adam with the infinity norm, as PyTorch documents the algorithm."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor

from ._single_tensor import _check, _SingleTensorOptimizer, _step_tensor
from .optimizer import _scalar

__all__ = ["Adamax"]


class Adamax(_SingleTensorOptimizer):
    """Adamax (Kingma & Ba, section 7).

    Per parameter at step ``t``: ``g += wd * p``; ``m = lerp(m, g, 1 - beta1)``;
    ``u = max(beta2 * u, |g| + eps)``; ``p -= lr / (1 - beta1^t) * m / u``.
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, group: dict[str, Any], p: Tensor, state: dict[str, Any]) -> None:
        state["step"] = _step_tensor()
        state["exp_avg"] = torch.zeros_like(p)
        state["exp_inf"] = torch.zeros_like(p)

    def _update(self, group: dict[str, Any], p: Tensor, grad: Tensor,
                state: dict[str, Any]) -> None:
        beta1, beta2 = (_scalar(b) for b in group["betas"])
        lr, wd = _scalar(group["lr"]), _scalar(group["weight_decay"])
        state["step"].add_(1)
        step = state["step"].item()
        if wd != 0:
            grad = grad.add(p, alpha=wd)
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_inf.copy_(torch.maximum(exp_inf.mul_(beta2), grad.abs().add_(group["eps"])))
        p.addcdiv_(exp_avg, exp_inf, value=-lr / (1 - beta1 ** step))
