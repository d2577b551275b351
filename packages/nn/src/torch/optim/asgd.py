"""``torch.optim.ASGD``: averaged stochastic gradient descent (Polyak & Juditsky), as PyTorch
documents the algorithm."""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor

from ._single_tensor import _check, _SingleTensorOptimizer, _step_tensor
from .optimizer import _scalar

__all__ = ["ASGD"]


def _float32(value: float) -> float:
    """``value`` rounded to float32: PyTorch builds the new ``eta``/``mu`` as default-dtype
    (float32) tensors before copying them into the state, even after a state_dict load made
    the state float64."""
    return struct.unpack("f", struct.pack("f", value))[0]


class ASGD(_SingleTensorOptimizer):
    """ASGD.

    Per parameter at step ``t``, with ``eta`` and ``mu`` from the state: ``g += wd * p``;
    ``p *= 1 - lambd * eta``; ``p -= eta * g``; the average ``ax`` becomes ``p`` while
    ``mu == 1`` and ``ax += mu * (p - ax)`` after; then ``eta = lr / (1 + lambd * lr *
    t)^alpha`` and ``mu = 1 / max(1, t - t0)``. ``eta`` and ``mu`` are float32 0-d tensors
    (rounded every step), as in PyTorch.
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, group: dict[str, Any], p: Tensor, state: dict[str, Any]) -> None:
        state["step"] = _step_tensor()
        state["eta"] = torch.tensor(_scalar(group["lr"]), dtype=torch.float32)
        state["mu"] = torch.tensor(1.0, dtype=torch.float32)
        state["ax"] = torch.zeros_like(p)

    def _update(self, group: dict[str, Any], p: Tensor, grad: Tensor,
                state: dict[str, Any]) -> None:
        lr, wd, lambd = _scalar(group["lr"]), _scalar(group["weight_decay"]), group["lambd"]
        state["step"].add_(1)
        step = state["step"].item()
        if wd != 0:
            grad = grad.add(p, alpha=wd)
        eta = state["eta"].item()
        p.mul_(1 - lambd * eta)
        p.add_(grad, alpha=-eta)
        ax, mu = state["ax"], state["mu"].item()
        if mu != 1:
            ax.add_(p.sub(ax).mul_(mu))
        else:
            ax.copy_(p)
        state["eta"].fill_(_float32(lr / ((1 + lambd * lr * step) ** group["alpha"])))
        state["mu"].fill_(_float32(1 / max(1, step - group["t0"])))
