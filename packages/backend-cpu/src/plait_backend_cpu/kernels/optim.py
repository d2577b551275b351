"""Wrappers of the fused optimizer steps: ``aten::_fused_adam_`` and ``aten::_fused_adamw_``
(both overloads: ``lr`` as a float or a 0-d tensor).

One native call per dtype runs the whole step over every tensor of that dtype. Tensors the
native kernel does not take (not contiguous, an operand sharing memory with another, a dtype
without a code) run core's composite, so a mixed list still gives PyTorch's results.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import Kernel


def _native_ok(row: list[Any]) -> bool:
    """Contiguous CPU tensors with an address when they have elements."""
    for t in row:
        if not t.is_contiguous() or t.device.type != "cpu":
            return False
        if not t.data_ptr() and t.numel():
            return False
    return True


def _overlap(rows: list[list[Any]]) -> bool:
    """Whether any two of the tensors share memory: the kernel reads and writes through
    restrict pointers and updates tensors in parallel, so a tensor listed twice (or two views
    of one buffer) must take the composite, which updates them one after the other."""
    spans = sorted((t.data_ptr(), t.data_ptr() + t.numel() * t.element_size())
                   for row in rows for t in row if t.numel())
    return any(start < prev_end for (_, prev_end), (start, _) in itertools.pairwise(spans))


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """``aten::_fused_adam_`` and ``aten::_fused_adamw_`` (with their ``tensor_lr``)."""

    def make(name: str, decoupled: bool) -> Kernel:
        def kernel(self: list[Any], grads: list[Any], exp_avgs: list[Any],
                   exp_avg_sqs: list[Any], max_exp_avg_sqs: list[Any], state_steps: list[Any],
                   *, lr: Any, beta1: float, beta2: float, weight_decay: float, eps: float,
                   amsgrad: bool, maximize: bool, grad_scale: Any = None,
                   found_inf: Any = None) -> None:
            from torch.backends import contract

            rate = contract.check_fused_adam(name, self, grads, exp_avgs, exp_avg_sqs,
                                             max_exp_avg_sqs, state_steps, amsgrad, lr,
                                             grad_scale, found_inf)
            if rate is None:  # gradient scaling found an overflow: the step is skipped
                return None
            groups: dict[int, list[int]] = {}
            rest: list[int] = []
            rows: list[list[Any]] = []
            for i, p in enumerate(self):
                row = [p, grads[i], exp_avgs[i], exp_avg_sqs[i]]
                if amsgrad:
                    row.append(max_exp_avg_sqs[i])
                rows.append(row)
                code = dtype_codes.get(p.dtype)
                if code is not None and _native_ok(row):
                    groups.setdefault(code, []).append(i)
                else:
                    rest.append(i)
            if groups and _overlap(rows):
                rest, groups = list(range(len(self))), {}
            scale = 1.0 if grad_scale is None else float(grad_scale.item())
            for code, idx in groups.items():
                done = native.fused_adam(
                    code, [self[i].numel() for i in idx], [self[i].data_ptr() for i in idx],
                    [grads[i].data_ptr() for i in idx], [exp_avgs[i].data_ptr() for i in idx],
                    [exp_avg_sqs[i].data_ptr() for i in idx],
                    [max_exp_avg_sqs[i].data_ptr() for i in idx] if amsgrad else [],
                    [float(state_steps[i].item()) for i in idx], rate, beta1, beta2,
                    weight_decay, eps, amsgrad, maximize, decoupled, grad_scale is not None,
                    scale)
                if not done:
                    rest.extend(idx)
            if rest:
                composite = contract.composite(f"aten::{name}")
                rest.sort()
                composite([self[i] for i in rest], [grads[i] for i in rest],
                          [exp_avgs[i] for i in rest], [exp_avg_sqs[i] for i in rest],
                          [max_exp_avg_sqs[i] for i in rest] if amsgrad else [],
                          [state_steps[i] for i in rest], lr=rate, beta1=beta1, beta2=beta2,
                          weight_decay=weight_decay, eps=eps, amsgrad=amsgrad,
                          maximize=maximize, grad_scale=grad_scale)
            return None

        kernel.__name__ = f"{name}_cpu"
        return kernel

    adam, adamw = make("_fused_adam_", False), make("_fused_adamw_", True)
    return {"aten::_fused_adam_": adam, "aten::_fused_adam_.tensor_lr": adam,
            "aten::_fused_adamw_": adamw, "aten::_fused_adamw_.tensor_lr": adamw}
