"""``Tensor``: storage plus sizes, strides (in elements), offset, dtype and device.

This module holds the metadata side: attributes and the view operations, which only compute
new sizes/strides over the same storage and never copy. Everything that computes lives in
:mod:`torch._functions`, which binds itself here as ``_F`` when loaded (it is loaded before the
first tensor can exist), so ``import torch`` does not pay for numpy.
"""

from __future__ import annotations

import operator
from typing import Any

from . import _config, _dtype
from ._device import device as _device
from ._symbolic import SymInt

_F: Any = None  # torch._functions, bound on load
_TF: Any = None  # torch._torch_function, bound on load (before any override can run)

# Tensor classes that define ``__torch_dispatch__``: their instances reach the dispatcher's
# Python key. Filled by ``Tensor.__init_subclass__``; classes are never removed (a class may
# outlive every name bound to it), so ``_config.state.keys_active`` keeps one count per entry.
python_dispatch_classes: set[type] = set()


def _disabled_torch_function_impl(func: Any, types: Any, args: Any = (),
                                  kwargs: Any = None) -> Any:
    """Set as a subclass's ``__torch_function__`` to opt it out of the protocol: its
    instances take the plain path and ops on them return plain tensors (``nn.Parameter``)."""
    return func(*args, **(kwargs or {}))



def _grad_recording() -> bool:
    return not _config.state.no_grad_active or _config.is_grad_enabled()
_layout_cache: dict[Any, Any] = {}


class Size(tuple):
    """The shape of a tensor: a tuple of ints that prints as ``torch.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def __getitem__(self, i: Any) -> Any:
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __reduce__(self) -> tuple[Any, ...]:
        return (Size, (tuple(self),))


Size.__module__ = "torch"


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides (in elements) of ``shape``."""
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s if s > 1 else 1
    return tuple(reversed(strides))


def storage_extent(shape: tuple[int, ...], stride: tuple[int, ...]) -> int:
    """How many elements a (shape, stride) layout spans from its first to its last element
    (0 for an empty tensor)."""
    if any(n == 0 for n in shape):
        return 0
    return 1 + sum((n - 1) * st for n, st in zip(shape, stride))


def check_no_internal_overlap(t: Tensor) -> None:
    """Refuse a write into ``t`` when several of its elements share one memory location (a
    broadcast dimension: size > 1, stride 0), which would leave the result depending on the
    order of the writes. Like PyTorch, only this sure case is checked; callers test
    ``0 in t._stride`` first, so the common layouts pay nothing more."""
    if any(st == 0 and n > 1 for n, st in zip(t._shape, t._stride)) and 0 not in t._shape:
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")


def wrap_dim(dim: Any, ndim: int) -> int:
    """Map a possibly negative ``dim`` into ``[0, ndim)``; 0-d tensors accept -1 and 0."""
    try:
        d = operator.index(dim)
    except TypeError:
        raise TypeError(f"dim must be an int, not {type(dim).__name__}") from None
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= d <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], "
                         f"but got {d})")
    return d + ndim if d < 0 else d if ndim else 0


