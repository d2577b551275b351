"""Wrappers of the native sort kernels: sort topk searchsorted; and ``aten::topk`` planned on
its kernel (one allocation and one native call per call of a signature).

Every dtype, any strides, stride-0 inputs, zero-size and 0-d tensors run natively (a 0-d
tensor sorts as a 1-element vector; a 1-d sorted sequence serves every row of the values);
the fallbacks left to core's reference kernel are said at each one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import UNKNOWN_DTYPE, Kernel, contiguous_strides, layout_error, planned_composite
from .index import as_1d
from .reduce import pointers, wrap_dim


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """``sort``, ``topk`` (``values, indices, a, ...``) and ``searchsorted``."""
    unknown = UNKNOWN_DTYPE
    int64 = native.DTYPES.index("int64")

    def outputs_ok(values: Any, indices: Any, a: Any) -> bool:
        # Left to the reference (never from core, whose outputs are fresh): values of another
        # dtype than the input, indices that are not int64; and, in the kernels, outputs with
        # repeated elements (stride 0) or sharing memory with the input or each other, more
        # than 64 dimensions.
        return values.dtype == a.dtype and dtype_codes.get(indices.dtype, unknown) == int64

    def sort(values: Any, indices: Any, a: Any, dim: int, descending: bool = False,
             stable: bool = True) -> None:
        shape = tuple(a.shape)
        for t in (values, indices):
            if tuple(t.shape) != shape:
                raise layout_error("sort", f"output shape {tuple(t.shape)} is not {shape}")
        d = wrap_dim("sort", dim, len(shape))
        v_ptr, i_ptr, a_ptr = pointers("sort", values, indices, a)
        # Always stable: a stable order is a valid unstable one too.
        (shape, a_strides), v_strides, i_strides = as_1d(a), as_1d(values)[1], as_1d(indices)[1]
        native_ok = outputs_ok(values, indices, a) and native.sort(
            dtype_codes.get(a.dtype, unknown), shape, v_ptr, v_strides, i_ptr, i_strides,
            a_ptr, a_strides, d, bool(descending)
        )
        if not native_ok:
            reference("sort")(values, indices, a, dim, descending, stable)

    def topk(values: Any, indices: Any, a: Any, k: int, dim: int, largest: bool = True,
             sorted: bool = True) -> None:
        shape = tuple(a.shape)
        d = wrap_dim("topk", dim, len(shape))
        if shape and not 0 <= k <= shape[d]:
            raise RuntimeError("prims.topk (plait-backend-cpu): selected index k out of range")
        expected = tuple(k if i == d else s for i, s in enumerate(shape))
        for t in (values, indices):
            if tuple(t.shape) != expected:
                raise layout_error("topk", f"output shape {tuple(t.shape)} is not {expected}")
        v_ptr, i_ptr, a_ptr = pointers("topk", values, indices, a)
        # The results come sorted whatever `sorted` says, as the reference's do.
        native_k = k if shape else 1  # a 0-d input gives its value for k = 0 or 1, as PyTorch
        (shape, a_strides), v_strides, i_strides = as_1d(a), as_1d(values)[1], as_1d(indices)[1]
        native_ok = outputs_ok(values, indices, a) and native.topk(
            dtype_codes.get(a.dtype, unknown), shape, v_ptr, v_strides, i_ptr, i_strides, a_ptr,
            a_strides, native_k, d, bool(largest)
        )
        if not native_ok:
            reference("topk")(values, indices, a, k, dim, largest, sorted)

    def searchsorted(out: Any, sorted_sequence: Any, values: Any, right: bool = False) -> None:
        seq_shape, values_shape = tuple(sorted_sequence.shape), tuple(values.shape)
        if tuple(out.shape) != values_shape:
            raise layout_error("searchsorted", f"output shape {tuple(out.shape)} is not the "
                               f"values' shape {values_shape}")
        out_ptr, seq_ptr, values_ptr = pointers("searchsorted", out, sorted_sequence, values)
        values_shape, values_strides = as_1d(values)
        out_strides = as_1d(out)[1]
        seq_strides = tuple(sorted_sequence.stride())
        if len(seq_shape) == 1:
            # One sequence for every row of the values: repeat it with stride 0.
            seq_shape = values_shape[:-1] + seq_shape
            seq_strides = (0,) * (len(values_shape) - 1) + seq_strides
        elif len(seq_shape) == len(values_shape) and all(
            s in (1, v) for s, v in zip(seq_shape[:-1], values_shape[:-1])
        ):
            # Size-1 leading dimensions of the sequence broadcast (as the reference's do).
            seq_strides = tuple(
                0 if s != v else st for s, v, st in zip(seq_shape, values_shape, seq_strides)
            )[:-1] + seq_strides[-1:]
            seq_shape = values_shape[:-1] + seq_shape[-1:]
        # Left to the reference: a 0-d sequence (core raises PyTorch's error first) and, never
        # from core (it promotes and checks first), a sequence and values of different dtypes
        # or leading dimensions, an output that is not int64, an output with repeated elements
        # (stride 0) or sharing memory with an input, more than 64 dimensions.
        native_ok = (
            len(seq_shape) == len(values_shape)
            and seq_shape[:-1] == values_shape[:-1]
            and sorted_sequence.dtype == values.dtype
            and dtype_codes.get(out.dtype, unknown) == int64
            and native.searchsorted(dtype_codes.get(values.dtype, unknown), seq_shape, seq_ptr,
                                    seq_strides, values_shape, values_ptr, values_strides,
                                    out_ptr, out_strides, bool(right))
        )
        if not native_ok:
            reference("searchsorted")(out, sorted_sequence, values, right)

    from torch.backends.contract import allocator, dtype

    int64_dtype = dtype("int64")

    def plan_topk(a: Any, k: int, dim: int = -1, largest: bool = True,
                  sorted: bool = True) -> Kernel | None:
        """The planned ``aten::topk`` of a CPU input with dims and elements (the first call
        checked ``k``): values and indices of the native kernel, which sorts them."""
        code = dtype_codes.get(a.dtype, unknown)
        if code == unknown or a.device.type != "cpu" or not a.ndim or not a.numel() or not k:
            return None
        d = dim % a.ndim
        in_shape, a_strides = tuple(a.shape), tuple(a.stride())
        shape = tuple(k if i == d else n for i, n in enumerate(in_shape))
        strides = contiguous_strides(shape)
        new_outs = allocator([(shape, a.dtype, a.device), (shape, int64_dtype, a.device)])
        descend = bool(largest)

        def planned(a: Any, *args: Any, **kwargs: Any) -> Any:
            outs, (v_ptr, i_ptr) = new_outs()
            if not native.topk(code, in_shape, v_ptr, strides, i_ptr, strides, a.data_ptr(),
                               a_strides, k, d, descend):
                return None
            return outs
        return planned

    return {"sort": sort, "topk": topk, "searchsorted": searchsorted,
            "aten::topk": planned_composite("aten::topk", plan_topk)}
