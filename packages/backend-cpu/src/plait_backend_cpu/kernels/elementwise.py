"""Wrappers of the native elementwise kernels: binary and unary arithmetic, ``fill_``, ``copy_``.

Each wrapper has the signature of its primitive's schema in ``torch._prims`` (output first,
preallocated by core; inputs of the output's dtype, already broadcast with stride 0), checks
the call at the boundary, and passes addresses, shapes and element strides to ``_C``. Cases the
native code leaves out run the core's reference kernel with the same arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import (
    UNKNOWN_DTYPE,
    Kernel,
    dtype_error,
    null_pointer_error,
    shape_error,
)

# Python ints that fill_ may write natively; PyTorch refuses ones that overflow the dtype, and
# the reference kernel raises that error.
_INT_RANGES = {
    "uint8": (0, 2**8 - 1),
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """The kernel wrappers, keyed by primitive name, ready for ``lib.impl(name, kernel)``.

    :param native: the ``_C`` extension.
    :param dtype_codes: dtype object -> ``_C`` dtype code (the index in ``_C.DTYPES``).
    :param reference: primitive name -> the reference kernel with the same signature, looked
        up when a case is left to it.
    :returns: one wrapper per name in ``native.BINARY_OPS`` (``div`` leaves its rounding
        modes to the reference) and ``native.UNARY_OPS``, and ``fill_``, ``copy_``, ``sum``.
    """
    float_codes = frozenset(
        code for code, name in enumerate(native.DTYPES) if name.startswith("float")
    )
    bool_code = native.DTYPES.index("bool")
    int_ranges = {native.DTYPES.index(name): bounds for name, bounds in _INT_RANGES.items()}
    unknown = UNKNOWN_DTYPE

    def binary(name: str, native_op: Callable[..., bool]) -> Kernel:
        # The hot path of every `a + b`: checks are inlined and errors built only on failure.
        def kernel(out: Any, a: Any, b: Any) -> None:
            shape = out.shape
            if a.shape != shape or b.shape != shape:
                raise shape_error(name, out, (a, b))
            dtype = out.dtype
            if a.dtype != dtype or b.dtype != dtype:
                raise dtype_error(name, out, (a, b))
            out_ptr, a_ptr, b_ptr = out.data_ptr(), a.data_ptr(), b.data_ptr()
            if not (out_ptr and a_ptr and b_ptr) and out.numel():
                raise null_pointer_error(name)
            if not native_op(
                dtype_codes.get(dtype, unknown),
                shape,
                out_ptr,
                out.stride(),
                a_ptr,
                a.stride(),
                b_ptr,
                b.stride(),
            ):
                reference(name)(out, a, b)

        kernel.__name__ = kernel.__qualname__ = name
        return kernel

    def unary(name: str, native_op: Callable[..., bool]) -> Kernel:
        def kernel(out: Any, a: Any) -> None:
            shape = out.shape
            if a.shape != shape:
                raise shape_error(name, out, (a,))
            dtype = out.dtype
            if a.dtype != dtype:
                raise dtype_error(name, out, (a,))
            out_ptr, a_ptr = out.data_ptr(), a.data_ptr()
            if not (out_ptr and a_ptr) and out.numel():
                raise null_pointer_error(name)
            if not native_op(
                dtype_codes.get(dtype, unknown), shape, out_ptr, out.stride(), a_ptr, a.stride()
            ):
                reference(name)(out, a)

        kernel.__name__ = kernel.__qualname__ = name
        return kernel

    def div_kernel() -> Kernel:
        # _C.div is true division; the rounding modes are the reference kernel's.
        true_div = binary("div", native.div)

        def div(out: Any, a: Any, b: Any, rounding_mode: str | None = None) -> None:
            if rounding_mode is None:
                true_div(out, a, b)
            else:
                reference("div")(out, a, b, rounding_mode)

        return div

    def fill_(out: Any, value: Any) -> None:
        shape = out.shape
        out_ptr = out.data_ptr()
        if not out_ptr and out.numel():
            raise null_pointer_error("fill_")
        code = dtype_codes.get(out.dtype, unknown)
        if hasattr(value, "item"):  # a 0-d tensor (or numpy scalar) in place of a Scalar
            value = value.item()
        done = False
        if isinstance(value, (bool, int, float)):
            try:
                if code in float_codes:
                    done = native.fill_float(code, shape, out_ptr, out.stride(), float(value))
                elif code == bool_code:
                    done = native.fill_int(code, shape, out_ptr, out.stride(), 1 if value else 0)
                elif code in int_ranges:
                    low, high = int_ranges[code]
                    if isinstance(value, float) or low <= value <= high:
                        # int() truncates a float toward zero, as Tensor.fill_ does.
                        done = native.fill_int(code, shape, out_ptr, out.stride(), int(value))
            except (OverflowError, ValueError, TypeError):
                done = False  # NaN or inf into an integer, or beyond int64: the reference's call
        if not done:
            reference("fill_")(out, value)

    def copy_(out: Any, src: Any) -> None:
        shape = out.shape
        if src.shape != shape:
            raise shape_error("copy_", out, (src,))
        out_ptr, src_ptr = out.data_ptr(), src.data_ptr()
        if not (out_ptr and src_ptr) and out.numel():
            raise null_pointer_error("copy_")
        out_code = dtype_codes.get(out.dtype, unknown)
        src_code = dtype_codes.get(src.dtype, unknown)
        if not native.copy(out_code, src_code, shape, out_ptr, out.stride(), src_ptr, src.stride()):
            reference("copy_")(out, src)

    kernels: dict[str, Kernel] = {
        name: binary(name, getattr(native, name)) for name in native.BINARY_OPS
    }
    kernels["div"] = div_kernel()
    kernels.update({name: unary(name, getattr(native, name)) for name in native.UNARY_OPS})
    kernels.update({"fill_": fill_, "copy_": copy_})
    return kernels
