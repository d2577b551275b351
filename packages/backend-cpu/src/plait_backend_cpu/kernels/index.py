"""Wrappers of the native indexing kernels: gather scatter_ nonzero, and the aten operators
served by the native gather (embedding, gather, index_select, ``x[idx]``).

Every case core can pass runs natively: every dtype, any strides, stride-0 (broadcast)
inputs, zero-size and 0-d tensors (a 0-d tensor is a 1-element vector to the kernels), and
every reduction of ``scatter_`` (float16/bfloat16 accumulate in float32 and round once, mean
divides by each target's count, integers with floor division, as PyTorch does). What is left
to core's reference kernel is said at each fallback; none of it comes from core's own calls.

The aten operators hand the native gather the indices as they are: it checks every index
against ``[0, size)`` before it writes anything, where core's composites check them with two
reductions and a host read first (and ``x[idx]`` builds each element's offset from a few
elementwise ops). A ``gather`` or ``index_select`` signature is planned once (the output's
layout, the strides the gather reads the index with), so its later calls cost one allocation
and one native call. A value the native check rejects (a negative index, one out of range)
leaves the call to core's composite, which wraps negative indices where the op allows them and
raises PyTorch's error otherwise; so does every case off the native path (an index that is not
int64, a dtype ``_C`` does not know, 0-d or empty operands, a device other than the CPU).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import UNKNOWN_DTYPE, Kernel, contiguous_strides, layout_error
from .reduce import pointers, wrap_dim

# A planned kernel: the call's arguments -> its result, or None for the generic path.
Planned = Callable[..., Any]

# scatter_'s reduce argument -> _C.scatter's code.
_SCATTER_REDUCE = {"none": 0, "sum": 1, "prod": 2, "amax": 3, "amin": 4, "mean": 5}


def as_1d(t: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``t``'s shape and strides, a 0-d tensor's as a 1-element vector's (what the
    reference kernels do with 0-d operands too)."""
    shape = tuple(t.shape)
    return (shape, tuple(t.stride())) if shape else ((1,), (1,))


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """``gather``, ``scatter_`` and ``nonzero`` (which returns its output); ``aten::embedding``
    and its backward, ``aten::gather``, ``aten::index_select`` and ``aten::index``."""
    from torch.backends.contract import allocator, plannable

    unknown = UNKNOWN_DTYPE
    int64 = native.DTYPES.index("int64")

    def gather(out: Any, a: Any, dim: int, index: Any) -> None:
        if tuple(out.shape) != tuple(index.shape):
            raise layout_error("gather", f"output shape {tuple(out.shape)} is not the index "
                               f"shape {tuple(index.shape)}")
        shape, index_strides = as_1d(index)
        out_strides = as_1d(out)[1]
        a_shape, a_strides = as_1d(a)
        d = wrap_dim("gather", dim, index.ndim)
        out_ptr, a_ptr, index_ptr = pointers("gather", out, a, index)
        # Left to the reference (core never passes them: it checks and converts first): an
        # index that is not int64, an output of another dtype than `a` (a converting copy),
        # `a` and the index of different ranks or an index larger than `a` off `dim`, an
        # output with repeated elements (stride 0) or sharing memory with an operand, more
        # than 64 dimensions.
        native_ok = (
            out.dtype == a.dtype
            and dtype_codes.get(index.dtype, unknown) == int64
            and native.gather(dtype_codes.get(a.dtype, unknown), shape, out_ptr, out_strides,
                              a_shape, a_ptr, a_strides, d, index_ptr, index_strides)
        )
        if not native_ok:
            reference("gather")(out, a, dim, index)

    def scatter_(out: Any, dim: int, index: Any, src: Any, reduce: str = "none",
                 include_self: bool = True) -> None:
        shape, index_strides = as_1d(index)
        out_shape, out_strides = as_1d(out)
        src_shape, src_strides = as_1d(src)
        d = wrap_dim("scatter_", dim, index.ndim)
        code = _SCATTER_REDUCE.get(reduce)
        # Left to the reference: an unknown `reduce` (its RuntimeError is PyTorch's message);
        # and, never from core (it checks and converts first): an index that is not int64, a
        # src of another dtype than the output, ranks that differ or a src smaller than the
        # index, an output with repeated elements (stride 0) or sharing memory with the
        # index or src, more than 64 dimensions.
        native_ok = (
            code is not None
            and len(src_shape) == len(shape)
            and all(s >= i for s, i in zip(src_shape, shape))  # src may be larger than index
            and out.dtype == src.dtype
            and dtype_codes.get(index.dtype, unknown) == int64
        )
        if native_ok:
            out_ptr, index_ptr, src_ptr = pointers("scatter_", out, index, src)
            native_ok = native.scatter(
                dtype_codes.get(out.dtype, unknown), out_shape, out_ptr, out_strides, d,
                shape, index_ptr, index_strides, src_ptr, src_strides[: len(shape)], code,
                bool(include_self),
            )
        if not native_ok:
            reference("scatter_")(out, dim, index, src, reduce, include_self)

    def nonzero(a: Any) -> Any:
        shape = tuple(a.shape)
        (a_ptr,) = pointers("nonzero", a)
        code = dtype_codes.get(a.dtype, unknown)
        count = native.count_nonzero(code, shape, a_ptr, a.stride())
        if count < 0:  # a dtype _C does not know (complex), or more than 64 dimensions
            return reference("nonzero")(a)
        # core's allocator, imported late: the backend loads before core has finished.
        from torch.backends import contract

        # PyTorch's layout: (n, ndim) with each dimension's coordinates contiguous.
        out = contract.empty((len(shape), count), contract.dtype("int64"), a.device)
        if count and len(shape):
            if not native.nonzero(code, shape, a_ptr, a.stride(), count, out.data_ptr(), 1,
                                  count):
                # The count changed between the two calls: another thread wrote `a`.
                return reference("nonzero")(a)
        return out.t()

    def plan_embedding(weight: Any, indices: Any, padding_idx: int = -1,
                       scale_grad_by_freq: bool = False, sparse: bool = False) -> Kernel | None:
        """The kernel of one signature the native gather takes: the checks and the output's
        shape worked out once (the indices' values are checked by the gather on every
        call)."""
        code = dtype_codes.get(weight.dtype, unknown)
        if (code == unknown or weight.ndim != 2 or not weight.shape[0] or not weight.shape[1]
                or dtype_codes.get(indices.dtype) != int64 or not indices.numel()
                or not indices.is_contiguous() or weight.device.type != "cpu"
                or indices.device.type != "cpu"):
            return None
        rows, width = weight.shape
        out_shape = (*indices.shape, width)
        n = indices.numel()
        weight_strides = tuple(weight.stride())
        new_out = allocator([(out_shape, weight.dtype, weight.device)])
        native_gather = native.gather
        size = weight.dtype.itemsize

        def planned(weight: Any, indices: Any, padding_idx: int = -1,
                    scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
            (out,), (dst,) = new_out()
            try:  # (the operands' data_ptr(), written out; int64 indices: 8 bytes)
                done = native_gather(code, (n, width), dst, (width, 1), (rows, width),
                                     weight._storage._ptr + weight._offset * size,
                                     weight_strides, 0,
                                     indices._storage._ptr + indices._offset * 8, (1, 0))
            except IndexError:
                raise IndexError("index out of range in self") from None
            if not done:
                return None  # the generic path
            return out

        return planned

    @plannable(plan_embedding, native=True)
    def embedding(weight: Any, indices: Any, padding_idx: int = -1,
                  scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
        """``aten::embedding`` in one native call: the rows are copied by gather's row
        path, which checks every index first (core's composite checks them with two
        reductions, then gathers). Cases off that path go to the composite."""
        from torch.backends import contract

        def composite() -> Any:
            return contract.composite("aten::embedding")(weight, indices, padding_idx,
                                                        scale_grad_by_freq, sparse)

        code = dtype_codes.get(weight.dtype, unknown)
        shape = tuple(indices.shape)
        if (code == unknown or weight.ndim != 2 or not weight.shape[1]
                or dtype_codes.get(indices.dtype) != int64
                or not indices.is_contiguous() or weight.device.type != "cpu"
                or indices.device.type != "cpu"):
            return composite()
        rows, width = weight.shape
        out = contract.empty((*shape, width), weight.dtype, weight.device)
        n = out.numel() // width
        if n:
            out_ptr, weight_ptr, index_ptr = pointers("embedding", out, weight, indices)
            try:
                done = native.gather(code, (n, width), out_ptr, (width, 1), (rows, width),
                                     weight_ptr, tuple(weight.stride()), 0, index_ptr, (1, 0))
            except IndexError:
                raise IndexError("index out of range in self") from None
            if not done:
                return composite()
        return out

    def plan_embedding_backward(grad_output: Any, indices: Any, num_weights: int,
                                padding_idx: int, scale_grad_by_freq: bool) -> Kernel | None:
        """The kernel of one signature of ``aten::embedding_dense_backward`` the native
        scatter takes: a contiguous gradient of shape ``(*indices.shape, width)``, contiguous
        int64 indices, no frequency scaling. Three native calls per call (zero the table's
        gradient, add each gradient row into its index's row, zero the padding row), where
        core's composite checks the indices with two reductions and reaches the same scatter
        through a dozen operators; the scatter checks every index before it writes."""
        code = dtype_codes.get(grad_output.dtype, unknown)
        shape = tuple(indices.shape)
        n = indices.numel()
        if (code == unknown or scale_grad_by_freq or not n or not isinstance(num_weights, int)
                or num_weights <= 0 or not isinstance(padding_idx, int)
                or dtype_codes.get(indices.dtype) != int64 or not indices.is_contiguous()
                or not grad_output.is_contiguous() or grad_output.ndim != len(shape) + 1
                or tuple(grad_output.shape[:-1]) != shape or not grad_output.shape[-1]
                or grad_output.device.type != "cpu" or indices.device.type != "cpu"):
            return None
        width = grad_output.shape[-1]
        table = (num_weights, width)
        new_out = allocator([(table, grad_output.dtype, grad_output.device)])
        native_fill, native_scatter = native.fill_float, native.scatter
        row_strides, index_shape, index_strides = (width, 1), (n, width), (1, 0)
        # the padding row (none when padding_idx is out of [0, num_weights), as in PyTorch)
        pad_offset = (padding_idx * width * grad_output.element_size()
                      if 0 <= padding_idx < num_weights else None)
        sum_code = _SCATTER_REDUCE["sum"]
        size = grad_output.dtype.itemsize

        def planned(grad_output: Any, indices: Any, num_weights: int, padding_idx: int,
                    scale_grad_by_freq: bool) -> Any:
            (out,), (dst,) = new_out()
            if not native_fill(code, table, dst, row_strides, 0.0):
                return None  # the generic path
            try:  # (the operands' data_ptr(), written out; int64 indices: 8 bytes)
                done = native_scatter(code, table, dst, row_strides, 0, index_shape,
                                      indices._storage._ptr + indices._offset * 8, index_strides,
                                      grad_output._storage._ptr + grad_output._offset * size,
                                      row_strides, sum_code, True)
            except IndexError:
                raise IndexError("index out of range in self") from None
            if not done:
                return None
            if pad_offset is not None:
                native_fill(code, (1, width), dst + pad_offset, row_strides, 0.0)
            return out

        return planned

    @plannable(plan_embedding_backward, native=True)
    def embedding_dense_backward(grad_output: Any, indices: Any, num_weights: int,
                                 padding_idx: int, scale_grad_by_freq: bool) -> Any:
        """``aten::embedding_dense_backward``: planned calls run natively (above); a first
        call, and every case off that path, runs core's composite."""
        from torch.backends import contract

        return contract.composite("aten::embedding_dense_backward")(
            grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)

    native_gather = native.gather
    composites: dict[str, Kernel] = {}

    def composite(name: str) -> Kernel:
        """Core's composite of ``name``, looked up once (the fallback of every kernel below)."""
        kernel = composites.get(name)
        if kernel is None:
            from torch.backends import contract

            kernel = composites[name] = contract.composite(name)
        return kernel

    def takes(a: Any, index: Any) -> int:
        """``a``'s ``_C`` dtype code when the native gather takes ``a`` and ``index`` (both on
        the CPU with elements and dims, an int64 index, a known dtype), else ``unknown``."""
        if (a.device.type != "cpu" or index.device.type != "cpu" or not a.ndim
                or not a.numel() or not index.numel()
                or dtype_codes.get(index.dtype, unknown) != int64):
            return unknown
        return dtype_codes.get(a.dtype, unknown)

    def gather_plan(code: int, a: Any, dim: int, out_shape: tuple[int, ...],
                    index_strides: tuple[int, ...]) -> Planned:
        """The kernel ``(a, index) -> out`` of one signature: ``out[p] = a[p with p[dim]
        replaced by index[p]]``, the index read with ``index_strides`` (0 along the dims it
        is broadcast over); None when the native check rejects an index."""
        a_shape = tuple(a.shape)
        a_strides = tuple(a.stride())
        new_out = allocator([(out_shape, a.dtype, a.device)])
        out_strides = contiguous_strides(out_shape)

        def planned(a: Any, index: Any) -> Any:
            (out,), (dst,) = new_out()
            try:
                done = native_gather(code, out_shape, dst, out_strides, a_shape, a.data_ptr(),
                                     a_strides, dim, index.data_ptr(), index_strides)
            except IndexError:
                return None  # the composite wraps or raises PyTorch's error
            return out if done else None

        return planned

    def plan_gather(a: Any, dim: int, index: Any, sparse_grad: bool = False) -> Planned | None:
        """The planned ``aten::gather`` of a signature whose first call succeeded (so its
        shapes and dim are valid), on the native gather."""
        code = takes(a, index)
        if code == unknown or index.ndim != a.ndim:
            return None
        run = gather_plan(code, a, dim % a.ndim, tuple(index.shape), tuple(index.stride()))

        def planned(a: Any, dim: int, index: Any, sparse_grad: bool = False) -> Any:
            return run(a, index)

        return planned

    @plannable(plan_gather, native=True)
    def aten_gather(a: Any, dim: int, index: Any, sparse_grad: bool = False) -> Any:
        """``aten::gather``: planned calls run natively (above); a first call runs core's
        composite."""
        return composite("aten::gather")(a, dim, index, sparse_grad=sparse_grad)

    def plan_index_select(a: Any, dim: int, index: Any) -> Planned | None:
        """The planned ``aten::index_select``: a gather whose index is the 1-d ``index``
        broadcast along every dim but ``dim``."""
        code = takes(a, index)
        if code == unknown or index.ndim > 1:
            return None
        d = dim % a.ndim
        shape = list(a.shape)
        shape[d] = index.numel()
        strides = [0] * a.ndim
        strides[d] = index.stride()[0] if index.ndim else 0
        run = gather_plan(code, a, d, tuple(shape), tuple(strides))

        def planned(a: Any, dim: int, index: Any) -> Any:
            return run(a, index)

        return planned

    @plannable(plan_index_select, native=True)
    def index_select(a: Any, dim: int, index: Any) -> Any:
        """``aten::index_select``: planned calls run natively (above); a first call runs
        core's composite."""
        return composite("aten::index_select")(a, dim, index)

    def index(a: Any, indices: Any) -> Any:
        """``aten::index`` (``a[idx]``): one contiguous int64 index of the first dim in one
        native gather (the index read once per row of the result); every other index, and an
        index the native check rejects, through core's composite. (A tensor list names no plan
        signature, so each call makes this choice.)"""
        idx = indices[0] if len(indices) == 1 else None
        if idx is not None and idx.is_contiguous():
            code = takes(a, idx)
            if code != unknown:
                rest = tuple(a.shape)[1:]
                from torch.backends import contract

                out = contract.empty((*idx.shape, *rest), a.dtype, a.device)
                shape = (idx.numel(), *rest)
                try:
                    done = native_gather(code, shape, out.data_ptr(),
                                         contiguous_strides(shape), tuple(a.shape),
                                         a.data_ptr(), tuple(a.stride()), 0, idx.data_ptr(),
                                         (1,) + (0,) * len(rest))
                except IndexError:
                    done = False  # negative or out of range: the composite wraps or raises
                if done:
                    return out
        return composite("aten::index.Tensor")(a, indices)

    return {"gather": gather, "scatter_": scatter_, "nonzero": nonzero,
            "aten::embedding": embedding,
            "aten::embedding_dense_backward": embedding_dense_backward,
            "aten::gather": aten_gather, "aten::index_select": index_select,
            "aten::index.Tensor": index}
