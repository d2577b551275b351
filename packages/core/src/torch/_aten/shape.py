"""Shape ops over views and copies: movedim, split/chunk/unbind, cat/stack, flip, roll, repeat,
tile, broadcast_to, meshgrid, and the ``torch.*`` function forms of the view methods.

Views (everything in :mod:`torch._core.tensor`, plus
split/chunk/unbind/movedim/broadcast_to/meshgrid) never copy. Ops that must copy allocate their
output and fill it through primitives: ``copy_`` (cat, repeat, tile) or ``gather`` (flip,
repeat_interleave with tensor repeats).
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core import config as _config, dispatch as _dispatch, dtype as _dtype
from .._core.alloc import PRIMS, _interned, from_layout, new_tensor
from .._core.device import device as _device
from .._core.promotion import broadcast_shapes
from .._core.tensor import (
    Tensor,
    _shape_arg,
    contiguous_strides,
    has_data,
    sizes_or_keyword,
    storage_extent,
    wrap_dim,
)
from .convert import clone, copy_, write_out
from .views import ATEN as VIEWS

_state = _config.state
_item = tuple.__getitem__

__all__ = [
    "as_strided", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors", "broadcast_to",
    "cat", "chunk", "column_stack", "concat", "concatenate", "diagonal", "diagonal_scatter",
    "dsplit", "dstack", "flatten", "flip", "fliplr", "flipud", "hsplit", "hstack", "meshgrid",
    "moveaxis", "movedim", "narrow", "narrow_copy", "permute", "ravel", "repeat_interleave",
    "reshape", "roll", "rot90", "row_stack", "select", "select_scatter", "slice_scatter", "split",
    "squeeze", "stack", "swapaxes", "swapdims", "t", "tensor_split", "tile", "transpose",
    "unbind", "unflatten", "unsqueeze", "vsplit", "vstack",
]


# -- helpers shared with torch._aten.indexing ------------------------------------------------------


def check_tensor(x: Any, fn: str, arg: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def arange_index(n: int, dev: _device, start: int = 0, step: int = 1) -> Tensor:
    """The int64 vector ``start, start + step, ...`` of length ``n`` on ``dev``."""
    out = new_tensor((n,), _dtype.int64, dev)
    if n:
        PRIMS.arange_(out, start, step)
    return out


def along(index: Tensor, dim: int, shape: tuple[int, ...]) -> Tensor:
    """A 1-d ``index`` placed along ``dim`` and broadcast (stride 0) to ``shape``: the index
    argument of a gather or scatter that picks whole slices along ``dim``."""
    if not shape:
        return index.reshape(())
    # one strided view (stride 0 off ``dim``), where a reshape and an expand were two ops
    strides = [0] * len(shape)
    strides[dim] = index._stride[0]
    return index.as_strided(shape, strides, index._offset)


def gather_slices(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``x`` along ``dim`` at the positions of the 1-d int64 ``index`` (already
    checked to be in range): index_select without its checks."""
    shape = list(x._shape)
    if shape:
        shape[dim] = index._shape[0]
    out = new_tensor(tuple(shape), x._dtype, x._device)
    if out.numel():
        PRIMS.gather(out, x, dim, along(index, dim, tuple(shape)))
    return out


def index_tensor(values: Any, dev: _device) -> Tensor:
    """An int64 tensor on ``dev`` holding host-computed ``values`` (a numpy array)."""
    values = np.asarray(values, np.int64)
    out = new_tensor(values.shape, _dtype.int64, _storage_cpu())
    if values.size:
        from .._refs import np_view

        np_view(out)[...] = values
    return out if dev.type == "cpu" else out.to(dev)


def _storage_cpu() -> _device:
    from .._core.storage import _normalise

    return _normalise("cpu")


def _dims_arg(dims: Any) -> list[int]:
    if isinstance(dims, (tuple, list)):
        return [operator.index(d) for d in dims]
    return [operator.index(dims)]


def _copy_of(src: Tensor) -> Tensor:
    """A fresh contiguous tensor with ``src``'s values."""
    out = new_tensor(src._shape, src._dtype, src._device)
    if out.numel():
        PRIMS.copy_(out, src)
    return out


