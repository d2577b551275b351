"""``torch.optim.Adam``: Adam with AMSGrad, maximisation and L2 or decoupled weight decay, as
PyTorch documents the algorithm; the update runs through ``torch._fused_adam_`` /
``torch._fused_adamw_`` (one native pass per parameter list) when the backend has them."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor

from .optimizer import Optimizer, _scalar

__all__ = ["Adam"]


def _fused_kernel(decoupled: bool) -> Callable[..., Any] | None:
    return getattr(torch, "_fused_adamw_" if decoupled else "_fused_adam_", None)


_MOMENTS = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")


def _real_views(params: list[Tensor], grads: list[Tensor], states: list[dict[str, Any]]
                ) -> tuple[list[Tensor], list[Tensor], list[dict[str, Any]]]:
    """The lists with each complex parameter, its gradient and its moment buffers replaced by
    their ``view_as_real`` views (the step count is shared with the state itself)."""
    out_params, out_grads, out_states = [], [], []
    for p, grad, state in zip(params, grads, states):
        if p.is_complex():
            p, grad = torch.view_as_real(p), torch.view_as_real(grad)
            state = {k: torch.view_as_real(v) if k in _MOMENTS else v for k, v in state.items()}
        out_params.append(p)
        out_grads.append(grad)
        out_states.append(state)
    return out_params, out_grads, out_states


class Adam(Optimizer):
    """Adam (Kingma & Ba), with PyTorch's options.

    Per parameter, at step ``t``: ``g = -g`` when maximizing; weight decay either adds
    ``wd * p`` to ``g`` or, when decoupled (AdamW), scales ``p`` by ``1 - lr * wd``;
    ``m = lerp(m, g, 1 - beta1)``; ``v = beta2 * v + (1 - beta2) * g * g``; with AMSGrad the
    running maximum of ``v`` replaces ``v``; ``p -= lr / (1 - beta1^t) * m /
    (sqrt(v) / sqrt(1 - beta2^t) + eps)``.

    ``fused=None`` (the default), ``fused=True`` and ``foreach=True`` use
    ``torch._fused_adam_`` (the same math over the whole parameter list, one native pass per
    dtype where the backend has the kernel: PyTorch's multi-tensor implementations are both
    that); ``fused=False``, ``differentiable=True`` and non-floating parameters take the plain
    per-tensor loop. ``capturable`` is accepted and ignored (there are no CUDA graphs to
    capture).
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        if fused and differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient once; ``closure`` re-evaluates the loss
        (with gradients enabled) and its result is returned."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        with torch.no_grad():
            for group in self.param_groups:
                self._update_group(group)
        return loss

    def _init_state(self, p: Tensor, amsgrad: bool) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            # PyTorch keeps the step count as a float32 0-d tensor; state_dict() shows it so.
            state["step"] = torch.tensor(0.0, dtype=torch.float32)
            state["exp_avg"] = torch.zeros_like(p)
            state["exp_avg_sq"] = torch.zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = torch.zeros_like(p)
        return state

    def _update_group(self, group: dict[str, Any]) -> None:
        amsgrad = group["amsgrad"]
        # one pass over the group: each parameter's gradient is read once and its state
        # looked up once (the fused path's work per parameter is otherwise the kernel's)
        params: list[Tensor] = []
        grads: list[Tensor] = []
        states: list[dict[str, Any]] = []
        all_floating = True
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            if grad.is_sparse:
                raise RuntimeError("Adam does not support sparse gradients, please consider "
                                   "SparseAdam instead")
            params.append(p)
            grads.append(grad)
            states.append(self._init_state(p, amsgrad))
            all_floating = all_floating and p.dtype.is_floating_point
        if not params:
            return
        if not all_floating and group["fused"]:
            bad = next(p for p in params if not p.dtype.is_floating_point)
            raise RuntimeError("`fused=True` requires all the params to be floating point "
                               f"Tensors of supported devices, but {bad.dtype} and "
                               f"{bad.device.type}")
        if not all_floating:
            # PyTorch's Adam updates a complex parameter as the pairs of reals it holds (the
            # moments of the real and imaginary parts apart): their real views, which share
            # the complex tensors' memory, go to the kernel
            params, grads, states = _real_views(params, grads, states)
            all_floating = all(p.dtype.is_floating_point for p in params)
        kernel = None
        if all_floating and group["fused"] is not False and not group["differentiable"]:
            kernel = _fused_kernel(group["decoupled_weight_decay"])
        if kernel is not None:
            self._fused_step(kernel, group, params, grads, states)
        else:
            for p, grad, state in zip(params, grads, states):
                self._single_tensor_step(group, p, grad, state)

    def _fused_step(self, kernel: Callable[..., Any], group: dict[str, Any],
                    params: list[Tensor], grads: list[Tensor],
                    states: list[dict[str, Any]]) -> None:
        beta1, beta2 = (_scalar(b) for b in group["betas"])
        amsgrad = group["amsgrad"]
        steps, exp_avgs, exp_avg_sqs, max_exp_avg_sqs = [], [], [], []
        for state in states:
            step = state["step"]
            step.add_(1)  # the fused kernel reads the already-incremented count, as in PyTorch
            steps.append(step)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if amsgrad:
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
        kernel(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
               lr=_scalar(group["lr"]), beta1=beta1, beta2=beta2,
               weight_decay=_scalar(group["weight_decay"]), eps=group["eps"],
               amsgrad=amsgrad, maximize=group["maximize"])

    def _single_tensor_step(self, group: dict[str, Any], p: Tensor, grad: Tensor,
                            state: dict[str, Any]) -> None:
        lr = _scalar(group["lr"])
        beta1, beta2 = (_scalar(b) for b in group["betas"])
        wd = _scalar(group["weight_decay"])
        if group["maximize"]:
            grad = -grad
        state["step"].add_(1)
        step = state["step"].item()
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
        if group["amsgrad"]:
            max_sq = state["max_exp_avg_sq"]
            max_sq.copy_(torch.maximum(max_sq, exp_avg_sq))
            denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(group["eps"])
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(group["eps"])
        p.addcdiv_(exp_avg, denom, value=-step_size)
