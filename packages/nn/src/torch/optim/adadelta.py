"""``torch.optim.Adadelta``: Adadelta (Zeiler), as PyTorch documents the algorithm."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor

from ._single_tensor import _check, _SingleTensorOptimizer, _step_tensor
from .optimizer import _scalar

__all__ = ["Adadelta"]


class Adadelta(_SingleTensorOptimizer):
    """Adadelta.

    Per parameter: ``g += wd * p``; ``v = rho * v + (1 - rho) * g^2``;
    ``dx = sqrt(u + eps) / sqrt(v + eps) * g``; ``u = rho * u + (1 - rho) * dx^2``;
    ``p -= lr * dx``.
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, group: dict[str, Any], p: Tensor, state: dict[str, Any]) -> None:
        state["step"] = _step_tensor()
        state["square_avg"] = torch.zeros_like(p)
        state["acc_delta"] = torch.zeros_like(p)

    def _update(self, group: dict[str, Any], p: Tensor, grad: Tensor,
                state: dict[str, Any]) -> None:
        lr, wd, rho, eps = (_scalar(group["lr"]), _scalar(group["weight_decay"]),
                            group["rho"], group["eps"])
        state["step"].add_(1)
        if wd != 0:
            grad = grad.add(p, alpha=wd)
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-lr)
