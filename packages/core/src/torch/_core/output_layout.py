"""The memory layout of an elementwise op's new output, as PyTorch chooses it.

An elementwise result follows its inputs' layout: a transposed input gives a transposed
result, a channels-last batch a channels-last one. The rule, in three steps:

1. Inputs of the output's shape that are all contiguous give a contiguous result.
2. Inputs of the output's shape that share one non-overlapping, dense stride tuple give a
   result of exactly those strides (size-1 dims included). An empty result is contiguous.
3. Otherwise the output's dims are ordered from fastest to slowest by the inputs' strides,
   seen broadcast to the output's shape (a broadcast dim has stride 0 and says nothing): the
   first input that orders two dims decides, a later one only breaks the first's ties, and of
   two dims of one stride the smaller one goes first. The result is dense in that order, so
   inputs that order nothing give a contiguous result.

In-place ops and ``out=`` keep the tensor they write to; only new outputs come through here.
"""

from __future__ import annotations

from typing import Any

from . import dispatch as _dispatch, dtype as _dtype, upcalls
from .alloc import new_tensor
from .device import device as _device
from .tensor import Tensor, contiguous_strides


def _dense(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether ``strides`` tile one block with no gap or overlap (dims of size 1 aside)."""
    expected = 1
    for d in sorted((d for d in range(len(shape)) if shape[d] != 1), key=strides.__getitem__):
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """``is_contiguous()``: row-major strides, a size-1 dim's stride being free."""
    expected = 1
    for d in range(len(shape) - 1, -1, -1):
        size = shape[d]
        if size != 1:
            if strides[d] != expected:
                return False
            expected *= size
    return True


def _broadcast_strides(t: Tensor, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``t``'s strides over the output's dims: 0 where ``t`` is broadcast (missing or size 1)."""
    lead = len(shape) - len(t._shape)
    return (0,) * lead + tuple(
        0 if size == 1 and shape[lead + j] != 1 else stride
        for j, (size, stride) in enumerate(zip(t._shape, t._stride)))


def _order(shape: tuple[int, ...], strides: list[tuple[int, ...]]) -> list[int]:
    """The output's dims from fastest to slowest (step 3 of the module's rule)."""

    def verdict(fast: int, slow: int) -> int:
        # > 0: `fast` must move behind `slow`; < 0: it stays before; 0: no input says.
        for st in strides:
            a, b = st[fast], st[slow]
            if a == 0 or b == 0:
                continue
            if a != b:
                return 1 if a > b else -1
            if shape[fast] > shape[slow]:
                return 1
        return 0

    # Insertion sort from row-major order (last dim fastest). The verdict is not a total order
    # (inputs may disagree), so the sort's exact steps are part of the rule: a new dim moves
    # toward the fast end past every dim it must pass, stops at the first that it must not, and
    # is compared with the ones beyond a "no verdict".
    order = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(order)):
        pos = i
        for k in range(i - 1, -1, -1):
            v = verdict(order[k], order[pos])
            if v > 0:
                order[k], order[pos] = order[pos], order[k]
                pos = k
            elif v < 0:
                break
    return order


def elementwise_strides(shape: tuple[int, ...], tensors: list[Tensor]) -> tuple[int, ...] | None:
    """The strides of a new elementwise output of ``shape`` computed from ``tensors``, or None
    when they are contiguous ones."""
    ndim = len(shape)
    if ndim < 2 or 0 in shape:  # an empty result is contiguous, whatever its inputs
        return None
    for t in tensors:
        for v in (*t._shape, *t._stride):
            if v.__class__ is not int:
                return None  # symbolic sizes: their order is unknown, keep row-major
    if all(tuple(t._shape) == tuple(shape) for t in tensors):
        first = tuple(tensors[0]._stride)
        if all(_contiguous(shape, t._stride) for t in tensors):
            return None
        if all(tuple(t._stride) == first for t in tensors[1:]) and _dense(shape, first):
            return first
    order = _order(shape, [_broadcast_strides(t, shape) for t in tensors if t._shape])
    strides = [0] * ndim
    step = 1
    for d in order:
        strides[d] = step
        step *= shape[d]
    result = tuple(strides)
    return None if result == contiguous_strides(shape) else result


def new_elementwise(shape: tuple[int, ...], dt: _dtype.dtype, dev: _device,
                    tensors: list[Tensor]) -> Tensor:
    """A new output of an elementwise op on ``tensors``, laid out as PyTorch lays it out."""
    strides = elementwise_strides(shape, tensors)
    if strides is None:
        return new_tensor(shape, dt, dev)
    # Through the operator, so a dispatch mode (fake tensors) sees the allocation.
    return _empty_strided(shape, strides, dtype=dt, device=dev)


def follow_inputs(result: Tensor, tensors: list[Tensor]) -> Tensor:
    """``result`` of a composite (several ops) in the layout that one elementwise kernel over
    ``tensors`` gives, as PyTorch's fused kernel does: a copy only where the composite's
    steps ordered it otherwise."""
    shape = tuple(result._shape)
    if tuple(result._stride) == (elementwise_strides(shape, tensors) or contiguous_strides(shape)):
        return result
    out = new_elementwise(shape, result._dtype, result._device, tensors)
    upcalls.copy_(out, result)
    return out


class _EmptyStrided:
    """``aten::empty_strided``, resolved on first use (the op library registers it later)."""

    op: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Tensor:
        op = self.op
        if op is None:
            op = self.op = _dispatch.get("aten::empty_strided")
        return op(*args, **kwargs)


_empty_strided = _EmptyStrided()
