"""Indexing: advanced indexing and index assignment, index_* ops, gather/scatter, masked ops, take,
nonzero.

Advanced indexing follows PyTorch's plan: the basic part of an index (ints, slices, ``None``,
``...``) becomes a view, then ``aten::index`` / ``aten::index_put_`` take one entry per dim of
that view (``None`` for a dim kept whole, an integer or boolean tensor otherwise). Boolean masks
become the coordinates of their nonzero elements. Every element the result reads (or the
assignment writes) is located by its storage offset, computed with int64 tensor arithmetic, so
one ``gather`` (or ``scatter_``) over the storage seen as a 1-d tensor does the work on any
device and any strides.

Placement of the indexed dims (PyTorch's and numpy's rule): when the advanced indices sit on
adjacent dims of the view, their broadcast shape replaces those dims in place; when a sliced
or new dim separates them, it goes first.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._core import config as _config, dispatch as _dispatch, dtype as _dtype
from .._core.alloc import PRIMS, new_tensor, scalar_tensor
from .._core.promotion import broadcast_shapes
from .._core.tensor import (
    Size,
    Tensor,
    _basic_index,
    _is_basic,
    check_no_internal_overlap,
    has_data,
    wrap_dim,
)
from .arith import add, mul
from .convert import clone, copy_, scalar_type_name, to_device, to_dtype, write_out
from .inplace_operators import seen_as_inplace_form
from .shape import along, arange_index, check_tensor, gather_slices

__all__ = [
    "argwhere", "gather", "index_add", "index_copy", "index_fill", "index_put", "index_reduce",
    "index_select", "masked_fill", "masked_scatter", "masked_select", "nonzero", "put",
    "scatter", "scatter_add", "scatter_reduce", "take", "take_along_dim",
]

_INDEX_DTYPES = (_dtype.int64, _dtype.int32, _dtype.int16, _dtype.int8)


# -- index checks ----------------------------------------------------------------------------


def _extremes(idx: Tensor) -> tuple[int, int]:
    """The smallest and the largest value of an integer tensor with elements."""
    if 0 in idx._stride:
        # A broadcast dim repeats the same values: read each once (a spread index_add index
        # is one value per row; flattening it whole copied every repeat first).
        shape = tuple(1 if st == 0 else n for n, st in zip(idx._shape, idx._stride))
        idx = idx.as_strided(shape, idx._stride, idx._offset)
    flat = idx if idx.ndim == 1 else idx.reshape(-1)
    # both extremes in one tensor, read in one copy (on an accelerator each read waits for
    # the queue)
    both = new_tensor((2,), idx._dtype, idx._device)
    PRIMS.amin(both[:1], flat, [0])
    PRIMS.amax(both[1:], flat, [0])
    lo, hi = both.tolist()
    return int(lo), int(hi)


def checked_index(idx: Tensor, size: int, dim: int, *, negative: bool = True,
                  error: Any = None) -> Tensor:
    """``idx`` as int64 with negative values wrapped (when ``negative``), after checking that
    every value lies in ``[-size, size)`` (``[0, size)`` without ``negative``). ``error(value)``
    builds the exception for the first offending value; by default PyTorch's IndexError
    naming the index, the dim and its size."""
    if idx._dtype is not _dtype.int64:
        idx = to_dtype(idx, _dtype.int64)
    if idx.numel() == 0 or not has_data(idx):  # meta and fake have no values to check
        return idx
    lo, hi = _extremes(idx)
    low = -size if negative else 0
    if lo < low or hi >= size:
        bad = next(v for v in idx.reshape(-1).tolist() if not low <= v < size)
        if error is None:
            raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size "
                             f"{size}")
        raise error(bad)
    if lo >= 0:
        return idx
    negative_mask = new_tensor(idx._shape, _dtype.bool_, idx._device)
    PRIMS.lt(negative_mask, idx, scalar_tensor(0, _dtype.int64, idx._device).expand(idx._shape))
    wrapped = new_tensor(idx._shape, _dtype.int64, idx._device)
    PRIMS.where(wrapped, negative_mask, add(idx, size), idx)
    return wrapped


def _check_index_dtype(index: Tensor, fn: str, allowed: tuple[_dtype.dtype, ...] = (
        _dtype.int64, _dtype.int32)) -> None:
    if not isinstance(index, Tensor):
        raise TypeError(f"{fn}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._dtype not in allowed:
        names = " or ".join(d._name for d in allowed)
        raise RuntimeError(f"{fn}(): Expected dtype {names} for index")


def _storage_1d(t: Tensor) -> Tensor:
    """The whole storage of ``t`` as a 1-d tensor of its dtype (offsets index into it)."""
    n = t._storage._nbytes // t._dtype.itemsize
    return t.as_strided((n,), (1,), 0)


# -- aten::index and aten::index_put_ -------------------------------------------------------


def _index_plan(self: Tensor, indices: list[Any]) -> tuple[Size, Tensor]:
    """The result shape of ``self[indices]`` and the storage offset of each of its elements
    (an int64 tensor of that shape)."""
    adv: list[tuple[int, Tensor]] = []  # (dim of self, int64 index)
    dim = 0
    for item in indices:
        if item is None:
            dim += 1
            continue
        if not isinstance(item, Tensor):
            raise TypeError(f"indices must be Tensors or None, not {type(item).__name__}")
        if item._dtype is _dtype.uint8:
            warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a "
                          "dtype torch.bool instead.", UserWarning,
                          stacklevel=_config.external_stacklevel())
        if item._dtype in (_dtype.bool_, _dtype.uint8):
            k = item.ndim
            if dim + k > self.ndim:
                raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
            for j in range(k):
                if item._shape[j] != self._shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(item._shape)} at index {j} does not match "
                        f"the shape of the indexed tensor {list(self._shape)} at index "
                        f"{dim + j}")
            if k == 0:  # a 0-d mask adds a dim of size 1 (True) or 0 (False)
                raise IndexError("a zero-dimensional mask must be given through __getitem__")
            coords = PRIMS.nonzero(item)  # (n, k)
            adv.extend((dim + j, coords.select(1, j)) for j in range(k))
            dim += k
        elif item._dtype in _INDEX_DTYPES:
            adv.append((dim, item))
            dim += 1
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if dim > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    adv = [(d, checked_index(idx, self._shape[d], j)) for j, (d, idx) in enumerate(adv)]
    try:
        bshape = tuple(broadcast_shapes(*(idx._shape for _, idx in adv)))
    except RuntimeError:
        shapes = ", ".join(str(list(idx._shape)) for _, idx in adv)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together "
                         f"with shapes {shapes}") from None
    adv_dims = [d for d, _ in adv]
    rest = [d for d in range(self.ndim) if d not in adv_dims]
    adjacent = adv_dims == list(range(adv_dims[0], adv_dims[0] + len(adv_dims))) if adv else True
    at = adv_dims[0] if adv and adjacent else 0  # where the broadcast index dims go
    before = [d for d in rest if adjacent and d < at]
    after = [d for d in rest if d not in before]
    shape = tuple([self._shape[d] for d in before] + list(bshape)
                  + [self._shape[d] for d in after])
    ndim, nb = len(shape), len(bshape)
    # offset = storage offset + sum(index_j * stride_j) + sum(position_r * stride_r), each
    # term shaped to broadcast along its own output dims
    offsets = scalar_tensor(self._offset, _dtype.int64, self._device).reshape((1,) * ndim)
    for d, idx in adv:
        view = (1,) * at + (1,) * (nb - idx.ndim) + tuple(idx._shape) + (1,) * (ndim - at - nb)
        offsets = add(offsets, mul(idx, self._stride[d]).reshape(view))
    positions = list(range(len(before))) + list(range(at + nb, ndim))
    for p, d in zip(positions, before + after):
        view = [1] * ndim
        view[p] = self._shape[d]
        offsets = add(offsets, mul(arange_index(self._shape[d], self._device), self._stride[d])
                      .view(view))
    if tuple(offsets._shape) != shape:
        offsets = offsets.expand(shape).contiguous()
    return Size(shape), offsets


def _index_kernel(self: Tensor, indices: list[Any]) -> Tensor:
    shape, offsets = _index_plan(self, list(indices))
    out = new_tensor(tuple(shape), self._dtype, self._device)
    if out.numel():
        PRIMS.gather(out.view(-1), _storage_1d(self), 0, offsets.reshape(-1))
    return out


def _index_put_kernel(self: Tensor, indices: list[Any], values: Tensor,
                      accumulate: bool = False) -> Tensor:
    if values._dtype is not self._dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{scalar_type_name(self._dtype)} for the destination and "
                           f"{scalar_type_name(values._dtype)} for the source.")
    if any(_is_mask(i) and not has_data(i) for i in indices):
        # meta and fake: which elements a mask selects is data; the result is self's layout
        self._vc[0] += 1
        return self
    shape, offsets = _index_plan(self, list(indices))
    src = _broadcast_value(values, tuple(shape))
    if offsets.numel():
        flat_src = src.reshape(-1)  # copies a broadcast value: scatter reads it densely
        PRIMS.scatter_(_storage_1d(self), 0, offsets.reshape(-1), flat_src,
                   "sum" if accumulate else "none", True)
    self._vc[0] += 1
    return self


def _is_mask(index: Any) -> bool:
    return isinstance(index, Tensor) and index._dtype in (_dtype.bool_, _dtype.uint8)


def _broadcast_value(values: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``values`` expanded to ``shape``; leading size-1 dims beyond ``shape``'s are dropped,
    as PyTorch allows (``t[0] = ones(1, 3)``)."""
    while values.ndim > len(shape) and values._shape[0] == 1:
        values = values.squeeze(0)
    if values.ndim > len(shape):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values._shape)} cannot "
                           f"be broadcast to indexing result of shape {list(shape)}")
    try:
        return values.expand(shape)
    except RuntimeError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values._shape)} cannot "
                           f"be broadcast to indexing result of shape {list(shape)}") from None