def _recorded_copy(src: Tensor) -> Tensor:
    """:func:`_copy_of` for public functions: the copy goes through ``copy_`` when ``src``
    requires grad, so that autograd records it (kernels run below autograd and use
    :func:`_copy_of`)."""
    if _state.modes_active:
        # a dispatch mode sees the copy as one operator on ``src`` (a batched tensor under
        # vmap is copied as a whole, not written into an unbatched buffer)
        from .._core.layout import contiguous_format

        return clone(src, memory_format=contiguous_format)
    out = new_tensor(src._shape, src._dtype, src._device)
    copy_(out, src) if src._requires_grad else PRIMS.copy_(out, src)
    return out


# -- aten operators: the copying shape ops go through the dispatcher ----------------------


# cat's plans: (dim, each input's interned layout) -> (the output's layout, the device's copy
# kernel, (input index, shape, element offset into the output) per copied input). A repeated
# cat of the same layouts (every chunk/split backward) is then one allocation and one copy per
# piece, without re-checking shapes, dtypes and devices that the first call checked. Dropped on
# every kernel registration (the copy kernel may change).
_CAT_PLANS: dict[tuple[Any, ...], tuple[Any, Any, tuple[tuple[int, Any, int], ...]]] = {}
_dispatch.on_invalidate.append(_CAT_PLANS.clear)
_MAX_CAT_PLANS = 256


def _cat_kernel(tensors: list[Tensor], dim: int = 0) -> Tensor:
    # (plain tensors only: a __torch_dispatch__ subclass keys as None and is never planned;
    # modes_active counts the regions, dispatch modes and autocast, that see every call)
    if dim.__class__ is int and not _state.modes_active:
        try:
            key = (dim, *[t._interned_layout if t.__class__ is Tensor else None
                          for t in tensors])
        except AttributeError:  # not a tensor: the checks below raise PyTorch's error
            key = None
        plan = _CAT_PLANS.get(key)
        if plan is not None:
            lay, copy, pieces = plan
            out = from_layout(lay)
            storage, stride, vc, dt, dev = out._storage, out._stride, out._vc, lay.dtype, lay.device
            for i, shape, offset in pieces:
                copy(Tensor._make(storage, shape, stride, offset, dt, dev, vc, out), tensors[i])
            return out
    else:
        key = None
    if len(tensors) == 0:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
        if not t._shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    first = tensors[0]
    dt = first._dtype
    for t in tensors:
        if t._dtype is not dt:
            dt = _dtype.promote_types(dt, t._dtype)
    # Legacy rule: 1-d empty tensors are skipped whatever the other shapes.
    parts = [(i, t) for i, t in enumerate(tensors) if t._shape != (0,)]
    if not parts:
        return new_tensor((0,), dt, first._device)
    ref = parts[0][1]
    ref_shape = ref._shape
    ndim = len(ref_shape)
    d = wrap_dim(dim, ndim)
    dev = ref._device
    total = 0
    for i, t in parts:
        shape = t._shape
        if shape != ref_shape:  # (the usual case, equal shapes, needs no per-dim look)
            if len(shape) != ndim:
                raise RuntimeError(f"Tensors must have same number of dimensions: got {ndim} "
                                   f"and {len(shape)}")
            for k in range(ndim):
                if k != d and shape[k] != ref_shape[k]:
                    raise RuntimeError(
                        f"Sizes of tensors must match except in dimension {d}. Expected size "
                        f"{ref_shape[k]} but got size {shape[k]} for tensor number {i} in "
                        "the list.")
        if t._device is not dev and t._device != dev:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {dev} and {t._device}!")
        total += _item(shape, d)
    ref_dims = tuple(ref_shape)  # (a Size's indexing and slicing are Python calls)
    out = new_tensor(ref_dims[:d] + (total,) + ref_dims[d + 1 :], dt, dev)
    lay = out._interned_layout
    if lay is None or (_state.keys_active and (
            _state.modes_active or any(t.__class__ is not Tensor for _, t in parts))):
        # a mode's or a symbolic output, or a subclass's piece: the pieces and copies go
        # through the dispatcher, where the mode (or the subclass) sees them; keys_active
        # alone (a __torch_dispatch__ class exists somewhere) keeps the direct copies
        at = 0
        for _, t in parts:
            n = t._shape[d]
            if n and t.numel():
                PRIMS.copy_(out.narrow(d, at, n), t)
            at += n
        return out
    # Below the dispatcher: each piece of the output is a view made here and filled by one
    # call of the device's copy kernel (cat is the backward of every split and chunk).
    copy = lay.kernel("copy_")
    storage, stride, vc = out._storage, out._stride, out._vc
    step = stride[d]
    at = 0
    pieces = []
    for i, t in parts:
        shape = t._shape
        n = _item(shape, d)
        if n and 0 not in shape:
            copy(Tensor._make(storage, shape, stride, at * step, dt, dev, vc, out), t)
            pieces.append((i, shape, at * step))
        at += n
    if key is not None and None not in key[1:]:  # every input interned: plan the next call
        if len(_CAT_PLANS) >= _MAX_CAT_PLANS:
            _CAT_PLANS.clear()
        _CAT_PLANS[key] = (lay, copy, tuple(pieces))
    return out


