"""Wrappers of the native reduction kernels: sum prod amax amin any all, argmax argmin; and
the aten reductions planned on them (``amax amin max.dim min.dim argmax argmin
linalg_vector_norm``).

Core's composites of the extremes check their arguments, reshape and dispatch one or two
primitives on every call; a signature fixes all of that (the input's layout, the dims, the
output's layout), so a planned call here is one allocation and one native call per output. A
case the native code declines (a dtype it does not know, more than 64 dims) and every first
call run core's composite; so do 0-d and empty inputs, which are never planned.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

from ._common import (
    UNKNOWN_DTYPE,
    Kernel,
    contiguous_strides,
    layout_error,
    null_pointer_error,
    planned_composite,
)

# _C's reduce_mask is a 64-bit mask, one bit per dimension.
_MAX_REDUCE_DIMS = 64
# Entries of each reduction's mask cache (its keys are small tuples of ints).
_MASK_CACHE_SIZE = 4096


def reduce_mask(name: str, shape: tuple[int, ...], out_shape: tuple[int, ...],
                dims: Sequence[int]) -> int:
    """The bit mask of the reduced dimensions: those in ``dims`` and those where the output
    has size 1 and the input not (the keepdim shape says which were reduced).

    :raises ValueError: when ``out_shape`` is not ``shape`` with reduced dimensions set to 1.
    :raises IndexError: for a dimension outside ``[-ndim, ndim)``.
    """
    ndim = len(shape)
    if len(out_shape) != ndim:
        raise layout_error(name, f"the output has {len(out_shape)} dimensions, the input {ndim}")
    mask = 0
    bound = max(ndim, 1)  # a 0-d tensor accepts dimension 0 and -1, like PyTorch
    for d in dims:
        if not -bound <= d < bound:
            raise IndexError(
                f"prims.{name} (plait-backend-cpu): dimension {d} out of range for a "
                f"{ndim}-d input"
            )
        if ndim:
            mask |= 1 << (d % ndim)
    for d in range(ndim):
        if out_shape[d] == shape[d]:
            continue
        if out_shape[d] != 1:
            raise layout_error(
                name,
                f"output shape {out_shape} is not input shape {shape} with the reduced "
                "dimensions set to 1",
            )
        mask |= 1 << d
    for d in range(ndim):
        if mask >> d & 1 and out_shape[d] != 1:
            raise layout_error(name, f"reduced dimension {d} has size {out_shape[d]}")
    return mask


def wrap_dim(name: str, dim: int, ndim: int) -> int:
    """``dim`` in ``[0, ndim)`` (a 0-d tensor accepts 0 and -1, and gives 0).

    :raises IndexError: for a dimension outside ``[-ndim, ndim)``.
    """
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(
            f"prims.{name} (plait-backend-cpu): dimension {dim} out of range for a {ndim}-d "
            "input"
        )
    return dim % bound


def pointers(name: str, *tensors: Any) -> list[int]:
    """The data pointers of ``tensors``; a tensor with elements must have a non-null one."""
    ptrs = [t.data_ptr() for t in tensors]
    for p, t in zip(ptrs, tensors):
        if not p and t.numel():
            raise null_pointer_error(name)
    return ptrs


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """``sum prod amax amin any all`` (``out, a, dims``) and ``argmax argmin``
    (``out, a, dim``)."""
    unknown = UNKNOWN_DTYPE
    int64 = native.DTYPES.index("int64")

    def reduction(name: str) -> Kernel:
        native_fn = getattr(native, name)
        # reduce_mask's answers by (shape, out shape, dims): a model reduces the same few
        # shapes over and over, and checking them again cost a tenth of a small reduction.
        masks: dict[tuple[Any, ...], int] = {}

        def kernel(out: Any, a: Any, dims: Any) -> None:
            shape = tuple(a.shape)
            key = (shape, tuple(out.shape), *dims)
            mask = masks.get(key)
            if mask is None:
                mask = reduce_mask(name, shape, key[1], dims)
                if len(masks) < _MASK_CACHE_SIZE:
                    masks[key] = mask
            out_ptr = out.data_ptr()
            a_ptr = a.data_ptr()
            if not (out_ptr and a_ptr):
                out_ptr, a_ptr = pointers(name, out, a)  # raises for a null pointer with data
            out_code = dtype_codes.get(out.dtype, unknown)
            a_code = dtype_codes.get(a.dtype, unknown)
            # The native kernel declines (returns False) only for: a dtype it does not know
            # (complex), an out/input dtype pair the primitive does not define natively (e.g.
            # amax into another dtype), a broadcast (stride-0) output, an output that shares
            # memory with its input, and more than 64 dimensions. 0-d, zero-size, strided and
            # broadcast inputs run natively.
            if len(shape) > _MAX_REDUCE_DIMS or not native_fn(
                out_code, a_code, shape, out_ptr, out.stride(), a_ptr, a.stride(), mask
            ):
                reference(name)(out, a, dims)

        kernel.__name__ = kernel.__qualname__ = name
        return kernel

    def arg_reduction(name: str) -> Kernel:
        native_fn = getattr(native, name)

        def kernel(out: Any, a: Any, dim: int) -> None:
            shape = tuple(a.shape)
            ndim = len(shape)
            d = wrap_dim(name, dim, ndim)
            if ndim:
                reduce_mask(name, shape, tuple(out.shape), [d])
            elif out.numel() != 1:
                raise layout_error(name, f"the output of a 0-d input has shape {tuple(out.shape)}")
            out_ptr, a_ptr = pointers(name, out, a)
            native_ok = (
                dtype_codes.get(out.dtype, unknown) == int64
                and native_fn(dtype_codes.get(a.dtype, unknown), shape, out_ptr, out.stride(),
                              a_ptr, a.stride(), d)
            )
            # Declined: an index output that is not int64, an unknown dtype, an empty reduced
            # dimension (the reference raises PyTorch's error), a broadcast or overlapping
            # output, more than 64 dimensions.
            if not native_ok:
                reference(name)(out, a, dim)

        kernel.__name__ = kernel.__qualname__ = name
        return kernel

    kernels = {name: reduction(name) for name in native.REDUCE_OPS}
    kernels.update({name: arg_reduction(name) for name in ("argmax", "argmin")})
    kernels.update(planned_reductions(native, dtype_codes))
    return kernels


def planned_reductions(native: ModuleType, dtype_codes: Mapping[Any, int]) -> dict[str, Kernel]:
    """``aten::max.dim``/``min.dim``, ``aten::argmax``/``argmin``, ``aten::logsumexp`` and
    ``aten::linalg_vector_norm`` with planners whose kernels make the native calls directly."""
    from torch.backends.contract import allocator, dtype

    unknown = UNKNOWN_DTYPE
    int64_dtype = dtype("int64")

    def code_of(a: Any) -> int:
        """``a``'s ``_C`` dtype code when a planned kernel takes ``a``: a CPU tensor with dims
        and elements, at most 64 dims, of a dtype ``_C`` knows; else ``unknown``."""
        if (a.device.type != "cpu" or not a.ndim or not a.numel()
                or a.ndim > _MAX_REDUCE_DIMS):
            return unknown
        return dtype_codes.get(a.dtype, unknown)

    def layout(a: Any, dims: list[int], keepdim: bool) -> tuple[tuple[int, ...], ...]:
        """The result's shape and the strides the native code writes it with (those of its
        keepdim shape, the same memory)."""
        kept = tuple(1 if i in dims else n for i, n in enumerate(a.shape))
        shape = kept if keepdim else tuple(n for i, n in enumerate(a.shape) if i not in dims)
        return shape, contiguous_strides(kept)

    def plan_values(prim: str, arg: str | None) -> Callable[..., Kernel | None]:
        """The planner of a reduction to values (``prim``) over dims, with the indices of
        ``arg`` (max.dim, min.dim) as a second output when ``arg`` is given."""
        values_fn = getattr(native, prim)
        index_fn = getattr(native, arg) if arg else None

        def planner(a: Any, dim: Any = (), keepdim: bool = False) -> Kernel | None:
            code = code_of(a)
            if code == unknown:
                return None
            given = [dim] if isinstance(dim, int) else list(dim)
            dims = sorted({d % a.ndim for d in given}) if given else list(range(a.ndim))
            shape, strides = layout(a, dims, keepdim)
            in_shape, in_strides = tuple(a.shape), tuple(a.stride())
            mask = reduce_mask(prim, in_shape, tuple(1 if i in dims else n
                                                     for i, n in enumerate(in_shape)), dims)
            if index_fn is None:
                new_out = allocator([(shape, a.dtype, a.device)])

                def planned(a: Any, *args: Any, **kwargs: Any) -> Any:
                    (out,), (dst,) = new_out()
                    if not values_fn(code, code, in_shape, dst, strides, a.data_ptr(),
                                     in_strides, mask):
                        return None  # the generic path
                    return out
                return planned
            d = dims[0]
            new_outs = allocator([(shape, a.dtype, a.device), (shape, int64_dtype, a.device)])

            def planned_pair(a: Any, *args: Any, **kwargs: Any) -> Any:
                outs, (dst, idx) = new_outs()
                src = a.data_ptr()
                if not (values_fn(code, code, in_shape, dst, strides, src, in_strides, mask)
                        and index_fn(code, in_shape, idx, strides, src, in_strides, d)):
                    return None
                return outs
            return planned_pair

        return planner

    def plan_index(arg: str) -> Callable[..., Kernel | None]:
        """The planner of ``aten::argmax``/``argmin``: along a dim, or over a contiguous
        input read as one row."""
        index_fn = getattr(native, arg)

        def planner(a: Any, dim: int | None = None, keepdim: bool = False) -> Kernel | None:
            code = code_of(a)
            if code == unknown:
                return None
            if dim is None:
                if not a.is_contiguous():
                    return None
                shape = (1,) * a.ndim if keepdim else ()
                in_shape, in_strides, d, strides = (a.numel(),), (1,), 0, (1,)
            else:
                d = dim % a.ndim
                shape, strides = layout(a, [d], keepdim)
                in_shape, in_strides = tuple(a.shape), tuple(a.stride())
            new_out = allocator([(shape, int64_dtype, a.device)])

            def planned(a: Any, *args: Any, **kwargs: Any) -> Any:
                (out,), (dst,) = new_out()
                if not index_fn(code, in_shape, dst, strides, a.data_ptr(), in_strides, d):
                    return None
                return out
            return planned

        return planner


    import torch

    native_abs, native_mul, native_sqrt = native.abs, native.mul, native.sqrt
    native_amax, native_sum = native.amax, native.sum
    # vector_norm's orders served natively: (elementwise step, reduction, root)
    norm_steps = {1: ("abs", "sum", False), 2: ("square", "sum", True),
                  math.inf: ("abs", "amax", False), -math.inf: ("abs", "amin", False)}
    real_floats = {dtype("float32"), dtype("float64")}

    def plan_vector_norm(a: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                         dtype: Any = None) -> Kernel | None:
        """``aten::linalg_vector_norm`` of a float32/float64 input, for the orders 1, 2, inf
        and -inf: ``|a|`` (``a * a`` for 2, the same values as ``|a| * |a|``) into a scratch
        tensor, the reduction, and the root for 2: the composite's primitives, without its
        checks and dispatches."""
        code = code_of(a)
        steps = norm_steps.get(float(ord)) if isinstance(ord, (int, float)) else None
        if code == unknown or steps is None or dtype is not None or a.dtype not in real_floats:
            return None
        step, prim, root = steps
        given = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
        dims = sorted({d % a.ndim for d in given}) if given else list(range(a.ndim))
        shape, strides = layout(a, dims, keepdim)
        in_shape, in_strides = tuple(a.shape), tuple(a.stride())
        scratch_strides = contiguous_strides(in_shape)
        kept = tuple(1 if i in dims else n for i, n in enumerate(in_shape))
        mask = reduce_mask(prim, in_shape, kept, dims)
        reduce_fn = getattr(native, prim)
        new_outs = allocator([(shape, a.dtype, a.device), (in_shape, a.dtype, a.device)])

        def planned(a: Any, *args: Any, **kwargs: Any) -> Any:
            (out, _), (dst, tmp) = new_outs()
            src = a.data_ptr()
            done = (native_mul(code, in_shape, tmp, scratch_strides, src, in_strides, src,
                               in_strides) if step == "square" else
                    native_abs(code, code, in_shape, tmp, scratch_strides, src, in_strides))
            if not (done and reduce_fn(code, code, in_shape, dst, strides, tmp,
                                       scratch_strides, mask)):
                return None
            if root and not native_sqrt(code, code, kept, dst, strides, dst, strides):
                return None
            return out
        return planned

    native_eq, native_where, native_sub = native.eq, native.where, native.sub
    native_exp, native_log, native_add = native.exp, native.log, native.add
    bool_dtype = dtype("bool")

    def plan_logsumexp(a: Any, dim: Any, keepdim: bool = False) -> Kernel | None:
        """``aten::logsumexp`` of a contiguous float32/float64 input: the composite's steps
        on the native kernels (the maximum, 0 where it is infinite, ``exp(a - shift)``, its
        sum, the log plus the shift), the same values without its dispatches."""
        code = code_of(a)
        if code == unknown or a.dtype not in real_floats or not a.is_contiguous():
            return None
        given = [dim] if isinstance(dim, int) else list(dim)
        dims = sorted({d % a.ndim for d in given}) if given else list(range(a.ndim))
        shape, strides = layout(a, dims, keepdim)
        in_shape, in_strides = tuple(a.shape), tuple(a.stride())
        kept = tuple(1 if i in dims else n for i, n in enumerate(in_shape))
        spread = tuple(0 if i in dims else st for i, st in enumerate(strides))  # kept -> in
        zeros = (0,) * len(kept)
        mask = reduce_mask("amax", in_shape, kept, dims)
        inf = torch.full((), math.inf, dtype=a.dtype)
        zero = torch.zeros((), dtype=a.dtype)
        inf_ptr, zero_ptr = inf.data_ptr(), zero.data_ptr()
        new_outs = allocator([(shape, a.dtype, a.device), (kept, a.dtype, a.device),
                              (kept, a.dtype, a.device), (kept, bool_dtype, a.device),
                              (in_shape, a.dtype, a.device)])

        def planned(a: Any, *args: Any, **kwargs: Any) -> Any:
            outs, (dst, top, shift, infinite, tmp) = new_outs()
            src = a.data_ptr()
            done = (native_amax(code, code, in_shape, top, strides, src, in_strides, mask)
                    # (|top| into `shift`, read before `shift` is written below)
                    and native_abs(code, code, kept, shift, strides, top, strides)
                    and native_eq(code, kept, infinite, strides, shift, strides, inf_ptr, zeros)
                    and native_where(code, kept, shift, strides, infinite, strides, zero_ptr,
                                     zeros, top, strides)
                    and native_sub(code, in_shape, tmp, in_strides, src, in_strides, shift,
                                   spread)
                    and native_exp(code, code, in_shape, tmp, in_strides, tmp, in_strides)
                    and native_sum(code, code, in_shape, top, strides, tmp, in_strides, mask)
                    and native_log(code, code, kept, top, strides, top, strides)
                    and native_add(code, kept, dst, strides, top, strides, shift, strides))
            return outs[0] if done else None
        planned.constants = (inf, zero)  # type: ignore[attr-defined]  # (alive with the plan)
        return planned

    return {
        "aten::logsumexp": planned_composite("aten::logsumexp", plan_logsumexp),
        "aten::linalg_vector_norm": planned_composite("aten::linalg_vector_norm", plan_vector_norm),
        # (no aten::amax/amin: core's plans and its last-dim tier run them as one native
        # reduction already, and a backend kernel of the operator turns that tier off)
        "aten::max.dim": planned_composite("aten::max.dim", plan_values("amax", "argmax")),
        "aten::min.dim": planned_composite("aten::min.dim", plan_values("amin", "argmin")),
        "aten::argmax": planned_composite("aten::argmax", plan_index("argmax")),
        "aten::argmin": planned_composite("aten::argmin", plan_index("argmin")),
    }