# -- gather and scatter ----------------------------------------------------------------------


def _check_gather_shapes(self: Tensor, dim: int, index: Tensor, fn: str,
                         src: Tensor | None = None) -> None:
    if max(index.ndim, 1) != max(self.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           f"{'self' if src is not None else 'input'} tensor")
    ishape = index._shape if index.ndim else (1,)
    sshape = self._shape if self.ndim else (1,)
    for d in range(len(ishape)):
        if d != dim and ishape[d] > sshape[d]:
            if src is None:
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index {list(index._shape)} "
                    f"to be no larger than self {list(self._shape)} apart from dimension {dim}")
            raise RuntimeError(
                f"Expected index {list(index._shape)} to be no larger than self "
                f"{list(self._shape)} apart from dimension {dim} and to be no larger size than "
                f"src {list(src._shape)}")
    if src is not None:
        srcshape = src._shape if src.ndim else (1,)
        if src.ndim and (src.ndim != index.ndim if index.ndim else src.ndim > 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        for d in range(len(ishape)):
            if ishape[d] > srcshape[d]:
                raise RuntimeError(
                    f"Expected index {list(index._shape)} to be no larger than self "
                    f"{list(self._shape)} apart from dimension {dim} and to be no larger size "
                    f"than src {list(src._shape)}")


def _dim_size(t: Tensor, dim: int) -> int:
    return t._shape[dim] if t.ndim else 1


def _gather_kernel(self: Tensor, dim: int, index: Tensor, sparse_grad: bool = False) -> Tensor:
    d = wrap_dim(dim, self.ndim)
    _check_index_dtype(index, "gather")
    _check_gather_shapes(self, d, index, "gather")
    size = _dim_size(self, d)
    idx = checked_index(index, size, d, negative=False, error=lambda v: RuntimeError(
        f"index {v} is out of bounds for dimension {d} with size {size}"))
    out = new_tensor(index._shape, self._dtype, self._device)
    if out.numel():
        PRIMS.gather(out, self, d, idx)
    return out


_SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_inplace(self: Tensor, dim: int, index: Tensor, src: Any, reduce: str,
                     include_self: bool, fn: str) -> Tensor:
    """The shared body of scatter_/scatter_add_/scatter_reduce_ (checks, then one
    primitive)."""
    if 0 in self._stride:
        check_no_internal_overlap(self)
    d = wrap_dim(dim, self.ndim)
    _check_index_dtype(index, fn, (_dtype.int64,))
    if isinstance(src, Tensor):
        if src._dtype is not self._dtype:
            raise RuntimeError(f"{fn}(): Expected self.dtype to be equal to src.dtype")
        _check_gather_shapes(self, d, index, fn, src)
    else:
        _check_gather_shapes(self, d, index, fn)
        src = scalar_tensor(src, self._dtype, self._device).expand(index._shape)
    size = _dim_size(self, d)
    idx = checked_index(index, size, d, negative=False, error=lambda v: RuntimeError(
        f"index {v} is out of bounds for dimension {d} with size {size}"))
    if idx.numel():
        PRIMS.scatter_(self, d, idx, src, reduce, include_self)
    self._vc[0] += 1
    return self


def _legacy_reduce(reduce: str | None) -> str:
    if reduce is None:
        return "none"
    table = {"add": "sum", "multiply": "prod"}
    if reduce not in table:
        raise RuntimeError("reduce argument must be either add or multiply.")
    return table[reduce]


def _scatter_kernel(self: Tensor, dim: int, index: Tensor, src: Any, *,
                    reduce: str | None = None) -> Tensor:
    return _scatter_inplace(clone(self), dim, index, src, _legacy_reduce(reduce), True,
                            "scatter")


def _scatter_reduce_kernel(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                           include_self: bool = True) -> Tensor:
    if reduce not in _SCATTER_REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    return _scatter_inplace(clone(self), dim, index, src, reduce, include_self,
                            "scatter_reduce")


def _index_select_kernel(self: Tensor, dim: int, index: Tensor) -> Tensor:
    d = wrap_dim(dim, self.ndim)
    _check_index_dtype(index, "index_select")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    idx = checked_index(index.reshape(-1), _dim_size(self, d), d, negative=False,
                        error=lambda v: IndexError("index out of range in self"))
    if self.ndim == 0:
        return gather_slices(self.reshape(1), 0, idx).view(index._shape)
    return gather_slices(self, d, idx)


def _nonzero_kernel(self: Tensor) -> Tensor:
    return PRIMS.nonzero(self)


def _masked_fill_kernel(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    _check_mask(mask, "masked_fill_")
    value = _fill_value(value, "masked_fill_")
    shape = tuple(broadcast_shapes(self._shape, mask._shape))
    out = new_tensor(shape, self._dtype, self._device)
    fill = _fill_source(value, self, shape)
    if out.numel():
        PRIMS.where(out, mask.expand(shape), fill, self.expand(shape))
    return out


def _define_aten() -> dict[str, _dispatch.Operator]:
    table = {
        "index.Tensor": ("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
                         _index_kernel),
        "index_put_": ("index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, "
                       "bool accumulate=False) -> Tensor(a!)", _index_put_kernel),
        "gather": ("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) "
                   "-> Tensor", _gather_kernel),
        "scatter": ("scatter(Tensor self, int dim, Tensor index, Tensor src, *, "
                    "str? reduce=None) -> Tensor", _scatter_kernel),
        "scatter_reduce.two": ("scatter_reduce.two(Tensor self, int dim, Tensor index, "
                               "Tensor src, str reduce, *, bool include_self=True) -> Tensor",
                               _scatter_reduce_kernel),
        "index_select": ("index_select(Tensor self, int dim, Tensor index) -> Tensor",
                         _index_select_kernel),
        "nonzero": ("nonzero(Tensor self) -> Tensor", _nonzero_kernel),
        "masked_fill.Scalar": ("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) "
                               "-> Tensor", _masked_fill_kernel),
    }
    return _dispatch.define_aten(table)


ATEN = _define_aten()


# -- Tensor.__getitem__ / __setitem__ -----------------------------------------------------------


def _as_index_tensor(item: Any, dev: Any) -> Tensor:
    """A list, tuple or array used as an index, as a tensor (an empty one indexes nothing)."""
    from .factories import tensor

    if isinstance(item, Tensor):
        # PyTorch moves a CPU index to the indexed tensor's device (``x_xpu[cpu_index]``,
        # ``x_xpu[cpu_mask] = v``): indices built on the host are common in training code.
        if item._device is not dev and item._device.type == "cpu" and dev.type != "cpu":
            return item.to(dev)
        return item
    if not isinstance(item, (list, tuple)):  # numpy arrays and other array-likes
        arr = np.asarray(item)
        if arr.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        item = arr.astype(bool if arr.dtype.kind == "b" else np.int64).tolist()
    if isinstance(item, (list, tuple)) and len(item) == 0:
        return tensor([], dtype=_dtype.int64, device=dev)
    return tensor(item, device=dev)


def _normalise_index(index: Any) -> tuple[Any, ...]:
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and any(
            isinstance(i, (list, tuple, slice, Tensor)) or i is None or i is Ellipsis
            for i in index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated "
                      "and will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq].",
                      UserWarning, stacklevel=_config.external_stacklevel())
        return tuple(index)
    return (index,)


def _split_index(t: Tensor, index: Any) -> tuple[Tensor, list[Any]]:
    """The view selected by the basic part of ``index`` and, per dim of that view, ``None`` or
    the advanced index tensor applied to it."""
    items = _normalise_index(index)
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    parsed: list[Any] = []
    consumed = 0
    for item in items:
        if isinstance(item, bool) or (isinstance(item, Tensor) and item.ndim == 0
                                      and item._dtype is _dtype.bool_):
            # a 0-d mask: a new dim of size 1 indexed by [0] (True) or by [] (False)
            parsed.append(("bool", bool(item)))
        elif _is_basic(item):
            parsed.append(("basic", item))
            if item is not None and item is not Ellipsis:
                consumed += 1
        else:
            idx = _as_index_tensor(item, t._device)
            parsed.append(("adv", idx))
            consumed += idx.ndim if idx._dtype in (_dtype.bool_, _dtype.uint8) else 1
    if consumed > t.ndim:
        raise IndexError(f"too many indices for tensor of dimension {t.ndim}")
    basic: list[Any] = []
    per_dim: list[Any] = []  # one entry per dim of the view
    for kind, item in parsed:
        if kind == "bool":
            basic.append(None)
            per_dim.append(arange_index(1 if item else 0, t._device))
        elif kind == "adv":
            k = item.ndim if item._dtype in (_dtype.bool_, _dtype.uint8) else 1
            basic.extend([slice(None)] * k)
            per_dim.append(item)
            per_dim.extend(["consumed"] * (k - 1))
        elif item is Ellipsis:
            n = t.ndim - consumed
            basic.extend([slice(None)] * n)
            per_dim.extend([None] * n)
        elif item is None or isinstance(item, slice):
            basic.append(item)
            per_dim.append(None)
        else:
            basic.append(item)  # an int: its dim disappears from the view
    view = _basic_index(t, tuple(basic))
    return view, [i for i in per_dim if not (isinstance(i, str) and i == "consumed")]


def _is_index_scalar(item: Any) -> bool:
    """A 0-d integer tensor used as an index: PyTorch reads its value and selects, as with an
    int (bool and uint8 ones are masks)."""
    return (isinstance(item, Tensor) and not item._shape and item._dtype in _INDEX_DTYPES)


def _scalars_as_ints(items: tuple[Any, ...]) -> tuple[Any, ...]:
    """``items`` with each 0-d integer tensor read as an int (on meta this raises PyTorch's
    item() error, under a fake mode its data-dependent error)."""
    if not any(_is_index_scalar(i) for i in items):
        return items
    return tuple(int(i.item()) if _is_index_scalar(i) else i for i in items)


def getitem(t: Tensor, index: tuple[Any, ...]) -> Tensor:
    """``t[index]`` for an index holding tensors, lists or booleans (a copy; 0-d integer
    tensors select like ints, so an index of only those and basic items gives a view)."""
    if index.__class__ is Tensor and index._shape and index._dtype in _INDEX_DTYPES and (
            index._device is t._device):
        # x[idx], one integer tensor with dims (the usual gather of rows): the operator on
        # ``t`` itself, as PyTorch calls it, without splitting the index into parts
        return ATEN["index"](t, [index])
    items = _scalars_as_ints(_normalise_index(index))
    if all(_is_basic(i) and not isinstance(i, bool) for i in items):
        return _basic_index(t, items)
    view, indices = _split_index(t, items)
    return ATEN["index"](view, _trim(indices))


def _trim(indices: list[Any]) -> list[Any]:
    while indices and indices[-1] is None:
        indices = indices[:-1]
    return indices


def setitem(self: Tensor, index: Any, value: Any) -> None:
    """``t[index] = value``: basic indices write through a view; advanced ones scatter. The
    value (a number or a tensor) broadcasts to the indexed shape."""
    items = _normalise_index(index)
    if all(_is_basic(i) and not isinstance(i, bool) for i in items):
        view = _basic_index(self, items)
        if isinstance(value, Tensor):
            copy_(view, _broadcast_value(value, tuple(view._shape)))
        else:
            if 0 in view._stride:  # PyTorch writes a number through copy_, which checks
                check_no_internal_overlap(view)
            view.fill_(value)
        return
    view, indices = _split_index(self, items)
    if isinstance(value, Tensor):
        if value._device != self._device and not (value.ndim == 0 and value.is_cpu):
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {self._device} and {value._device}!")
        values = value
    else:
        values = scalar_tensor(value, self._dtype, self._device)
    if values._device != self._device:
        values = values.to(self._device)
    ATEN["index_put_"](view, _trim(indices), values, False)


# -- public functions --------------------------------------------------------------------------


def _indices_arg(indices: Any, fn: str) -> list[Any]:
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'indices' must be tuple of Tensors")
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(t).__name__}")
    return list(indices)


def index_put_(self: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """``self[indices] = values`` (``+=`` with ``accumulate``, duplicates summed). In place."""
    return ATEN["index_put_"](self, _indices_arg(indices, "index_put_"), values, accumulate)


def index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """Out-of-place :func:`index_put_`."""
    out = clone(check_tensor(input, "index_put"))
    return ATEN["index_put_"](out, _indices_arg(indices, "index_put"), values, accumulate)


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out: Tensor | None = None) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (and so on): values along ``dim``
    picked by ``index``, which has ``input``'s number of dims."""
    return write_out(out, ATEN["gather"](check_tensor(input, "gather"), dim, index,
                                         sparse_grad=sparse_grad))


def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
            reduce: str | None = None, out: Tensor | None = None) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor or a number) written at ``index`` along
    ``dim``; ``reduce="add"``/``"multiply"`` combines instead of overwriting."""
    check_tensor(input, "scatter")
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    return write_out(out, ATEN["scatter"](input, dim, index, src, reduce=reduce))


def _scatter_(self: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
              reduce: str | None = None) -> Tensor:
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter_() missing required argument 'src' or 'value'")
    if _records(self, src):
        return copy_(self, ATEN["scatter"](self, dim, index, src, reduce=reduce))
    return _scatter_inplace(self, dim, index, src, _legacy_reduce(reduce), True, "scatter_")


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor, *,
                out: Tensor | None = None) -> Tensor:
    """A copy of ``input`` with ``src`` summed in at ``index`` along ``dim``."""
    check_tensor(input, "scatter_add")
    return write_out(out, ATEN["scatter_reduce"](input, dim, index, src, "sum"))


def _scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    if _records(self, src):
        return copy_(self, ATEN["scatter_reduce"](self, dim, index, src, "sum"))
    return _scatter_inplace(self, dim, index, src, "sum", True, "scatter_add_")


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True, out: Tensor | None = None) -> Tensor:
    """A copy of ``input`` with ``src`` reduced in at ``index`` along ``dim`` (``"sum"``,
    ``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``), with or without ``input``'s own
    values."""
    check_tensor(input, "scatter_reduce")
    return write_out(out, ATEN["scatter_reduce"](input, dim, index, src, reduce,
                                                 include_self=include_self))


def _scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                     include_self: bool = True) -> Tensor:
    if reduce not in _SCATTER_REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if _records(self, src):
        return copy_(self, ATEN["scatter_reduce"](self, dim, index, src, reduce,
                                                  include_self=include_self))
    return _scatter_inplace(self, dim, index, src, reduce, include_self, "scatter_reduce_")


def index_select(input: Tensor, dim: int, index: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The slices of ``input`` along ``dim`` at the positions in the 1-d ``index``."""
    return write_out(out, ATEN["index_select"](check_tensor(input, "index_select"), dim, index))


