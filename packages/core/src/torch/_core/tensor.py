"""``Tensor``: storage plus sizes, strides (in elements), offset, dtype and device.

This module holds the metadata side: attributes and the view operations, which only compute
new sizes/strides over the same storage and never copy. Everything that computes lives in the
layers above (the op library, the facade's ``torch._functions``), which install what this module
calls into :mod:`torch._core.upcalls` and :data:`view_ops` when they load, so core imports none of
them and ``import torch`` does not pay for numpy.
"""

from __future__ import annotations

import operator

from . import config as _config, dtype as _dtype, upcalls
from .device import device as _device
from .symbolic import SymInt

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from typing import Any

_attrgetter = operator.attrgetter

# Installed by the layers above when they load (a module global: the view methods read it on
# every call, where an upcall slot would cost one more attribute lookup).
view_ops: Any = None  # the view operators by name (torch._aten.views)
default_torch_function: Any = None  # torch._torch_function's (before any override can run)

# Tensor classes that define ``__torch_dispatch__``: their instances reach the dispatcher's
# Python key. Filled by ``Tensor.__init_subclass__``; classes are never removed (a class may
# outlive every name bound to it), so ``_config.state.keys_active`` keeps one count per entry.
python_dispatch_classes: set[type] = set()

# Tensor and its subclasses that opted out of both protocols (``nn.Parameter``): below the
# facade their instances are plain tensors, so the dispatcher's plans serve calls on them
# (keyed by their class). Subclasses are added by ``Tensor.__init_subclass__``.
plain_tensor_classes: set[type] = set()


def _disabled_torch_function_impl(func: Any, types: Any, args: Any = (),
                                  kwargs: Any = None) -> Any:
    """Set as a subclass's ``__torch_function__`` to opt it out of the protocol: its
    instances take the plain path and ops on them return plain tensors (``nn.Parameter``)."""
    return func(*args, **(kwargs or {}))


_layout_cache: dict[Any, Any] = {}
_tuple_item = tuple.__getitem__
_tuple_add = tuple.__add__


