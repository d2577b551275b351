"""The Python side of the native CPU kernels: what core calls for each primitive.

Each wrapper has the signature of its primitive's schema in ``torch._prims`` (output first,
preallocated by core; inputs of the output's dtype, already broadcast with stride 0), checks
the call at the boundary, and passes addresses, shapes and element strides to ``_C``. Cases the
native code leaves out (float16, bfloat16, complex, more than 64 dimensions, an output that
overlaps an input other than exactly) run the core's reference kernel with the same arguments.

Wrappers only touch ``data_ptr()``, ``shape``, ``stride()``, ``dtype`` and ``numel()`` of their
arguments, so tests can drive them with stand-in tensors over numpy arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

Kernel = Callable[..., None]

# _C's reduce_mask is a 64-bit mask, one bit per dimension.
_MAX_REDUCE_DIMS = 64

# Python ints that fill_ may write natively; PyTorch refuses ones that overflow the dtype, and
# the reference kernel raises that error.
_INT_RANGES = {
    "uint8": (0, 2**8 - 1),
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def _layout_error(name: str, message: str) -> ValueError:
    return ValueError(
        f"prims.{name} (plait-backend-cpu): {message}; core must pass operands already "
        "broadcast to the output's shape (torch._prims conventions)"
    )


def _shape_error(name: str, out: Any, inputs: tuple[Any, ...]) -> ValueError:
    for i, t in enumerate(inputs):
        if tuple(t.shape) != tuple(out.shape):
            return _layout_error(
                name, f"input {i} has shape {tuple(t.shape)}, the output has {tuple(out.shape)}"
            )
    return _layout_error(name, "operand shapes differ")


def _dtype_error(name: str, out: Any, inputs: tuple[Any, ...]) -> TypeError:
    bad = [f"input {i} has dtype {t.dtype}" for i, t in enumerate(inputs) if t.dtype != out.dtype]
    return TypeError(
        f"prims.{name} (plait-backend-cpu): {', '.join(bad)}, the output {out.dtype}; core "
        "must promote inputs to the output's dtype first"
    )


def _null_pointer_error(name: str) -> RuntimeError:
    return RuntimeError(
        f"prims.{name} (plait-backend-cpu): a tensor with elements has a null data pointer"
    )


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
    unknown = -1  # _C returns False for it: the reference kernel runs

    def binary(name: str, native_op: Callable[..., bool]) -> Kernel:
        # The hot path of every `a + b`: checks are inlined and errors built only on failure.
        def kernel(out: Any, a: Any, b: Any) -> None:
            shape = out.shape
            if a.shape != shape or b.shape != shape:
                raise _shape_error(name, out, (a, b))
            dtype = out.dtype
            if a.dtype != dtype or b.dtype != dtype:
                raise _dtype_error(name, out, (a, b))
            out_ptr, a_ptr, b_ptr = out.data_ptr(), a.data_ptr(), b.data_ptr()
            if not (out_ptr and a_ptr and b_ptr) and out.numel():
                raise _null_pointer_error(name)
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
                raise _shape_error(name, out, (a,))
            dtype = out.dtype
            if a.dtype != dtype:
                raise _dtype_error(name, out, (a,))
            out_ptr, a_ptr = out.data_ptr(), a.data_ptr()
            if not (out_ptr and a_ptr) and out.numel():
                raise _null_pointer_error(name)
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
            raise _null_pointer_error("fill_")
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
            raise _shape_error("copy_", out, (src,))
        out_ptr, src_ptr = out.data_ptr(), src.data_ptr()
        if not (out_ptr and src_ptr) and out.numel():
            raise _null_pointer_error("copy_")
        out_code = dtype_codes.get(out.dtype, unknown)
        src_code = dtype_codes.get(src.dtype, unknown)
        if not native.copy(out_code, src_code, shape, out_ptr, out.stride(), src_ptr, src.stride()):
            reference("copy_")(out, src)

    def sum_(out: Any, a: Any, dims: Any) -> None:
        shape = tuple(a.shape)
        out_shape = tuple(out.shape)
        ndim = len(shape)
        if len(out_shape) != ndim:
            raise _layout_error(
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
                raise _layout_error(
                    "sum",
                    f"output shape {out_shape} is not input shape {shape} with the "
                    "reduced dimensions set to 1",
                )
            mask |= 1 << d
        for d in range(ndim):
            if mask >> d & 1 and out_shape[d] != 1:
                raise _layout_error("sum", f"reduced dimension {d} has size {out_shape[d]}")
        out_ptr, a_ptr = out.data_ptr(), a.data_ptr()
        if (not out_ptr and out.numel()) or (not a_ptr and a.numel()):
            raise _null_pointer_error("sum")
        out_code = dtype_codes.get(out.dtype, unknown)
        a_code = dtype_codes.get(a.dtype, unknown)
        if ndim > _MAX_REDUCE_DIMS or not native.sum(
            out_code, a_code, shape, out_ptr, out.stride(), a_ptr, a.stride(), mask
        ):
            reference("sum")(out, a, dims)

    sum_.__name__ = sum_.__qualname__ = "sum"
    kernels: dict[str, Kernel] = {
        name: binary(name, getattr(native, name)) for name in native.BINARY_OPS
    }
    kernels["div"] = div_kernel()
    kernels.update({name: unary(name, getattr(native, name)) for name in native.UNARY_OPS})
    kernels.update({"fill_": fill_, "copy_": copy_, "sum": sum_})
    return kernels
