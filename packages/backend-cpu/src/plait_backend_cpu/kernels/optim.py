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


def _on_host(row: tuple[Any, ...]) -> bool:
    return all(t.device.type == "cpu" for t in row)


def _spans(row: tuple[Any, ...], addresses: list[int], count: int) -> list[tuple[int, int]]:
    """The byte spans of a row's tensors (``count`` elements each, of one dtype)."""
    if not count:
        return []
    nbytes = count * row[0].element_size()
    return [(ptr, ptr + nbytes) for ptr in addresses]


def _overlap(spans: list[tuple[int, int]]) -> bool:
    """Whether any two of the (start, end) byte spans of the tensors share memory: the
    kernel reads and writes through restrict pointers and updates tensors in parallel, so a
    tensor listed twice (or two views of one buffer) must take the composite, which updates
    them one after the other."""
    spans = sorted(spans)
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
            # per parameter, read once: its row's addresses and its element count (check_lists
            # gave every tensor of a row its parameter's shape and dtype)
            addresses: list[list[int]] = []
            counts: list[int] = []
            spans: list[tuple[int, int]] = []
            elsewhere: list[tuple[Any, ...]] = []  # rows with a tensor off the host
            for i, p in enumerate(self):
                row = ((p, grads[i], exp_avgs[i], exp_avg_sqs[i], max_exp_avg_sqs[i]) if amsgrad
                       else (p, grads[i], exp_avgs[i], exp_avg_sqs[i]))
                count = p.numel()
                counts.append(count)
                if not _on_host(row):
                    addresses.append([])
                    elsewhere.append(row)
                    rest.append(i)
                    continue
                ptrs = [t.data_ptr() for t in row]
                addresses.append(ptrs)
                spans.extend(_spans(row, ptrs, count))
                code = dtype_codes.get(p.dtype)
                # the native kernel takes contiguous tensors with an address when they have
                # elements
                if (code is not None and all(t.is_contiguous() for t in row)
                        and (count == 0 or all(ptrs))):
                    groups.setdefault(code, []).append(i)
                else:
                    rest.append(i)
            for row in elsewhere if groups else ():
                spans.extend(_spans(row, [t.data_ptr() for t in row], row[0].numel()))
            if groups and _overlap(spans):
                rest, groups = list(range(len(self))), {}
            scale = 1.0 if grad_scale is None else float(grad_scale.item())
            for code, idx in groups.items():
                done = native.fused_adam(
                    code, [counts[i] for i in idx], [addresses[i][0] for i in idx],
                    [addresses[i][1] for i in idx], [addresses[i][2] for i in idx],
                    [addresses[i][3] for i in idx],
                    [addresses[i][4] for i in idx] if amsgrad else [],
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