class Size(tuple):
    """The shape of a tensor: a tuple of ints that prints as ``torch.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    # Indexing and concatenation keep tuple's C-level work (no copies), one class test in
    # front: an int index gives the element, a slice and a sum give a Size, as in PyTorch.
    def __getitem__(self, i: Any) -> Any:
        if i.__class__ is slice:
            return Size(_tuple_item(self, i))
        return _tuple_item(self, i)

    def __reversed__(self) -> Any:
        # (without it, reversed() would read each element through __getitem__ above: one
        # Python call per dim, in every stride walk)
        return reversed(tuple(self))

    def __add__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(_tuple_add(self, other))

    def __radd__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(_tuple_add(other, self))

    def __mul__(self, times: Any) -> Size:
        return Size(tuple.__mul__(self, times))

    __rmul__ = __mul__

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


def has_data(t: Tensor) -> bool:
    """Whether ``t``'s elements hold values: false for meta tensors and for fake tensors
    (whose storage is a meta allocation while their device names the one they stand for), so
    checks that read values step aside for both."""
    return t._storage._device.type != "meta"


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
    for s in args:  # the usual sizes: plain ints, returned as the tuple they are
        if s.__class__ is not int:
            break
    else:
        return args
    out = []
    for s in args:
        cls = s.__class__
        if cls is int or cls is SymInt:  # a SymInt stays symbolic: int() would guard it
            out.append(s)
            continue
        if cls is bool:  # operator.index takes it; PyTorch refuses a bool as a size
            raise TypeError("expected a sequence of integers for a size, but got an element of "
                            "type bool")
        try:
            out.append(operator.index(s))
        except TypeError:
            raise TypeError(f"expected a sequence of integers for a size, but got an element "
                            f"of type {type(s).__name__}") from None
    return tuple(out)


def sizes_or_keyword(args: tuple[Any, ...], value: Any, fn: str, keyword: str
                     ) -> tuple[Any, ...]:
    """The sizes of ``f(*sizes)`` or ``f(keyword=sizes)`` (``view(size=...)``,
    ``permute(dims=...)``), for :func:`_shape_arg`; not both."""
    if value is None:
        return args
    if args:
        raise TypeError(f"{fn}() got multiple values for argument '{keyword}'")
    return (value,)


def _only_keyword(kwargs: dict[str, Any], fn: str, keyword: str) -> Any:
    """The value of ``keyword``, the one keyword ``fn`` takes besides its varargs."""
    unexpected = set(kwargs) - {keyword}
    if unexpected:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{min(unexpected)}'")
    return kwargs[keyword]


class _TensorMeta(type):
    """Tensor's metaclass (PyTorch's ``torch._C._TensorMeta``). The Tensor methods are bound
    when the op surface loads, after ``import torch``: a method looked up on the class before
    that (``torch.Tensor.clone`` in a subclass's class body, as torchvision's tv_tensors write
    it) loads it first. Found attributes never reach this."""

    def __getattr__(cls, name: str) -> Any:
        if not name.startswith("__"):
            upcalls.load_op_surface()
            try:
                return type.__getattribute__(cls, name)
            except AttributeError:
                pass
        raise AttributeError(f"type object '{cls.__name__}' has no attribute '{name}'")


class Tensor(metaclass=_TensorMeta):
    """A multi-dimensional array on a device, with autograd metadata."""

    __slots__ = (
        "__dict__",
        "__weakref__",
        "_base",
        "_device",
        "_dtype",
        "_geometry",
        "_grad",
        # a leaf's AccumulateGrad, made at its first use with grad (autograd._nodes): a slot,
        # not an entry of __dict__, which holds only the user's attributes, as in PyTorch
        # (libraries copy a parameter's __dict__ into a new one)
        "_grad_accumulator",
        "_interned_layout",
        "_offset",
        "_requires_grad",
        "_shape",
        "_storage",
        "_stride",
        "_vc",
        "grad_fn",
    )

    # The slot ``_interned_layout`` holds an interned layout object when the tensor is
    # contiguous, needs no grad and has a plain dtype; the eager fast paths compare it by
    # identity. ``_geometry`` holds a strided tensor's interned plan-signature part
    # (``torch._core.alloc.Geometry``, current only while its objects are the tensor's).

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:
        upcalls.load_op_surface()  # Tensor(...) may come before any torch.* function is used
        return upcalls.legacy_tensor_new(cls, *args, **kwargs)

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
        t._requires_grad = False
        t._interned_layout = None
        t._geometry = None
        if _config.state.inference_active and _config.is_inference_mode_enabled():
            t.__dict__["_inference"] = True  # made in inference mode: an inference tensor
        return t

    def _view(self, shape: tuple[int, ...], stride: tuple[int, ...], offset: int) -> Tensor:
        """A view sharing storage and version counter with ``self`` (what the view kernels of
        torch._aten.views build; their Autograd kernels record the backward)."""
        base = self._base if self._base is not None else self
        return Tensor._make(self._storage, shape, stride, offset, self._dtype, self._device,
                            self._vc, base)

    # -- metadata ----------------------------------------------------------------------------

    # shape, dtype and device read their slot through a C getter: kernels read them on every
    # call, and a property with a Python getter costs a frame each time
    shape = property(_attrgetter("_shape"), doc="The tensor's sizes, a ``torch.Size``.")

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

    dtype = property(_attrgetter("_dtype"), doc="The tensor's element type.")
    device = property(_attrgetter("_device"), doc="The device the tensor's memory is on.")

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
        from . import layout as _layout

        return _layout.strided

    is_sparse = False  # (torch._core.sparse.SparseTensor says True)
    is_sparse_csr = False  # (compressed layouts are not supported)

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
        self._requires_grad = bool(requires_grad)
        return self

    # Core reads and writes the slot ``_requires_grad`` (a property read costs several times a
    # slot read, on every op); the property is the public face, checked as in PyTorch.
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value.__class__ is not bool:
            raise RuntimeError("requires_grad must be a bool")
        if value and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        if not value and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't "
                               "require differentiation use var_no_grad = var.detach().")
        self._requires_grad = value

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (PyTorch's method of the same name)."""
        return self._base is not None

    def is_contiguous(self, memory_format: Any = None) -> bool:
        if memory_format is None:
            if self._interned_layout is not None:
                return True  # (an interned layout is a contiguous one: no stride walk)
            geo = self._geometry  # (current while it holds the tensor's own objects)
            if geo is not None and geo.shape is self._shape and geo.stride is self._stride:
                return geo.contiguous
        else:
            from . import layout as _layout

            return _layout.is_contiguous_as(self._shape, self._stride, memory_format)
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

    # False on core's subclasses that opt out of __torch_function__ but are not dense tensors
    # below it (sparse, batched): the dispatcher's plans never key them as tensors.
    _planned_as_tensor = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # The protocol's entry checks cost nothing until a class can use them: the first
        # subclass that keeps a __torch_function__ installs them (torch._torch_function).
        super().__init_subclass__(**kwargs)
        if "__torch_dispatch__" in cls.__dict__ and "__torch_function__" not in cls.__dict__ \
                and getattr(cls.__torch_function__, "__func__", None) is _default_tf_func:
            # As in PyTorch, a class that brings its own __torch_dispatch__ and inherits the
            # default __torch_function__ opts out of the latter: results are what its
            # __torch_dispatch__ returns, not converted to the class afterwards.
            cls.__torch_function__ = _disabled_torch_function_impl
        tf = cls.__torch_function__
        if getattr(tf, "__func__", tf) is not _disabled_torch_function_impl:
            upcalls.install_torch_function(cls)
        td = getattr(cls, "__torch_dispatch__", None)
        if td is not None and getattr(td, "__func__", td) is not _disabled_torch_function_impl \
                and cls not in python_dispatch_classes:
            python_dispatch_classes.add(cls)
            _config.state.keys_active += 1
        if getattr(tf, "__func__", tf) is _disabled_torch_function_impl \
                and cls not in python_dispatch_classes and cls._planned_as_tensor:
            plain_tensor_classes.add(cls)

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        """The default override: run ``func`` with subclass dispatch off and return results
        as ``cls`` (``torch.overrides``); a subclass overrides it to intercept calls."""
        return default_torch_function(cls, func, types, args, kwargs)

    def as_subclass(self, cls: type) -> Tensor:
        """A ``cls`` instance viewing ``self``'s data (an alias that stays in the autograd
        graph)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor, "
                            f"not {getattr(cls, '__name__', type(cls).__name__)}")
        if self.is_sparse:
            raise NotImplementedError("as_subclass() of a sparse tensor is not supported")
        out = view_ops.alias(self)  # an aten op: its Autograd kernel keeps the graph
        return _with_class(out, cls)

    @staticmethod
    def _make_subclass(cls: type, data: Tensor, require_grad: bool = False, **_: Any) -> Tensor:
        """A ``cls`` leaf sharing ``data``'s memory and version counter (``nn.Parameter``)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("_make_subclass(): argument 'cls' must be a subclass of Tensor")
        if not isinstance(data, Tensor):
            raise TypeError(f"_make_subclass(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        if data.is_sparse:
            raise NotImplementedError(f"{cls.__name__} of a sparse tensor is not supported (keep "
                                      "the sparse tensor as a buffer, or its values() as the "
                                      "parameter)")
        out = cls._make(data._storage, data._shape, data._stride, data._offset, data._dtype,
                        data._device, data._vc)
        # the same memory, shape and strides: the same interned layout (a parameter's in-place
        # updates and planned calls key on it as a plain tensor's do)
        out._interned_layout = data._interned_layout
        out._geometry = data._geometry
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
        return upcalls.wrapper_shell(cls, _shape_arg((size,)), strides, storage_offset, dtype,
                                     device, requires_grad)

    # -- views: each calls its aten operator (torch._aten.views) --------------------------------

    def as_strided(self, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
        return view_ops.as_strided(self, tuple(size), tuple(stride), storage_offset)

    def view(self, *shape: Any, size: Any = None, dtype: Any = None) -> Tensor:
        if dtype is not None:  # view(dtype=torch.int32), as safetensors' reader calls it
            if shape or size is not None:
                raise TypeError("view() takes either sizes or a dtype, not both")
            return view_ops.view_dtype(self, dtype)
        if size is not None:
            shape = sizes_or_keyword(shape, size, "view", "size")
        if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
            return view_ops.view_dtype(self, shape[0])
        return view_ops.view(self, _shape_arg(shape))

    def view_as(self, other: Tensor) -> Tensor:
        return view_ops.view(self, other._shape)

    def reshape(self, *shape: Any, **kwargs: Any) -> Tensor:
        if kwargs:  # reshape(shape=...): a keyword that is also the varargs' name
            shape = sizes_or_keyword(shape, _only_keyword(kwargs, "reshape", "shape"),
                                     "reshape", "shape")
        return view_ops.reshape(self, _shape_arg(shape))

    def reshape_as(self, other: Tensor) -> Tensor:
        return view_ops.reshape(self, other._shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        return view_ops.flatten(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes: Any) -> Tensor:
        return view_ops.unflatten(self, dim, _shape_arg((sizes,)))

    def permute(self, *dims: Any, **kwargs: Any) -> Tensor:
        if kwargs:  # permute(dims=...): a keyword that is also the varargs' name
            dims = sizes_or_keyword(dims, _only_keyword(kwargs, "permute", "dims"), "permute",
                                    "dims")
        return view_ops.permute(self, _shape_arg(dims))

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return view_ops.transpose(self, dim0, dim1)

    swapaxes = transpose
    swapdims = transpose

    def t(self) -> Tensor:
        return view_ops.t(self)

    @property
    def T(self) -> Tensor:
        return view_ops.permute(self, tuple(range(len(self._shape) - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        if len(self._shape) < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {len(self._shape)}-D tensor.")
        return view_ops.transpose(self, -2, -1)

    def expand(self, *sizes: Any, size: Any = None) -> Tensor:
        if size is not None:
            sizes = sizes_or_keyword(sizes, size, "expand", "size")
        return view_ops.expand(self, _shape_arg(sizes))

    def expand_as(self, other: Tensor) -> Tensor:
        return view_ops.expand(self, other._shape)

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        return view_ops.narrow(self, dim, start, length)

    def select(self, dim: int, index: int) -> Tensor:
        return view_ops.select(self, dim, index)

    def squeeze(self, dim: Any = None) -> Tensor:
        if dim is None:
            return view_ops.squeeze(self)
        if isinstance(dim, (tuple, list)):
            return view_ops.squeeze_dims(self, list(dim))
        return view_ops.squeeze_dim(self, dim)

    def unsqueeze(self, dim: int) -> Tensor:
        return view_ops.unsqueeze(self, dim)

    def unfold(self, dimension: int, size: int, step: int) -> Tensor:
        return view_ops.unfold(self, dimension, size, step)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        return view_ops.diagonal(self, offset, dim1, dim2)

    def detach(self) -> Tensor:
        """A tensor sharing storage and version counter, cut from the autograd graph."""
        return view_ops.detach(self)

    def __getitem__(self, index: Any) -> Tensor:
        return _basic_index(self, index)

    def __repr__(self) -> str:
        return upcalls.tensor_repr(self)


Tensor.__module__ = "torch"
# the default __torch_function__, which a subclass defining __torch_dispatch__ opts out of
_default_tf_func = Tensor.__dict__["__torch_function__"].__func__


# The slots every tensor has set (all but the two Python-object slots and the gradient
# accumulator a leaf makes at its first use with grad): what a copy of a tensor's fields takes
# (an accumulator refers to its own leaf, never to a copy)
plain_tensor_classes.add(Tensor)

DATA_SLOTS = tuple(name for name in Tensor.__slots__
                   if name not in ("__dict__", "__weakref__", "_grad_accumulator"))


def _with_class(t: Tensor, cls: type) -> Tensor:
    """``t`` (a tensor nobody else holds yet) as an instance of ``cls``."""
    if t.__class__ is cls:
        return t
    try:
        t.__class__ = cls
        return t
    except TypeError:  # cls adds slots: copy the fields into a new instance
        out = object.__new__(cls)
        for name in DATA_SLOTS:
            setattr(out, name, getattr(t, name))
        out.__dict__.update(t.__dict__)
        return out


# dtype name -> PyTorch's legacy tensor type name (what ``Tensor.type()`` reports on the CPU)
LEGACY_TYPE_NAMES: dict[str, str] = {
    "bool": "BoolTensor", "uint8": "ByteTensor", "int8": "CharTensor", "int16": "ShortTensor",
    "int32": "IntTensor", "int64": "LongTensor", "uint16": "UInt16Tensor",
    "uint32": "UInt32Tensor", "uint64": "UInt64Tensor", "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor", "float32": "FloatTensor", "float64": "DoubleTensor",
    "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor",
}


def _tensor_type(t: Tensor) -> str:
    return LEGACY_TYPE_NAMES.get(t._dtype._name, "Tensor")


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
    """Indexing with ints, slices, ``None`` and ``...``: always a view, built as PyTorch
    builds it, one ``select`` / ``slice`` / ``unsqueeze`` operator per index item (``alias``
    when nothing changes)."""
    if index.__class__ is int and t._shape:  # x[i]: the common case, one operator
        return view_ops.select(t, 0, index)
    if not isinstance(index, tuple):
        if not _is_basic(index):  # torch._aten.indexing reads the index as the user wrote it
            return upcalls.advanced_index(t, index)
        index = (index,)
    if any(not _is_basic(i) for i in index):
        return upcalls.advanced_index(t, index)
    n_ellipsis = sum(1 for i in index if i is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    ndim = len(t._shape)
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    out = t
    dim = 0  # the dim of `out` the next item applies to
    for item in index:
        if item is None:
            out = view_ops.unsqueeze(out, dim)
            dim += 1
        elif item is Ellipsis:
            dim += ndim - consumed
        elif isinstance(item, slice):
            start, stop, step = item.start, item.stop, item.step
            if (start.__class__ not in _PLAIN_BOUNDS or stop.__class__ not in _PLAIN_BOUNDS
                    or step.__class__ not in _PLAIN_BOUNDS):
                start, stop, step = _index_bounds(start, stop, step)
            step = 1 if step is None else step
            if step <= 0:
                raise ValueError("slice step cannot be zero" if step == 0
                                 else "step must be greater than zero")
            if not (start in (None, 0) and stop is None and step == 1):
                out = view_ops.slice(out, dim, start, stop, step)
            dim += 1
        else:
            out = view_ops.select(out, dim, item)
    return view_ops.alias(t) if out is t else out


# slice bounds the view operator takes as they are; any other (a 0-d integer tensor, a numpy
# integer) is read through __index__ first, as PyTorch's indexing does: the operator's plans
# key a tensor argument by its layout, not its value
_PLAIN_BOUNDS = frozenset((int, type(None), SymInt))


def _index_bounds(*bounds: Any) -> tuple[Any, ...]:
    return tuple(b if b.__class__ in _PLAIN_BOUNDS else operator.index(b) for b in bounds)


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