def _flip_kernel(self: Tensor, dims: list[int]) -> Tensor:
    wrapped = [wrap_dim(d, self.ndim) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"dims has duplicates, original flip dims size={len(dims)}, but "
                           f"unique flip dims size={len(set(wrapped))}")
    out = self
    for d in wrapped:
        n = self._shape[d] if self.ndim else 1
        if n > 1 and self.numel():
            out = gather_slices(out, d, arange_index(n, self._device, n - 1, -1))
    return _copy_of(out) if out is self else out


def _roll_kernel(self: Tensor, shifts: list[int], dims: Any = ()) -> Tensor:
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:{len(dims)}")
        return _roll_kernel(self.flatten(), shifts, [0]).view(self._shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    out = self
    for shift, dim in zip(shifts, dims):
        d = wrap_dim(dim, self.ndim)
        n = self._shape[d]
        s = shift % n if n else 0
        if s:
            out = _cat_kernel([out.narrow(d, n - s, s), out.narrow(d, 0, n - s)], d)
    return _copy_of(out) if out is self else out


def _repeat_kernel(self: Tensor, repeats: list[int]) -> Tensor:
    k, n = len(repeats), self.ndim
    if k < n:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    for r in repeats:
        if r < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {r}: "
                               f"{list(repeats)}")
    x = self.reshape((1,) * (k - n) + tuple(self._shape))
    # (s0, s1, ...) -> (1, s0, 1, s1, ...) -> expanded (r0, s0, r1, s1, ...) without a copy
    for i in range(k):
        x = x.unsqueeze(2 * i)
    sizes: list[int] = []
    for r, s in zip(repeats, x._shape[1::2]):
        sizes += [r, s]
    final = tuple(r * s for r, s in zip(repeats, x._shape[1::2]))
    return _copy_of(x.expand(sizes)).view(final)


def _sym_size_kernel(self: Tensor, dim: int) -> Any:
    # the size of one dimension (a SymInt for a fake tensor with symbolic sizes): the node
    # torch.fx's make_fx records where a traced program reads a size
    return self._shape[wrap_dim(dim, self.ndim)]


