"""The hot path's allocate-and-run entry points (``torch.backends.hookspecs.FastPath``).

Thin: every method is the ``_C`` function itself, so a fast tier costs core one native call.
``prepare`` binds a primitive's strided native kernel to one call geometry, for the plans the
dispatcher keeps per call signature (``torch._core.plan``): a prepared call allocates the output
block and runs the kernel, two native calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

from .kernels.reduce import reduce_mask

_MAX_DIMS = 64  # what the native kernels take (more: the reference kernel serves the call)


def _contiguous(shape: Sequence[int]) -> list[int]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return strides[::-1]


class FastPath:
    """``_C``'s ``fast_*`` functions under the names of the FastPath protocol."""

    def __init__(self, native: ModuleType, dtype_codes: Mapping[Any, int],
                 kernels: Mapping[str, Any]) -> None:
        self.kernels = kernels
        self.binary_ops = {name: code for code, name in enumerate(native.BINARY_OPS)}
        self.unary_ops = {name: code for code, name in enumerate(native.UNARY_OPS)}
        self.dtype_codes = dict(dtype_codes)
        self.binary = native.fast_binary
        self.binary_scalar = native.fast_binary_scalar
        self.broadcast_plan = native.BroadcastPlan
        self.binary_plan = native.fast_binary_plan
        self.unary = native.fast_unary
        self.sum_all = native.fast_sum_all
        self.reduce_ops = {name: code for code, name in enumerate(native.REDUCE_OPS)
                           if name in ("sum", "amax", "amin")}
        self.reduce_rows = native.fast_reduce_rows
        self._native = native
        self._families = {
            **dict.fromkeys(native.UNARY_OPS, "unary"),
            **dict.fromkeys(native.BINARY_OPS, "binary"),
            **dict.fromkeys(native.COMPARE_OPS, "binary"),
            **dict.fromkeys(native.REDUCE_OPS, "reduce"),
            "copy": "unary",
            "matmul": "matmul",
            "where": "where",
        }

    def prepare_into(self, prim: str, dtype: int, shape: Sequence[int],
                     other_strides: Sequence[int]) -> Callable[[int, int], bool] | None:
        """A function of two addresses ``(out, other)`` that runs binary primitive ``prim``
        as ``out = out <prim> other`` into the existing contiguous block at ``out`` (an
        in-place op), ``other`` read with ``other_strides`` over ``shape`` (0 where
        broadcast); it returns False, having written nothing, when the native kernel declines
        the call. None when ``prim`` has no native binary kernel."""
        if self._families.get(prim) != "binary" or prim not in self.binary_ops or \
                len(shape) > _MAX_DIMS:
            return None
        native_fn = getattr(self._native, prim)
        shape = tuple(shape)
        strides = tuple(_contiguous(shape))
        b_strides = tuple(other_strides)

        def into(out: int, b: int) -> bool:
            return native_fn(dtype, shape, out, strides, out, strides, b, b_strides)
        return into

    def prepare_out(self, prim: str, out_dtype: int, in_dtype: int, shape: Sequence[int],
                    strides: Sequence[Sequence[int]]) -> Callable[..., bool] | None:
        """A function of addresses ``(out, *inputs)`` that runs elementwise primitive ``prim``
        on the inputs (read with ``strides`` over ``shape``) into the existing contiguous
        block at ``out``: an ``out=`` result written by the kernel itself, no copy. It returns
        False, having written nothing, when the native kernel declines. None when ``prim``
        has no native elementwise kernel."""
        family = self._families.get(prim)
        if family not in ("unary", "binary", "where") or prim == "copy" or \
                len(shape) > _MAX_DIMS:
            return None
        native_fn = getattr(self._native, prim)
        shape = tuple(shape)
        out_strides = tuple(_contiguous(shape))
        inputs = [tuple(s) for s in strides]
        if family == "unary" and len(inputs) == 1:
            (a_strides,) = inputs

            def unary(out: int, a: int) -> bool:
                return native_fn(out_dtype, in_dtype, shape, out, out_strides, a, a_strides)
            return unary
        if family == "binary" and len(inputs) == 2:
            a_strides, b_strides = inputs

            def binary(out: int, a: int, b: int) -> bool:
                return native_fn(in_dtype, shape, out, out_strides, a, a_strides, b, b_strides)
            return binary
        if family == "where" and len(inputs) == 3:
            c_strides, a_strides, b_strides = inputs

            def where(out: int, c: int, a: int, b: int) -> bool:
                return native_fn(in_dtype, shape, out, out_strides, c, c_strides, a, a_strides,
                                 b, b_strides)
            return where
        return None

    def prepare(self, prim: str, out_dtype: int, in_dtype: int, shape: Sequence[int],
                nbytes: int, strides: Sequence[Sequence[int]],
                dims: Sequence[int] | None = None, inner: int | None = None,
                out_strides: Sequence[int] | None = None) -> Callable[..., Any] | None:
        """A function of the operands' addresses that allocates a contiguous output of
        ``nbytes`` and runs primitive ``prim`` on it, returning the block (None when the
        native kernel declines the call: the caller's generic path serves it), or None when
        this primitive or geometry has no native kernel.

        :param prim: a unary or binary primitive, a comparison, a reduction, ``copy`` (a
            cast), ``matmul`` or ``where`` (strides: the condition's, then the two values').
        :param out_dtype: the output's dtype code; ``in_dtype``: the inputs'.
        :param shape: the iteration shape (the inputs' shape, broadcast; for a reduction the
            input's shape, the output keeping the reduced dimensions with size 1).
        :param strides: each input's element strides over ``shape`` (0 where broadcast).
        :param dims: the reduced dimensions (reductions only).
        :param inner: the contracted size (``matmul`` only; ``shape`` is the output's).
        :param out_strides: the output's element strides when not contiguous (a dense
            permutation: an elementwise result following a transposed input).
        """
        family = self._families.get(prim)
        if family is None or len(shape) > _MAX_DIMS or any(s < 0 for s in shape):
            return None
        native_fn = getattr(self._native, prim)
        allocate = self._native.allocate
        shape = tuple(shape)
        if family == "reduce":
            if dims is None:
                return None
            out_shape = tuple(1 if d in dims else s for d, s in enumerate(shape))
            mask = reduce_mask(prim, shape, out_shape, dims)
            out_strides = tuple(_contiguous(out_shape))
            (a_strides,) = (tuple(s) for s in strides)

            def reduce(a: int) -> Any:
                block = allocate(nbytes)
                ok = native_fn(out_dtype, in_dtype, shape, block.ptr, out_strides, a, a_strides,
                               mask)
                return block if ok else None
            return reduce
        out_strides = tuple(_contiguous(shape) if out_strides is None else out_strides)
        if family == "matmul" and inner is not None and len(strides) == 2 and len(shape) >= 2:
            a_strides, b_strides = (tuple(s) for s in strides)

            def matmul(a: int, b: int) -> Any:
                block = allocate(nbytes)
                ok = native_fn(in_dtype, shape, inner, block.ptr, out_strides, a, a_strides, b,
                               b_strides)
                return block if ok else None
            return matmul
        if family == "unary" and len(strides) == 1:
            a_strides = tuple(strides[0])

            def unary(a: int) -> Any:
                block = allocate(nbytes)
                ok = native_fn(out_dtype, in_dtype, shape, block.ptr, out_strides, a, a_strides)
                return block if ok else None
            return unary
        if family == "binary" and len(strides) == 2:
            a_strides, b_strides = (tuple(s) for s in strides)

            def binary(a: int, b: int) -> Any:
                block = allocate(nbytes)
                ok = native_fn(in_dtype, shape, block.ptr, out_strides, a, a_strides, b,
                               b_strides)
                return block if ok else None
            return binary
        if family == "where" and len(strides) == 3:
            c_strides, a_strides, b_strides = (tuple(s) for s in strides)

            def where(c: int, a: int, b: int) -> Any:
                block = allocate(nbytes)
                ok = native_fn(in_dtype, shape, block.ptr, out_strides, c, c_strides, a,
                               a_strides, b, b_strides)
                return block if ok else None
            return where
        return None
