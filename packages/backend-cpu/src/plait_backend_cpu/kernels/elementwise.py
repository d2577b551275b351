"""Wrappers of the native elementwise kernels: the unary, binary, compare and ternary groups
and the memory group (``copy_``, ``fill_``, ``arange_``).

Each wrapper has the signature of its primitive's schema (``torch.backends.contract.schema``:
output first, preallocated by core; inputs already broadcast with stride 0), checks the call at
the boundary, and passes addresses, shapes and element strides to ``_C``. Cases the native code
leaves out (complex dtypes, an output overlapping an input other than exactly, more than 64
dimensions, integer division by zero, ...) run the core's reference kernel with the same
arguments.

These wrappers are on the hot path of every small op: one generic closure per family, built
once; a call does a few attribute reads and comparisons and one native call.
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
_FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")

# Unary primitives whose output is bool whatever the input dtype.
_BOOL_OUT_UNARY = frozenset({"isnan", "logical_not"})

# _C binary kernels that are rounding modes of ``div`` rather than primitives.
_DIV_MODES = {"trunc": "div_trunc", "floor": "div_floor"}


def _type_error(name: str, message: str) -> TypeError:
    return TypeError(f"prims.{name} (plait-backend-cpu): {message}")


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
    :returns: one wrapper per name in ``native.UNARY_OPS``, ``native.BINARY_OPS`` (but the
        ``div`` rounding modes, which ``div``'s wrapper dispatches to) and
        ``native.COMPARE_OPS``, and ``where``, ``copy_``, ``fill_``, ``arange_``.
    """
    code_of = dtype_codes.get
    unknown = UNKNOWN_DTYPE
    bool_code = native.DTYPES.index("bool")
    float_codes = frozenset(native.DTYPES.index(n) for n in _FLOAT_NAMES if n in native.DTYPES)
    int_ranges = {native.DTYPES.index(name): bounds for name, bounds in _INT_RANGES.items()}

    def unary(name: str, native_op: Callable[..., bool]) -> Kernel:
        bool_out = name in _BOOL_OUT_UNARY

        def kernel(out: Any, a: Any) -> None:
            shape = out.shape
            if a.shape != shape:
                raise shape_error(name, out, (a,))
            out_code = code_of(out.dtype, unknown)
            if bool_out:
                if out_code != bool_code:
                    raise _type_error(name, f"the output has dtype {out.dtype}, not bool")
            elif a.dtype != out.dtype:
                raise dtype_error(name, out, (a,))
            out_ptr, a_ptr = out.data_ptr(), a.data_ptr()
            if not (out_ptr and a_ptr) and out.numel():
                raise null_pointer_error(name)
            if not native_op(
                out_code, code_of(a.dtype, unknown), shape, out_ptr, out.stride(), a_ptr,
                a.stride(),
            ):
                # Reaches here (issue 5 audit): complex dtypes; dtypes PyTorch has no kernel
                # for, which core promotes or refuses first (floating functions of integers
                # or bool, `abs`/`neg` of bool, `bitwise_not` of floats); an output with
                # repeated elements (stride 0) or partly overlapping its input; > 64 dims.
                reference(name)(out, a)

        kernel.__name__ = kernel.__qualname__ = name
        return kernel

    def binary(
        name: str,
        native_op: Callable[..., bool],
        compare: bool = False,
        fallback: Kernel | None = None,
    ) -> Kernel:
        # The hot path of every `a + b`: checks are inlined and errors built only on failure.
        # `fallback` replaces the reference kernel (div's rounding modes pass theirs on).
        def kernel(out: Any, a: Any, b: Any) -> None:
            shape = out.shape
            if a.shape != shape or b.shape != shape:
                raise shape_error(name, out, (a, b))
            dtype = a.dtype
            if compare:
                if b.dtype != dtype:
                    raise _type_error(
                        name, f"inputs of dtypes {a.dtype} and {b.dtype}; core must promote "
                        "them to one dtype first")
                if code_of(out.dtype, unknown) != bool_code:
                    raise _type_error(name, f"the output has dtype {out.dtype}, not bool")
            elif dtype != out.dtype or b.dtype != out.dtype:
                raise dtype_error(name, out, (a, b))
            out_ptr, a_ptr, b_ptr = out.data_ptr(), a.data_ptr(), b.data_ptr()
            if not (out_ptr and a_ptr and b_ptr) and out.numel():
                raise null_pointer_error(name)
            if not native_op(
                code_of(dtype, unknown), shape, out_ptr, out.stride(), a_ptr, a.stride(),
                b_ptr, b.stride(),
            ):
                # Reaches here (issue 5 audit): complex dtypes; dtypes PyTorch has no kernel
                # for, which core promotes or refuses first (integer true division, floating
                # functions of integers, `remainder`/`fmod`/rounded `div` of bool, bit
                # operations and shifts of floats); integer division or remainder by zero
                # (the reference raises PyTorch's error; nothing was written); an output with
                # repeated elements (stride 0) or partly overlapping an input; > 64 dims.
                (fallback or reference(name))(out, a, b)

        kernel.__name__ = kernel.__qualname__ = name
        return kernel

    def div_kernel() -> Kernel:
        true_div = binary("div", native.div)
        modes = {
            mode: binary("div", getattr(native, n), fallback=_div_reference(mode))
            for mode, n in _DIV_MODES.items()
        }

        def div(out: Any, a: Any, b: Any, rounding_mode: str | None = None) -> None:
            if rounding_mode is None:
                # True division of integers is promoted to float by core; _C.div refuses one
                # that arrives anyway and the reference decides what it means.
                true_div(out, a, b)
                return
            kernel = modes.get(rounding_mode)
            if kernel is None:  # an unknown mode: the reference raises PyTorch's error
                reference("div")(out, a, b, rounding_mode)
            else:
                kernel(out, a, b)

        return div

    def _div_reference(mode: str) -> Kernel:
        def kernel(out: Any, a: Any, b: Any) -> None:
            reference("div")(out, a, b, mode)

        return kernel

    def where(out: Any, condition: Any, a: Any, b: Any) -> None:
        shape = out.shape
        if condition.shape != shape or a.shape != shape or b.shape != shape:
            raise shape_error("where", out, (condition, a, b))
        dtype = out.dtype
        if a.dtype != dtype or b.dtype != dtype:
            raise dtype_error("where", out, (a, b))
        ptrs = out.data_ptr(), condition.data_ptr(), a.data_ptr(), b.data_ptr()
        if not all(ptrs) and out.numel():
            raise null_pointer_error("where")
        if code_of(condition.dtype, unknown) != bool_code or not native.where(
            code_of(dtype, unknown), shape, ptrs[0], out.stride(), ptrs[1], condition.stride(),
            ptrs[2], a.stride(), ptrs[3], b.stride(),
        ):
            # Reaches here (issue 5 audit): a condition that is not bool (core converts it),
            # complex dtypes, an output with repeated elements (stride 0) or partly
            # overlapping an input, > 64 dims.
            reference("where")(out, condition, a, b)

    def fill_(out: Any, value: Any) -> None:
        shape = out.shape
        out_ptr = out.data_ptr()
        if not out_ptr and out.numel():
            raise null_pointer_error("fill_")
        code = code_of(out.dtype, unknown)
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
            # Reaches here (issue 5 audit): complex dtypes or values; an integer value out of
            # the dtype's range, NaN or inf into an integer tensor (the reference raises or
            # converts as PyTorch does); an output with repeated elements; > 64 dims.
            reference("fill_")(out, value)

    def copy_(out: Any, src: Any) -> None:
        shape = out.shape
        if src.shape != shape:
            raise shape_error("copy_", out, (src,))
        out_ptr, src_ptr = out.data_ptr(), src.data_ptr()
        if not (out_ptr and src_ptr) and out.numel():
            raise null_pointer_error("copy_")
        if not native.copy(
            code_of(out.dtype, unknown), code_of(src.dtype, unknown), shape, out_ptr,
            out.stride(), src_ptr, src.stride(),
        ):
            # Reaches here (issue 5 audit): complex on either side; an output with repeated
            # elements (stride 0) or partly overlapping the source (`x[1:].copy_(x[:-1])`:
            # the reference reads everything before it writes); > 64 dims.
            reference("copy_")(out, src)

    def arange_(out: Any, start: Any, step: Any) -> None:
        shape = out.shape
        out_ptr = out.data_ptr()
        if not out_ptr and out.numel():
            raise null_pointer_error("arange_")
        done = False
        if len(shape) == 1:
            code = code_of(out.dtype, unknown)
            (stride,) = out.stride()
            try:
                # The reference's rule: integer outputs count in int64 when both bounds are
                # ints; everything else counts in float64 and rounds on store.
                if code in int_ranges and isinstance(start, int) and isinstance(step, int):
                    done = native.arange_int(code, shape[0], out_ptr, stride, start, step)
                elif isinstance(start, (int, float)) and isinstance(step, (int, float)):
                    done = native.arange_float(
                        code, shape[0], out_ptr, stride, float(start), float(step)
                    )
            except (OverflowError, TypeError):
                done = False  # beyond int64 or float: the reference's call
        if not done:
            # Reaches here (issue 5 audit): an output that is not 1-d (core's is) or that
            # repeats elements; bool or complex dtypes (PyTorch has no such arange); bounds
            # that are not Python numbers or overflow int64/float.
            reference("arange_")(out, start, step)

    kernels: dict[str, Kernel] = {
        name: unary(name, getattr(native, name)) for name in native.UNARY_OPS
    }
    div_modes = frozenset(_DIV_MODES.values())
    kernels.update({
        name: binary(name, getattr(native, name))
        for name in native.BINARY_OPS
        if name not in div_modes
    })
    kernels["div"] = div_kernel()
    kernels.update({
        name: binary(name, getattr(native, name), compare=True) for name in native.COMPARE_OPS
    })
    kernels.update({"where": where, "fill_": fill_, "copy_": copy_, "arange_": arange_})
    return kernels
