"""Wrappers of the native sort kernels: sort topk searchsorted."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import UNKNOWN_DTYPE, Kernel, layout_error
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
        native_ok = (
            len(shape) > 0
            and outputs_ok(values, indices, a)
            and native.sort(dtype_codes.get(a.dtype, unknown), shape, v_ptr, values.stride(),
                            i_ptr, indices.stride(), a_ptr, a.stride(), d, bool(descending))
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
        native_ok = (
            len(shape) > 0
            and outputs_ok(values, indices, a)
            and native.topk(dtype_codes.get(a.dtype, unknown), shape, v_ptr, values.stride(),
                            i_ptr, indices.stride(), a_ptr, a.stride(), k, d, bool(largest))
        )
        if not native_ok:
            reference("topk")(values, indices, a, k, dim, largest, sorted)

    def searchsorted(out: Any, sorted_sequence: Any, values: Any, right: bool = False) -> None:
        seq_shape, values_shape = tuple(sorted_sequence.shape), tuple(values.shape)
        if tuple(out.shape) != values_shape:
            raise layout_error("searchsorted", f"output shape {tuple(out.shape)} is not the "
                               f"values' shape {values_shape}")
        out_ptr, seq_ptr, values_ptr = pointers("searchsorted", out, sorted_sequence, values)
        native_ok = (
            len(seq_shape) == len(values_shape) > 0
            and seq_shape[:-1] == values_shape[:-1]
            and sorted_sequence.dtype == values.dtype
            and dtype_codes.get(out.dtype, unknown) == int64
            and native.searchsorted(dtype_codes.get(values.dtype, unknown), seq_shape, seq_ptr,
                                    sorted_sequence.stride(), values_shape, values_ptr,
                                    values.stride(), out_ptr, out.stride(), bool(right))
        )
        if not native_ok:
            reference("searchsorted")(out, sorted_sequence, values, right)

    return {"sort": sort, "topk": topk, "searchsorted": searchsorted}