def _stack_kernel(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    # the arguments were checked by stack(); each piece unsqueezed, then one cat
    d = wrap_dim(dim, tensors[0].ndim + 1)
    return ATEN["cat"]([t.unsqueeze(d) for t in tensors], d)


def _define_aten() -> dict[str, _dispatch.Operator]:
    table = {
        "stack": ("stack(Tensor[] tensors, int dim=0) -> Tensor", _stack_kernel),
        "sym_size.int": ("sym_size.int(Tensor self, int dim) -> SymInt", _sym_size_kernel),
        "cat": ("cat(Tensor[] tensors, int dim=0) -> Tensor", _cat_kernel),
        "flip": ("flip(Tensor self, int[] dims) -> Tensor", _flip_kernel),
        "roll": ("roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor", _roll_kernel),
        "repeat": ("repeat(Tensor self, SymInt[] repeats) -> Tensor", _repeat_kernel),
    }
    return _dispatch.define_aten(table)


ATEN = _define_aten()


# -- cat and stack -------------------------------------------------------------------------


def _tensor_list(tensors: Any, fn: str) -> list[Tensor]:
    if tensors.__class__ is list or tensors.__class__ is tuple:  # (no abc instance check)
        return list(tensors)
    if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence):
        raise TypeError(f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    return list(tensors)


def cat(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """Concatenate ``tensors`` along ``dim``. They must match in every other dim; 1-d empty
    tensors are skipped; the result's dtype promotes over all inputs."""
    return write_out(out, ATEN["cat"](_tensor_list(tensors, "cat"), dim))


def concatenate(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None,
                out: Tensor | None = None) -> Tensor:
    """``cat`` under numpy's names (``concat``, ``concatenate``), taking numpy's ``axis`` for
    ``dim`` as PyTorch does."""
    return cat(tensors, dim if axis is None else axis, out=out)


concat = concatenate


def stack(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """Join equally-shaped ``tensors`` along a new dimension ``dim``."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]
    plain = True  # every piece a plain tensor that requires no grad
    for i, t in enumerate(tensors):
        if t._shape != first._shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first._shape)} at entry 0 and {list(t._shape)} at entry "
                               f"{i}")
        if t.__class__ is not Tensor or t._requires_grad:
            plain = False
    d = wrap_dim(dim, first.ndim + 1)
    if _state.keys_active and _dispatch.python_key_active((tensors,), {}):
        # the operator, as PyTorch's (a dispatch mode sees aten.stack, not its pieces)
        return write_out(out, ATEN["stack"](tensors, d))
    if _state.keys_active or (not plain and (
            any(t.__class__ is not Tensor for t in tensors) or _config.is_grad_enabled())):
        # what a mode, a subclass or autograd must see: each unsqueeze as an op
        pieces = [t.unsqueeze(d) for t in tensors]
    else:
        pieces = [_unsqueezed(t, d) for t in tensors]
    return write_out(out, ATEN["cat"](pieces, d))


def _unsqueezed(t: Tensor, d: int) -> Tensor:
    """``t.unsqueeze(d)`` built here (what the view kernel builds), for calls nothing records.
    A contiguous ``t``'s view is contiguous: it takes its interned layout, so that the ``cat``
    of the pieces finds its plan (``_CAT_PLANS``) instead of checking every call."""
    shape, stride = tuple(t._shape), t._stride
    step = shape[d] * stride[d] if d < len(shape) else 1
    new_shape = shape[:d] + (1,) + shape[d:]
    new_stride = stride[:d] + (step,) + stride[d:]
    view = t._view(new_shape, new_stride, t._offset)
    if t._interned_layout is not None:
        lay = _interned(new_shape, t._dtype, t._device)
        if lay is not None and lay.stride == new_stride:
            view._interned_layout = lay
    return view


def hstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """Concatenate horizontally: along dim 0 for 1-d inputs, dim 1 otherwise."""
    ts = _atleast(_tensor_list(tensors, "hstack"), 1)
    if not ts:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return cat(ts, 0 if ts[0].ndim == 1 else 1, out=out)


def vstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """Concatenate vertically (dim 0) after making every input at least 2-d."""
    ts = _atleast(_tensor_list(tensors, "vstack"), 2)
    if not ts:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat(ts, 0, out=out)


row_stack = vstack


def dstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """Concatenate depth-wise (dim 2) after making every input at least 3-d."""
    ts = _atleast(_tensor_list(tensors, "dstack"), 3)
    if not ts:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat(ts, 2, out=out)


def column_stack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """Stack as columns: 0-d and 1-d inputs become ``(n, 1)`` columns, then hstack."""
    ts = _tensor_list(tensors, "column_stack")
    if not ts:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    cols = [t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in ts]
    return cat(cols, 1, out=out)


# -- atleast_nd ------------------------------------------------------------------------------


def _at_least(t: Tensor, n: int) -> Tensor:
    if t.ndim >= n:
        return t
    if n == 1 or t.ndim == 0:
        return t.reshape((1,) * n)
    if n == 2:  # 1-d (k,) -> (1, k)
        return t.unsqueeze(0)
    return t.unsqueeze(0).unsqueeze(-1) if t.ndim == 1 else t.unsqueeze(-1)


def _atleast(ts: list[Tensor], n: int) -> list[Tensor]:
    return [_at_least(check_tensor(t, f"atleast_{n}d"), n) for t in ts]


def _atleast_api(args: tuple[Any, ...], n: int) -> Any:
    if len(args) == 1 and isinstance(args[0], Tensor):
        return _at_least(args[0], n)
    ts = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    return tuple(_atleast(ts, n))


def atleast_1d(*tensors: Any) -> Any:
    """Views with at least one dimension (a tensor for one argument, a tuple otherwise)."""
    return _atleast_api(tensors, 1)


def atleast_2d(*tensors: Any) -> Any:
    """Views with at least two dimensions (a 1-d ``(n,)`` becomes ``(1, n)``)."""
    return _atleast_api(tensors, 2)


def atleast_3d(*tensors: Any) -> Any:
    """Views with at least three dimensions (``(n,)`` -> ``(1, n, 1)``, ``(m, n)`` ->
    ``(m, n, 1)``)."""
    return _atleast_api(tensors, 3)


# -- splitting -------------------------------------------------------------------------------


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Views of ``tensor`` along ``dim``: chunks of ``split_size`` (the last may be smaller), or
    of the given sizes, which must add up to the dim's size."""
    check_tensor(tensor, "split", "tensor")
    if isinstance(split_size_or_sections, (list, tuple)):
        return tuple(VIEWS["split_with_sizes"](tensor, list(split_size_or_sections), dim))
    return tuple(VIEWS["split.Tensor"](tensor, split_size_or_sections, dim))


def _split_method(self: Tensor, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
    return split(self, split_size, dim)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into ``chunks`` views of equal size (``ceil(size / chunks)``), possibly fewer."""
    return tuple(VIEWS["chunk"](check_tensor(input, "chunk"), chunks, dim))


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Views along ``dim``: ``sections`` nearly equal pieces (the first ``size % sections`` one
    longer), or the pieces between the given indices (clamped like slices)."""
    check_tensor(input, "tensor_split")
    if isinstance(indices_or_sections, Tensor):
        ios = indices_or_sections
        if ios._dtype is not _dtype.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {_type_name(ios._dtype)}")
        if ios.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {ios.ndim} dims")
        if ios._device.type == "meta":  # its values steer the split: meta has none
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be on cpu, "
                               f"but it's on {ios._device.type}")
        indices_or_sections = ios.item() if ios.ndim == 0 else ios.tolist()
    d = wrap_dim(dim, input.ndim)
    n = input._shape[d]
    if isinstance(indices_or_sections, (list, tuple)):
        bounds = [operator.index(i) for i in indices_or_sections] + [n]
        out = []
        prev = 0
        for b in bounds:
            start = min(max(prev, 0), n)
            stop = min(max(b, start), n)
            out.append(input.narrow(d, start, stop - start))
            prev = b
        return tuple(out)
    sections = operator.index(indices_or_sections)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    base, extra = divmod(n, sections)
    return split(input, [base + 1] * extra + [base] * (sections - extra), d)


def _type_name(dt: _dtype.dtype) -> str:
    from .convert import scalar_type_name

    return scalar_type_name(dt)


def _dir_split(input: Tensor, indices_or_sections: Any, name: str, dim: int,
               min_dims: int) -> tuple[Tensor, ...]:
    check_tensor(input, name)
    if input.ndim < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {input.ndim} dimensions!")
    if isinstance(indices_or_sections, int) and not isinstance(indices_or_sections, bool):
        size = input._shape[dim]
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but "
                               f"the size of the dimension {size} is not divisible by the "
                               f"split_size {indices_or_sections}!")
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """tensor_split along dim 1 (dim 0 for 1-d tensors); an int must divide the size."""
    check_tensor(input, "hsplit")
    return _dir_split(input, indices_or_sections, "hsplit", 1 if input.ndim > 1 else 0, 1)


def vsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """tensor_split along dim 0 of a tensor with at least 2 dims; an int must divide the
    size."""
    return _dir_split(input, indices_or_sections, "vsplit", 0, 2)


def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """tensor_split along dim 2 of a tensor with at least 3 dims; an int must divide the
    size."""
    return _dir_split(input, indices_or_sections, "dsplit", 2, 3)


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices along ``dim``, each a view without that dim."""
    return tuple(VIEWS["unbind.int"](check_tensor(input, "unbind"), dim))


# -- reordering dims -------------------------------------------------------------------------


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    """A view with the dims at ``source`` moved to ``destination``; the others keep their
    order."""
    check_tensor(input, "movedim")
    return VIEWS["movedim.intlist"](input, _dims_arg(source), _dims_arg(destination))


moveaxis = movedim


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """``input.transpose(axis0, axis1)`` (a view)."""
    return check_tensor(input, "swapaxes").transpose(axis0, axis1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """``input.transpose(dim0, dim1)`` (a view)."""
    return check_tensor(input, "swapdims").transpose(dim0, dim1)


# -- copies: flip, roll, rot90, repeat, tile, repeat_interleave ------------------------------


def flip(input: Tensor, dims: Any) -> Tensor:
    """A copy with the order of elements reversed along each of ``dims``."""
    return ATEN["flip"](check_tensor(input, "flip"), _dims_arg(dims))


def fliplr(input: Tensor) -> Tensor:
    """Flip left-right (dim 1); needs at least 2 dims."""
    if check_tensor(input, "fliplr").ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input: Tensor) -> Tensor:
    """Flip up-down (dim 0); needs at least 1 dim."""
    if check_tensor(input, "flipud").ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """A copy with elements shifted cyclically along ``dims`` (the flattened tensor when
    ``dims`` is None)."""
    check_tensor(input, "roll")
    return ATEN["roll"](input, _dims_arg(shifts), [] if dims is None else _dims_arg(dims))


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first towards the
    second."""
    check_tensor(input, "rot90")
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    n = input.ndim
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = wrap_dim(dims[0], n), wrap_dim(dims[1], n)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return flip(input, [d1]).transpose(d0, d1)
    if k == 2:
        return flip(input, [d0, d1])
    if k == 3:
        return flip(input, [d0]).transpose(d0, d1)
    return clone(input)


def _repeat_method(self: Tensor, *sizes: Any, repeats: Any = None) -> Tensor:
    """Tensor.repeat: tile the tensor ``sizes[i]`` times along each dim (a copy)."""
    sizes = sizes_or_keyword(sizes, repeats, "repeat", "repeats")
    return ATEN["repeat"](self, list(_shape_arg(sizes)))


def tile(input: Tensor, dims: Any) -> Tensor:
    """Repeat ``input`` along each dim; ``dims`` shorter than ``input.ndim`` is padded with
    leading ones."""
    check_tensor(input, "tile")
    reps = list(_shape_arg((dims,) if isinstance(dims, int) else tuple(dims)))
    if len(reps) < input.ndim:
        reps = [1] * (input.ndim - len(reps)) + reps
    return ATEN["repeat"](input, reps)


def _tile_method(self: Tensor, *dims: Any, **kwargs: Any) -> Tensor:
    if kwargs:  # tile(dims=...): a keyword that is also the varargs' name
        if set(kwargs) != {"dims"}:
            raise TypeError(f"tile() got an unexpected keyword argument '{min(kwargs)}'")
        dims = sizes_or_keyword(dims, kwargs["dims"], "tile", "dims")
    return tile(self, _shape_arg(dims))


def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Repeat each element (each slice along ``dim``) ``repeats`` times, keeping them next
    to each other. ``repeat_interleave(repeats_tensor)`` gives the indices ``i`` repeated
    ``repeats[i]`` times."""
    check_tensor(input, "repeat_interleave")
    if repeats is None:  # the one-tensor overload
        return _repeat_indices(input, output_size)
    if dim is None:
        input, d = input.flatten(), 0
    else:
        d = wrap_dim(dim, input.ndim)
    if isinstance(repeats, Tensor) and (repeats.ndim == 0 or
                                        (repeats.ndim == 1 and repeats._shape[0] == 1)):
        repeats = int(repeats.item())
    if not isinstance(repeats, Tensor):
        r = operator.index(repeats)
        if r < 0:
            raise RuntimeError("repeats can not be negative")
        if input.ndim == 0:
            input = input.reshape(1)
        n = input._shape[d]
        expanded = input.unsqueeze(d + 1)
        shape = list(expanded._shape)
        shape[d + 1] = r
        out = _recorded_copy(expanded.expand(shape))
        return out.view(input._shape[:d] + (n * r,) + input._shape[d + 1 :])
    n = input._shape[d] if input.ndim else 1
    if repeats.ndim != 1 or repeats._shape[0] != n:
        raise RuntimeError("repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats._shape[0] if repeats.ndim else 1} and "
                           f"input.size({d}) = {n}")
    # recorded: aten::index_select
    return input.index_select(d, _repeat_indices(repeats, output_size))


def _repeat_indices(repeats: Tensor, output_size: int | None = None) -> Tensor:
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats._dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError("repeats has to be Long or Int tensor")
    if not has_data(repeats):
        # meta and fake: the size comes from the values, unless the caller gives it
        if output_size is None:
            raise RuntimeError("cannot repeat_interleave a meta tensor without output_size")
        return new_tensor((output_size,), _dtype.int64, repeats._device)
    counts = np.asarray(repeats.tolist(), np.int64)
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    return index_tensor(np.repeat(np.arange(len(counts)), counts), repeats._device)


# -- broadcasting ----------------------------------------------------------------------------


def broadcast_to(input: Tensor, size: Any) -> Tensor:
    """A view of ``input`` expanded (stride 0) to ``size``."""
    return check_tensor(input, "broadcast_to").expand(_shape_arg((size,)))


def _broadcast_to_method(self: Tensor, *sizes: Any, size: Any = None) -> Tensor:
    return self.expand(_shape_arg(sizes_or_keyword(sizes, size, "broadcast_to", "size")))


def _sum_to_size_method(self: Tensor, *sizes: Any, size: Any = None) -> Tensor:
    """Tensor.sum_to_size: sum over the dims that broadcasting ``size`` to ``self``'s shape
    would expand, giving a tensor of ``size``."""
    shape = _shape_arg(sizes_or_keyword(sizes, size, "sum_to_size", "size"))
    lead = self.ndim - len(shape)
    if lead < 0 or any(n not in (1, m) for n, m in zip(shape, self._shape[lead:])):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size "
                           f"{{{list(self._shape)}}}.")
    dims = [*range(lead), *(lead + i for i, n in enumerate(shape)
                            if n == 1 and self._shape[lead + i] != 1)]
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(shape) if lead else out


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """Views of ``tensors`` expanded to their common broadcast shape; a tensor that already has
    it is returned itself, as PyTorch does (a leaf stays a leaf: distributions' parameters)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = tuple(broadcast_shapes(*(check_tensor(t, "broadcast_tensors")._shape
                                     for t in tensors)))
    return tuple(t if tuple(t._shape) == shape else t.expand(shape) for t in tensors)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 0-d/1-d tensors (expanded views). ``indexing='ij'`` puts input
    ``i`` along dim ``i``; ``'xy'`` swaps the first two, as in numpy."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning,
                      stacklevel=_config.external_stacklevel())
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    ts = []
    for t in tensors:
        check_tensor(t, "meshgrid", "tensors")
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
        ts.append(t.reshape(-1))
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t._shape[0] for t in ts)
    grids = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = shape[i]
        grids.append(t.view(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# -- torch.* forms of the view methods -------------------------------------------------------


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """A view without the size-1 dims (only those in ``dim`` when given)."""
    return check_tensor(input, "squeeze").squeeze(dim)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """A view with a size-1 dim inserted at ``dim``."""
    return check_tensor(input, "unsqueeze").unsqueeze(dim)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one (a view when the strides allow it)."""
    return check_tensor(input, "flatten").flatten(start_dim, end_dim)


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Split dim ``dim`` into ``sizes`` (one may be -1)."""
    return check_tensor(input, "unflatten").unflatten(dim, sizes)


def ravel(input: Tensor) -> Tensor:
    """The elements as a contiguous 1-d tensor (a view when ``input`` is contiguous)."""
    return check_tensor(input, "ravel").contiguous().view(-1)


def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """A view of ``length`` elements from ``start`` along ``dim``."""
    if isinstance(start, Tensor):
        start = int(start.item())
    return check_tensor(input, "narrow").narrow(dim, start, length)


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """Like :func:`narrow`, but a copy."""
    return _recorded_copy(narrow(input, dim, start, length))


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """A view of the slice at ``index`` along ``dim``, without that dim."""
    return check_tensor(input, "select").select(dim, index)


def permute(input: Tensor, dims: Sequence[int]) -> Tensor:
    """A view with the dims reordered."""
    return check_tensor(input, "permute").permute(*dims)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view with ``dim0`` and ``dim1`` swapped."""
    return check_tensor(input, "transpose").transpose(dim0, dim1)


def t(input: Tensor) -> Tensor:
    """Transpose of a tensor with at most 2 dims."""
    return check_tensor(input, "t").t()


def reshape(input: Tensor, shape: Sequence[int]) -> Tensor:
    """``input`` with ``shape``: a view when the strides allow it, else a copy."""
    return check_tensor(input, "reshape").reshape(shape)


def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """A view with explicit sizes, strides and storage offset."""
    return check_tensor(input, "as_strided").as_strided(size, stride, storage_offset)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A view of the diagonal of the (dim1, dim2) planes, appended as the last dim."""
    return check_tensor(input, "diagonal").diagonal(offset, dim1, dim2)


# -- *_scatter: a copy of input with one view of it overwritten ----------------------------


def _clone_keeping_strides(t: Tensor) -> Tensor:
    """A copy of ``t`` with its strides and storage offset, as PyTorch's scatter ops return
    it: a view of a new block as long as ``t``'s storage up to its last element. A tensor
    whose elements share memory (a broadcast dim) gets a contiguous clone."""
    shape, stride, offset = t._shape, t._stride, t._offset
    if (not offset and stride == contiguous_strides(shape)) or 0 in shape or \
            any(st == 0 and n > 1 for n, st in zip(shape, stride)):
        return clone(t)
    block = new_tensor((offset + storage_extent(shape, stride),), t._dtype, t._device)
    out = block.as_strided(shape, stride, offset)
    copy_(out, t)  # (the block's other elements are never read)
    return out


def _scatter_into_view(input: Tensor, src: Tensor, view: Any, name: str) -> Tensor:
    check_tensor(input, name)
    if _state.modes_active and src.__class__ is not input.__class__:
        # a mode's tensor (a batched one under vmap) written into a plain copy
        return _scatter_at_positions(input, src, view)
    # (while autograd records, a contiguous clone: a copy into a view of a new block does not
    # yet carry the gradient back to ``input``)
    recording = _config.is_grad_enabled() and (input.requires_grad or src.requires_grad)
    out = clone(input) if recording else _clone_keeping_strides(input)
    target = view(out)
    if target._shape != src._shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src._shape)}, slice size = {list(target._shape)}")
    copy_(target, src)
    out._vc[0] = 0
    return out