def _index_along(self: Tensor, dim: int, index: Tensor, source_shape: tuple[int, ...] | None,
                 fn: str, negative: bool, error: Any) -> tuple[int, Tensor]:
    """Checks shared by index_add_/index_copy_/index_fill_/index_reduce_: the wrapped dim and
    the int64 index (1-d)."""
    d = wrap_dim(dim, self.ndim)
    _check_index_dtype(index, fn)
    if index.ndim > 1:
        raise IndexError(f"{fn}(): Index is supposed to be a vector")
    idx = index.reshape(-1)
    if source_shape is not None:
        expected = list(self._shape) if self.ndim else [1]
        if self.ndim:
            expected[d] = idx._shape[0]
        got = list(source_shape) if source_shape else [1]
        if got != expected and not (self.ndim == 0 and idx._shape[0] == 1
                                    and len(source_shape) <= 1):
            raise RuntimeError(f"{fn}(): Source/destination tensor must have same slice "
                               f"shapes. Destination slice shape: {expected} and source slice "
                               f"shape: {got}")
    size = _dim_size(self, d)
    return d, checked_index(idx, size, d, negative=negative,
                            error=None if error is None else error(d, size))


def _index_scatter(self: Tensor, d: int, idx: Tensor, source: Tensor, reduce: str,
                   include_self: bool = True) -> Tensor:
    """Combine ``source``'s slices into ``self``'s slices along ``d`` at ``idx``, in place
    through the scatter primitive (records nothing: for calls autograd does not watch)."""
    target = self if self.ndim else self.view(1)
    src = source.reshape(target._shape[:d] + (idx._shape[0],) + target._shape[d + 1 :])
    if idx.numel() and target.numel():
        PRIMS.scatter_(target, d, along(idx, d, tuple(src._shape)), src, reduce, include_self)
    self._vc[0] += 1
    return self


