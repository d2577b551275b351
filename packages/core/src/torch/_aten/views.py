"""The view operators: ``aten::view``, ``transpose.int``, ``select.int``, ``slice.Tensor``... as
dispatcher operators with PyTorch's schemas.

A view kernel computes only metadata (sizes, strides, storage offset) over its input's storage,
so one device-agnostic ``CompositeExplicitAutograd`` kernel serves every backend and the meta
device alike. The ``Autograd`` kernel of each view op (built by :mod:`torch.autograd`) records
how a gradient goes back through it. Ops that PyTorch writes in terms of other ops (``reshape``,
``narrow``, ``chunk``, ``movedim``...) are ``CompositeImplicitAutograd`` here too: their kernels
call the view operators, which record.

The Tensor methods (:mod:`torch._core.tensor`) parse their arguments and call these operators
directly: views are on every hot path, so there is no frame between the method and the
dispatcher.
"""

from __future__ import annotations

import operator
from types import SimpleNamespace
from typing import Any

from .._core import (
    dispatch as _dispatch,
    dtype as _dtype,
    layout as _layout,
    plan as _plan,
    tensor as _tensor,
)
from .._core.alloc import _interned, check_dtype
from .._core.symbolic import _SymScalar
from .._core.tensor import (
    Size,
    Tensor,
    _infer_size,
    _tensor_type,
    _view_strides,
    storage_extent,
    wrap_dim,
)

__all__: list[str] = []


# -- explicit kernels: metadata only ---------------------------------------------------------


def view(self: Tensor, size: Any) -> Tensor:
    new_shape = _infer_size(tuple(size), self.numel())
    stride = _view_strides(self._shape, self._stride, new_shape)
    if stride is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return self._view(new_shape, stride, self._offset)


# PyTorch's scalar type names, which its view(dtype) errors use
_SCALAR_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                 "int32": "Int", "int64": "Long", "uint16": "UInt16", "uint32": "UInt32",
                 "uint64": "UInt64", "float16": "Half", "bfloat16": "BFloat16",
                 "float32": "Float", "float64": "Double", "complex64": "ComplexFloat",
                 "complex128": "ComplexDouble"}


def _dtype_view_geometry(self: Tensor, dtype: _dtype.dtype) -> tuple[Any, Any, int]:
    """Shape, strides and offset of ``self``'s bytes read as ``dtype``: with another element
    size the last dimension (stride 1) holds ``ratio`` times more or fewer elements, and the
    other strides and the offset scale with it, as PyTorch's rules require."""
    old, new = self._dtype.itemsize, dtype.itemsize
    if old == new:
        return self._shape, self._stride, self._offset
    names = _SCALAR_NAMES.get(self._dtype._name, str(self._dtype)), _SCALAR_NAMES.get(
        dtype._name, str(dtype))
    what = f"to view {names[0]} as {names[1]} (different element sizes)"
    if not self._shape:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if self._stride[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {self._stride[-1]}")
    if old > new:
        ratio = old // new
        shape = self._shape[:-1] + (self._shape[-1] * ratio,)
        stride = tuple(s * ratio for s in self._stride[:-1]) + (1,)
        return shape, stride, self._offset * ratio
    ratio = new // old
    if self._shape[-1] % ratio:
        raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                           f"{self._shape[-1]}")
    if self._offset % ratio:
        raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, but "
                           f"got {self._offset}")
    for i, s in enumerate(self._stride[:-1]):
        if s % ratio:
            raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} {what}, but got "
                               f"{s}")
    shape = self._shape[:-1] + (self._shape[-1] // ratio,)
    stride = tuple(s // ratio for s in self._stride[:-1]) + (1,)
    return shape, stride, self._offset // ratio


def view_dtype(self: Tensor, dtype: _dtype.dtype) -> Tensor:
    check_dtype(dtype)  # (a dtype known by name only makes no tensor)
    shape, stride, offset = _dtype_view_geometry(self, dtype)
    base = self._base if self._base is not None else self
    return Tensor._make(self._storage, shape, stride, offset, dtype, self._device, self._vc,
                        base)


def _reshape_alias(self: Tensor, size: Any, stride: Any) -> Tensor:
    return self._view(tuple(size), tuple(stride), self._offset)


def _unsafe_view(self: Tensor, size: Any) -> Tensor:
    # The result shares self's memory but is not a view of it: reshape uses it on a fresh
    # copy, which nothing else sees.
    new_shape = _infer_size(tuple(size), self.numel())
    if self._interned_layout is not None and not self._offset:
        # reshape's fresh row-major copy: the result is a plain tensor of the interned layout
        # (the fast paths and plans key it by that)
        lay = _interned(new_shape, self._dtype, self._device)
        if lay is not None:
            out = Tensor._make(self._storage, lay.shape, lay.stride, 0, self._dtype,
                               self._device)
            out._interned_layout = lay
            return out
    stride = _view_strides(self._shape, self._stride, new_shape)
    if stride is None:
        raise RuntimeError("_unsafe_view: the input's strides do not allow this shape")
    return Tensor._make(self._storage, new_shape, stride, self._offset, self._dtype,
                        self._device)


def as_strided(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(size)} sizes, "
                           f"{len(stride)} strides")
    if any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError("as_strided: negative sizes and strides are not supported, got "
                           f"size {list(size)} and stride {list(stride)}")
    offset = self._offset if storage_offset is None else storage_offset
    extent = storage_extent(size, stride)
    if extent and self._device.type != "meta":
        last = offset + extent - 1
        if (last + 1) * self._dtype.itemsize > self._storage._nbytes:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{offset}, and itemsize {self._dtype.itemsize} requiring a storage size of "
                f"{(last + 1) * self._dtype.itemsize} are out of bounds for storage of size "
                f"{self._storage._nbytes}")
    return self._view(size, stride, offset)


