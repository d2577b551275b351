"""Wrappers of the fused cross-entropy kernels: they override core's composite aten ops
``_cross_entropy_forward`` (loss and row logsumexp of (N, C) / (C,) logits against int64
class indices) and ``_cross_entropy_backward`` (the logits' gradient) under the CPU key
(docs/architecture.md).

A wrapper checks the arguments, allocates the outputs and makes one native call over
contiguous operands. Anything the native code does not take (a dtype without a code, a
weight of another dtype or shape, no rows or no classes, mismatched shapes) runs the op's
composite kernel from core, the reference the tests compare with; so does a target out of
range, detected by the native code before it writes anything, so that the composite raises
PyTorch's error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import Kernel, addresses, composite, floating_codes

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """The fused cross-entropy kernels, keyed by aten op."""
    import torch

    # outputs: uninitialised contiguous tensors without torch.empty's argument handling
    from torch.backends.contract import allocator, empty as new_tensor, plannable

    codes = floating_codes(native, dtype_codes)

    def layout(self: Any, target: Any, weight: Any, reduction: Any,
               ignore_index: Any) -> tuple[int, int, int, int] | None:
        """(code, rows, classes, reduction code) when the native kernel takes the case."""
        code = codes.get(self.dtype)
        if (code is None or target.dtype != torch.int64 or self.ndim not in (1, 2)
                or target.ndim != self.ndim - 1 or not isinstance(reduction, int)
                or not isinstance(ignore_index, int)
                or not _INT64_MIN <= ignore_index <= _INT64_MAX):
            return None
        rows = self.shape[0] if self.ndim == 2 else 1
        classes = self.shape[-1]
        if rows == 0 or classes == 0 or (self.ndim == 2 and target.shape[0] != rows):
            return None
        if weight is not None and (weight.dtype != self.dtype
                                   or tuple(weight.shape) != (classes,)):
            return None
        return code, rows, classes, reduction if reduction in (0, 1) else 2

    forward = native.cross_entropy_forward

    def plan_forward(self: Any, target: Any, weight: Any, reduction: int,
                     ignore_index: int) -> Kernel | None:
        """The kernel of one signature of contiguous operands the native call takes: the
        case and the outputs' shapes worked out once."""
        case = layout(self, target, weight, reduction, ignore_index)
        if case is None or not all(t.is_contiguous() for t in (self, target, weight)
                                   if t is not None):
            return None
        code, rows, classes, red = case
        dev, dt = self.device, self.dtype
        loss_shape = tuple(target.shape) if red == 0 else ()
        lse_shape = tuple(self.shape[:-1])
        ok = native.LOSS_OK
        new_outputs = allocator([(loss_shape, dt, dev), (lse_shape, dt, dev)])
        size = dt.itemsize  # (the weight's too; the targets are int64)

        def planned(self: Any, target: Any, weight: Any, reduction: int,
                    ignore_index: int) -> Any:
            outs, (loss, lse) = new_outputs()
            # the operands' data_ptr(), written out
            if forward(code, rows, classes, red, ignore_index, loss, lse,
                       self._storage._ptr + self._offset * size,
                       target._storage._ptr + target._offset * 8,
                       weight._storage._ptr + weight._offset * size
                       if weight is not None else 0) != ok:
                return None  # the generic path
            return outs

        return planned

    @plannable(plan_forward, native=True)
    def cross_entropy_forward(self: Any, target: Any, weight: Any, reduction: int,
                              ignore_index: int) -> Any:
        args = (self, target, weight, reduction, ignore_index)
        case = layout(*args)
        if case is None:
            return composite("aten::_cross_entropy_forward")(*args)
        code, rows, classes, red = case
        dev, dt = self.device, self.dtype
        loss = new_tensor(tuple(target.shape) if red == 0 else (), dt, dev)
        lse = new_tensor(tuple(self.shape[:-1]), dt, dev)
        # the contiguous operands stay referenced until the native call has returned
        operands = (self.contiguous(), target.contiguous(),
                    weight.contiguous() if weight is not None else None)
        ptrs = addresses(loss, lse, *operands)
        if ptrs is None or native.cross_entropy_forward(
                code, rows, classes, red, ignore_index, *ptrs) != native.LOSS_OK:
            return composite("aten::_cross_entropy_forward")(*args)
        return loss, lse

    backward = native.cross_entropy_backward

    def plan_backward(grad_output: Any, self: Any, target: Any, weight: Any, reduction: int,
                      ignore_index: int, logsumexp: Any) -> Kernel | None:
        """The kernel of one signature of contiguous operands the native call takes."""
        case = layout(self, target, weight, reduction, ignore_index)
        if case is None:
            return None
        code, rows, classes, red = case
        grad_shape = tuple(target.shape) if red == 0 else ()
        operands = [t for t in (grad_output, self, target, weight, logsumexp) if t is not None]
        if (grad_output.dtype != self.dtype or tuple(grad_output.shape) != grad_shape
                or logsumexp.dtype != self.dtype
                or tuple(logsumexp.shape) != tuple(self.shape[:-1])
                or not all(t.is_contiguous() for t in operands)):
            return None
        ok = native.LOSS_OK
        new_output = allocator([(tuple(self.shape), self.dtype, self.device)])
        size = self.dtype.itemsize  # (every floating operand's: checked above)

        def planned(grad_output: Any, self: Any, target: Any, weight: Any, reduction: int,
                    ignore_index: int, logsumexp: Any) -> Any:
            (grad_in,), (dst,) = new_output()
            # the operands' data_ptr(), written out (int64 targets: 8 bytes)
            if backward(code, rows, classes, red, ignore_index, dst,
                        grad_output._storage._ptr + grad_output._offset * size,
                        self._storage._ptr + self._offset * size,
                        target._storage._ptr + target._offset * 8,
                        weight._storage._ptr + weight._offset * size if weight is not None else 0,
                        logsumexp._storage._ptr + logsumexp._offset * size) != ok:
                return None  # the generic path
            return grad_in

        return planned

    @plannable(plan_backward, native=True)
    def cross_entropy_backward(grad_output: Any, self: Any, target: Any, weight: Any,
                               reduction: int, ignore_index: int, logsumexp: Any) -> Any:
        args = (grad_output, self, target, weight, reduction, ignore_index, logsumexp)
        case = layout(self, target, weight, reduction, ignore_index)
        if case is not None:
            grad_shape = tuple(target.shape) if case[3] == 0 else ()
            if (grad_output.dtype != self.dtype or tuple(grad_output.shape) != grad_shape
                    or logsumexp.dtype != self.dtype
                    or tuple(logsumexp.shape) != tuple(self.shape[:-1])):
                case = None
        if case is None:
            return composite("aten::_cross_entropy_backward")(*args)
        code, rows, classes, red = case
        grad_in = new_tensor(tuple(self.shape), self.dtype, self.device)
        operands = (grad_output.contiguous(), self.contiguous(), target.contiguous(),
                    weight.contiguous() if weight is not None else None,
                    logsumexp.contiguous())
        ptrs = addresses(grad_in, *operands)
        if ptrs is None or native.cross_entropy_backward(
                code, rows, classes, red, ignore_index, *ptrs) != native.LOSS_OK:
            return composite("aten::_cross_entropy_backward")(*args)
        return grad_in

    cross_entropy_forward.__name__ = "_cross_entropy_forward_cpu"
    cross_entropy_forward.__qualname__ = "_cross_entropy_forward_cpu"
    cross_entropy_backward.__name__ = "_cross_entropy_backward_cpu"
    cross_entropy_backward.__qualname__ = "_cross_entropy_backward_cpu"
    return {
        "aten::_cross_entropy_forward": cross_entropy_forward,
        "aten::_cross_entropy_backward": cross_entropy_backward,
    }