def _into_slices(self: Tensor, d: int, idx: Tensor, source: Tensor, reduce: str,
                 include_self: bool = True) -> Tensor:
    """Out of place :func:`_index_scatter`, through ``aten::scatter`` (``reduce="none"``) or
    ``aten::scatter_reduce`` with ``idx`` spread along ``d``: recorded, so it differentiates
    through their rules."""
    target = self if self.ndim else self.reshape(1)
    src = source.reshape(target._shape[:d] + (idx._shape[0],) + target._shape[d + 1 :])
    spread = along(idx, d, tuple(src._shape))
    if reduce == "none":
        out = ATEN["scatter"](target, d, spread, src)
    else:
        out = ATEN["scatter_reduce"](target, d, spread, src, reduce, include_self=include_self)
    return out if self.ndim else out.reshape(())


def _records(self: Tensor, *others: Any) -> bool:
    """Whether autograd watches an in-place call on ``self`` with ``others``: it then
    computes out of place and writes back through ``copy_``, which records the write (and
    rebases a view's base)."""
    if not _config.is_grad_enabled():
        return False
    base = self._base
    return self._requires_grad or (base is not None and base._requires_grad) or any(
        isinstance(t, Tensor) and t._requires_grad for t in others)


def _written_back(self: Tensor, compute: Any) -> Tensor:
    """``self`` overwritten by ``compute(copy of self)``, recorded. The copy keeps the values
    the out-of-place op saved for its backward from being changed by the write."""
    return copy_(self, compute(clone(self)))


