"""``torch.optim.Adafactor``: Adam with a factored second moment (Shazeer & Stern, 2018), in
the form PyTorch documents (relative step size, update clipping, no first moment)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor

from ._single_tensor import _check, _SingleTensorOptimizer, _step_tensor
from .optimizer import _scalar

__all__ = ["Adafactor"]


class Adafactor(_SingleTensorOptimizer):
    """Adafactor.

    Per parameter at step ``t`` (``G`` the gradient, ``tau = beta2_decay``)::

        rho = min(lr, 1 / sqrt(t));  alpha = max(eps2, RMS(p)) * rho
        p *= 1 - lr * weight_decay
        if p.dim() >= 2:  R = lerp(R, mean_cols(G^2), t^tau); C = lerp(C, mean_rows(G^2), t^tau)
                          V = R @ C / max(mean(R), eps1)
        else:             V = lerp(V, G^2, t^tau)
        U = G / sqrt(max(V, eps1^2));  p -= alpha * U / max(1, RMS(U) / d)

    ``eps1`` defaults (``None``) to the machine epsilon of the parameter's dtype. Matrices
    (and the last two dimensions of larger tensors) keep only a row and a column statistic.
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-2,
                 beta2_decay: float = -0.8, eps: tuple[float | None, float] = (None, 1e-3),
                 d: float = 1.0, weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(beta2_decay <= 0.0, f"beta2_decay should be <= 0 but is: {beta2_decay}")
        _check(eps[0] is None or eps[0] >= 0.0, f"epsilon1 should be >= 0 but is: {eps[0]}")
        _check(eps[1] >= 0.0, f"epsilon2 should be >= 0 but is: {eps[1]}")
        _check(d >= 1.0, f"Clipping threshold d should be >= 1 but is: {d}")
        _check(weight_decay >= 0.0, f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _init_state(self, group: dict[str, Any], p: Tensor, state: dict[str, Any]) -> None:
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        state["step"] = _step_tensor()
        if p.dim() > 1:
            # the row statistic keeps a trailing 1 and the column statistic a 1 before the
            # last dim, so that their product (a matmul) is the full-shape estimate
            state["row_var"] = p.new_zeros((*p.shape[:-1], 1))
            state["col_var"] = p.new_zeros((*p.shape[:-2], 1, p.shape[-1]))
        else:
            state["variance"] = torch.zeros_like(p)

    def _update(self, group: dict[str, Any], p: Tensor, grad: Tensor,
                state: dict[str, Any]) -> None:
        if grad.is_sparse:
            raise RuntimeError("Adafactor does not support sparse gradients")
        lr, wd, d = _scalar(group["lr"]), _scalar(group["weight_decay"]), _scalar(group["d"])
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = torch.finfo(p.dtype).eps
        state["step"].add_(1)
        t = float(state["step"].item())
        rho = min(lr, 1.0 / math.sqrt(t))
        # the relative step size uses the parameter before weight decay
        alpha = max(eps2, float(p.norm(2).item()) / math.sqrt(max(p.numel(), 1))) * rho
        if wd != 0:
            p.mul_(1 - lr * wd)
        weight = t ** group["beta2_decay"]  # 1 - beta2_t
        squared = grad * grad
        if p.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_var.lerp_(squared.mean(dim=-1, keepdim=True), weight)
            col_var.lerp_(squared.mean(dim=-2, keepdim=True), weight)
            estimate = (row_var @ col_var) / row_var.mean(dim=-2, keepdim=True).clamp(min=eps1)
        else:
            state["variance"].lerp_(squared, weight)
            estimate = state["variance"]
        update = grad * estimate.clamp(min=eps1 * eps1).rsqrt()
        rms = float(update.norm(2).item()) / math.sqrt(max(update.numel(), 1))
        p.add_(update, alpha=-alpha / max(1.0, rms / d))
