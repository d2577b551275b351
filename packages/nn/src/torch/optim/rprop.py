"""``torch.optim.Rprop``: resilient backpropagation (Riedmiller & Braun), as PyTorch documents
the algorithm."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor

from ._single_tensor import _check, _SingleTensorOptimizer, _step_tensor
from .optimizer import _scalar

__all__ = ["Rprop"]


class Rprop(_SingleTensorOptimizer):
    """Rprop.

    Per element, with ``s = sign(g * g_prev)``: the step size is multiplied by
    ``etaplus`` where ``s > 0``, by ``etaminus`` where ``s < 0`` (and the gradient is treated
    as zero there), clamped to ``step_sizes``; then ``p -= sign(g) * step_size`` and the
    (possibly zeroed) gradient becomes ``g_prev``.
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 < etas[0] < 1.0 < etas[1], f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, group: dict[str, Any], p: Tensor, state: dict[str, Any]) -> None:
        state["step"] = _step_tensor()
        state["prev"] = torch.zeros_like(p)
        state["step_size"] = torch.full_like(p, _scalar(group["lr"]))

    def _update(self, group: dict[str, Any], p: Tensor, grad: Tensor,
                state: dict[str, Any]) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        state["step"].add_(1)
        prev, step_size = state["prev"], state["step_size"]
        sign = grad.mul(prev).sign()
        decrease = sign < 0
        factor = torch.where(sign > 0, torch.full_like(step_size, etaplus),
                             torch.ones_like(step_size))
        factor = torch.where(decrease, torch.full_like(step_size, etaminus), factor)
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)
        # Where the gradient changed sign the step was too big: no move, and no sign memory.
        grad = torch.where(decrease, torch.zeros_like(grad), grad)
        p.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