def _same_dtype(self: Tensor, source: Tensor, fn: str) -> None:
    if not isinstance(source, Tensor):
        raise TypeError(f"{fn}(): argument 'source' must be Tensor, not {type(source).__name__}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"{fn}(): self ({scalar_type_name(self._dtype)}) and source "
                           f"({scalar_type_name(source._dtype)}) must have the same scalar type")


def _bounds_error(prefix: str = "", exc: type = IndexError) -> Any:
    def make(d: int, size: int) -> Any:
        return lambda v: exc(f"{prefix}index {v} is out of bounds for dimension {d} with size "
                             f"{size}")

    return make


def _index_add_args(self: Tensor, dim: int, index: Tensor, source: Tensor,
                    alpha: Any) -> tuple[int, Tensor, Tensor]:
    _same_dtype(self, source, "index_add_")
    d, idx = _index_along(self, dim, index, tuple(source._shape), "index_add_", False,
                          _bounds_error("", RuntimeError))
    if not (alpha == 1 and not isinstance(alpha, float)):
        source = mul(source, alpha)
        if source._dtype is not self._dtype:
            source = to_dtype(source, self._dtype)
    return d, idx, source


def _index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *,
                alpha: Any = 1) -> Tensor:
    d, idx, source = _index_add_args(self, dim, index, source, alpha)
    if 0 in self._stride:
        check_no_internal_overlap(self)
    if _records(self, source):
        return _written_back(self, lambda t: _into_slices(t, d, idx, source, "sum"))
    return _index_scatter(self, d, idx, source, "sum")


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1,
              out: Tensor | None = None) -> Tensor:
    """A copy of ``input`` with ``alpha * source`` added to the slices along ``dim`` at
    ``index`` (duplicates accumulate)."""
    d, idx, source = _index_add_args(check_tensor(input, "index_add"), dim, index, source,
                                     alpha)
    return write_out(out, _into_slices(input, d, idx, source, "sum"))


