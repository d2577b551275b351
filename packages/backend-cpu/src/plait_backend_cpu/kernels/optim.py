"""Wrappers of the fused optimizer steps: ``aten::_fused_adam_`` and ``aten::_fused_adamw_``
(both overloads: ``lr`` as a float or a 0-d tensor).

One native call per dtype runs the whole step over every tensor of that dtype. Tensors the
native kernel does not take (not contiguous, an operand sharing memory with another, a dtype
without a code) run core's composite, so a mixed list still gives PyTorch's results.

The wrapper runs once per parameter group and step, over every tensor of the group: core's
checks hand it each row's element count and addresses in the same pass
(``contract.check_fused_adam_rows``, no operator call per tensor), and it reads the step
counts from their memory as native code would, since a dispatched ``item()`` per parameter
would cost more than the rest together.
"""

from __future__ import annotations

import ctypes
import operator
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import Kernel


def _step_values(steps: list[Any], readers: Mapping[Any, Any]) -> list[float]:
    """The values of one-element step counts: read from memory when ``readers`` has a ctypes
    type for the count's dtype (float32, float64: PyTorch's counts) and it is on the host,
    through ``item()`` otherwise (an integer count from older saved state, say)."""
    values = []
    for step in steps:
        reader = readers.get(step.dtype)
        ptr = step.data_ptr() if reader is not None and step.is_cpu else 0
        values.append(float(reader.from_address(ptr).value) if ptr else float(step.item()))
    return values


def _overlap(starts: list[int], ends: list[int]) -> bool:
    """Whether any two of the byte spans ``[starts[k], ends[k])`` (none empty) share memory:
    the kernel reads and writes through restrict pointers and updates tensors in parallel, so
    a tensor listed twice (or two views of one buffer) must take the composite, which updates
    them one after the other.

    Disjoint spans are ordered alike by their starts and by their ends, so with both lists
    sorted each start is at or after the end ranked one place before it; a point inside two
    spans has at least two more starts than ends at or before it, so some start comes before
    the end ranked one place before it. Two sorts of plain ints cost less than one sort of
    (start, end) pairs."""
    starts, ends = sorted(starts), sorted(ends)
    return any(map(operator.lt, starts[1:], ends[:-1]))


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """``aten::_fused_adam_`` and ``aten::_fused_adamw_`` (with their ``tensor_lr``)."""
    from torch.backends import contract

    step_readers = {contract.dtype("float32"): ctypes.c_float,
                    contract.dtype("float64"): ctypes.c_double}

    def make(name: str, decoupled: bool) -> Kernel:
        def kernel(self: list[Any], grads: list[Any], exp_avgs: list[Any],
                   exp_avg_sqs: list[Any], max_exp_avg_sqs: list[Any], state_steps: list[Any],
                   *, lr: Any, beta1: float, beta2: float, weight_decay: float, eps: float,
                   amsgrad: bool, maximize: bool, grad_scale: Any = None,
                   found_inf: Any = None) -> None:
            from torch.backends import contract

            checked = contract.check_fused_adam_rows(name, self, grads, exp_avgs,
                                                     exp_avg_sqs, max_exp_avg_sqs, state_steps,
                                                     amsgrad, lr, grad_scale, found_inf)
            if checked is None:  # gradient scaling found an overflow: the step is skipped
                return None
            rate, rows = checked
            groups: dict[int, list[int]] = {}
            rest: list[int] = []
            starts: list[int] = []  # the byte spans of the native rows' tensors
            ends: list[int] = []
            for i, (count, addresses) in enumerate(rows):
                # the native kernel takes contiguous host tensors (check_fused_adam_rows gave
                # their addresses, and every tensor of a row its parameter's shape and dtype)
                # with an address when they have elements
                code = dtype_codes.get(self[i].dtype) if addresses is not None else None
                if code is None or (count and not all(addresses)):
                    rest.append(i)
                    continue
                groups.setdefault(code, []).append(i)
                if count:
                    nbytes = count * self[i].element_size()
                    starts.extend(addresses)
                    ends.extend([ptr + nbytes for ptr in addresses])
            if groups and rest:
                # the other rows are updated after the native call: one that shares memory
                # with a native row would see it out of order. Their storages bound their
                # memory (a strided view may reach past its element count).
                columns = ((self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs) if amsgrad
                           else (self, grads, exp_avgs, exp_avg_sqs))
                for i in rest:
                    for t in (column[i] for column in columns):
                        storage = t.untyped_storage() if t.is_cpu else None
                        if storage is not None and storage.nbytes():
                            starts.append(storage.data_ptr())
                            ends.append(storage.data_ptr() + storage.nbytes())
            if groups and _overlap(starts, ends):
                rest, groups = list(range(len(self))), {}
            scale = 1.0 if grad_scale is None else float(grad_scale.item())
            for code, idx in groups.items():
                counts = [rows[i][0] for i in idx]
                ptrs = [rows[i][1] for i in idx]
                done = native.fused_adam(
                    code, counts, [r[0] for r in ptrs], [r[1] for r in ptrs],
                    [r[2] for r in ptrs], [r[3] for r in ptrs],
                    [r[4] for r in ptrs] if amsgrad else [],
                    _step_values([state_steps[i] for i in idx], step_readers), rate, beta1,
                    beta2, weight_decay, eps, amsgrad, maximize, decoupled,
                    grad_scale is not None, scale)
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
