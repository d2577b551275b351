"""Sparse COO tensors: their operators, and kernels for the ``Sparse`` dispatch key written
over the dense ops of this library (``index_add``/``index_put`` to sum, ``unique`` to
coalesce, ``index_select`` and a product for ``mm``), so every device backend serves sparse
tensors with its dense kernels (docs/ops.md, "Sparse tensors").

What a sparse tensor is lives in :mod:`torch._core.sparse`. Operators here are of two kinds:
ones of their own (``_sparse_coo_tensor_with_dims_and_tensors``, ``to_dense``, ``_coalesce``,
``_values``, ``_sparse_mm``, ``_sparse_sum``, ``_sparse_softmax``...), with derivative rules
in :mod:`torch.autograd._formulas.sparse`, and sparse kernels of dense operators (``mm``,
``add``, ``mul``, ``t``...), differentiated by their dense rules. An operator without a sparse
kernel raises the dispatcher's "Could not run ... 'SparseCPU' backend" error.
"""

from __future__ import annotations

import operator
from typing import Any

from .._core import dispatch as _dispatch, dtype as _dtype, layout as _layout
from .._core.promotion import result_type
from .._core.sparse import SPARSE, SparseKey, SparseTensor, make
from .._core.tensor import Tensor
from . import (
    creation as _creation,
    factories as _fac,
    reductions as _red,
    shape as _shape,
)

__all__ = ["sparse_bsc_tensor", "sparse_bsr_tensor", "sparse_compressed_tensor",
           "sparse_coo_tensor", "sparse_csc_tensor", "sparse_csr_tensor",
           "_sparse_coo_tensor_unsafe"]

_INT64 = _dtype.int64
_EXPLICIT = _dispatch.COMPOSITE_EXPLICIT


def _is_sparse(t: Any) -> bool:
    return t.__class__ is SparseTensor


def _dense_device(dev: Any) -> Any:
    return dev.dense if dev.__class__ is SparseKey else dev


# -- index arithmetic ------------------------------------------------------------------------


def _row_major(sizes: tuple[int, ...]) -> list[int]:
    strides = [1] * len(sizes)
    for d in range(len(sizes) - 2, -1, -1):
        strides[d] = strides[d + 1] * max(sizes[d + 1], 1)
    return strides


def _keys(indices: Tensor, sizes: tuple[int, ...]) -> Tensor:
    """Each entry's position in the row-major order of the sparse dims (int64): one number
    per entry, so that sorting and matching entries are dense ops on a vector."""
    nnz = indices._shape[1]
    if not sizes:
        return _fac.zeros(nnz, dtype=_INT64, device=indices.device)
    strides = _fac.tensor(_row_major(sizes), dtype=_INT64, device=indices.device)
    return (indices * strides.unsqueeze(1)).sum(0)


