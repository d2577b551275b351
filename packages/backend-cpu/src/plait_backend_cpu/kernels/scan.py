"""Wrappers of the native scan kernels: cumsum cumprod cummax cummin; and ``aten::cumsum`` and
``aten::cumprod`` planned on them (a floating input without a ``dtype``: one allocation and
one native call, where the composite checks and dispatches the primitive each call).

Every dtype (bool sums and products are running "or" and "and", float16/bfloat16 accumulate
in float32), any strides, stride-0 inputs, zero-size and 0-d tensors run natively; the
fallbacks left to core's reference kernel are said at each one.
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
            (shape, a_strides), out_strides = as_1d(a), as_1d(out)[1]
            # Left to the reference (never from core, whose outputs are fresh and of the
            # input's dtype): an output of another dtype (a converting store), an output with
            # repeated elements (stride 0) or sharing memory with the input, more than 64
            # dimensions.
            native_ok = out.dtype == a.dtype and native_fn(
                code, shape, out_ptr, out_strides, a_ptr, a_strides, d
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
            (shape, a_strides), v_strides, i_strides = as_1d(a), as_1d(values)[1], as_1d(indices)[1]
            # Left to the reference (never from core): values of another dtype than the
            # input, indices that are not int64, outputs with repeated elements (stride 0)
            # or sharing memory with the input or each other, more than 64 dimensions.
            native_ok = (
                values.dtype == a.dtype
                and dtype_codes.get(indices.dtype, unknown) == int64
                and native_fn(dtype_codes.get(a.dtype, unknown), shape, v_ptr, v_strides,
                              i_ptr, i_strides, a_ptr, a_strides, d)
            )
            if not native_ok:
                reference(name)(values, indices, a, dim)

        kernel.__name__ = kernel.__qualname__ = name
        return kernel

    from torch.backends.contract import allocator

    def plan_running(name: str) -> Callable[..., Kernel | None]:
        native_fn = getattr(native, name)

        def planner(a: Any, dim: int, *, dtype: Any = None) -> Kernel | None:
            """The planned ``aten::<name>`` of a floating CPU input with dims and elements."""
            code = dtype_codes.get(a.dtype, unknown)
            if (code == unknown or dtype is not None or not a.dtype.is_floating_point
                    or a.device.type != "cpu" or not a.ndim or not a.numel()):
                return None
            shape, a_strides = tuple(a.shape), tuple(a.stride())
            out_strides = contiguous_strides(shape)
            d = dim % a.ndim
            new_out = allocator([(shape, a.dtype, a.device)])

            def planned(a: Any, *args: Any, **kwargs: Any) -> Any:
                (out,), (dst,) = new_out()
                if not native_fn(code, shape, dst, out_strides, a.data_ptr(), a_strides, d):
                    return None
                return out
            return planned

        return planner

    kernels = {name: running(name) for name in ("cumsum", "cumprod")}
    kernels.update({name: running_extreme(name) for name in ("cummax", "cummin")})
    kernels.update({f"aten::{name}": planned_composite(f"aten::{name}", plan_running(name))
                    for name in ("cumsum", "cumprod")})
    return kernels