def permute(self: Tensor, dims: Any) -> Tensor:
    n = len(self._shape)
    if len(dims) != n:
        raise RuntimeError(f"permute(): number of dimensions in the tensor input does not match "
                           f"the length of the desired ordering of dimensions i.e. input.dim() "
                           f"= {n} is not equal to len(dims) = {len(dims)}")
    wrapped = [wrap_dim(d, n) for d in dims]
    if len(set(wrapped)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    shape, stride = self._shape, self._stride
    return self._view(tuple(shape[d] for d in wrapped), tuple(stride[d] for d in wrapped),
                      self._offset)


def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    n = len(self._shape)
    if n == 0:
        wrap_dim(dim0, 0)
        wrap_dim(dim1, 0)
        return self._view((), (), self._offset)
    a, b = wrap_dim(dim0, n), wrap_dim(dim1, n)
    shape, stride = list(self._shape), list(self._stride)
    shape[a], shape[b] = shape[b], shape[a]
    stride[a], stride[b] = stride[b], stride[a]
    base = self._base
    return Tensor._make(self._storage, tuple(shape), tuple(stride), self._offset,
                        self._dtype, self._device, self._vc, self if base is None else base)


def t(self: Tensor) -> Tensor:
    n = len(self._shape)
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    if n < 2:
        return self._view(self._shape, self._stride, self._offset)
    (r, c), (sr, sc) = self._shape, self._stride
    base = self._base
    # (Tensor._make directly, here and in transpose and select: a frame less than _view)
    return Tensor._make(self._storage, (c, r), (sc, sr), self._offset, self._dtype,
                        self._device, self._vc, self if base is None else base)


def expand(self: Tensor, size: Any, *, implicit: bool = False) -> Tensor:
    sizes = tuple(size)
    n, m = len(sizes), len(self._shape)
    if n < m:
        raise RuntimeError(f"expand(torch.{_tensor_type(self)}{{{list(self._shape)}}}, "
                           f"size={list(sizes)}): the number of sizes provided ({n}) must be "
                           f"greater or equal to the number of dimensions in the tensor ({m})")
    shape, stride = [], []
    for i, target in enumerate(sizes):
        j = i - (n - m)
        if j < 0:
            if target < 0:
                raise RuntimeError(f"The expanded size of the tensor ({target}) isn't allowed "
                                   f"in a leading, non-existing dimension {i}")
            shape.append(target)
            stride.append(0)
            continue
        cur = self._shape[j]
        if target == -1:
            target = cur
        if cur == target:
            shape.append(cur)
            stride.append(self._stride[j])
        elif cur == 1 and target >= 0:
            shape.append(target)
            stride.append(0)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({target}) must match the existing size "
                f"({cur}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(self._shape)}")
    return self._view(tuple(shape), tuple(stride), self._offset)


