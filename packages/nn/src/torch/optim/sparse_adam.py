"""``torch.optim.SparseAdam``: the "lazy" Adam for sparse gradients (e.g. ``nn.Embedding(...,
sparse=True)``): only the entries a gradient holds have their moments and values updated."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor

from ._single_tensor import _check
from .optimizer import Optimizer, _scalar

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam restricted to the entries present in each (sparse COO) gradient.

    For the coalesced gradient's entries ``i`` at step ``t`` (the step counts calls that found
    a gradient): ``m[i] = lerp(m[i], g, 1 - beta1)``; ``v[i] = lerp(v[i], g^2, 1 - beta2)``;
    ``p[i] -= lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m[i] / (sqrt(v[i]) + eps)``. Entries
    the gradient does not hold keep their moments and values. Parameters must be dense and
    gradients sparse.
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        _check(0.0 < lr, f"Invalid learning rate: {lr}")
        _check(0.0 < eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        sparse_params = [[g, i] for g, group in enumerate(self.param_groups)
                         for i, p in enumerate(group["params"]) if p.is_sparse]
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires "
                             "dense parameter tensors")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a (sparse) gradient once; ``closure`` re-evaluates
        the loss (with gradients enabled) and its result is returned."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        with torch.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(group, p, p.grad)
        return loss

    def _update(self, group: dict[str, Any], p: Tensor, grad: Tensor) -> None:
        if not grad.is_sparse:
            raise RuntimeError("SparseAdam does not support dense gradients, please consider "
                               "Adam instead")
        state = self.state[p]
        if not state:
            # PyTorch keeps SparseAdam's step as a plain int
            state["step"] = 0
            state["exp_avg"] = torch.zeros_like(p)
            state["exp_avg_sq"] = torch.zeros_like(p)
        state["step"] += 1
        grad = grad.coalesce()
        values = grad._values()
        if group["maximize"]:
            values = -values
        if values.numel() == 0:
            return
        beta1, beta2 = (_scalar(b) for b in group["betas"])
        lr, eps, step = _scalar(group["lr"]), float(group["eps"]), state["step"]
        # the coalesced indices are distinct, so gathering and writing back by them is exact
        where = tuple(grad._indices())
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        m = exp_avg[where].lerp(values, 1 - beta1)
        v = exp_avg_sq[where].lerp(values * values, 1 - beta2)
        exp_avg[where] = m
        exp_avg_sq[where] = v
        step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        p[where] = p[where] - step_size * m / (v.sqrt() + eps)
