"""``torch.optim.AdamW``: Adam with decoupled weight decay (Loshchilov & Hutter)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from torch import Tensor

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam whose weight decay scales the parameters (``p *= 1 - lr * wd``) instead of adding
    to the gradient; ``weight_decay`` defaults to 0.01. Otherwise as :class:`Adam`."""

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
