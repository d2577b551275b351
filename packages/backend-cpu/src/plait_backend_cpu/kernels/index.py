"""Wrappers of the native indexing kernels: gather scatter_ nonzero."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import UNKNOWN_DTYPE, Kernel, layout_error
from .reduce import pointers, wrap_dim

# scatter_'s reduce argument -> _C.scatter's code; "mean" stays with the reference kernel.
_SCATTER_REDUCE = {"none": 0, "sum": 1, "prod": 2, "amax": 3, "amin": 4}


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """``gather``, ``scatter_`` and ``nonzero`` (which returns its output)."""
    unknown = UNKNOWN_DTYPE
    int64 = native.DTYPES.index("int64")

    def gather(out: Any, a: Any, dim: int, index: Any) -> None:
        shape = tuple(index.shape)
        if tuple(out.shape) != shape:
            raise layout_error("gather", f"output shape {tuple(out.shape)} is not the index "
                               f"shape {shape}")
        d = wrap_dim("gather", dim, len(shape))
        out_ptr, a_ptr, index_ptr = pointers("gather", out, a, index)
        native_ok = (
            len(shape) > 0
            and out.dtype == a.dtype
            and dtype_codes.get(index.dtype, unknown) == int64
            and native.gather(dtype_codes.get(a.dtype, unknown), shape, out_ptr, out.stride(),
                              tuple(a.shape), a_ptr, a.stride(), d, index_ptr, index.stride())
        )
        if not native_ok:
            reference("gather")(out, a, dim, index)

    def scatter_(out: Any, dim: int, index: Any, src: Any, reduce: str = "none",
                 include_self: bool = True) -> None:
        shape = tuple(index.shape)
        d = wrap_dim("scatter_", dim, len(shape))
        code = _SCATTER_REDUCE.get(reduce)
        src_shape = tuple(src.shape)
        native_ok = (
            code is not None
            and len(shape) > 0
            and len(src_shape) == len(shape)
            and all(s >= i for s, i in zip(src_shape, shape))  # src may be larger than index
            and out.dtype == src.dtype
            and dtype_codes.get(index.dtype, unknown) == int64
        )
        if native_ok:
            out_ptr, index_ptr, src_ptr = pointers("scatter_", out, index, src)
            native_ok = native.scatter(
                dtype_codes.get(out.dtype, unknown), tuple(out.shape), out_ptr, out.stride(), d,
                shape, index_ptr, index.stride(), src_ptr, src.stride(), code,
                bool(include_self),
            )
        if not native_ok:
            reference("scatter_")(out, dim, index, src, reduce, include_self)

    def nonzero(a: Any) -> Any:
        shape = tuple(a.shape)
        (a_ptr,) = pointers("nonzero", a)
        code = dtype_codes.get(a.dtype, unknown)
        count = native.count_nonzero(code, shape, a_ptr, a.stride())
        if count < 0:
            return reference("nonzero")(a)
        # core's allocator, imported late: the backend loads before core has finished.
        from torch import _dtype
        from torch._alloc import new_tensor

        # PyTorch's layout: (n, ndim) with each dimension's coordinates contiguous.
        out = new_tensor((len(shape), count), _dtype.int64, a._device)
        if count and len(shape):
            if not native.nonzero(code, shape, a_ptr, a.stride(), count, out.data_ptr(), 1,
                                  count):
                return reference("nonzero")(a)
        return out.t()

    return {"gather": gather, "scatter_": scatter_, "nonzero": nonzero}