def _slice_bound(value: Any) -> Any:
    """A slice bound as PyTorch reads it, through ``__index__``: a 0-d integer tensor or a
    numpy integer gives its int (so no tensor lands in a shape); symbolic sizes stay."""
    if isinstance(value, _SymScalar):
        return value
    return operator.index(value)


def slice_(self: Tensor, dim: int = 0, start: Any = None, end: Any = None,
           step: int = 1) -> Tensor:
    n = len(self._shape)
    if n == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, n)
    if start is not None and start.__class__ is not int:
        start = _slice_bound(start)
    if end is not None and end.__class__ is not int:
        end = _slice_bound(end)
    if step.__class__ is not int:
        step = _slice_bound(step)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    size = self._shape[d]
    # Python's clamping of slice bounds; an empty slice still moves the offset, as in PyTorch
    lo = 0 if start is None else (start + size if start < 0 else start)
    hi = size if end is None else (end + size if end < 0 else end)
    lo = min(max(lo, 0), size)
    hi = min(max(hi, lo), size)
    length = (hi - lo + step - 1) // step
    stride = self._stride
    return self._view(self._shape[:d] + (length,) + self._shape[d + 1 :],
                      stride[:d] + (stride[d] * step,) + stride[d + 1 :],
                      self._offset + lo * stride[d])


def select(self: Tensor, dim: int, index: Any) -> Tensor:
    n = len(self._shape)
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, n)
    size = self._shape[d]
    index = operator.index(index)
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {size}")
    if index < 0:
        index += size
    stride = self._stride
    base = self._base
    return Tensor._make(self._storage, self._shape[:d] + self._shape[d + 1 :],
                        stride[:d] + stride[d + 1 :], self._offset + index * stride[d],
                        self._dtype, self._device, self._vc, self if base is None else base)


def _squeeze_dims(self: Tensor, drop: set[int]) -> Tensor:
    keep = [i for i in range(len(self._shape)) if i not in drop]
    return self._view(tuple(self._shape[i] for i in keep), tuple(self._stride[i] for i in keep),
                      self._offset)


def squeeze(self: Tensor) -> Tensor:
    return _squeeze_dims(self, {i for i, s in enumerate(self._shape) if s == 1})


def squeeze_dims(self: Tensor, dim: Any) -> Tensor:
    n = len(self._shape)
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return _squeeze_dims(self, {d for d in (wrap_dim(x, n) for x in dims)
                                if n and self._shape[d] == 1})


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    n = len(self._shape)
    d = wrap_dim(dim, n + 1)
    inner = self._stride[d] * self._shape[d] if d < n else 1
    return self._view(self._shape[:d] + (1,) + self._shape[d:],
                      self._stride[:d] + (inner,) + self._stride[d:], self._offset)


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    n = len(self._shape)
    d = wrap_dim(dimension, n) if n else 0
    dim_size = self._shape[d] if n else 1
    if size > dim_size:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {dim_size} but size "
                           f"is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if not n:
        return self._view((size,), (1,), self._offset)
    count = (dim_size - size) // step + 1
    shape = self._shape[:d] + (count,) + self._shape[d + 1 :] + (size,)
    stride = (self._stride[:d] + (self._stride[d] * step,) + self._stride[d + 1 :]
              + (self._stride[d],))
    return self._view(shape, stride, self._offset)


def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    n = len(self._shape)
    a, b = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    start = self._offset
    if offset >= 0:
        length = max(min(self._shape[a], self._shape[b] - offset), 0)
        start += offset * self._stride[b] if length else 0
    else:
        length = max(min(self._shape[a] + offset, self._shape[b]), 0)
        start -= offset * self._stride[a] if length else 0
    keep = [i for i in range(n) if i not in (a, b)]
    return self._view(tuple(self._shape[i] for i in keep) + (length,),
                      tuple(self._stride[i] for i in keep) + (self._stride[a] + self._stride[b],),
                      start)


def alias(self: Tensor) -> Tensor:
    return self._view(self._shape, self._stride, self._offset)


def detach(self: Tensor) -> Tensor:
    # shares storage, version counter and base, cut from the graph (not itself a view); the
    # same memory and shape keep the interned layout (planned calls and in-place updates of
    # the result key on it)
    out = Tensor._make(self._storage, self._shape, self._stride, self._offset, self._dtype,
                       self._device, self._vc, self._base)
    out._interned_layout = self._interned_layout
    out._geometry = self._geometry
    return out


