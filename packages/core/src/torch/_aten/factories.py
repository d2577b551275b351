"""Factory functions: ``empty``, ``zeros``, ``ones``, ``full``, their ``_like`` forms, and
``torch.tensor`` with PyTorch's dtype inference."""

from __future__ import annotations

import collections.abc
import itertools
import warnings
from typing import Any

import numpy as np

from .. import _refs
from .._core import (
    config as _config,
    dispatch as _dispatch,
    dtype as _dtype,
    layout as _layout,
    plan as _plan,
    storage as _storage,
)
from .._core.alloc import (
    PRIMS,
    check_dtype,
    check_shape,
    constant_tensor,
    device_of,
    finish_factory,
    new_like,
    new_tensor,
)
from .._core.device import device as _device
from .._core.promotion import scalar_dtype
from .._core.tensor import DATA_SLOTS, Size, Tensor, _shape_arg, sizes_or_keyword, storage_extent
from .convert import to_device, to_dtype, write_out

__all__ = ["empty", "empty_like", "empty_strided", "full", "full_like", "ones", "ones_like",
           "tensor", "zeros", "zeros_like"]


def _size_args(args: tuple[Any, ...], size: Any, name: str) -> tuple[Any, ...]:
    """``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))``."""
    if size is None:
        return args
    if args:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


def _sizes(args: tuple[Any, ...], size: Any, name: str) -> tuple[int, ...]:
    """The shape of ``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))``: ints as they are (the
    common case, checked inline), anything else through ``_shape_arg``."""
    if size is None:
        shape = args[0] if len(args) == 1 and args[0].__class__ is tuple else args
        for s in shape:
            if s.__class__ is not int:
                break
        else:
            return shape
    return _shape_arg(_size_args(args, size, name))


# -- the aten operators -----------------------------------------------------------------------
#
# Each kernel is the op's whole semantics on any device, meta included (where the fill
# primitive writes nothing): shapes, dtypes and strides come out as on a real device, so the
# kernel is also the op's meta function. ``requires_grad`` and ``out=`` are the Python
# functions' business, as in PyTorch, whose schemas have neither.

_OPTIONS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"


_CHANNELS_LAST = _layout.CHANNELS_LAST_ORDER
_format_strides = _layout.format_strides


def _allocate(shape: tuple[int, ...], dt: _dtype.dtype, dev: _device, memory_format: Any
              ) -> Tensor:
    strides = _format_strides(shape, memory_format)
    if strides is None:
        return new_tensor(shape, dt, dev)
    storage = _storage.allocate(storage_extent(shape, strides) * dt.itemsize, dev)
    return Tensor._make(storage, shape, strides, 0, dt, dev)


def _empty_kernel(size: Any, *, dtype: _dtype.dtype | None = None, layout: Any = None,
                  device: Any = None, pin_memory: Any = None, memory_format: Any = None
                  ) -> Tensor:
    shape = _shape_arg((size,))
    check_shape(shape)
    dt = check_dtype(dtype) or _config.get_default_dtype()
    if memory_format is None:
        return new_tensor(shape, dt, device_of(device))
    if memory_format is _layout.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return _allocate(shape, dt, device_of(device), memory_format)


def _empty_strided_kernel(size: Any, stride: Any, *, dtype: _dtype.dtype | None = None,
                          layout: Any = None, device: Any = None, pin_memory: Any = None
                          ) -> Tensor:
    shape, strides = _shape_arg((size,)), _shape_arg((stride,))
    if len(shape) != len(strides):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(shape)} sizes, "
                           f"{len(strides)} strides")
    check_shape(shape)
    dt = check_dtype(dtype) or _config.get_default_dtype()
    dev = device_of(device)
    storage = _storage.allocate(storage_extent(shape, strides) * dt.itemsize, dev)
    return Tensor._make(storage, shape, strides, 0, dt, dev)


