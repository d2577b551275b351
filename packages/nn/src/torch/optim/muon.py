"""``torch.optim.Muon``: momentum whose update is orthogonalised by a Newton-Schulz iteration
(Jordan et al., 2024), for 2-d parameters, as PyTorch documents the algorithm."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor

from ._single_tensor import _check, _SingleTensorOptimizer
from .optimizer import _scalar

__all__ = ["Muon"]

# how much the learning rate grows with the matrix's shape (rows A, columns B)
_LR_RATIO = {
    None: lambda rows, cols: math.sqrt(max(1.0, rows / cols)),
    "original": lambda rows, cols: math.sqrt(max(1.0, rows / cols)),
    "match_rms_adamw": lambda rows, cols: 0.2 * math.sqrt(max(rows, cols)),
}


def _orthogonalize(matrix: Tensor, coefficients: tuple[float, float, float], steps: int,
                   eps: float) -> Tensor:
    """Approximately ``U V^T`` of ``matrix = U S V^T`` by a quintic Newton-Schulz iteration
    ``X <- a X + (b X X^T + c (X X^T)^2) X`` in bfloat16, as PyTorch computes it (the wide
    orientation, after scaling ``X`` to Frobenius norm at most 1)."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if matrix.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = matrix.shape[0] > matrix.shape[1]
    x = matrix.bfloat16()
    if tall:
        x = x.T
    # each step rounds to bfloat16 once, after float32 accumulation, as a fused bfloat16
    # matmul-and-add (addmm) does: rounding the product and the sum separately drifts
    bf16, f32 = torch.bfloat16, torch.float32
    norm = x.to(f32).norm().to(bf16).to(f32).clamp(min=eps)
    x = (x.to(f32) / norm).to(bf16).to(f32)
    for _ in range(steps):
        gram = (x @ x.T).to(bf16).to(f32)
        mixed = (b * gram + c * (gram @ gram)).to(bf16).to(f32)
        x = (a * x + mixed @ x).to(bf16).to(f32)
    x = x.to(bf16)
    return x.T if tall else x


class Muon(_SingleTensorOptimizer):
    """Muon, for 2-d parameters only.

    Per parameter: ``buf = lerp(buf, g, 1 - momentum)``; the update is
    ``lerp(g, buf, momentum)`` (Nesterov) or ``buf``, orthogonalised by ``ns_steps`` Newton-
    Schulz steps; ``p *= 1 - lr * weight_decay``; ``p -= lr * ratio * update``, where ``ratio``
    is ``sqrt(max(1, A / B))`` for an ``A x B`` parameter (``adjust_lr_fn`` ``None`` or
    ``"original"``) or ``0.2 * sqrt(max(A, B))`` (``"match_rms_adamw"``).
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-3,
                 weight_decay: float = 0.1, momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 <= momentum, f"momentum should be >= 0 but is: {momentum}")
        _check(0.0 <= weight_decay, f"weight decay should be >= 0 but is: {weight_decay}")
        _check(adjust_lr_fn in _LR_RATIO,
               f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _init_state(self, group: dict[str, Any], p: Tensor, state: dict[str, Any]) -> None:
        if p.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
        state["momentum_buffer"] = torch.zeros_like(p)

    def _update(self, group: dict[str, Any], p: Tensor, grad: Tensor,
                state: dict[str, Any]) -> None:
        if grad.is_sparse:
            raise RuntimeError("Muon does not support sparse gradients")
        lr, momentum = _scalar(group["lr"]), _scalar(group["momentum"])
        buf = state["momentum_buffer"]
        buf.lerp_(grad, 1 - momentum)
        direction = grad.lerp(buf, momentum) if group["nesterov"] else buf
        update = _orthogonalize(direction, tuple(group["ns_coefficients"]),
                                int(group["ns_steps"]), float(group["eps"]))
        ratio = _LR_RATIO[group["adjust_lr_fn"]](p.shape[0], p.shape[1])
        p.mul_(1 - lr * _scalar(group["weight_decay"]))
        p.add_(update.to(p.dtype), alpha=-lr * ratio)
