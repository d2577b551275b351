"""Wrappers of the native reduction kernels."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import UNKNOWN_DTYPE, Kernel, layout_error, null_pointer_error

# _C's reduce_mask is a 64-bit mask, one bit per dimension.
_MAX_REDUCE_DIMS = 64


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """``sum``."""
    unknown = UNKNOWN_DTYPE

    def sum_(out: Any, a: Any, dims: Any) -> None:
        shape = tuple(a.shape)
        out_shape = tuple(out.shape)
        ndim = len(shape)
        if len(out_shape) != ndim:
            raise layout_error(
                "sum", f"the output has {len(out_shape)} dimensions, the input {ndim}"
            )
        mask = 0
        bound = max(ndim, 1)  # a 0-d tensor accepts dimension 0 and -1, like PyTorch
        for d in dims:
            if not -bound <= d < bound:
                raise IndexError(
                    f"prims.sum (plait-backend-cpu): dimension {d} out of range for a "
                    f"{ndim}-d input"
                )
            if ndim:
                mask |= 1 << (d % ndim)
        for d in range(ndim):
            if out_shape[d] == shape[d]:
                continue
            if out_shape[d] != 1:
                raise layout_error(
                    "sum",
                    f"output shape {out_shape} is not input shape {shape} with the "
                    "reduced dimensions set to 1",
                )
            mask |= 1 << d
        for d in range(ndim):
            if mask >> d & 1 and out_shape[d] != 1:
                raise layout_error("sum", f"reduced dimension {d} has size {out_shape[d]}")
        out_ptr, a_ptr = out.data_ptr(), a.data_ptr()
        if (not out_ptr and out.numel()) or (not a_ptr and a.numel()):
            raise null_pointer_error("sum")
        out_code = dtype_codes.get(out.dtype, unknown)
        a_code = dtype_codes.get(a.dtype, unknown)
        if ndim > _MAX_REDUCE_DIMS or not native.sum(
            out_code, a_code, shape, out_ptr, out.stride(), a_ptr, a.stride(), mask
        ):
            reference("sum")(out, a, dims)

    sum_.__name__ = sum_.__qualname__ = "sum"
    return {"sum": sum_}
