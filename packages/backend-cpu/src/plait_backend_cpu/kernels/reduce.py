"""Wrappers of the native reduction kernels: sum prod amax amin any all, argmax argmin."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

from ._common import UNKNOWN_DTYPE, Kernel, layout_error, null_pointer_error

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
    return kernels