def _index_copy_args(self: Tensor, dim: int, index: Tensor,
                     source: Tensor) -> tuple[int, Tensor]:
    _same_dtype(self, source, "index_copy_")
    return _index_along(self, dim, index, tuple(source._shape), "index_copy_", False,
                        _bounds_error("index_copy_(): "))


def _index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    d, idx = _index_copy_args(self, dim, index, source)
    if 0 in self._stride:
        check_no_internal_overlap(self)
    if _records(self, source):
        return _written_back(self, lambda t: _into_slices(t, d, idx, source, "none"))
    return _index_scatter(self, d, idx, source, "none")


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
               out: Tensor | None = None) -> Tensor:
    """A copy of ``input`` whose slices along ``dim`` at ``index`` are replaced by
    ``source``'s."""
    d, idx = _index_copy_args(check_tensor(input, "index_copy"), dim, index, source)
    return write_out(out, _into_slices(input, d, idx, source, "none"))


def _fill_value(value: Any, fn: str) -> Any:
    """``value`` checked: a number, or a 0-d tensor kept a tensor (read through an operator,
    never with item(), so that meta and fake tensors need no data)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"{fn} only supports a 0-dimensional value tensor, but got tensor "
                               f"with {value.ndim} dimension(s).")
        return value
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"{fn}(): argument 'value' must be Number, not {type(value).__name__}")
    return value


def _fill_source(value: Any, like: Tensor, shape: Any) -> Tensor:
    """The fill ``value`` (a number or a 0-d tensor) as ``like``'s dtype and device, broadcast
    to ``shape``."""
    if not isinstance(value, Tensor):
        return scalar_tensor(value, like._dtype, like._device).expand(shape)
    src = to_dtype(value, like._dtype)
    if src._device != like._device:
        src = to_device(src, like._device)
    return src.expand(shape)


def _slice_mask(self: Tensor, d: int, idx: Tensor) -> Tensor:
    """A bool tensor broadcastable to ``self``: True on the slices along ``d`` at ``idx``
    (each slice once, however often ``idx`` names it)."""
    n = _dim_size(self, d)
    mask = new_tensor((n,), _dtype.bool_, self._device)
    PRIMS.fill_(mask, False)
    if idx.numel():
        PRIMS.scatter_(mask, 0, idx, scalar_tensor(True, _dtype.bool_, self._device)
                   .expand(idx._shape), "none", True)
    view = [1] * self.ndim
    if self.ndim:
        view[d] = n
    return mask.reshape(view)


def _index_fill_(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    if _records(self, value):
        return _written_back(self, lambda t: index_fill(t, dim, index, value))
    value = _fill_value(value, "index_fill_")
    d, idx = _index_along(self, dim, index, None, "index_fill_", True, None)
    shape = list(self._shape) if self.ndim else [1]
    shape[d] = idx._shape[0]
    return _index_scatter(self, d, idx, _fill_source(value, self, shape), "none")


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` whose slices along ``dim`` at ``index`` hold ``value``."""
    check_tensor(input, "index_fill")
    _fill_value(value, "index_fill_")  # checks; a 0-d tensor value stays one, for its grad
    d, idx = _index_along(input, dim, index, None, "index_fill_", True, None)
    # aten::masked_fill gives a tensor value the gradient of every filled position once, as
    # PyTorch's index_fill does (duplicate indices fill a slice once)
    return ATEN["masked_fill"](input, _slice_mask(input, d, idx), value)


