"""``torch.optim.NAdam``: Adam with Nesterov momentum (Dozat) and the momentum-decay schedule,
as PyTorch documents the algorithm."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor

from ._single_tensor import _check, _SingleTensorOptimizer, _step_tensor
from .optimizer import _scalar

__all__ = ["NAdam"]


class NAdam(_SingleTensorOptimizer):
    """NAdam.

    Per parameter at step ``t``: weight decay adds ``wd * p`` to ``g`` or, when decoupled,
    scales ``p`` by ``1 - lr * wd``; ``mu_t = beta1 * (1 - 0.5 * 0.96^(t * psi))`` with
    ``psi = momentum_decay``; ``prod_t = prod_{i<=t} mu_i``; ``m = lerp(m, g, 1 - beta1)``;
    ``v = beta2 * v + (1 - beta2) * g^2``; ``denom = sqrt(v / (1 - beta2^t)) + eps``;
    ``p -= lr * (1 - mu_t) / (1 - prod_t) * g / denom + lr * mu_{t+1} / (1 - prod_t *
    mu_{t+1}) * m / denom``. ``prod_t`` lives in the state as a float32 0-d tensor
    (``mu_product``), as in PyTorch.
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, group: dict[str, Any], p: Tensor, state: dict[str, Any]) -> None:
        state["step"] = _step_tensor()
        state["mu_product"] = torch.tensor(1.0, dtype=torch.float32)
        state["exp_avg"] = torch.zeros_like(p)
        state["exp_avg_sq"] = torch.zeros_like(p)

    def _update(self, group: dict[str, Any], p: Tensor, grad: Tensor,
                state: dict[str, Any]) -> None:
        beta1, beta2 = (_scalar(b) for b in group["betas"])
        lr, wd = _scalar(group["lr"]), _scalar(group["weight_decay"])
        psi = group["momentum_decay"]
        state["step"].add_(1)
        step = state["step"].item()
        bias_correction2 = 1 - beta2 ** step
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * psi))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * psi))
        # The running product is rounded to the state's dtype every step, as PyTorch does.
        mu_product = state["mu_product"]
        mu_product.mul_(mu)
        prod = mu_product.item()
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt().add_(group["eps"])
        p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - prod))
        p.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - prod * mu_next))

