"""``torch.optim.swa_utils``: stochastic weight averaging (Izmailov et al.) and exponential
moving averages of a model's weights — ``AveragedModel``, the ``SWALR`` schedule, and
``update_bn`` to recompute batch-norm statistics for the averaged weights."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from copy import deepcopy
from typing import Any

import torch
from torch import Tensor
from torch.nn import Module

from .lr_scheduler import LRScheduler, _per_group
from .optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]

AvgFn = Callable[[Tensor, Tensor, Any], Tensor]
MultiAvgFn = Callable[[Sequence[Tensor], Sequence[Tensor], Any], None]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """An in-place EMA over lists: ``ema = decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_params: Sequence[Tensor], current: Sequence[Tensor], _: Any) -> None:
        with torch.no_grad():
            for ema, cur in zip(ema_params, current):
                if ema.dtype.is_floating_point or ema.dtype.is_complex:
                    ema.lerp_(cur, 1 - decay)
                else:
                    ema.copy_(ema * decay + cur * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """An in-place running mean over lists: ``avg += (current - avg) / (n + 1)``."""

    def swa_update(averaged: Sequence[Tensor], current: Sequence[Tensor],
                   num_averaged: Tensor | int) -> None:
        n = float(num_averaged)
        with torch.no_grad():
            for avg, cur in zip(averaged, current):
                if avg.dtype.is_floating_point or avg.dtype.is_complex:
                    avg.lerp_(cur, 1 / (n + 1))
                else:  # integer buffers: the mean truncates back into the buffer's dtype
                    avg.copy_(avg + (cur - avg) / (n + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """A per-tensor EMA: returns ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema: Tensor, current: Tensor, num_averaged: Any) -> Tensor:
        with torch.no_grad():
            return decay * ema + (1 - decay) * current

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """A per-tensor running mean: returns ``avg + (current - avg) / (n + 1)``."""

    def swa_update(averaged: Tensor, current: Tensor, num_averaged: Tensor | int) -> Tensor:
        with torch.no_grad():
            return averaged + (current - averaged) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) are the
    running average of the models passed to :meth:`update_parameters`: equal-weight SWA by
    default, or ``avg_fn`` (per tensor) / ``multi_avg_fn`` (per list, in place) such as
    :func:`get_ema_multi_avg_fn`. Without ``use_buffers`` the buffers are copied from the
    latest model. ``n_averaged`` (an int64 buffer) counts the updates."""

    def __init__(self, model: Module, device: Any = None, avg_fn: AvgFn | None = None,
                 multi_avg_fn: MultiAvgFn | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", torch.tensor(0, dtype=torch.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the averaged copy of the model."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current weights into the average (the first call copies them)."""
        if self.use_buffers:
            mine: Iterable[Tensor] = itertools.chain(self.module.parameters(),
                                                     self.module.buffers())
            theirs: Iterable[Tensor] = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.module.parameters(), model.parameters()
        with torch.no_grad():
            averaged, current = [], []
            for p_avg, p_model in zip(mine, theirs):
                averaged.append(p_avg.detach())
                current.append(p_model.detach().to(p_avg.device))
            if int(self.n_averaged) == 0:
                for p_avg, p_cur in zip(averaged, current):
                    p_avg.copy_(p_cur)
            elif self.multi_avg_fn is None:
                # Per tensor; the default is PyTorch's CPU path, avg + (p - avg) / (n + 1).
                avg_fn = self.avg_fn or get_swa_avg_fn()
                for p_avg, p_cur in zip(averaged, current):
                    p_avg.copy_(avg_fn(p_avg, p_cur, self.n_averaged))
            else:
                update = self.multi_avg_fn
                # Lists are averaged per device and dtype, as PyTorch groups them.
                groups: dict[Any, tuple[list[Tensor], list[Tensor]]] = {}
                for p_avg, p_cur in zip(averaged, current):
                    bucket = groups.setdefault((p_avg.device, p_avg.dtype), ([], []))
                    bucket[0].append(p_avg)
                    bucket[1].append(p_cur)
                for avg_list, cur_list in groups.values():
                    update(avg_list, cur_list, self.n_averaged)
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                    b_avg.detach().copy_(b_model.detach().to(b_avg.device))
            self.n_averaged += 1


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of every batch-norm layer of ``model`` with one pass
    over ``loader`` (a cumulative average over its batches; list/tuple batches use their
    first element). The model's train/eval mode and the layers' momenta are restored."""
    from torch.nn.modules.normalization import _BatchNorm

    momenta: dict[Module, Any] = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with torch.no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` epochs (cosine or
    linear), then hold it: ``lr_t = swa_lr * alpha_t + lr_0 * (1 - alpha_t)`` with
    ``alpha_t = (1 - cos(pi t / anneal_epochs)) / 2`` (or ``t / anneal_epochs``)."""

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float],
                 anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        for value, group in zip(_per_group("swa_lr", optimizer, swa_lr),
                                optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _set_anneal_func(self, strategy: str) -> None:
        self._anneal_strategy = strategy
        self.anneal_func: Callable[[float], float] = (
            _cosine_anneal if strategy == "cos" else _linear_anneal)

    def get_lr(self) -> list[Any]:
        """Recover the starting lr from the current one and the previous annealing weight,
        then apply the current weight (so other schedulers' changes are kept)."""
        self._warn_if_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / span)))
        alpha = self.anneal_func(max(0, min(1, step / span)))
        out = []
        for group in self.optimizer.param_groups:
            swa = group["swa_lr"]
            start = swa if prev_alpha == 1 else (group["lr"] - prev_alpha * swa) / (1 - prev_alpha)
            out.append(swa * alpha + start * (1 - alpha))
        return out

    def state_dict(self) -> dict[str, Any]:
        """The attributes except the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes and the annealing function."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)


def _linear_anneal(t: float) -> float:
    return t


def _cosine_anneal(t: float) -> float:
    return (1 - math.cos(math.pi * t)) / 2
