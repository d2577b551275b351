"""``torch.optim.RAdam``: rectified Adam (Liu et al.), as PyTorch documents the algorithm."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor

from ._single_tensor import _check, _SingleTensorOptimizer, _step_tensor
from .optimizer import _scalar

__all__ = ["RAdam"]


class RAdam(_SingleTensorOptimizer):
    """RAdam.

    Per parameter at step ``t``: weight decay as in :class:`NAdam`; ``m`` and ``v`` as in
    Adam; ``rho_inf = 2 / (1 - beta2) - 1``, ``rho_t = rho_inf - 2 t beta2^t / (1 -
    beta2^t)``. When ``rho_t > 5`` the step is ``lr * m / (1 - beta1^t) * r_t *
    sqrt(1 - beta2^t) / (sqrt(v) + eps)`` with the rectification ``r_t = sqrt((rho_t - 4)
    (rho_t - 2) rho_inf / ((rho_inf - 4) (rho_inf - 2) rho_t))``, otherwise the
    unadapted ``lr * m / (1 - beta1^t)``.
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, group: dict[str, Any], p: Tensor, state: dict[str, Any]) -> None:
        state["step"] = _step_tensor()
        state["exp_avg"] = torch.zeros_like(p)
        state["exp_avg_sq"] = torch.zeros_like(p)

    def _update(self, group: dict[str, Any], p: Tensor, grad: Tensor,
                state: dict[str, Any]) -> None:
        beta1, beta2 = (_scalar(b) for b in group["betas"])
        lr, wd = _scalar(group["lr"]), _scalar(group["weight_decay"])
        state["step"].add_(1)
        step = state["step"].item()
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        corrected_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                             / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive_lr = math.sqrt(bias_correction2) / exp_avg_sq.sqrt().add_(group["eps"])
            p.add_(corrected_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            p.add_(corrected_avg * lr, alpha=-1.0)
