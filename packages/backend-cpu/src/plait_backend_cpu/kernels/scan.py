"""Wrappers of the native scan kernels: cumsum cumprod cummax cummin."""

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
    """``cumsum cumprod`` (``out, a, dim``) and ``cummax cummin``
    (``values, indices, a, dim``)."""
    unknown = UNKNOWN_DTYPE
    int64 = native.DTYPES.index("int64")

    def running(name: str) -> Kernel:
        native_fn = getattr(native, name)

        def kernel(out: Any, a: Any, dim: int) -> None:
            shape = tuple(a.shape)
            if tuple(out.shape) != shape:
                raise layout_error(name, f"output shape {tuple(out.shape)} is not {shape}")
            d = wrap_dim(name, dim, len(shape))
            out_ptr, a_ptr = pointers(name, out, a)
            code = dtype_codes.get(a.dtype, unknown)
            native_ok = (
                len(shape) > 0
                and out.dtype == a.dtype
                and native_fn(code, shape, out_ptr, out.stride(), a_ptr, a.stride(), d)
            )
            if not native_ok:
                reference(name)(out, a, dim)

        kernel.__name__ = kernel.__qualname__ = name
        return kernel

    def running_extreme(name: str) -> Kernel:
        native_fn = getattr(native, name)

        def kernel(values: Any, indices: Any, a: Any, dim: int) -> None:
            shape = tuple(a.shape)
            for t in (values, indices):
                if tuple(t.shape) != shape:
                    raise layout_error(name, f"output shape {tuple(t.shape)} is not {shape}")
            d = wrap_dim(name, dim, len(shape))
            v_ptr, i_ptr, a_ptr = pointers(name, values, indices, a)
            native_ok = (
                len(shape) > 0
                and values.dtype == a.dtype
                and dtype_codes.get(indices.dtype, unknown) == int64
                and native_fn(dtype_codes.get(a.dtype, unknown), shape, v_ptr, values.stride(),
                              i_ptr, indices.stride(), a_ptr, a.stride(), d)
            )
            if not native_ok:
                reference(name)(values, indices, a, dim)

        kernel.__name__ = kernel.__qualname__ = name
        return kernel

    kernels = {name: running(name) for name in ("cumsum", "cumprod")}
    kernels.update({name: running_extreme(name) for name in ("cummax", "cummin")})
    return kernels