def _pieces(self: Tensor, d: int, sizes: list[int]) -> list[Tensor]:
    stride = self._stride
    step = stride[d]
    # Plain tuples: a Size's indexing and concatenation are Python calls, a tuple's are not;
    # each piece's shape becomes a Size by one (C-level) construction.
    shape = tuple(self._shape)
    head, tail = shape[:d], shape[d + 1 :]
    storage, dt, dev, vc = self._storage, self._dtype, self._device, self._vc
    base = self._base if self._base is not None else self
    make = Tensor._make
    out = []
    at = self._offset
    for s in sizes:
        out.append(make(storage, Size(head + (s,) + tail), stride, at, dt, dev, vc, base))
        at += s * step
    return out


def split_with_sizes(self: Tensor, split_sizes: Any, dim: int = 0) -> list[Tensor]:
    d = wrap_dim(dim, len(self._shape))
    n = self._shape[d]
    sizes = [operator.index(s) for s in split_sizes]
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    return _pieces(self, d, sizes)


def split(self: Tensor, split_size: Any, dim: int = 0) -> list[Tensor]:
    d = wrap_dim(dim, len(self._shape))
    n = self._shape[d]
    size = operator.index(split_size)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={size}")
    if size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                           f"dimension size of {n}")
    count = max(-(-n // size), 1) if size else 1
    return _pieces(self, d, [size] * (count - 1) + [n - size * (count - 1)])


def unbind(self: Tensor, dim: int = 0) -> list[Tensor]:
    if not self._shape:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, len(self._shape))
    sizes = tuple(self._shape)  # (a plain tuple: see _pieces)
    shape, stride = Size(sizes[:d] + sizes[d + 1 :]), self._stride[:d] + self._stride[d + 1 :]
    step = self._stride[d]
    return [self._view(shape, stride, self._offset + i * step) for i in range(self._shape[d])]


# -- implicit kernels: written in the view operators ------------------------------------------


def reshape(self: Tensor, shape: Any) -> Tensor:
    new_shape = _infer_size(tuple(shape), self.numel())
    # a view where one exists (a row-major tensor always has one), as PyTorch's reshape: a
    # dispatch mode sees aten::view
    if self._interned_layout is not None or \
            _view_strides(self._shape, self._stride, new_shape) is not None:
        return ATEN["view"](self, new_shape)
    copied = _copy_op()(self, memory_format=_layout.contiguous_format)
    return ATEN["_unsafe_view"](copied, new_shape)


def narrow(self: Tensor, dim: int, start: Any, length: Any) -> Tensor:
    n = len(self._shape)
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, n)
    size = self._shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return ATEN["slice.Tensor"](self, d, start, start + length, 1)


