"""Wrappers of the fused ternary kernels: they override core's composite aten ops ``addcmul``,
``addcdiv`` and ``lerp.Tensor`` (whose weight is a tensor or a number) under the CPU key.

Operands of one floating dtype run natively: when each is contiguous with the output's shape
or a single element broadcast to it (a 0-d ``value``-like tensor), through the contiguous
kernels into a new contiguous output; otherwise (strided operands, other broadcasts) through
the strided kernels into an output laid out as PyTorch's. Both compute the same values, so a
result does not depend on its operands' layout. Anything else (integer or complex dtypes, mixed
dtypes, which the composite promotes or refuses; shapes that do not broadcast; a scalar that is
not a real number) runs the composite from core, which also raises PyTorch's errors.

The in-place forms (``aten::addcmul_``, ``aten::addcdiv_``, ``aten::lerp_.Tensor``) run the same
kernels with ``self`` as the output when the result has ``self``'s shape and dtype and no other
operand partly overlaps it (exact aliasing, ``x.addcmul_(x, y)``, is fine); anything else, an
inference tensor included, runs the composite (out of place, then ``copy_``), which raises
PyTorch's errors. Autograd and dispatch modes sit above these kernels: a call that records a
graph reaches them with grad off, as PyTorch's in-place kernels are reached.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

from ._common import Kernel, addresses, composite, floating_codes

# A Python int beyond this is not exact in the double the native call takes: PyTorch rounds
# it to the compute type directly, so such values keep the composite.
_EXACT_INT = 2**53


def _real(value: Any) -> float | None:
    """``value`` as the double the native kernels take, or None when it is not a real number
    the kernels can round as PyTorch does."""
    if isinstance(value, float):
        return value
    if isinstance(value, int) and -_EXACT_INT <= value <= _EXACT_INT:  # (bool included)
        return float(value)
    return None


# shape -> its row-major strides, for the contiguity test of the common call (bounded: cleared
# when full)
_ROW_MAJOR: dict[Any, tuple[int, ...]] = {}
_ROW_MAJOR_LIMIT = 1024
_FULL = {2: (1, 1), 3: (1, 1, 1)}


def _row_major(shape: Any) -> tuple[int, ...]:
    strides = _ROW_MAJOR.get(shape)
    if strides is None:
        if len(_ROW_MAJOR) >= _ROW_MAJOR_LIMIT:
            _ROW_MAJOR.clear()
        step, out = 1, []
        for size in reversed(shape):
            out.append(step)
            step *= max(size, 1)
        strides = _ROW_MAJOR[shape] = tuple(reversed(out))
    return strides


def _layout(operands: Sequence[Any],
            codes: Mapping[Any, int]) -> tuple[int, Any, Sequence[int]] | None:
    """``(dtype code, output shape, steps)`` when every operand has the dtype of the first (a
    floating one) and is contiguous with the output's shape (step 1) or a single element that
    broadcasts to it (step 0); None otherwise."""
    first = operands[0]
    dtype = first.dtype
    code = codes.get(dtype)
    if code is None:
        return None
    # the common call: one shape, row-major strides (a few attribute reads)
    shape = first.shape
    strides = first.stride()
    for t in operands:
        if t.shape != shape or t.stride() != strides or t.dtype != dtype:
            break
    else:
        if strides == _row_major(shape):
            return code, shape, _FULL[len(operands)]
    return _broadcast_layout(operands, code, dtype)


def _broadcast_layout(operands: Sequence[Any], code: int,
                      dtype: Any) -> tuple[int, Any, list[int]] | None:
    """:func:`_layout` for operands of several shapes or strides."""
    shapes = [t.shape for t in operands]
    # the output's shape: the longest of the operands with other than one element (all of
    # them must have it), else the longest one
    full = [s for s, t in zip(shapes, operands) if t.numel() != 1]
    shape = max(full or shapes, key=len)
    steps = []
    for t, s in zip(operands, shapes):
        if t.dtype != dtype:
            return None
        if s == shape:
            if not t.is_contiguous():
                return None
            steps.append(1)
        elif t.numel() == 1 and len(s) <= len(shape):
            steps.append(0)
        else:
            return None
    return code, shape, steps


def _broadcast(shapes: Sequence[Sequence[int]]) -> tuple[int, ...] | None:
    """The shape ``shapes`` broadcast to, or None when they do not broadcast."""
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        for i, size in enumerate(s, ndim - len(s)):
            if size != 1:
                if out[i] != 1 and out[i] != size:
                    return None
                out[i] = size
    return tuple(out)


def _expanded_strides(t: Any, shape: Sequence[int]) -> list[int]:
    """``t``'s element strides over the broadcast ``shape`` (0 where it broadcasts)."""
    lead = len(shape) - t.dim()
    sizes, strides = t.shape, t.stride()
    return [0] * lead + [0 if sizes[i] == 1 and shape[lead + i] != 1 else strides[i]
                         for i in range(t.dim())]


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """The fused ternary kernels, keyed by aten op (``"aten::addcmul"``, ``"aten::addcdiv"``,
    ``"aten::lerp.Tensor"`` and their in-place forms)."""
    from torch import Tensor
    from torch.backends import contract

    empty = contract.empty
    empty_elementwise = contract.empty_elementwise
    bump_version = contract.bump_version
    codes = floating_codes(native, dtype_codes)

    def launch_strided(entry: Callable[..., bool], operands: Sequence[Any],
                       scalar: float) -> Any:
        """The output of the strided kernel ``entry`` over ``operands`` of any layout (None
        where they do not take it)."""
        first = operands[0]
        dtype = first.dtype
        code = codes.get(dtype)
        if code is None or any(t.dtype != dtype for t in operands[1:]):
            return None
        shape = _broadcast([t.shape for t in operands])
        if shape is None:
            return None
        out = empty_elementwise(shape, dtype, first.device, operands)
        ptrs = addresses(*operands)
        if ptrs is None:
            return None
        strides = [_expanded_strides(t, shape) for t in operands]
        if len(operands) == 2:  # lerp's number weight
            ptrs.append(0)
            strides.append([0] * len(shape))
        if not entry(code, list(shape), out.data_ptr(), list(out.stride()), ptrs[0], strides[0],
                     ptrs[1], strides[1], ptrs[2], strides[2], scalar):
            return None
        return out

    def launch(entry: Callable[..., bool], strided: Callable[..., bool], operands: Sequence[Any],
               scalar: float) -> Any:
        """The output of ``entry`` over ``operands``, or of ``strided`` where their layout needs
        it (None where the native code declines)."""
        layout = _layout(operands, codes)
        if layout is None:
            return launch_strided(strided, operands, scalar)
        code, shape, steps = layout
        first = operands[0]
        out = empty(shape, first.dtype, first.device)
        n = out.numel()
        if not n:
            return out
        ptrs = addresses(*operands)
        if ptrs is None:
            return None
        a, b, c = (*ptrs, 0) if len(ptrs) == 2 else ptrs
        if not entry(code, n, out.data_ptr(), a, steps[0], b, steps[1], c,
                     steps[2] if len(steps) == 3 else 0, scalar):
            return None
        return out

    def write_into(entry: Callable[..., bool], strided: Callable[..., bool],
                   operands: Sequence[Any], scalar: float) -> bool:
        """Whether ``entry`` (or ``strided``) wrote the result over ``operands`` into
        ``operands[0]`` (False: nothing was written, the composite serves the call)."""
        self = operands[0]
        if self.is_inference():  # (the composite raises PyTorch's error outside inference mode)
            return False
        layout = _layout(operands, codes)
        if layout is None or layout[1] != self.shape or layout[2][0] != 1:
            return write_strided(strided, operands, scalar)
        code, _, steps = layout
        n = self.numel()
        if not n:
            return True
        ptrs = addresses(*operands)
        if ptrs is None:
            return False
        # another operand may be `self` itself, or lie apart from it: a partial overlap would
        # read elements another thread has already written
        start = ptrs[0]
        end = start + n * self.element_size()
        for t, p, step in zip(operands[1:], ptrs[1:], steps[1:]):
            if p == start and step == 1:
                continue
            if p < end and start < p + t.numel() * t.element_size():
                return False
        a, b, c = (*ptrs, 0) if len(ptrs) == 2 else ptrs
        if not entry(code, n, start, a, steps[0], b, steps[1], c,
                     steps[2] if len(steps) == 3 else 0, scalar):
            return False
        bump_version(self)
        return True

    def write_strided(strided: Callable[..., bool], operands: Sequence[Any],
                      scalar: float) -> bool:
        """:func:`write_into` for operands of any layout (the native code refuses overlaps)."""
        self = operands[0]
        dtype = self.dtype
        code = codes.get(dtype)
        if code is None or any(t.dtype != dtype for t in operands[1:]):
            return False
        shape = tuple(self.shape)
        if _broadcast([t.shape for t in operands]) != shape:
            return False
        ptrs = addresses(*operands)
        if ptrs is None:
            return False
        strides = [_expanded_strides(t, shape) for t in operands]
        if len(operands) == 2:  # lerp's number weight
            ptrs.append(0)
            strides.append([0] * len(shape))
        if not strided(code, list(shape), ptrs[0], strides[0], ptrs[0], strides[0], ptrs[1],
                       strides[1], ptrs[2], strides[2], scalar):
            return False
        bump_version(self)
        return True

    def pointwise(name: str, entry: Callable[..., bool],
                  strided: Callable[..., bool]) -> tuple[Kernel, Kernel]:
        qualname = f"aten::{name}"

        def kernel(self: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
            scalar = _real(value)
            if scalar is not None:
                out = launch(entry, strided, (self, tensor1, tensor2), scalar)
                if out is not None:
                    return out
            return composite(qualname)(self, tensor1, tensor2, value=value)

        def inplace(self: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
            scalar = _real(value)
            if scalar is not None and write_into(entry, strided, (self, tensor1, tensor2),
                                                 scalar):
                return self
            return composite(f"{qualname}_")(self, tensor1, tensor2, value=value)

        kernel.__name__ = kernel.__qualname__ = f"{name}_cpu"
        inplace.__name__ = inplace.__qualname__ = f"{name}__cpu"
        return kernel, inplace

    lerp_native, lerp_strided = native.lerp, native.lerp_strided

    def lerp(self: Any, end: Any, weight: Any) -> Any:
        if isinstance(weight, Tensor):
            out = launch(lerp_native, lerp_strided, (self, end, weight), 0.0)
        else:
            w = _real(weight)
            out = None if w is None else launch(lerp_native, lerp_strided, (self, end), w)
        if out is not None:
            return out
        return composite("aten::lerp.Tensor")(self, end, weight)

    def lerp_(self: Any, end: Any, weight: Any) -> Any:
        if isinstance(weight, Tensor):
            done = write_into(lerp_native, lerp_strided, (self, end, weight), 0.0)
        else:
            w = _real(weight)
            done = w is not None and write_into(lerp_native, lerp_strided, (self, end), w)
        if done:
            return self
        return composite("aten::lerp_.Tensor")(self, end, weight)

    lerp.__name__ = lerp.__qualname__ = "lerp_cpu"
    lerp_.__name__ = lerp_.__qualname__ = "lerp__cpu"
    addcmul, addcmul_ = pointwise("addcmul", native.addcmul, native.addcmul_strided)
    addcdiv, addcdiv_ = pointwise("addcdiv", native.addcdiv, native.addcdiv_strided)
    return {
        "aten::addcmul": addcmul,
        "aten::addcdiv": addcdiv,
        "aten::lerp.Tensor": lerp,
        "aten::addcmul_": addcmul_,
        "aten::addcdiv_": addcdiv_,
        "aten::lerp_.Tensor": lerp_,
    }