def _unravel(keys: Tensor, sizes: tuple[int, ...]) -> Tensor:
    """The indices (``len(sizes)`` x n) of row-major positions ``keys``."""
    rows = [(keys // st) % max(n, 1) for n, st in zip(sizes, _row_major(sizes))]
    if not rows:
        return _fac.zeros((0, keys._shape[0]), dtype=_INT64, device=keys.device)
    return _shape.stack(rows)


def _coalesced_parts(t: SparseTensor) -> tuple[Tensor, Tensor]:
    """``t``'s indices and values with each position once, in row-major order, duplicate
    entries summed."""
    indices, values = t._sparse_indices, t._sparse_values
    if t._coalesced or values._shape[0] == 0:
        return indices, values
    sizes = tuple(t._shape[:t._sparse_dim])
    unique, inverse = _keys(indices, sizes).unique(sorted=True, return_inverse=True)
    summed = _fac.zeros((unique._shape[0],) + tuple(values._shape[1:]), dtype=values._dtype,
                        device=values.device)
    summed.index_add_(0, inverse, values)
    return _unravel(unique, sizes), summed


def positions(t: SparseTensor) -> Tensor:
    """``t``'s positions, each once, in row-major order (its indices when it is coalesced):
    the pattern of its gradients, which as tensors must not count a position twice."""
    indices = t._sparse_indices
    if t._coalesced or indices._shape[1] == 0:
        return indices
    sizes = tuple(t._shape[:t._sparse_dim])
    return _unravel(_keys(indices, sizes).unique(sorted=True), sizes)


def values_at(source: Tensor, indices: Tensor, sparse_dim: int) -> Tensor:
    """The values ``source`` (dense, or sparse with ``sparse_dim`` sparse dims) holds at each
    position of ``indices`` (zero where a sparse ``source`` has none): the values of
    ``source.sparse_mask(...)``, what gradients of sparse tensors are made of."""
    if not _is_sparse(source):
        return source[tuple(indices.unbind(0))] if sparse_dim else source.unsqueeze(0).expand(
            (indices._shape[1],) + tuple(source._shape))
    if source._sparse_indices is indices:  # the same pattern: its values as they are
        return source._sparse_values
    src_idx, src_vals = _coalesced_parts(source)
    sizes = tuple(source._shape[:sparse_dim])
    src_keys = _keys(src_idx, sizes)
    want = _keys(indices, sizes)
    n = src_keys._shape[0]
    out_shape = (want._shape[0],) + tuple(src_vals._shape[1:])
    if n == 0:
        return _fac.zeros(out_shape, dtype=src_vals._dtype, device=src_vals.device)
    pos = _red.searchsorted(src_keys, want).clamp(max=n - 1)
    found = src_keys.index_select(0, pos) == want
    picked = src_vals.index_select(0, pos)
    mask = found.reshape((-1,) + (1,) * (len(out_shape) - 1))
    return picked * mask.to(picked._dtype)


def _new_like(t: SparseTensor, values: Tensor, coalesced: bool | None = None) -> SparseTensor:
    """A sparse tensor with ``t``'s indices and shape over new ``values``."""
    return make(t._sparse_indices, values, t._shape,
                t._coalesced if coalesced is None else coalesced)


# -- construction ----------------------------------------------------------------------------


def _with_dims_kernel(sparse_dim: int, dense_dim: int, size: list[int], indices: Tensor,
                      values: Tensor, *, is_coalesced: bool | None = None) -> SparseTensor:
    return make(indices, values.detach(), tuple(size), bool(is_coalesced))


def _check_parts(indices: Tensor, values: Tensor, size: tuple[int, ...],
                 check_bounds: bool) -> None:
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices._shape)}")
    if indices._dtype is not _INT64:
        raise RuntimeError(f"indices must be an int64 tensor, but got {indices._dtype}")
    if values.ndim == 0:
        raise RuntimeError("values must have at least one dimension (nnz x dense dims)")
    sparse_dim = indices._shape[0]
    dense_dim = values.ndim - 1
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
                           f"({dense_dim}), but got {len(size)}")
    if indices._shape[1] != values._shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{indices._shape[1]}, nnz from values: {values._shape[0]}")
    expected = [values._shape[0], *size[sparse_dim:]]
    if list(values._shape) != expected:
        raise RuntimeError(f"values has incorrect size, expected {expected}, got "
                           f"{list(values._shape)}")
    if indices.device != values.device:
        raise RuntimeError(f"device of indices ({indices.device}) must match device of values "
                           f"({values.device})")
    if check_bounds and indices._shape[1] and indices._storage._device.type != "meta":
        # Never a wrong result: an index outside the size would write past a dense buffer.
        low = indices.amin(1).tolist()
        high = indices.amax(1).tolist()
        for d in range(sparse_dim):
            if low[d] < 0:
                raise RuntimeError(f"found negative index {low[d]} for dim {d}")
            if high[d] >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                                   f"{size[d]} but found index {high[d]}")


def sparse_coo_tensor(indices: Any, values: Any, size: Any = None, *,
                      dtype: _dtype.dtype | None = None, device: Any = None,
                      pin_memory: bool = False, requires_grad: bool = False,
                      check_invariants: bool | None = None,
                      is_coalesced: bool | None = None) -> Tensor:
    """A sparse COO tensor with ``values`` at ``indices`` (``sparse_dim`` x ``nnz``); ``size``
    defaults to the smallest that holds every index. Shares ``values``' memory when it
    needs no conversion. Index bounds are always checked (a wrong index would otherwise
    corrupt memory)."""
    if not isinstance(indices, Tensor):
        indices = _creation.as_tensor(indices, dtype=_INT64, device=device)
    elif indices._dtype is not _INT64 and not indices._dtype.is_floating_point:
        indices = indices.to(_INT64)
    if not isinstance(values, Tensor):
        values = _creation.as_tensor(values, dtype=dtype, device=device)
    elif dtype is not None or device is not None:
        values = values.to(dtype=dtype or values._dtype,
                           device=device if device is not None else values.device)
    if device is not None and indices.device != values.device:
        indices = indices.to(values.device)
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices._shape)}")
    sparse_dim = indices._shape[0]
    if size is None:
        if indices._shape[1]:
            lead = [int(m) + 1 for m in indices.amax(1).tolist()]
        else:
            lead = [0] * sparse_dim
        size = tuple(lead) + tuple(values._shape[1:])
    else:
        size = tuple(operator.index(s) for s in size)
    _check_parts(indices, values, size, True)
    out = _WITH_DIMS(sparse_dim, len(size) - sparse_dim, list(size), indices, values,
                     is_coalesced=bool(is_coalesced))
    if requires_grad:
        out.requires_grad_(True)
    return out


def _sparse_coo_tensor_unsafe(indices: Tensor, values: Tensor, size: Any, *,
                              dtype: _dtype.dtype | None = None, device: Any = None,
                              pin_memory: bool = False, requires_grad: bool = False,
                              is_coalesced: bool | None = None) -> Tensor:
    """``sparse_coo_tensor`` with a given size (its checks stay: this is no faster here)."""
    return sparse_coo_tensor(indices, values, size, dtype=dtype, device=device,
                             requires_grad=requires_grad, is_coalesced=is_coalesced)