def _full_kernel(size: Any, fill_value: Any, *, dtype: _dtype.dtype | None = None,
                 layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    shape = _shape_arg((size,))
    check_shape(shape)
    t = new_tensor(shape, check_dtype(dtype) or scalar_dtype(fill_value), device_of(device))
    PRIMS.fill_(t, fill_value)
    return t


def _filled_kernel(value: int) -> Any:
    def kernel(size: Any, *, dtype: _dtype.dtype | None = None, layout: Any = None,
               device: Any = None, pin_memory: Any = None) -> Tensor:
        shape = _shape_arg((size,))
        check_shape(shape)
        dt = check_dtype(dtype) or _config.get_default_dtype()
        t = new_tensor(shape, dt, device_of(device))
        PRIMS.fill_(t, value)
        return t

    return kernel


def _like_kernel(value: Any) -> Any:
    """``empty_like`` (``value`` None), ``zeros_like``, ``ones_like``: PyTorch's
    ``preserve_format`` keeps a dense input's strides."""

    def kernel(self: Tensor, *, dtype: _dtype.dtype | None = None, layout: Any = None,
               device: Any = None, pin_memory: Any = None, memory_format: Any = None) -> Tensor:
        dt, dev = _like(self, dtype, device)
        t = _new_like(self, dt, dev, memory_format)
        if value is not None:
            PRIMS.fill_(t, value)
        return t

    return kernel


def _full_like_kernel(self: Tensor, fill_value: Any, *, dtype: _dtype.dtype | None = None,
                      layout: Any = None, device: Any = None, pin_memory: Any = None,
                      memory_format: Any = None) -> Tensor:
    dt, dev = _like(self, dtype, device)
    t = _new_like(self, dt, dev, memory_format)
    PRIMS.fill_(t, fill_value)
    return t


def _new_like(self: Tensor, dt: _dtype.dtype, dev: _device, memory_format: Any) -> Tensor:
    """Shaped like ``self``: its strides when dense (``preserve_format``, the default),
    row-major, or a channels-last layout."""
    if memory_format in _CHANNELS_LAST:
        return _allocate(tuple(self._shape), dt, dev, memory_format)
    return new_like(self, dt, dev, memory_format)


def _scalar_tensor_kernel(s: Any, *, dtype: _dtype.dtype | None = None, layout: Any = None,
                          device: Any = None, pin_memory: Any = None) -> Tensor:
    dt = check_dtype(dtype) or _config.get_default_dtype()
    if isinstance(s, complex) and not dt.is_complex:
        raise RuntimeError(f"value cannot be converted to type {dt._name} without overflow")
    t = new_tensor((), dt, device_of(device))
    PRIMS.fill_(t, s)
    return t


def _lift_fresh_kernel(self: Tensor) -> Tensor:
    return self


def _like(t: Tensor, dtype: Any, device: Any) -> tuple[_dtype.dtype, _device]:
    if not isinstance(t, Tensor):
        raise TypeError(f"argument 'input' must be Tensor, not {type(t).__name__}")
    return (check_dtype(dtype) or t._dtype,
            t._device if device is None else _storage._normalise(device))


def not_differentiable(op: _dispatch.Operator) -> None:
    """Give ``op`` an Autograd kernel that records nothing: its result never requires grad,
    even from an input that does (``zeros_like(x)``, ``rand_like(x)``), as in PyTorch."""

    def kernel(*args: Any, **kwargs: Any) -> Any:
        return _dispatch.redispatch_below_autograd(op, *args, **kwargs)

    kernel.__name__ = f"autograd_{op.name}"
    op.register(_dispatch.AUTOGRAD, kernel)


def _define_aten() -> dict[str, _dispatch.Operator]:
    like = f"{_OPTIONS}, MemoryFormat? memory_format=None"
    table = {
        "empty.memory_format": (f"empty.memory_format(SymInt[] size, *, {like}) -> Tensor",
                                _empty_kernel),
        "empty_strided": (f"empty_strided(SymInt[] size, SymInt[] stride, *, {_OPTIONS}) -> "
                          "Tensor", _empty_strided_kernel),
        "full": (f"full(SymInt[] size, Scalar fill_value, *, {_OPTIONS}) -> Tensor",
                 _full_kernel),
        "zeros": (f"zeros(SymInt[] size, *, {_OPTIONS}) -> Tensor", _filled_kernel(0)),
        "ones": (f"ones(SymInt[] size, *, {_OPTIONS}) -> Tensor", _filled_kernel(1)),
        "empty_like": (f"empty_like(Tensor self, *, {like}) -> Tensor", _like_kernel(None)),
        "zeros_like": (f"zeros_like(Tensor self, *, {like}) -> Tensor", _like_kernel(0)),
        "ones_like": (f"ones_like(Tensor self, *, {like}) -> Tensor", _like_kernel(1)),
        "full_like": (f"full_like(Tensor self, Scalar fill_value, *, {like}) -> Tensor",
                      _full_like_kernel),
        "scalar_tensor": (f"scalar_tensor(Scalar s, *, {_OPTIONS}) -> Tensor",
                          _scalar_tensor_kernel),
        # torch.tensor and the memory-sharing bridges build a CPU tensor from host data below
        # the dispatcher, then hand it through this identity, so that a dispatch mode (a fake
        # tensor mode) sees every such tensor, as in PyTorch.
        "lift_fresh": ("lift_fresh(Tensor(a) self) -> Tensor(a)", _lift_fresh_kernel),
    }
    ops = _dispatch.define_aten(table)
    for name in ("empty_like", "zeros_like", "ones_like", "full_like", "lift_fresh"):
        not_differentiable(ops[name])
    return ops


ATEN = _define_aten()
# Their results are functions of the call signature (sizes, value, dtype, device): the
# dispatcher keeps a plan per signature (torch._core.plan). empty_strided's result is not
# contiguous in general, and scalar_tensor is rarely repeated.
_plan.enable_factories({
    "aten::empty.memory_format": "empty", "aten::empty_like": "empty",
    **dict.fromkeys(("aten::zeros", "aten::ones", "aten::full", "aten::zeros_like",
                     "aten::ones_like", "aten::full_like"), "fill"),
})
_EMPTY = ATEN["empty.memory_format"]
_FULL = ATEN["full"]
_ZEROS = ATEN["zeros"]
_ONES = ATEN["ones"]
_LIFT_FRESH = ATEN["lift_fresh"]


# -- the Python functions ------------------------------------------------------------------


def empty(*args: Any, size: Any = None, out: Tensor | None = None,
          dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False, pin_memory: bool = False,
          memory_format: Any = None) -> Tensor:
    """An uninitialised tensor of ``size`` (``empty(2, 3)``, ``empty((2, 3))`` or
    ``empty(size=(2, 3))``)."""
    # the kernel checks the dtype and fills in the default one; the two tests below spare
    # the hot path two calls
    shape = _sizes(args, size, "empty")
    if memory_format is None:
        t = _EMPTY(shape, dtype=dtype, device=device_of(device))
    else:
        t = _EMPTY(shape, dtype=dtype, device=device_of(device), memory_format=memory_format)
    if out is not None:
        t = write_out(out, t)
    return finish_factory(t, requires_grad) if requires_grad else t


def empty_strided(size: Any, stride: Any, *, dtype: _dtype.dtype | None = None,
                  layout: Any = None, device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor with explicit strides (storage sized to fit them)."""
    t = ATEN["empty_strided"](_shape_arg((size,)), _shape_arg((stride,)),
                              dtype=check_dtype(dtype) or _config.get_default_dtype(),
                              device=device_of(device))
    return finish_factory(t, requires_grad)


def full(size: Any, fill_value: Any, *, out: Tensor | None = None,
         dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
         requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value`` (dtype inferred from it by default)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if not isinstance(size, (tuple, list, Size)):  # full takes no varargs sizes
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    shape = _shape_arg(tuple(size))
    t = _FULL(shape, fill_value, dtype=check_dtype(dtype) or scalar_dtype(fill_value),
              device=device_of(device))
    return finish_factory(write_out(out, t), requires_grad)


def zeros(*args: Any, size: Any = None, out: Tensor | None = None,
          dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` filled with 0 (a sparse one, without entries, for
    ``layout=torch.sparse_coo``)."""
    if layout is not None and layout is not _layout.strided:
        from .sparse import layout_zeros

        return finish_factory(layout_zeros(_sizes(args, size, "zeros"), dtype, device, layout),
                              requires_grad)
    t = _ZEROS(_sizes(args, size, "zeros"), dtype=dtype, device=device_of(device))
    if out is not None:
        t = write_out(out, t)
    return finish_factory(t, requires_grad) if requires_grad else t


def ones(*args: Any, size: Any = None, out: Tensor | None = None,
         dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
         requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` filled with 1."""
    t = _ONES(_sizes(args, size, "ones"), dtype=dtype, device=device_of(device))
    if out is not None:
        t = write_out(out, t)
    return finish_factory(t, requires_grad) if requires_grad else t


def _like_options(dtype: Any, device: Any, memory_format: Any) -> dict[str, Any]:
    """The keyword arguments of a ``*_like`` operator call (only those given)."""
    options: dict[str, Any] = {}
    if dtype is not None:
        options["dtype"] = check_dtype(dtype)
    if device is not None:
        options["device"] = _storage._normalise(device)
    if memory_format is not None:
        options["memory_format"] = memory_format
    return options


def empty_like(input: Tensor, *, dtype: _dtype.dtype | None = None, layout: Any = None,
               device: Any = None, requires_grad: bool = False, memory_format: Any = None
               ) -> Tensor:
    """An uninitialised tensor shaped like ``input`` (its dtype and device by default)."""
    t = ATEN["empty_like"](input, **_like_options(dtype, device, memory_format))
    return finish_factory(t, requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: _dtype.dtype | None = None,
              layout: Any = None, device: Any = None, requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    """A tensor shaped like ``input`` filled with ``fill_value``."""
    t = ATEN["full_like"](input, fill_value, **_like_options(dtype, device, memory_format))
    return finish_factory(t, requires_grad)


def zeros_like(input: Tensor, *, dtype: _dtype.dtype | None = None, layout: Any = None,
               device: Any = None, requires_grad: bool = False, memory_format: Any = None
               ) -> Tensor:
    """A tensor of zeros shaped like ``input``."""
    t = ATEN["zeros_like"](input, **_like_options(dtype, device, memory_format))
    return finish_factory(t, requires_grad)


def ones_like(input: Tensor, *, dtype: _dtype.dtype | None = None, layout: Any = None,
              device: Any = None, requires_grad: bool = False, memory_format: Any = None
              ) -> Tensor:
    """A tensor of ones shaped like ``input``."""
    t = ATEN["ones_like"](input, **_like_options(dtype, device, memory_format))
    return finish_factory(t, requires_grad)


def lift_fresh(t: Tensor) -> Tensor:
    """``t``, a tensor just built from host data below the dispatcher, handed through the
    ``lift_fresh`` operator (what a dispatch mode sees of ``torch.tensor``)."""
    return _LIFT_FRESH(t)


_SEQUENCES = (list, tuple, range)  # what torch.tensor() reads as a dimension, checked first
_SCALARS = (bool, int, float, complex, np.generic)
_TEXT = (str, bytes, bytearray)  # sequences PyTorch refuses as data


def _is_dimension(data: Any) -> bool:
    """Whether ``torch.tensor`` reads ``data`` as one dimension: lists, tuples and ranges, and
    any other sequence (a ``collections.deque``, a ``UserList``), since PyTorch accepts every
    object with the sequence protocol (a policy-gradient program keeps its returns in a deque).
    """
    if isinstance(data, _SEQUENCES):
        return True
    if isinstance(data, _SCALARS) or isinstance(data, _TEXT):
        return False  # the common leaves, decided without the slower ABC check
    return isinstance(data, collections.abc.Sequence)


def _nested_shape(data: Any, dim: int = 0) -> tuple[int, ...]:
    if _is_dimension(data):
        if not data:
            return (0,)
        # iterate rather than slice: a deque has no slices
        inner = _nested_shape(next(iter(data)), dim + 1)
        for item in itertools.islice(data, 1, None):
            other = _nested_shape(item, dim + 1)
            if other != inner:
                got = other[0] if other else "a scalar"
                want = inner[0] if inner else "a scalar"
                raise ValueError(f"expected sequence of length {want} at dim {dim + 1} "
                                 f"(got {got})")
        return (len(data),) + inner
    if isinstance(data, Tensor):
        return tuple(data._shape)
    if isinstance(data, np.ndarray):
        return data.shape
    return ()


def _leaves(data: Any) -> Any:
    if _is_dimension(data):
        for item in data:
            yield from _leaves(item)
    elif isinstance(data, Tensor):
        yield from _leaves(data.tolist())
    elif isinstance(data, np.ndarray):
        yield from _leaves(data.tolist())
    else:
        yield data


def _infer_dtype(data: Any) -> _dtype.dtype:
    if isinstance(data, np.ndarray):
        return _np_to_dtype(data.dtype)
    if isinstance(data, Tensor):
        return data._dtype
    # PyTorch promotes across the elements of a sequence; numpy scalars keep their dtype
    kind = None  # no leaves at all (``torch.tensor([])``): the default dtype
    for leaf in _leaves(data):
        if isinstance(leaf, np.generic):
            d = _np_to_dtype(leaf.dtype)
        elif isinstance(leaf, bool):
            d = _dtype.bool_
        elif isinstance(leaf, int):
            d = _dtype.int64
        elif isinstance(leaf, float):
            d = _config.get_default_dtype()
        elif isinstance(leaf, complex):
            d = _config.get_default_complex_dtype()
        else:
            raise TypeError(f"new(): invalid data type '{type(leaf).__name__}'")
        kind = d if kind is None else _dtype.promote_types(kind, d)
    return kind if kind is not None else _config.get_default_dtype()


def _np_to_dtype(npdt: np.dtype) -> _dtype.dtype:
    dt = _refs.FROM_NP.get(np.dtype(npdt))
    if dt is None:
        raise TypeError(f"can't convert np.ndarray of type numpy.{np.dtype(npdt).name}. The only "
                        "supported types are: float64, float32, float16, complex64, complex128, "
                        "int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool.")
    return dt


def _host_array(data: Any, dt: _dtype.dtype) -> np.ndarray:
    """``data`` as a numpy array holding ``dt``'s storage representation."""
    if isinstance(data, np.ndarray):
        src_dt = _np_to_dtype(data.dtype)
        return _refs.convert(data, src_dt, dt) if src_dt is not dt else data
    # out-of-range floats become inf quietly, as in PyTorch (numpy would warn)
    with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        for leaf in _leaves(data):
            _refs.check_scalar_fits(leaf, dt)
        if dt is _dtype.bfloat16:
            return _refs.f32_to_bf16(np.array(data, np.float32))
        if dt is _dtype.bool_:
            return np.array(data, dtype=object).astype(bool) if _has_non_bool(data) else \
                np.array(data, dtype=bool)
        src = np.array(data)
        if src.dtype.kind == "c" and not dt.is_complex:
            src = src.real
        return src.astype(_refs.NP_DTYPES[dt], casting="unsafe")


def _has_non_bool(data: Any) -> bool:
    return any(not isinstance(x, bool) for x in _leaves(data))


def tensor(data: Any, *, dtype: _dtype.dtype | None = None, device: Any = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested lists/tuples, an array or a
    tensor), with the dtype inferred as PyTorch does unless given."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=_config.external_stacklevel())
        data = data.detach()  # a new leaf: no history from the source
        dev = data._device if device is None else _storage._normalise(device)
        out = to_device(to_dtype(data, check_dtype(dtype) or data._dtype, copy=True), dev)
        return finish_factory(out, requires_grad)
    if isinstance(data, (str, bytes, dict, set)) or data is None:
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if not isinstance(data, _SEQUENCES) and _is_dimension(data):
        data = list(data)  # a deque or other sequence reads as the list of its items
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        data = [x.tolist() if isinstance(x, Tensor) else x for x in data]
    shape = _nested_shape(data)
    dt = check_dtype(dtype) or _infer_dtype(data)
    host = _host_array(data, dt).reshape(shape)
    dev = device_of(device)
    return finish_factory(from_host(host, dt, dev), requires_grad)


_CPU = _storage._normalise("cpu")


def from_host(host: np.ndarray, dt: _dtype.dtype, dev: _device) -> Tensor:
    """A new tensor on ``dev`` holding the numpy array ``host`` (already in ``dt``'s storage
    representation): written into a fresh CPU tensor, lifted (:func:`lift_fresh`), then moved
    to ``dev``."""
    t = constant_tensor(tuple(host.shape), dt, _CPU)
    _refs.np_view(t)[...] = host
    t = _LIFT_FRESH(t)
    return t if dev.type == "cpu" else to_device(t, dev)


def legacy_tensor_new(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    """``torch.Tensor(2, 3)``, ``torch.Tensor(torch.Size([2, 3]))`` or ``torch.Tensor(size=(2,
    3))`` (uninitialised float), ``torch.Tensor([1, 2])`` (data), ``torch.Tensor()`` (shape
    ``(0,)``). ``dtype`` is ``Tensor.new``'s (the default dtype otherwise)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None) or _config.get_default_dtype()
    size = kwargs.pop("size", None)
    if kwargs:
        raise TypeError(f"Tensor(): unexpected keyword arguments {sorted(kwargs)}")
    if size is not None:
        args = sizes_or_keyword(args, size, "Tensor", "size")
    if not args:
        t = empty(0, dtype=dtype, device=device)
    elif len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)) and \
            not (size is not None or isinstance(args[0], Size)):  # a Size is a size, as in PyTorch
        t = tensor(args[0], dtype=dtype, device=device)
    elif len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].detach()
    else:
        t = empty(*args, dtype=dtype, device=device)
    if cls is not Tensor:
        t = _rewrap(t, cls)
    return t


def _rewrap(t: Tensor, cls: type) -> Tensor:
    out = object.__new__(cls)
    for slot in DATA_SLOTS:
        setattr(out, slot, getattr(t, slot))
    return out


# -- Tensor.new_empty/new_zeros/new_ones/new_full ------------------------------------------
#
# PyTorch's aten operators of their own: a dispatch mode or __torch_dispatch__ subclass sees
# ``aten.new_zeros.default(self, [2], pin_memory=False)``. A plain call goes straight to the
# factory with self's dtype and device (one dispatcher hop fewer); a call that would reach the
# Python key goes through the operator.

def _new_kernel(factory: Any) -> Any:
    def kernel(self: Tensor, size: Any, *args: Any, dtype: Any = None, layout: Any = None,
               device: Any = None, pin_memory: Any = None) -> Tensor:
        return factory(tuple(size), *args, dtype=self._dtype if dtype is None else dtype,
                       layout=layout, device=self._device if device is None else device)

    kernel.__name__ = f"new_{factory.__name__}"
    return kernel


_NEW = _dispatch.define_aten({
    "new_empty": (f"new_empty(Tensor self, SymInt[] size, *, {_OPTIONS}) -> Tensor",
                  _new_kernel(empty)),
    "new_zeros": (f"new_zeros(Tensor self, SymInt[] size, *, {_OPTIONS}) -> Tensor",
                  _new_kernel(zeros)),
    "new_ones": (f"new_ones(Tensor self, SymInt[] size, *, {_OPTIONS}) -> Tensor",
                 _new_kernel(ones)),
    "new_full": (f"new_full(Tensor self, SymInt[] size, Scalar fill_value, *, {_OPTIONS}) "
                 "-> Tensor", _new_kernel(full)),
})
for _op in _NEW.values():
    not_differentiable(_op)
_NEW_OPTIONS = ("dtype", "layout", "device", "pin_memory")


def _new_method(factory: Any, varargs: bool) -> Any:
    op = _NEW[f"new_{factory.__name__}"]

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if _config.state.keys_active and _dispatch.python_key_active((self,), kwargs):
            requires_grad = kwargs.pop("requires_grad", False)
            options = {k: kwargs.pop(k) for k in _NEW_OPTIONS if k in kwargs}
            if varargs:  # new_zeros(2, 3), new_zeros((2, 3)) or new_zeros(size=(2, 3))
                args = (_sizes(args, kwargs.pop("size", None), op.name),)
            if kwargs:
                raise TypeError(f"{op.name}() got an unexpected keyword argument "
                                f"'{next(iter(kwargs))}'")
            return finish_factory(op(self, *args, **options), requires_grad)
        return factory(*args, **{"dtype": self._dtype, "device": self._device, **kwargs})

    method.__name__ = method.__qualname__ = op.name
    method.__doc__ = f"A tensor as ``torch.{factory.__name__}`` makes it, of ``self``'s dtype " \
                     "and device unless given."
    return method


# Tensor methods, bound when the op surface loads
METHODS: dict[str, Any] = {"new_empty": _new_method(empty, True),
                           "new_zeros": _new_method(zeros, True),
                           "new_ones": _new_method(ones, True),
                           "new_full": _new_method(full, False)}
