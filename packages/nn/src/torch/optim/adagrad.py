"""``torch.optim.Adagrad``: Adagrad (Duchi et al.) with learning-rate decay and an initial
accumulator value, as PyTorch documents the algorithm."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor

from ._single_tensor import _check, _SingleTensorOptimizer, _step_tensor
from .optimizer import _scalar

__all__ = ["Adagrad"]


class Adagrad(_SingleTensorOptimizer):
    """Adagrad.

    Per parameter at step ``t``: ``g += wd * p``; ``lr_t = lr / (1 + (t - 1) * lr_decay)``;
    ``s += g^2``; ``p -= lr_t * g / (sqrt(s) + eps)``. Unlike the other optimizers, the state
    (``step`` and ``sum``, filled with ``initial_accumulator_value``) is created by the
    constructor, as in PyTorch.
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= initial_accumulator_value,
               f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps,
                    "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(group, p, self.state[p])

    def _init_state(self, group: dict[str, Any], p: Tensor, state: dict[str, Any]) -> None:
        state["step"] = _step_tensor()
        state["sum"] = torch.full_like(p, group["initial_accumulator_value"])

    def share_memory(self) -> None:
        """Move the accumulators to shared memory (a no-op where tensors cannot be shared)."""
        for group in self.param_groups:
            for p in group["params"]:
                total = self.state[p]["sum"]
                if hasattr(total, "share_memory_"):
                    total.share_memory_()

    def _update(self, group: dict[str, Any], p: Tensor, grad: Tensor,
                state: dict[str, Any]) -> None:
        lr, wd = _scalar(group["lr"]), _scalar(group["weight_decay"])
        state["step"].add_(1)
        step = state["step"].item()
        if wd != 0:
            grad = grad.add(p, alpha=wd)
        clr = lr / (1 + (step - 1) * group["lr_decay"])
        total = state["sum"]
        total.addcmul_(grad, grad, value=1)
        std = total.sqrt().add_(group["eps"])
        p.addcdiv_(grad, std, value=-clr)