def _compressed_unsupported(name: str) -> Any:
    def unsupported(*args: Any, **kwargs: Any) -> Tensor:
        raise NotImplementedError(f"{name}(): compressed sparse layouts (CSR, CSC, BSR, BSC) "
                                  "are not supported; sparse_coo_tensor() and the COO layout "
                                  "are")

    unsupported.__name__ = name
    unsupported.__doc__ = f"``{name}``: not supported (only the COO layout is)."
    return unsupported


sparse_csr_tensor = _compressed_unsupported("sparse_csr_tensor")
sparse_csc_tensor = _compressed_unsupported("sparse_csc_tensor")
sparse_bsr_tensor = _compressed_unsupported("sparse_bsr_tensor")
sparse_bsc_tensor = _compressed_unsupported("sparse_bsc_tensor")
sparse_compressed_tensor = _compressed_unsupported("sparse_compressed_tensor")


def _to_sparse_kernel(self: Tensor, sparse_dim: int) -> SparseTensor:
    nd = self.ndim
    if not 0 <= sparse_dim <= nd:
        raise RuntimeError(f"sparse_dim must be in [0, {nd}], but got {sparse_dim}")
    if sparse_dim == 0:
        indices = _fac.zeros((0, 1), dtype=_INT64, device=self.device)
        return make(indices, self.unsqueeze(0).clone(), self._shape, True)
    nonzero = self != 0
    if sparse_dim < nd:  # a dense slice is stored when any of its elements is nonzero
        nonzero = nonzero.flatten(sparse_dim).any(-1)
    indices = nonzero.nonzero().t().contiguous()  # row-major order: coalesced
    values = self[tuple(indices.unbind(0))]
    return make(indices, values, self._shape, True)


# -- conversion and access -------------------------------------------------------------------


def _to_dense_kernel(self: SparseTensor, dtype: _dtype.dtype | None = None, *,
                     masked_grad: bool | None = None) -> Tensor:
    values = self._sparse_values
    out = _fac.zeros(tuple(self._shape), dtype=values._dtype, device=values.device)
    if values._shape[0]:
        out.index_put_(tuple(self._sparse_indices.unbind(0)), values, accumulate=True)
    return out if dtype is None or dtype is out._dtype else out.to(dtype)


def _coalesce_kernel(self: SparseTensor) -> SparseTensor:
    indices, values = _coalesced_parts(self)
    return make(indices, values, self._shape, True)


def _indices_kernel(self: SparseTensor) -> Tensor:
    return self._sparse_indices.detach()


def _values_kernel(self: SparseTensor) -> Tensor:
    return self._sparse_values.detach()


def _clone_kernel(self: SparseTensor, *, memory_format: Any = None) -> SparseTensor:
    return make(self._sparse_indices.clone(), self._sparse_values.clone(), self._shape,
                self._coalesced)


def _alias_kernel(self: SparseTensor) -> SparseTensor:
    return make(self._sparse_indices, self._sparse_values, self._shape, self._coalesced)


def _to_copy_kernel(self: SparseTensor, *, dtype: _dtype.dtype | None = None,
                    layout: Any = None, device: Any = None, pin_memory: bool | None = None,
                    non_blocking: bool = False, memory_format: Any = None) -> Tensor:
    if layout is not None and layout is not _layout.sparse_coo:
        raise NotImplementedError(f"_to_copy of a sparse tensor to layout {layout} is not "
                                  "supported (use to_dense())")
    dev = self.device if device is None else _dense_device(device)
    values = self._sparse_values.to(dtype=dtype or self._dtype, device=dev)
    indices = self._sparse_indices.to(device=dev)
    if values is self._sparse_values:
        values = values.clone()
    return make(indices, values, self._shape, self._coalesced)


def _copy_kernel(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    if not _is_sparse(self):  # dense <- sparse: the dense form of src
        self.copy_(_to_dense_kernel(src))
        return self
    if not _is_sparse(src):
        raise RuntimeError("copy_() of a dense tensor into a sparse tensor is not supported "
                           "(use to_sparse())")
    values = src._sparse_values.to(dtype=self._dtype, device=self.device, copy=True)
    self._sparse_indices = src._sparse_indices.to(device=self.device, copy=True)
    self._sparse_values = values
    self._shape = src._shape
    self._sparse_dim = src._sparse_dim
    self._coalesced = src._coalesced
    self._vc[0] += 1
    return self


# -- products --------------------------------------------------------------------------------


def _spmm(s: SparseTensor, dense: Tensor) -> Tensor:
    """``s @ dense`` for a 2-d sparse ``s`` (two sparse dims) and a 2-d dense ``dense``:
    each entry adds its value times a row of ``dense`` into a row of the result."""
    if s.ndim != 2 or s._sparse_dim != 2:
        raise RuntimeError(f"sparse mm: expected a 2-D sparse tensor with 2 sparse dims, got "
                           f"{s.ndim}-D with {s._sparse_dim} sparse dims")
    if dense.ndim != 2:
        raise RuntimeError(f"mm: expected 2-D dense mat2, got {dense.ndim}-D")
    if s._shape[1] != dense._shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s._shape[0]}x"
                           f"{s._shape[1]} and {dense._shape[0]}x{dense._shape[1]})")
    if s._dtype is not dense._dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: "
                           f"{s._dtype} != {dense._dtype}")
    values = s._sparse_values
    out = _fac.zeros((s._shape[0], dense._shape[1]), dtype=values._dtype, device=values.device)
    if values._shape[0]:
        rows, cols = s._sparse_indices.unbind(0)
        out.index_add_(0, rows, dense.index_select(0, cols) * values.unsqueeze(1))
    return out