def chunk(self: Tensor, chunks: int, dim: int = 0) -> list[Tensor]:
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, len(self._shape))
    size = -(-self._shape[d] // chunks)
    if size == 0:  # an empty dim gives `chunks` empty pieces
        return ATEN["split_with_sizes"](self, [0] * chunks, d)
    return ATEN["split.Tensor"](self, size, d)


def movedim(self: Tensor, source: list[int], destination: list[int]) -> Tensor:
    src, dst = list(source), list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    n = len(self._shape)
    wsrc = [wrap_dim(d, n) for d in src]
    wdst = [wrap_dim(d, n) for d in dst]
    if len(set(wsrc)) != len(wsrc):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(wdst)) != len(wdst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    order: list[int | None] = [None] * n
    for s, d in zip(wsrc, wdst) if n else ():  # a 0-d tensor's dim 0 (or -1) stays in place
        order[d] = s
    rest = iter(d for d in range(n) if d not in wsrc)
    return ATEN["permute"](self, [o if o is not None else next(rest) for o in order])


def movedim_int(self: Tensor, source: int, destination: int) -> Tensor:
    return movedim(self, [source], [destination])


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    n = len(self._shape)
    if n == 0:
        return ATEN["reshape"](self, (1,))
    s, e = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return self
    mid = 1
    for d in self._shape[s : e + 1]:
        mid *= d
    return ATEN["reshape"](self, self._shape[:s] + (mid,) + self._shape[e + 1 :])


def unflatten(self: Tensor, dim: int, sizes: Any) -> Tensor:
    d = wrap_dim(dim, len(self._shape))
    sizes = _infer_size(tuple(sizes), self._shape[d])
    return ATEN["view"](self, self._shape[:d] + sizes + self._shape[d + 1 :])


def _copy_op() -> _dispatch.Operator:
    return _dispatch.get("aten::clone")


_IMPLICIT = _dispatch.COMPOSITE_IMPLICIT
TABLE: dict[str, tuple[Any, ...]] = {
    "view": ("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", view),
    "view.dtype": ("view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)", view_dtype),
    "_reshape_alias": ("_reshape_alias(Tensor(a) self, SymInt[] size, SymInt[] stride) -> "
                       "Tensor(a)", _reshape_alias),
    "_unsafe_view": ("_unsafe_view(Tensor self, SymInt[] size) -> Tensor", _unsafe_view),
    "as_strided": ("as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, "
                   "SymInt? storage_offset=None) -> Tensor(a)", as_strided),
    "permute": ("permute(Tensor(a) self, int[] dims) -> Tensor(a)", permute),
    "transpose.int": ("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
                      transpose),
    "t": ("t(Tensor(a) self) -> Tensor(a)", t),
    "expand": ("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
               expand),
    "slice.Tensor": ("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, "
                     "SymInt? end=None, SymInt step=1) -> Tensor(a)", slice_),
    "select.int": ("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", select),
    "squeeze": ("squeeze(Tensor(a) self) -> Tensor(a)", squeeze),
    "squeeze.dim": ("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", squeeze_dims),
    "squeeze.dims": ("squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)", squeeze_dims),
    "unsqueeze": ("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", unsqueeze),
    "unfold": ("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)",
               unfold),
    "diagonal": ("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
                 diagonal),
    "alias": ("alias(Tensor(a) self) -> Tensor(a)", alias),
    "detach": ("detach(Tensor(a) self) -> Tensor(a)", detach),
    "split.Tensor": ("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> "
                     "Tensor(a)[]", split),
    "split_with_sizes": ("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, "
                         "int dim=0) -> Tensor(a)[]", split_with_sizes),
    "unbind.int": ("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", unbind),
    # written in the operators above: autograd comes through them
    "reshape": ("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", reshape, _IMPLICIT),
    "narrow": ("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)",
               narrow, _IMPLICIT),
    "chunk": ("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]", chunk,
              _IMPLICIT),
    "movedim.intlist": ("movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> "
                        "Tensor(a)", movedim, _IMPLICIT),
    "movedim.int": ("movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)",
                    movedim_int, _IMPLICIT),
    "flatten.using_ints": ("flatten.using_ints(Tensor(a) self, int start_dim=0, "
                           "int end_dim=-1) -> Tensor(a)", flatten, _IMPLICIT),
    "unflatten.int": ("unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)",
                      unflatten, _IMPLICIT),
}

# Each view operator and the kind of view it is: what its Autograd kernel records and what a
# plan replays (torch._core.plan). Several pieces out (split, unbind) is a kind too.
VIEW_KINDS = {
    "aten::view": "view", "aten::_reshape_alias": "view", "aten::_unsafe_view": "_unsafe_view",
    "aten::as_strided": "as_strided", "aten::permute": "permute",
    "aten::transpose.int": "transpose", "aten::t": "t", "aten::expand": "expand",
    "aten::slice.Tensor": "slice", "aten::select.int": "select", "aten::squeeze": "squeeze",
    "aten::squeeze.dim": "squeeze", "aten::squeeze.dims": "squeeze",
    "aten::unsqueeze": "unsqueeze", "aten::unfold": "unfold", "aten::diagonal": "diagonal",
    "aten::alias": "alias", "aten::split.Tensor": "split",
    "aten::split_with_sizes": "split_with_sizes", "aten::unbind.int": "unbind",
}

ATEN = _dispatch.define_aten(TABLE)
_plan.enable_views(VIEW_KINDS)  # views replay their geometry (torch._core.plan)
# reshape and flatten: a plan replays the view they made for the signature (a copy: no plan)
_plan.enable_views({"aten::reshape": "view", "aten::flatten.using_ints": "view"},
                   recorded_by="aten::view")
# narrow is a slice, chunk a split: a plan replays their result (chunk's pieces without grad)
_plan.enable_views({"aten::narrow": "slice"}, recorded_by="aten::slice.Tensor")
_plan.enable_views({"aten::chunk": "split"}, recorded_by="aten::split.Tensor")

# What the Tensor methods call: the operators by attribute, so a method is one lookup away
# from the dispatcher.
_tensor.view_ops = SimpleNamespace(**{name.replace(".", "_"): op for name, op in ATEN.items()})