def _scatter_at_positions(input: Tensor, src: Tensor, view: Any) -> Tensor:
    """``_scatter_into_view`` as out-of-place operators, while a dispatch mode is active: a
    scatter of ``src`` at the flat positions of the view's elements. A mode then sees
    operators on ``src`` instead of a write into a fresh buffer (under vmap a batched ``src``
    gives a batched result; a write into an unbatched buffer could not)."""
    from .creation import arange
    from .indexing import scatter

    positions = view(arange(input.numel(), device=input.device).view(input._shape))
    if positions._shape != src._shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src._shape)}, slice size = {list(positions._shape)}")
    flat = scatter(input.reshape(-1), 0, positions.reshape(-1),
                   src.reshape(-1).to(input.dtype))
    return flat.view(input._shape)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` whose slice ``select(dim, index)`` holds ``src``."""
    return _scatter_into_view(input, src, lambda t: t.select(dim, index), "select_scatter")


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """A copy of ``input`` whose slice ``start:end:step`` along ``dim`` holds ``src``."""
    def view(t: Tensor) -> Tensor:
        d = wrap_dim(dim, t.ndim)
        return t[(slice(None),) * d + (slice(start, end, step),)]

    return _scatter_into_view(input, src, view, "slice_scatter")


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of ``input`` whose diagonal (as in :func:`diagonal`) holds ``src``."""
    return _scatter_into_view(input, src, lambda t: t.diagonal(offset, dim1, dim2),
                              "diagonal_scatter")


# Tensor method name -> function, bound onto Tensor when the op surface loads.
METHODS: dict[str, Any] = {
    "movedim": movedim,
    "moveaxis": movedim,
    "split": _split_method,
    "chunk": chunk,
    "unbind": unbind,
    "tensor_split": tensor_split,
    "hsplit": hsplit,
    "vsplit": vsplit,
    "dsplit": dsplit,
    "flip": lambda self, *dims: flip(self, dims[0] if len(dims) == 1 else dims),
    "fliplr": fliplr,
    "flipud": flipud,
    "roll": roll,
    "rot90": rot90,
    "repeat": _repeat_method,
    "tile": _tile_method,
    "repeat_interleave": repeat_interleave,
    "broadcast_to": _broadcast_to_method,
    "sum_to_size": _sum_to_size_method,
    "ravel": ravel,
    "narrow_copy": narrow_copy,
    "select_scatter": select_scatter,
    "slice_scatter": slice_scatter,
    "diagonal_scatter": diagonal_scatter,
}