def _mm_kernel(self: Tensor, mat2: Tensor) -> Tensor:
    if _is_sparse(self):
        if _is_sparse(mat2):
            return _spmm(self, _to_dense_kernel(mat2)).to_sparse()
        return _spmm(self, mat2)
    # dense @ sparse = (sparse^T @ dense^T)^T
    if self.ndim != 2:
        raise RuntimeError(f"mm: expected 2-D dense mat1, got {self.ndim}-D")
    return _spmm(_transpose_kernel(mat2, 0, 1), self.t()).t()


def _mv_kernel(self: SparseTensor, vec: Tensor) -> Tensor:
    if vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.ndim}, {vec.ndim}")
    return _spmm(self, vec.unsqueeze(1)).squeeze(1)


def _sparse_mm_kernel(sparse: Tensor, dense: Tensor) -> Tensor:
    if not _is_sparse(sparse):
        raise RuntimeError("torch.sparse.mm: expected mat1 to be a sparse tensor")
    return _mm_kernel(sparse, dense)


# -- views and elementwise -------------------------------------------------------------------


def _transpose_kernel(self: SparseTensor, dim0: int, dim1: int) -> SparseTensor:
    n = self.ndim
    d0 = dim0 + n if dim0 < 0 else dim0
    d1 = dim1 + n if dim1 < 0 else dim1
    if not (0 <= d0 < max(n, 1) and 0 <= d1 < max(n, 1)):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim0 if not 0 <= d0 < n else dim1})")
    shape = list(self._shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    sd = self._sparse_dim
    indices, values = self._sparse_indices, self._sparse_values
    if d0 == d1:
        return make(indices, values, self._shape, self._coalesced)
    if d0 < sd and d1 < sd:
        order = list(range(sd))
        order[d0], order[d1] = order[d1], order[d0]
        indices = indices.index_select(0, _fac.tensor(order, dtype=_INT64,
                                                      device=indices.device))
    elif d0 >= sd and d1 >= sd:
        values = values.transpose(d0 - sd + 1, d1 - sd + 1)
    else:
        raise RuntimeError("transpose(): sparse tensors can be transposed along two sparse "
                           "dims or two dense dims, not one of each")
    return make(indices, values, tuple(shape), False)


def _permute_kernel(self: SparseTensor, dims: list[int]) -> SparseTensor:
    n, sd = self.ndim, self._sparse_dim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {n} is not equal to len(dims) = {len(dims)}")
    order = _wrap_dims(dims, n)
    if len(order) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    order = [d + n if d < 0 else d for d in dims]
    if sorted(order[:sd]) != list(range(sd)):
        raise RuntimeError("permute(sparse_coo): transpositions between sparse and dense "
                           "dimensions are not allowed. Only transpositions within sparse "
                           "and dense dimensions are supported.")
    indices = self._sparse_indices.index_select(
        0, _fac.tensor(order[:sd], dtype=_INT64, device=self._sparse_values.device))
    values = self._sparse_values.permute([0] + [d - sd + 1 for d in order[sd:]])
    shape = tuple(self._shape[d] for d in order)
    return make(indices, values, shape, self._coalesced and order[:sd] == list(range(sd)))


def _zeros_like_kernel(self: SparseTensor, *, dtype: _dtype.dtype | None = None,
                       layout: Any = None, device: Any = None, pin_memory: Any = None,
                       memory_format: Any = None) -> Tensor:
    dev = self.device if device is None else _dense_device(device)
    if layout is not None and layout is not _layout.sparse_coo:
        return _fac.zeros(tuple(self._shape), dtype=dtype or self._dtype, device=dev)
    return sparse_zeros(tuple(self._shape), dtype or self._dtype, dev, self._sparse_dim)


def sparse_zeros(shape: tuple[int, ...], dtype: _dtype.dtype, device: Any,
                 sparse_dim: int | None = None) -> SparseTensor:
    """An all-zero sparse tensor (no entries) of ``shape``, every dim sparse by default."""
    sd = len(shape) if sparse_dim is None else sparse_dim
    indices = _fac.zeros((sd, 0), dtype=_INT64, device=device)
    values = _fac.zeros((0,) + tuple(shape[sd:]), dtype=dtype, device=device)
    return make(indices, values, shape, True)


def layout_zeros(shape: tuple[int, ...], dtype: _dtype.dtype | None, device: Any,
                 layout: Any) -> SparseTensor:
    """``torch.zeros(..., layout=layout)`` for a layout other than strided."""
    if layout is not _layout.sparse_coo:
        raise NotImplementedError(f"zeros(): layout {layout} is not supported (only "
                                  "torch.strided and torch.sparse_coo are)")
    probe = _fac.empty(0, dtype=dtype, device=device)  # the default dtype and device
    return sparse_zeros(tuple(shape), probe._dtype, probe.device)


def _t_kernel(self: SparseTensor) -> SparseTensor:
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    return _transpose_kernel(self, 0, 1) if self.ndim == 2 else _alias_kernel(self)


def _cat_kernel(tensors: list[Tensor], dim: int = 0) -> SparseTensor:
    if not tensors or not all(_is_sparse(t) for t in tensors):
        raise RuntimeError("cat(): mixing sparse and dense tensors is not supported "
                           "(use to_dense() or to_sparse())")
    first = tensors[0]
    n, sd = first.ndim, first._sparse_dim
    d = _wrap_dims(dim, n)[0]
    for t in tensors[1:]:
        if t.ndim != n or t._sparse_dim != sd:
            raise RuntimeError("cat(): sparse tensors must have the same number of sparse and "
                               "dense dims")
        if any(t._shape[k] != first._shape[k] for k in range(n) if k != d):
            raise RuntimeError(f"cat(): sizes of tensors must match except in dimension {d}")
    dt = result_type(*tensors)
    if d >= sd:  # along a dense dim: one entry per (tensor, entry), zeros elsewhere in the dim
        parts_i, parts_v = [], []
        offset = 0
        total = sum(t._shape[d] for t in tensors)
        vd = d - sd + 1
        for t in tensors:
            v = t._sparse_values.to(dt)
            pad_shape = list(v._shape)
            before, after = list(pad_shape), list(pad_shape)
            before[vd], after[vd] = offset, total - offset - t._shape[d]
            pieces = [_fac.zeros(tuple(before), dtype=dt, device=v.device), v,
                      _fac.zeros(tuple(after), dtype=dt, device=v.device)]
            parts_v.append(_shape.cat(pieces, vd))
            parts_i.append(t._sparse_indices)
            offset += t._shape[d]
    else:  # along a sparse dim: each tensor's indices shifted past the ones before it
        parts_i, parts_v = [], []
        offset = 0
        for t in tensors:
            shift = _fac.zeros((sd, 1), dtype=_INT64, device=t._sparse_values.device)
            shift[d, 0] = offset
            parts_i.append(t._sparse_indices + shift)
            parts_v.append(t._sparse_values.to(dt))
            offset += t._shape[d]
    shape = list(first._shape)
    shape[d] = sum(t._shape[d] for t in tensors)
    return make(_shape.cat(parts_i, 1), _shape.cat(parts_v, 0), tuple(shape), False)


def _index_select_kernel(self: SparseTensor, dim: int, index: Tensor) -> SparseTensor:
    n, sd = self.ndim, self._sparse_dim
    d = _wrap_dims(dim, n)[0]
    index = index.reshape(-1)
    indices, values = self._sparse_indices, self._sparse_values
    shape = list(self._shape)
    shape[d] = index._shape[0]
    if d >= sd:  # a dense dim: the values' slices
        return make(indices, values.index_select(d - sd + 1, index), tuple(shape),
                    self._coalesced)
    # entries sorted by their index in `d`; each selected position takes the run of entries
    # that have it (a position selected twice takes its run twice)
    order = indices[d].argsort()
    keys = indices[d].index_select(0, order)
    lo = _red.searchsorted(keys, index)
    counts = _red.searchsorted(keys, index, right=True) - lo
    total = int(counts.sum().item()) if counts._shape[0] else 0
    dev = values.device
    if total == 0:
        return make(_fac.zeros((sd, 0), dtype=_INT64, device=dev),
                    _fac.zeros((0,) + tuple(values._shape[1:]), dtype=values._dtype,
                               device=dev), tuple(shape), True)
    which = _creation.arange(index._shape[0], device=dev).repeat_interleave(counts)
    starts = counts.cumsum(0) - counts
    within = _creation.arange(total, device=dev) - starts.index_select(0, which)
    entries = order.index_select(0, lo.index_select(0, which) + within)
    new_indices = indices.index_select(1, entries).clone()
    new_indices[d] = which
    return make(new_indices, values.index_select(0, entries), tuple(shape), False)


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex)) or (
        isinstance(x, Tensor) and not _is_sparse(x) and x.ndim == 0)


