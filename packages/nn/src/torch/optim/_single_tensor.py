"""The shared loop of the per-parameter ("single tensor") optimizers: run the closure, then,
without autograd, visit every parameter that has a gradient, negate the gradient when
maximizing, create the state on first use and apply the optimizer's update rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .optimizer import Optimizer

__all__: list[str] = []


def _check(ok: bool, message: str) -> None:
    """Raise PyTorch's ``ValueError`` for an invalid hyperparameter."""
    if not ok:
        raise ValueError(message)


def _step_tensor() -> Tensor:
    """A fresh step counter: PyTorch keeps it as a float32 0-d tensor (state_dict shows it so)."""
    return torch.tensor(0.0, dtype=torch.float32)


class _SingleTensorOptimizer(Optimizer):
    """Base of optimizers whose update touches one parameter at a time.

    Subclasses implement :meth:`_init_state` (the state of a parameter seen for the first
    time) and :meth:`_update` (one update of ``p`` given its, already sign-adjusted,
    gradient).
    """

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient once; ``closure`` re-evaluates the loss
        (with gradients enabled) and its result is returned."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        with torch.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = -p.grad if group.get("maximize", False) else p.grad
                    state = self.state[p]
                    if not state:
                        self._init_state(group, p, state)
                    self._update(group, p, grad, state)
        return loss

    def _init_state(self, group: dict[str, Any], p: Tensor, state: dict[str, Any]) -> None:
        raise NotImplementedError

    def _update(self, group: dict[str, Any], p: Tensor, grad: Tensor,
                state: dict[str, Any]) -> None:
        raise NotImplementedError
