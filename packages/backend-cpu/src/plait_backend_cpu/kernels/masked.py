"""The aten ops that select between an input and a constant through a mask, planned on the
native ``where``: ``tril``, ``triu`` and ``masked_fill`` with a number.

Core's composites build their operands on every call (``tril`` its triangle mask from two
``arange`` and a comparison, ``masked_fill`` the 0-d fill value) and dispatch ``where``. A
signature fixes those operands (the triangle's shape and diagonal, the fill value and dtype),
so a planner builds them once, with core's own composites, and its kernel is one allocation and
one native ``where`` reading the call's tensors in place. Every first call, and every case off
that path (a dtype ``_C`` does not know, a device other than the CPU, a 0-d tensor value of
``masked_fill``, empty tensors), runs core's composite.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import UNKNOWN_DTYPE, Kernel, composite, contiguous_strides, planned_composite


def _broadcast_strides(shape: tuple[int, ...], strides: tuple[int, ...],
                       full: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a tensor of ``shape`` and ``strides`` broadcast to ``full`` (0 along
    every dim it is expanded in)."""
    lead = len(full) - len(shape)
    return (0,) * lead + tuple(st if n == target else 0
                               for n, target, st in zip(shape, full[lead:], strides))


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """``aten::tril``, ``aten::triu`` and ``aten::masked_fill.Scalar``."""
    import torch
    from torch.backends.contract import allocator

    unknown = UNKNOWN_DTYPE
    native_where = native.where
    bool_code = dtype_codes.get(torch.bool, unknown)

    def code_of(*tensors: Any) -> int:
        """The first tensor's ``_C`` dtype code when every tensor is a CPU one with elements
        (else ``unknown``)."""
        for t in tensors:
            if t.device.type != "cpu" or not t.numel():
                return unknown
        return dtype_codes.get(tensors[0].dtype, unknown)

    def where_plan(code: int, shape: tuple[int, ...], like: Any, cond: Any,
                   cond_strides: tuple[int, ...], picked: Any | None,
                   picked_strides: tuple[int, ...], kept_strides: tuple[int, ...],
                   cond_is_arg: bool) -> Callable[[Any, Any], Any]:
        """``run(kept, mask)``: a new contiguous ``shape`` tensor of ``like``'s dtype holding
        ``picked`` where the condition is True and ``kept`` elsewhere; the condition is
        ``mask`` (``cond_is_arg``) or the fixed tensor ``cond``; ``picked`` is fixed."""
        new_out = allocator([(shape, like.dtype, like.device)])
        out_strides = contiguous_strides(shape)
        fixed_cond = 0 if cond is None else cond.data_ptr()
        picked_ptr = picked.data_ptr()

        def run(kept: Any, mask: Any) -> Any:
            (out,), (dst,) = new_out()
            c = mask.data_ptr() if cond_is_arg else fixed_cond
            if not native_where(code, shape, dst, out_strides, c, cond_strides, picked_ptr,
                                picked_strides, kept.data_ptr(), kept_strides):
                return None  # the generic path
            return out

        run.operands = (cond, picked)  # type: ignore[attr-defined]  # (alive with the plan)
        return run

    def plan_triangle(lower: bool) -> Callable[..., Kernel | None]:
        # the complement of tril(k) is triu(k + 1), that of triu(k) is tril(k - 1)
        complement, shift = ("aten::triu", 1) if lower else ("aten::tril", -1)

        def planner(a: Any, diagonal: int = 0) -> Kernel | None:
            """``out = where(outside, 0, a)`` with the triangle's complement made once."""
            code = code_of(a)
            if code == unknown or a.ndim < 2:
                return None
            shape = tuple(a.shape)
            rows, cols = shape[-2:]
            # True where the composite writes zero (core's composite of the other triangle)
            outside = composite(complement)(torch.ones((rows, cols), dtype=torch.bool),
                                            int(diagonal) + shift)
            zero = torch.zeros((), dtype=a.dtype)
            run = where_plan(code, shape, a, outside, (0,) * (len(shape) - 2) + (cols, 1),
                             zero, (0,) * len(shape), tuple(a.stride()), False)

            def planned(a: Any, *args: Any, **kwargs: Any) -> Any:
                return run(a, None)

            return planned

        return planner

    def plan_masked_fill(a: Any, mask: Any, value: Any) -> Kernel | None:
        """``out = where(mask, value, a)`` broadcast, with ``value`` made once in ``a``'s
        dtype (as the composite converts it)."""
        code = code_of(a, mask)
        if (code == unknown or isinstance(value, torch.Tensor) or mask.dtype != torch.bool
                or bool_code == unknown):
            return None
        shape = tuple(torch.broadcast_shapes(a.shape, mask.shape))
        # the value as the composite converts it: its result of one masked element
        fill = composite("aten::masked_fill.Scalar")(
            torch.zeros((), dtype=a.dtype), torch.ones((), dtype=torch.bool), value)
        run = where_plan(code, shape, a, None,
                         _broadcast_strides(tuple(mask.shape), tuple(mask.stride()), shape),
                         fill, (0,) * len(shape),
                         _broadcast_strides(tuple(a.shape), tuple(a.stride()), shape), True)

        def planned(a: Any, mask: Any, value: Any) -> Any:
            return run(a, mask)

        return planned

    return {
        "aten::tril": planned_composite("aten::tril", plan_triangle(True)),
        "aten::triu": planned_composite("aten::triu", plan_triangle(False)),
        "aten::masked_fill.Scalar": planned_composite("aten::masked_fill.Scalar",
                                                      plan_masked_fill),
    }