def _same_shape(op: str, a: Tensor, b: Tensor) -> None:
    if a._shape != b._shape:
        raise RuntimeError(f"{op}: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(a._shape)} while other has size {list(b._shape)} (sparse "
                           "tensors do not broadcast)")


def _add_kernel(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    if not isinstance(other, Tensor):
        raise RuntimeError("add(sparse, number) is not supported: adding a number to every "
                           "element of a sparse tensor makes it dense (use to_dense())")
    _same_shape("add", self, other)
    dt = result_type(self, other)
    if _is_sparse(self) and _is_sparse(other):
        if self._sparse_dim != other._sparse_dim:
            raise RuntimeError("add: sparse tensors with different sparse dims are not "
                               "supported")
        theirs = other._sparse_values.to(dt)
        if not (alpha.__class__ is int and alpha == 1):
            theirs = theirs * alpha
        indices = _shape.cat([self._sparse_indices, other._sparse_indices], 1)
        values = _shape.cat([self._sparse_values.to(dt), theirs], 0)
        out = make(indices, values, self._shape, False)
        both = self._coalesced and other._coalesced
        return _coalesce_kernel(out) if both else out
    # one dense operand: the result is dense, the sparse values summed into it
    dense, sparse = (other, self) if _is_sparse(self) else (self, other)
    out = dense.to(dt, copy=True)
    if dense is other and not (alpha.__class__ is int and alpha == 1):
        out = out * alpha
    values = sparse._sparse_values.to(dt)
    if sparse is other and not (alpha.__class__ is int and alpha == 1):
        values = values * alpha
    if values._shape[0]:
        out.index_put_(tuple(sparse._sparse_indices.unbind(0)), values, accumulate=True)
    return out


def _sub_kernel(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    return _add_kernel(self, other, alpha=-alpha)


def _mul_kernel(self: Tensor, other: Any) -> Tensor:
    if _is_sparse(self) and _is_scalar(other):
        return _new_like(self, self._sparse_values * other)
    if _is_scalar(self) and _is_sparse(other):
        return _new_like(other, other._sparse_values * self)
    if not isinstance(other, Tensor) or not isinstance(self, Tensor):
        raise TypeError("mul(): arguments must be tensors or numbers")
    _same_shape("mul", self, other)
    if _is_sparse(self) and _is_sparse(other):
        # the product is nonzero only where both are: self's (coalesced) positions
        s = _coalesce_kernel(self)
        theirs = values_at(other, s._sparse_indices, s._sparse_dim)
        return _new_like(s, s._sparse_values * theirs, True)
    sparse, dense = (self, other) if _is_sparse(self) else (other, self)
    picked = values_at(dense, sparse._sparse_indices, sparse._sparse_dim)
    return _new_like(sparse, sparse._sparse_values * picked)


def _div_kernel(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    if not (_is_sparse(self) and _is_scalar(other)):
        raise RuntimeError("div: a sparse tensor can only be divided by a number or a 0-d "
                           "dense tensor")
    values = self._sparse_values
    out = (values / other if rounding_mode is None
           else values.div(other, rounding_mode=rounding_mode))
    return _new_like(self, out)


def _neg_kernel(self: SparseTensor) -> SparseTensor:
    return _new_like(self, -self._sparse_values)


# -- reductions ------------------------------------------------------------------------------


def _wrap_dims(dims: Any, n: int) -> list[int]:
    if isinstance(dims, int):
        dims = [dims]
    out = []
    for d in dims:
        w = d + n if d < 0 else d
        if not 0 <= w < max(n, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        out.append(w)
    return sorted(set(out))


def sparse_sum(self: SparseTensor, dims: Any = None) -> Tensor:
    """The sum over ``dims`` (all by default): dense when no sparse dim is left, else sparse
    over the sparse dims that are (coalesced), as ``torch.sparse.sum`` gives it."""
    values = self._sparse_values
    if dims is None:
        return values.sum()
    n, sd = self.ndim, self._sparse_dim
    dims = _wrap_dims(dims, n)
    dense_dims = [d - sd + 1 for d in dims if d >= sd]
    if dense_dims:
        values = values.sum(dense_dims)
    kept = [d for d in range(sd) if d not in dims]
    shape = tuple(self._shape[d] for d in range(n) if d not in dims)
    if not kept:  # every sparse dim summed: a dense result
        return values.sum(0)
    indices = self._sparse_indices.index_select(
        0, _fac.tensor(kept, dtype=_INT64, device=values.device))
    return _coalesce_kernel(make(indices, values, shape, False))


def _sum_kernel(self: SparseTensor, dim: Any = None, keepdim: bool = False, *,
                dtype: _dtype.dtype | None = None) -> Tensor:
    if keepdim:
        raise RuntimeError("sum(): keepdim=True is not supported for sparse tensors")
    if dtype is not None:
        self = _new_like(self, self._sparse_values.to(dtype))
    return sparse_sum(self, dim if dim not in (None, [], ()) else None)


def _sparse_sum_kernel(self: SparseTensor, dim: list[int] | None = None) -> Tensor:
    return sparse_sum(self, dim)


def _groups(t: SparseTensor, dim: int) -> Tensor:
    """For softmax over sparse dim ``dim``: which group (the entry's position with ``dim``
    left out) each entry of coalesced ``t`` belongs to."""
    sd = t._sparse_dim
    others = [d for d in range(sd) if d != dim]
    sizes = tuple(t._shape[d] for d in others)
    indices = t._sparse_indices.index_select(
        0, _fac.tensor(others, dtype=_INT64, device=t._sparse_values.device))
    _, inverse = _keys(indices, sizes).unique(sorted=True, return_inverse=True)
    return inverse


def _softmax_values(t: SparseTensor, dim: int, log: bool) -> Tensor:
    """Softmax over the specified entries along ``dim`` (unspecified ones count as -inf, as
    in ``torch.sparse.softmax``) of coalesced ``t``: its new values."""
    sd = t._sparse_dim
    values = t._sparse_values
    if dim >= sd:  # along a dense dim: each entry's values on their own
        d = dim - sd + 1
        return values.log_softmax(d) if log else values.softmax(d)
    if values._shape[0] == 0:
        return values.clone()
    group = _groups(t, dim)
    n = int(group.max().item()) + 1
    shape = (n,) + tuple(values._shape[1:])
    expanded = group.reshape((-1,) + (1,) * (values.ndim - 1)).expand(values._shape)
    peak = _fac.zeros(shape, dtype=values._dtype, device=values.device).scatter_reduce(
        0, expanded, values, "amax", include_self=False)
    shifted = values - peak.index_select(0, group)
    total = _fac.zeros(shape, dtype=values._dtype, device=values.device).index_add(
        0, group, shifted.exp())
    if log:
        return shifted - total.log().index_select(0, group)
    return shifted.exp() / total.index_select(0, group)


def _softmax_kernel(self: SparseTensor, dim: int, half_to_float: bool = False) -> Tensor:
    d = _wrap_dims(dim, self.ndim)[0]
    t = _coalesce_kernel(self)
    return _new_like(t, _softmax_values(t, d, False), True)


def _log_softmax_kernel(self: SparseTensor, dim: int, half_to_float: bool = False) -> Tensor:
    d = _wrap_dims(dim, self.ndim)[0]
    t = _coalesce_kernel(self)
    return _new_like(t, _softmax_values(t, d, True), True)


def group_sums(t: SparseTensor, values: Tensor, dim: int) -> Tensor:
    """For each entry of coalesced ``t``: the sum of ``values`` over the entries that share
    its softmax group along ``dim`` (what the softmax derivatives need)."""
    sd = t._sparse_dim
    if dim >= sd:
        return values.sum(dim - sd + 1, keepdim=True).expand(values._shape)
    if values._shape[0] == 0:
        return values
    group = _groups(t, dim)
    n = int(group.max().item()) + 1
    total = _fac.zeros((n,) + tuple(values._shape[1:]), dtype=values._dtype,
                       device=values.device).index_add(0, group, values)
    return total.index_select(0, group)


# -- operators -------------------------------------------------------------------------------

_NEW = _dispatch.define_aten({
    "_sparse_coo_tensor_with_dims_and_tensors": (
        "_sparse_coo_tensor_with_dims_and_tensors(int sparse_dim, int dense_dim, int[] size, "
        "Tensor indices, Tensor values, *, bool? is_coalesced=None) -> Tensor",
        _with_dims_kernel, _EXPLICIT),
    "_to_sparse.sparse_dim": ("_to_sparse.sparse_dim(Tensor self, int sparse_dim) -> Tensor",
                              _to_sparse_kernel, _EXPLICIT),
    "to_dense": ("to_dense(Tensor self, ScalarType? dtype=None, *, bool? masked_grad=None) "
                 "-> Tensor", _to_dense_kernel, SPARSE),
    "_coalesce": ("_coalesce(Tensor self) -> Tensor", _coalesce_kernel, SPARSE),
    "_indices": ("_indices(Tensor(a) self) -> Tensor(a)", _indices_kernel, SPARSE),
    "_values": ("_values(Tensor(a) self) -> Tensor(a)", _values_kernel, SPARSE),
    "_sparse_mm": ("_sparse_mm(Tensor sparse, Tensor dense) -> Tensor", _sparse_mm_kernel,
                   SPARSE),
    "_sparse_sum.dim": ("_sparse_sum.dim(Tensor self, int[1]? dim=None) -> Tensor",
                        _sparse_sum_kernel, SPARSE),
    "_sparse_softmax": ("_sparse_softmax(Tensor self, int dim, bool half_to_float=False) -> "
                        "Tensor", _softmax_kernel, SPARSE),
    "_sparse_log_softmax": ("_sparse_log_softmax(Tensor self, int dim, "
                            "bool half_to_float=False) -> Tensor", _log_softmax_kernel, SPARSE),
})
_WITH_DIMS = _NEW["_sparse_coo_tensor_with_dims_and_tensors"]

# Sparse kernels of the dense operators (differentiated by their dense rules).
_SPARSE_KERNELS = {
    "aten::mm": _mm_kernel,
    "aten::mv": _mv_kernel,
    "aten::t": _t_kernel,
    "aten::transpose.int": _transpose_kernel,
    "aten::permute": _permute_kernel,
    "aten::cat": _cat_kernel,
    "aten::index_select": _index_select_kernel,
    "aten::zeros_like": _zeros_like_kernel,
    "aten::alias": _alias_kernel,
    "aten::detach": _alias_kernel,
    "aten::clone": _clone_kernel,
    "aten::_to_copy": _to_copy_kernel,
    "aten::copy_": _copy_kernel,
    "aten::add.Tensor": _add_kernel,
    "aten::sub.Tensor": _sub_kernel,
    "aten::mul.Tensor": _mul_kernel,
    "aten::div.Tensor_mode": _div_kernel,
    "aten::div.Tensor": _div_kernel,
    "aten::neg": _neg_kernel,
    "aten::sum.dim_IntList": _sum_kernel,
    "aten::sum": _sum_kernel,  # (x.sum(): the whole sum's overload)
}
for _qualname, _kernel in _SPARSE_KERNELS.items():
    _op = _dispatch.get(_qualname)
    if _op is None:
        raise RuntimeError(f"{_qualname} is not defined: the sparse kernels load after the "
                           "dense operators")
    _op.register(SPARSE, _kernel)
ATEN = _NEW


# -- Tensor methods --------------------------------------------------------------------------


def _require_sparse(t: Tensor, what: str) -> SparseTensor:
    if not _is_sparse(t):
        raise RuntimeError(f"{what} expected a sparse tensor, but got a tensor with layout "
                           f"{t.layout}")
    return t  # type: ignore[return-value]


def to_dense(self: Tensor, dtype: _dtype.dtype | None = None, *,
             masked_grad: bool | None = None) -> Tensor:
    """The dense (strided) form of a sparse tensor (duplicates summed); ``self`` when it is
    dense already."""
    if not _is_sparse(self):
        return self if dtype is None or dtype is self._dtype else self.to(dtype)
    return ATEN["to_dense"](self, dtype)


def to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout: Any = None,
              blocksize: Any = None, dense_dim: int | None = None) -> Tensor:
    """The sparse COO form of ``self`` (its first ``sparse_dim`` dims sparse, all by
    default); ``self`` when it is one already."""
    if layout is not None and layout is not _layout.sparse_coo:
        raise NotImplementedError(f"to_sparse(): layout {layout} is not supported (only "
                                  "torch.sparse_coo is)")
    if blocksize is not None:
        raise NotImplementedError("to_sparse(): blocksize is only for block sparse layouts, "
                                  "which are not supported")
    if _is_sparse(self):
        if sparse_dim is not None and sparse_dim != self._sparse_dim:
            raise RuntimeError("to_sparse(): conversion between different sparse dims is not "
                               "supported")
        return self
    if sparse_dim is None:
        sparse_dim = self.ndim - (dense_dim or 0)
    return ATEN["_to_sparse"](self, sparse_dim)


def to_sparse_coo(self: Tensor) -> Tensor:
    """``to_sparse()``: the sparse COO form of ``self``."""
    return to_sparse(self)


def coalesce(self: Tensor) -> Tensor:
    """``self`` with each position once, in row-major order, duplicates summed (``self``
    when it is coalesced already)."""
    s = _require_sparse(self, "coalesce()")
    return s if s._coalesced else ATEN["_coalesce"](s)


def _indices(self: Tensor) -> Tensor:
    """The indices (``sparse_dim`` x ``nnz``) as stored, coalesced or not."""
    return ATEN["_indices"](_require_sparse(self, "_indices()"))


def _values(self: Tensor) -> Tensor:
    """The values (``nnz`` x dense dims) as stored, coalesced or not."""
    return ATEN["_values"](_require_sparse(self, "_values()"))


def indices(self: Tensor) -> Tensor:
    """The indices of a coalesced sparse tensor."""
    s = _require_sparse(self, "indices()")
    if not s._coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return ATEN["_indices"](s)


def values(self: Tensor) -> Tensor:
    """The values of a coalesced sparse tensor (differentiable)."""
    s = _require_sparse(self, "values()")
    if not s._coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return ATEN["_values"](s)


def sparse_mask(self: Tensor, mask: Tensor) -> Tensor:
    """``self``'s values at the positions ``mask`` (sparse) holds, as a sparse tensor with
    ``mask``'s indices."""
    m = _require_sparse(mask, "sparse_mask()")
    if self._shape != m._shape:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self._shape)} but mask has size {list(m._shape)}")
    return make(m._sparse_indices, values_at(self, m._sparse_indices, m._sparse_dim),
                m._shape, m._coalesced)


def _dense_only(name: str) -> Any:
    def method(self: Tensor) -> int:
        raise RuntimeError(f"{name}(): expected a sparse tensor, but got a tensor with layout "
                           f"{self.layout}")

    method.__name__ = name
    return method


METHODS = {
    "to_dense": to_dense,
    "to_sparse": to_sparse,
    "to_sparse_coo": to_sparse_coo,
    "coalesce": coalesce,
    "_indices": _indices,
    "_values": _values,
    "indices": indices,
    "values": values,
    "sparse_mask": sparse_mask,
    "to_sparse_csr": _compressed_unsupported("to_sparse_csr"),
    "to_sparse_csc": _compressed_unsupported("to_sparse_csc"),
    "to_sparse_bsr": _compressed_unsupported("to_sparse_bsr"),
    "to_sparse_bsc": _compressed_unsupported("to_sparse_bsc"),
    # dense tensors answer these as PyTorch's strided ones do (SparseTensor has its own)
    "sparse_dim": lambda self: 0,
    "dense_dim": lambda self: self.ndim,
    "is_coalesced": _dense_only("is_coalesced"),
    "_nnz": _dense_only("_nnz"),
}