def _index_reduce_args(self: Tensor, dim: int, index: Tensor, source: Tensor,
                       reduce: str) -> tuple[int, Tensor]:
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    _same_dtype(self, source, "index_reduce_")
    return _index_along(self, dim, index, tuple(source._shape), "index_reduce_", False,
                        _bounds_error("", RuntimeError))


def _index_reduce_(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    d, idx = _index_reduce_args(self, dim, index, source, reduce)
    if 0 in self._stride:
        check_no_internal_overlap(self)
    if _records(self, source):
        return _written_back(self, lambda t: _into_slices(t, d, idx, source, reduce,
                                                          include_self))
    return _index_scatter(self, d, idx, source, reduce, include_self)


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True, out: Tensor | None = None) -> Tensor:
    """A copy of ``input`` with ``source``'s slices reduced (``"prod"``, ``"mean"``,
    ``"amax"``, ``"amin"``) into the slices along ``dim`` at ``index``."""
    d, idx = _index_reduce_args(check_tensor(input, "index_reduce"), dim, index, source,
                                reduce)
    return write_out(out, _into_slices(input, d, idx, source, reduce, include_self))


# -- masked ops ----------------------------------------------------------------------------


def _check_mask(mask: Any, fn: str) -> None:
    if not isinstance(mask, Tensor):
        raise TypeError(f"{fn}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask._dtype is not _dtype.bool_:
        raise RuntimeError(f"{fn} only supports boolean masks, but got mask with dtype "
                           f"{_MASK_NAMES.get(mask._dtype._name, mask._dtype._name)}")


_MASK_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
               "uint8": "unsigned char", "float32": "float", "float64": "double"}


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` (broadcast with ``mask``) holding ``value`` where ``mask`` is
    True."""
    return ATEN["masked_fill"](check_tensor(input, "masked_fill"), mask, value)


def _masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    _check_mask(mask, "masked_fill_")
    value = _fill_value(value, "masked_fill_")
    try:
        mask_b = mask.expand(self._shape)
    except RuntimeError:
        raise RuntimeError(f"The size of tensor a ({self._shape}) must match the size of tensor "
                           f"b ({mask._shape})") from None
    result = ATEN["masked_fill"](self, mask_b, value)
    if 0 in self._stride and not _records(self, value):
        # PyTorch still allows (and warns about) this one write into a broadcast tensor
        try:
            check_no_internal_overlap(self)
        except RuntimeError:
            warnings.warn("Use of masked_fill_ on expanded tensors is deprecated. Please clone() "
                          "the tensor before performing this operation.", UserWarning,
                          stacklevel=_config.external_stacklevel())
            PRIMS.copy_(self, result)
            self._vc[0] += 1
            return self
    return copy_(self, result)


def masked_select(input: Tensor, mask: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The elements of ``input`` (broadcast with ``mask``) where ``mask`` is True, as a 1-d
    tensor in row-major order."""
    check_tensor(input, "masked_select")
    if not isinstance(mask, Tensor) or mask._dtype is not _dtype.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = tuple(broadcast_shapes(input._shape, mask._shape))
    if not shape:  # a 0-d pair: index a 1-element view
        input, mask, shape = input.reshape(1), mask.reshape(1), (1,)
    return write_out(out, ATEN["index"](input.expand(shape), [mask.expand(shape)]))


def _masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    if not isinstance(mask, Tensor) or mask._dtype is not _dtype.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {getattr(mask, 'dtype', type(mask).__name__)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{scalar_type_name(self._dtype)} and "
                           f"{scalar_type_name(source._dtype)}")
    mask_b = mask.expand(self._shape)
    target = self if self.ndim else self.view(1)
    mask_t = mask_b if self.ndim else mask_b.reshape(1)
    values = source.reshape(-1)
    if has_data(mask_t):  # meta and fake masks have no count: the layout is self's anyway
        n = ATEN["nonzero"](mask_t)._shape[0]  # an operator, so modes see the count made
        if source.numel() < n:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        values = values.narrow(0, 0, n)
    ATEN["index_put_"](target, [mask_t], values, False)
    return self


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` (broadcast with ``mask``) whose masked positions receive
    consecutive elements of ``source``, in row-major order."""
    check_tensor(input, "masked_scatter")
    shape = tuple(broadcast_shapes(input._shape, mask._shape))
    return _masked_scatter_(clone(input.expand(shape)).contiguous(), mask, source)


# -- take, put -------------------------------------------------------------------------------


def _take_error(numel: int) -> Any:
    return lambda v: IndexError(f"out of range: tried to access index {v} on a tensor of {numel} "
                                "elements.")


def take(input: Tensor, index: Tensor) -> Tensor:
    """The elements of ``input`` seen as 1-d (row-major) at ``index``; the result has
    ``index``'s shape. Negative indices count from the end."""
    check_tensor(input, "take")
    if not isinstance(index, Tensor) or index._dtype is not _dtype.int64:
        got = scalar_type_name(index._dtype) if isinstance(index, Tensor) else type(index)
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {got}")
    n = input.numel()
    idx = checked_index(index, n, 0, error=_take_error(n))
    return ATEN["gather"](input.reshape(-1), 0, idx.reshape(-1)).view(index._shape)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None, *,
                   out: Tensor | None = None) -> Tensor:
    """Values of ``input`` at ``indices`` along ``dim`` (gather after broadcasting the other
    dims); with ``dim=None`` both are flattened first."""
    check_tensor(input, "take_along_dim")
    _check_index_dtype(indices, "take_along_dim", (_dtype.int64,))
    if dim is None:
        flat = input.reshape(-1)
        idx = checked_index(indices.reshape(-1), flat._shape[0], 0)
        return write_out(out, ATEN["gather"](flat, 0, idx))
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    d = wrap_dim(dim, input.ndim)
    shape_i, shape_x = list(input._shape), list(indices._shape)
    shape_i[d] = shape_x[d] = 1
    common = list(broadcast_shapes(tuple(shape_i), tuple(shape_x)))
    xs, ix = list(common), list(common)
    if input.ndim:
        xs[d], ix[d] = input._shape[d], indices._shape[d]
    size = _dim_size(input, d)
    idx = checked_index(indices, size, d)
    return write_out(out, ATEN["gather"](input.expand(xs), d, idx.expand(ix)))