def _shape_arg(args: tuple[Any, ...]) -> tuple[int, ...]:
    """Accept ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(torch.Size([2, 3]))``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    out = []
    for s in args:
        if s.__class__ is SymInt:  # stays symbolic: int() would guard it to its hint
            out.append(s)
            continue
        try:
            out.append(operator.index(s))
        except TypeError:
            raise TypeError(f"expected a sequence of integers for a size, but got an element "
                            f"of type {type(s).__name__}") from None
    return tuple(out)


class Tensor:
    """A multi-dimensional array on a device, with autograd metadata."""

    __slots__ = (
        "__dict__",
        "__weakref__",
        "_base",
        "_device",
        "_dtype",
        "_fk",
        "_grad",
        "_offset",
        "_shape",
        "_storage",
        "_stride",
        "_vc",
        "grad_fn",
        "requires_grad",
    )

    # The fast-key slot ``_fk`` holds an interned layout object when the tensor is contiguous,
    # needs no grad and has a plain dtype; the eager fast paths compare it by identity.

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:
        from . import _functions

        return _functions.legacy_tensor_new(cls, *args, **kwargs)

    @classmethod
    def _make(
        cls,
        storage: Any,
        shape: tuple[int, ...],
        stride: tuple[int, ...],
        offset: int,
        dtype: _dtype.dtype,
        dev: _device,
        vc: list[int] | None = None,
        base: Tensor | None = None,
    ) -> Tensor:
        t = object.__new__(cls)
        t._storage = storage
        t._shape = shape if shape.__class__ is Size else Size(shape)
        t._stride = stride
        t._offset = offset
        t._dtype = dtype
        t._device = dev
        t._vc = vc if vc is not None else [0]
        t._base = base
        t._grad = None
        t.grad_fn = None
        t.requires_grad = False
        t._fk = None
        if _config.state.inference_active and _config.is_inference_mode_enabled():
            t.__dict__["_inference"] = True  # made in inference mode: an inference tensor
        return t

    def _view(self, shape: tuple[int, ...], stride: tuple[int, ...], offset: int,
              kind: str = "as_strided", args: tuple[Any, ...] = ()) -> Tensor:
        """A view sharing storage and version counter with ``self``; under autograd it records
        how to send the view's gradient back (``kind``: which view op, ``args``: its dims)."""
        base = self._base if self._base is not None else self
        out = Tensor._make(self._storage, shape, stride, offset, self._dtype, self._device,
                           self._vc, base)
        if self.requires_grad and _grad_recording():
            from .autograd import _nodes

            _nodes.record_view(self, out, kind, args)
        return out

    # -- metadata ----------------------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return self._shape

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return self._shape
        return self._shape[wrap_dim(dim, len(self._shape))]

    def stride(self, dim: int | None = None) -> Any:
        if dim is None:
            return self._stride
        return self._stride[wrap_dim(dim, len(self._shape))]

    def storage_offset(self) -> int:
        return self._offset

    def dim(self) -> int:
        return len(self._shape)

    ndimension = dim

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    nelement = numel

    @property
    def dtype(self) -> _dtype.dtype:
        return self._dtype

    @property
    def device(self) -> _device:
        return self._device

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def is_meta(self) -> bool:
        return self._device.type == "meta"

    @property
    def layout(self) -> Any:
        from . import _layout

        return _layout.strided

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self._dtype.itemsize

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._dtype.is_complex

    def untyped_storage(self) -> Any:
        return self._storage

    def data_ptr(self) -> int:
        return self._storage._ptr + self._offset * self._dtype.itemsize

    @property
    def _version(self) -> int:
        return self._vc[0]

    def _bump_version(self) -> None:
        self._vc[0] += 1

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                            f"type {type(value).__name__}")
        if value is not None and value._shape != self._shape:
            raise RuntimeError(f"assigned grad has data of a different size: {value._shape} vs "
                               f"{self._shape}")
        self._grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't "
                               "require differentiation use var_no_grad = var.detach().")
        if requires_grad and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def _is_view(self) -> bool:
        return self._base is not None

    def is_contiguous(self, memory_format: Any = None) -> bool:
        if 0 in self._shape:
            return True  # an empty tensor is contiguous whatever its strides, as in PyTorch
        expected = 1
        for size, stride in zip(reversed(self._shape), reversed(self._stride)):
            if size != 1:
                if stride != expected:
                    return False
                expected *= size
        return True

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self) -> Any:
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self.select(0, i) for i in range(self._shape[0]))

    def __hash__(self) -> int:
        return id(self)

    # -- subclasses: __torch_function__ / __torch_dispatch__ -----------------------------------

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # The protocol's entry checks cost nothing until a class can use them: the first
        # subclass that keeps a __torch_function__ installs them (torch._torch_function).
        super().__init_subclass__(**kwargs)
        tf = cls.__torch_function__
        if getattr(tf, "__func__", tf) is not _disabled_torch_function_impl:
            from . import _torch_function

            _torch_function.install()
        td = getattr(cls, "__torch_dispatch__", None)
        if td is not None and getattr(td, "__func__", td) is not _disabled_torch_function_impl \
                and cls not in python_dispatch_classes:
            python_dispatch_classes.add(cls)
            _config.state.keys_active += 1

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        """The default override: run ``func`` with subclass dispatch off and return results
        as ``cls`` (``torch.overrides``); a subclass overrides it to intercept calls."""
        return _TF.default_torch_function(cls, func, types, args, kwargs)

    def as_subclass(self, cls: type) -> Tensor:
        """A ``cls`` instance viewing ``self``'s data (an alias that stays in the autograd
        graph)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor, "
                            f"not {getattr(cls, '__name__', type(cls).__name__)}")
        out = self._view(self._shape, self._stride, self._offset, "alias")
        return _with_class(out, cls)

    @staticmethod
    def _make_subclass(cls: type, data: Tensor, require_grad: bool = False, **_: Any) -> Tensor:
        """A ``cls`` leaf sharing ``data``'s memory and version counter (``nn.Parameter``)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("_make_subclass(): argument 'cls' must be a subclass of Tensor")
        if not isinstance(data, Tensor):
            raise TypeError(f"_make_subclass(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        out = cls._make(data._storage, data._shape, data._stride, data._offset, data._dtype,
                        data._device, data._vc)
        if require_grad:
            out.requires_grad_(True)
        return out

    @staticmethod
    def _make_wrapper_subclass(cls: type, size: Any, strides: Any = None,
                               storage_offset: int | None = None, memory_format: Any = None,
                               dtype: _dtype.dtype | None = None, layout: Any = None,
                               device: Any = None, pin_memory: bool = False,
                               requires_grad: bool = False, **_: Any) -> Tensor:
        """A ``cls`` instance with the given metadata and no data of its own: the shell of
        a wrapper subclass whose ``__torch_dispatch__`` computes on what it wraps."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("_make_wrapper_subclass(): argument 'cls' must be a subclass of "
                            "Tensor")
        from . import _torch_function

        return _torch_function.wrapper_shell(cls, _shape_arg((size,)), strides, storage_offset,
                                             dtype, device, requires_grad)


    # -- views: metadata only ------------------------------------------------------------------

    def as_strided(self, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
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
        return self._view(size, stride, offset, "as_strided")

    def view(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
            return _F.view_dtype(self, shape[0])
        new_shape = _infer_size(_shape_arg(shape), self.numel())
        stride = _view_strides(self._shape, self._stride, new_shape)
        if stride is None:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
        return self._view(new_shape, stride, self._offset, "view")

    def view_as(self, other: Tensor) -> Tensor:
        return self.view(other._shape)

    def reshape(self, *shape: Any) -> Tensor:
        new_shape = _infer_size(_shape_arg(shape), self.numel())
        stride = _view_strides(self._shape, self._stride, new_shape)
        if stride is not None:
            return self._view(new_shape, stride, self._offset, "reshape")
        return self.contiguous().view(new_shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return self.reshape(other._shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        n = len(self._shape)
        if n == 0:
            return self.reshape(1)
        s, e = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if s == e:
            return self
        mid = 1
        for d in self._shape[s : e + 1]:
            mid *= d
        return self.reshape(self._shape[:s] + (mid,) + self._shape[e + 1 :])

    def unflatten(self, dim: int, sizes: Any) -> Tensor:
        d = wrap_dim(dim, len(self._shape))
        sizes = _infer_size(tuple(sizes), self._shape[d])
        return self.view(self._shape[:d] + sizes + self._shape[d + 1 :])

    def permute(self, *dims: Any) -> Tensor:
        n = len(self._shape)
        dims = _shape_arg(dims)
        if len(dims) != n:
            raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does"
                               f" not match the length of the desired ordering of dimensions i.e. "
                               f"input.dim() = {n} is not equal to len(dims) = {len(dims)}"
                               .replace("(sparse_coo)", ""))
        wrapped = [wrap_dim(d, n) for d in dims]
        if len(set(wrapped)) != n:
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        return self._view(tuple(self._shape[d] for d in wrapped),
                          tuple(self._stride[d] for d in wrapped), self._offset, "permute",
                          tuple(wrapped))

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        n = len(self._shape)
        if n == 0:
            wrap_dim(dim0, 0)
            wrap_dim(dim1, 0)
            return self._view((), (), self._offset, "alias")
        a, b = wrap_dim(dim0, n), wrap_dim(dim1, n)
        shape, stride = list(self._shape), list(self._stride)
        shape[a], shape[b] = shape[b], shape[a]
        stride[a], stride[b] = stride[b], stride[a]
        return self._view(tuple(shape), tuple(stride), self._offset, "transpose", (a, b))

    swapaxes = transpose
    swapdims = transpose

    def t(self) -> Tensor:
        if len(self._shape) > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{len(self._shape)}D")
        return self.transpose(0, 1) if len(self._shape) == 2 else self._view(
            self._shape, self._stride, self._offset, "alias")

    @property
    def T(self) -> Tensor:
        return self.permute(*range(len(self._shape) - 1, -1, -1))

    @property
    def mT(self) -> Tensor:
        if len(self._shape) < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {len(self._shape)}-D tensor.")
        return self.transpose(-2, -1)

    def expand(self, *sizes: Any) -> Tensor:
        sizes = _shape_arg(sizes)
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
        return self._view(tuple(shape), tuple(stride), self._offset, "expand")

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other._shape)

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
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
        shape = self._shape[:d] + (length,) + self._shape[d + 1 :]
        return self._view(shape, self._stride, self._offset + start * self._stride[d], "narrow")

    def select(self, dim: int, index: int) -> Tensor:
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
        return self._view(self._shape[:d] + self._shape[d + 1 :],
                          self._stride[:d] + self._stride[d + 1 :],
                          self._offset + index * self._stride[d], "select")

    def squeeze(self, dim: Any = None) -> Tensor:
        n = len(self._shape)
        if dim is None:
            drop = {i for i, s in enumerate(self._shape) if s == 1}
        else:
            dims = dim if isinstance(dim, (tuple, list)) else (dim,)
            drop = {d for d in (wrap_dim(x, n) for x in dims) if n and self._shape[d] == 1}
        keep = [i for i in range(n) if i not in drop]
        return self._view(tuple(self._shape[i] for i in keep), tuple(self._stride[i] for i in keep),
                          self._offset, "squeeze")

    def unsqueeze(self, dim: int) -> Tensor:
        n = len(self._shape)
        d = wrap_dim(dim, n + 1)
        inner = self._stride[d] * self._shape[d] if d < n else 1
        return self._view(self._shape[:d] + (1,) + self._shape[d:],
                          self._stride[:d] + (inner,) + self._stride[d:], self._offset,
                          "unsqueeze")

    def unfold(self, dimension: int, size: int, step: int) -> Tensor:
        n = len(self._shape)
        d = wrap_dim(dimension, n) if n else 0
        dim_size = self._shape[d] if n else 1
        if size > dim_size:
            raise RuntimeError(f"maximum size for tensor at dimension {d} is {dim_size} but size "
                               f"is {size}")
        if step <= 0:
            raise RuntimeError(f"step is {step} but must be > 0")
        if not n:
            return self._view((size,), (1,), self._offset, "unsqueeze")
        count = (dim_size - size) // step + 1
        shape = self._shape[:d] + (count,) + self._shape[d + 1 :] + (size,)
        stride = (self._stride[:d] + (self._stride[d] * step,) + self._stride[d + 1 :]
                  + (self._stride[d],))
        return self._view(shape, stride, self._offset, "unfold")

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
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
        diag_stride = self._stride[a] + self._stride[b]
        return self._view(tuple(self._shape[i] for i in keep) + (length,),
                          tuple(self._stride[i] for i in keep) + (diag_stride,), start,
                          "diagonal")

    def detach(self) -> Tensor:
        """A tensor sharing storage and version counter, cut from the autograd graph."""
        return Tensor._make(self._storage, self._shape, self._stride, self._offset, self._dtype,
                            self._device, self._vc, self._base)

    def __getitem__(self, index: Any) -> Tensor:
        return _basic_index(self, index)

    def __repr__(self) -> str:
        from . import _tensor_str

        return _tensor_str.tensor_repr(self)


Tensor.__module__ = "torch"


def _with_class(t: Tensor, cls: type) -> Tensor:
    """``t`` (a tensor nobody else holds yet) as an instance of ``cls``."""
    if cls is Tensor or t.__class__ is cls:
        return t
    try:
        t.__class__ = cls
        return t
    except TypeError:  # cls adds slots: copy the fields into a new instance
        out = object.__new__(cls)
        for name in Tensor.__slots__[2:]:
            setattr(out, name, getattr(t, name))
        out.__dict__.update(t.__dict__)
        return out


def _tensor_type(t: Tensor) -> str:
    return {"float32": "FloatTensor", "float64": "DoubleTensor", "int64": "LongTensor"}.get(
        t._dtype._name, "Tensor")


def _infer_size(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    """Resolve one ``-1`` in ``shape`` so that it holds ``numel`` elements."""
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s}")
        else:
            known *= s
    if infer is not None:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[:infer] + (numel // known,) + shape[infer + 1 :]
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _view_strides(old_shape: tuple[int, ...], old_stride: tuple[int, ...],
                  new_shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """Strides that let ``new_shape`` view memory laid out as (old_shape, old_stride), or
    ``None`` when a new dimension would straddle two non-contiguous chunks of memory."""
    numel = 1
    for s in old_shape:
        numel *= s
    if numel == 0:
        return contiguous_strides(new_shape)
    # Group old dims (innermost first) into chunks whose elements are evenly spaced: a dim
    # joins the chunk inside it when its stride steps exactly over that chunk.
    chunks: list[list[int]] = []  # [number of elements, stride of the innermost element]
    for size, stride in zip(reversed(old_shape), reversed(old_stride)):
        if size == 1:
            continue
        if chunks and stride == chunks[-1][0] * chunks[-1][1]:
            chunks[-1][0] *= size
        else:
            chunks.append([size, stride])
    # Each chunk must be covered exactly by a run of new dims, innermost first.
    new_stride = [0] * len(new_shape)
    ni = len(new_shape) - 1
    for size, inner in chunks:
        acc = 1
        while acc < size:
            if ni < 0:
                return None
            new_stride[ni] = inner * acc
            acc *= new_shape[ni]
            ni -= 1
        if acc != size:
            return None
    while ni >= 0:  # what is left can only be size-1 dims
        if new_shape[ni] != 1:
            return None
        nxt = ni + 1
        new_stride[ni] = new_stride[nxt] * new_shape[nxt] if nxt < len(new_shape) else 1
        ni -= 1
    return tuple(new_stride)


def _basic_index(t: Tensor, index: Any) -> Tensor:
    """Indexing with ints, slices, ``None`` and ``...``: always a view."""
    if not isinstance(index, tuple):
        if not _is_basic(index):  # torch._indexing reads the index as the user wrote it
            return _F.advanced_index(t, index)
        index = (index,)
    if any(not _is_basic(i) for i in index):
        return _F.advanced_index(t, index)
    n_ellipsis = sum(1 for i in index if i is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
    if consumed > len(t._shape):
        raise IndexError(f"too many indices for tensor of dimension {len(t._shape)}")
    if n_ellipsis:
        at = index.index(Ellipsis)
        index = index[:at] + (slice(None),) * (len(t._shape) - consumed) + index[at + 1 :]
    shape: list[int] = []
    stride: list[int | None] = []  # None marks a new axis, filled in below
    offset = t._offset
    dim = 0
    for item in index:
        if item is None:
            shape.append(1)
            stride.append(None)
            continue
        size = t._shape[dim]
        if isinstance(item, slice):
            if item.step is not None and item.step <= 0:
                raise ValueError("slice step cannot be zero" if item.step == 0
                                 else "step must be greater than zero")
            start, stop, step = item.indices(size)
            length = max(0, (stop - start + step - 1) // step)
            offset += start * t._stride[dim]  # even for an empty slice, as in PyTorch
            shape.append(length)
            stride.append(t._stride[dim] * step)
        else:
            i = operator.index(item)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size "
                                 f"{size}")
            offset += (i % size) * t._stride[dim]
        dim += 1
    shape.extend(t._shape[dim:])
    stride.extend(t._stride[dim:])
    for k in range(len(stride) - 1, -1, -1):  # a new axis steps over the dim inside it
        if stride[k] is None:
            stride[k] = stride[k + 1] * shape[k + 1] if k + 1 < len(stride) else 1
    return t._view(tuple(shape), tuple(stride), offset, "slice")


def _is_basic(i: Any) -> bool:
    if i is None or i is Ellipsis or isinstance(i, slice):
        return True
    if isinstance(i, bool):
        return False
    if isinstance(i, int):
        return True
    if isinstance(i, Tensor):
        return False
    # an integer-like scalar; arrays (numpy's have __index__ too) are advanced indices
    return (hasattr(i, "__index__") and not isinstance(i, (list, tuple))
            and getattr(i, "ndim", 0) == 0)