def _put_args(self: Tensor, index: Tensor, source: Tensor) -> Tensor:
    """The checked int64 ``index`` of put/put_ (negative values wrapped)."""
    if not isinstance(index, Tensor) or index._dtype is not _dtype.int64:
        raise RuntimeError("put_(): Expected a long tensor for index")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {self._dtype} and source.dtype = {source._dtype}")
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, "
                           f"index.numel() = {index.numel()}")
    n = self.numel()
    return checked_index(index, n, 0, error=_take_error(n))


def _put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    if _records(self, source):
        return _written_back(self, lambda t: put(t, index, source, accumulate))
    idx = _put_args(self, index, source)
    target = self if self.is_contiguous() else clone(self, memory_format=_contiguous())
    flat = target.view(-1)
    if idx.numel():
        PRIMS.scatter_(flat, 0, idx.reshape(-1), source.reshape(-1),
                   "sum" if accumulate else "none", True)
    if target is not self:
        copy_(self, target)
    else:
        self._vc[0] += 1
    return self


def _contiguous() -> Any:
    from .._core import layout as _layout

    return _layout.contiguous_format


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """Out-of-place :meth:`Tensor.put_`: a copy with ``source`` written (or added) at the
    row-major positions ``index``."""
    idx = _put_args(check_tensor(input, "put"), index, source).reshape(-1)
    flat, src = input.reshape(-1), source.reshape(-1)
    if accumulate:
        out = ATEN["scatter_reduce"](flat, 0, idx, src, "sum")
    else:
        out = ATEN["scatter"](flat, 0, idx, src)
    return out.view(input._shape)


# -- nonzero ---------------------------------------------------------------------------------


def nonzero(input: Tensor, *, out: Tensor | None = None, as_tuple: bool = False) -> Any:
    """The int64 coordinates ``(n, ndim)`` of the nonzero elements in row-major order; with
    ``as_tuple`` one 1-d tensor per dim (a 0-d input counts as 1-d)."""
    check_tensor(input, "nonzero")
    if as_tuple:
        coords = ATEN["nonzero"](input if input.ndim else input.reshape(1))
        return tuple(c.contiguous() for c in coords.unbind(1))
    return write_out(out, ATEN["nonzero"](input))


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``: the coordinates ``(n, ndim)`` of the nonzero elements."""
    return nonzero(input)


def _index_put_method(self: Tensor, indices: Any, values: Tensor,
                      accumulate: bool = False) -> Tensor:
    return index_put(self, indices, values, accumulate)


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal in place: of a matrix (with ``wrap``, a tall matrix's diagonal
    starts again after every ``columns + 1`` rows), or of a tensor whose dimensions are all
    equal (``self[i, i, ..., i]``)."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self._shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if self.ndim > 2:
        self.as_strided((self._shape[0],), (sum(self._stride),),
                        self.storage_offset()).fill_(fill_value)
        return self
    rows, cols = self._shape
    block = cols + 1 if wrap and rows > cols else rows  # a wrapped diagonal restarts per block
    for start in range(0, rows, block):
        self[start:start + cols].diagonal().fill_(fill_value)
    return self


# Tensor method name -> function, bound onto Tensor when the op surface loads.
METHODS: dict[str, Any] = {
    "fill_diagonal_": fill_diagonal_,
    "__setitem__": setitem,
    "index_put_": index_put_,
    "index_put": _index_put_method,
    "gather": gather,
    "scatter": scatter,
    "scatter_": _scatter_,
    "scatter_add": scatter_add,
    "scatter_add_": _scatter_add_,
    "scatter_reduce": scatter_reduce,
    "scatter_reduce_": seen_as_inplace_form(scatter_reduce, _scatter_reduce_),
    "index_select": index_select,
    "index_add": index_add,
    "index_add_": _index_add_,
    "index_copy": index_copy,
    "index_copy_": _index_copy_,
    "index_fill": index_fill,
    "index_fill_": _index_fill_,
    "index_reduce": index_reduce,
    "index_reduce_": _index_reduce_,
    "masked_fill": masked_fill,
    "masked_fill_": seen_as_inplace_form(masked_fill, _masked_fill_),
    "masked_select": masked_select,
    "masked_scatter": masked_scatter,
    "masked_scatter_": _masked_scatter_,
    "take": take,
    "take_along_dim": take_along_dim,
    "put_": _put_,
    "put": put,
    "nonzero": nonzero,
    "argwhere": argwhere,
}
