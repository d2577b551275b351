"""The computing methods of ``Tensor`` (operators, casts, conversions), bound onto the class
when the op surface loads. Metadata and views live in :mod:`torch._core.tensor`."""

from __future__ import annotations

from typing import Any

from . import _utils
from ._aten.arith import _aten_add, _aten_mul, add, inplace_method, mul, sum
from ._aten.convert import (
    clone,
    contiguous,
    copy_,
    fill_,
    is_nonzero,
    item,
    numpy,
    to,
    tolist,
    zero_,
)
from ._aten.factories import _rewrap, empty_strided, tensor
from ._core import (
    config as _config,
    dtype as _dtype,
    fast as _fast,
    layout as _layout,
    storage as _storage,
    tensor as _tensor,
)
from ._core.alloc import check_shape
from ._core.device import device as _device
from ._core.promotion import NUMBER_TYPES, numpy_scalar
from ._core.tensor import Size, Tensor, _shape_arg, contiguous_strides, sizes_or_keyword


def _resize_(self: Tensor, *sizes: Any, size: Any = None, memory_format: Any = None) -> Tensor:
    """``Tensor.resize_``: ``self`` takes the shape ``sizes`` (contiguous, unless it has that
    shape already) over its storage, which grows in place when too small (old bytes kept, new
    elements uninitialised; the other tensors over it see the growth)."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = _shape_arg(sizes_or_keyword(sizes, size, "resize_", "size"))
    check_shape(shape)
    if shape == tuple(self._shape):
        return self
    size = self._dtype.itemsize
    needed = _storage.contiguous_nbytes(shape, size)
    if needed and self._offset * size + needed > self._storage._nbytes:
        _storage.grow(self._storage, self._offset * size + needed)
    self._shape, self._stride = Size(shape), contiguous_strides(shape)
    self._interned_layout = None  # the layout changed: no stale fast-path key
    return self


# The C++ element type names PyTorch's set_ error uses
_C_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                 "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
                 "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
                 "bool": "bool", "complex64": "c10::complex<float>",
                 "complex128": "c10::complex<double>"}


def _set_(self: Tensor, source: Any = None, storage_offset: int = 0, size: Any = None,
          stride: Any = None) -> Tensor:
    """``Tensor.set_``: make ``self`` look at other memory, in place. ``set_()`` gives it an
    empty storage; ``set_(tensor)`` shares that tensor's storage, shape, strides and offset;
    ``set_(storage, storage_offset=0, size=None, stride=None)`` views a storage (its whole
    length as a 1-d tensor by default, contiguous strides by default), growing it when the
    requested elements run past its end (as ``resize_`` does)."""
    if self._requires_grad and self.grad_fn is None and _config.is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    itemsize = self._dtype.itemsize
    if source is None:
        storage, shape, strides, offset = _storage.allocate(0, self._device), (0,), (1,), 0
    elif isinstance(source, Tensor):
        _check_set_source(self, source._dtype, source._device)
        storage, shape, strides, offset = (source._storage, tuple(source._shape),
                                           tuple(source._stride), source._offset)
    else:
        storage = source
        if hasattr(source, "untyped_storage"):  # a TypedStorage: its dtype must match
            _check_set_source(self, source.dtype, source.device)
            storage = source.untyped_storage()
        elif source.device != self._device:
            _check_set_source(self, self._dtype, source.device)
        shape = (storage.nbytes() // itemsize,) if size is None else tuple(int(n) for n in size)
        check_shape(shape)
        strides = contiguous_strides(shape) if stride is None else tuple(stride)
        if len(strides) != len(shape):
            raise RuntimeError(f"mismatch in length of strides and shape: {len(shape)} sizes, "
                               f"{len(strides)} strides")
        offset = int(storage_offset)
        if offset < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {offset}")
        needed = (offset + _tensor.storage_extent(shape, strides)) * itemsize
        if needed > storage.nbytes():
            _storage.grow(storage, needed)
    self._storage, self._offset = storage, offset
    self._shape, self._stride = Size(shape), tuple(strides)
    self._interned_layout = None  # the layout changed: no stale fast-path key
    self._bump_version()
    return self


def _check_set_source(self: Tensor, dtype: _dtype.dtype, device: Any) -> None:
    if dtype is not self._dtype:
        names = (_C_TYPE_NAMES.get(dtype._name, str(dtype)),
                 _C_TYPE_NAMES.get(self._dtype._name, str(self._dtype)))
        raise RuntimeError(f"Could not set tensor of type {names[0]} to a tensor of type "
                           f"{names[1]}")
    if device != self._device:
        raise RuntimeError(f"Attempted to set the storage of a tensor on device "
                           f"\"{self._device}\" to a storage on different device \"{device}\"."
                           "  This is no longer allowed; the devices must match.")


def _legacy_new(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``Tensor.new``: the legacy constructor (``torch.Tensor(...)``) in ``self``'s dtype and
    device: sizes give an uninitialised tensor, a sequence gives its data."""
    from ._aten.factories import legacy_tensor_new

    return legacy_tensor_new(Tensor, *args, **{"device": self._device, **kwargs},
                             dtype=self._dtype)


def _scalar_method(conv: type) -> Any:
    def method(self: Tensor) -> Any:
        return conv(item(self))

    return method


_FLOAT_OF_GRAD_WARNED = [False]  # PyTorch warns once per process


def _float(self: Tensor) -> float:
    """``float(t)``: the value of a one-element tensor. Like PyTorch, the first conversion of a
    tensor that requires grad (with grad mode on) warns that the result leaves the graph."""
    if not _FLOAT_OF_GRAD_WARNED[0] and self.requires_grad and _config.is_grad_enabled():
        _FLOAT_OF_GRAD_WARNED[0] = True
        import warnings

        warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                      "unexpected behavior.\nConsider using tensor.detach() first.",
                      UserWarning, stacklevel=_config.external_stacklevel())
    return float(item(self))


def _index(self: Tensor) -> int:
    if self._dtype._category > _dtype.INT or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(item(self))


def _format(self: Tensor, spec: str) -> str:
    """``format(t, spec)``: a 0-d tensor formats as its Python number (``f"{loss:.4f}"``), as
    PyTorch's does; other tensors (and meta ones, which hold no value) take object formatting,
    which accepts only the empty spec."""
    if self.dim() == 0 and self._device.type != "meta":
        return item(self).__format__(spec)
    return object.__format__(self, spec)


def _binary_method(fn: Any) -> Any:
    """``Tensor.__add__`` and friends: numbers and tensors only, else ``NotImplemented``."""

    def method(self: Tensor, other: Any) -> Any:
        if not isinstance(other, (Tensor, *NUMBER_TYPES)):
            other = numpy_scalar(other)
            if other is NotImplemented:
                return NotImplemented
        return fn(self, other)

    method.__name__ = fn.__name__
    return method



def _reflected(fn: Any) -> Any:
    def method(self: Tensor, other: Any) -> Any:
        if not isinstance(other, (bool, int, float, complex)):
            other = numpy_scalar(other)
            if other is NotImplemented:
                return NotImplemented
        return fn(self, other)

    return method


def _cast_method(dt: _dtype.dtype) -> Any:
    def method(self: Tensor, memory_format: Any = None) -> Tensor:
        return to(self, dt)

    return method


def _cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    return to(self, "cpu")


def _cuda(self: Tensor, device: Any = None, non_blocking: bool = False,
          memory_format: Any = None) -> Tensor:
    if device is None:
        return to(self, "cuda")
    return to(self, device if isinstance(device, (str, _device)) else _device("cuda", device))


def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    from . import _legacy_tensor_types

    if dtype is None:
        return _legacy_tensor_types.type_name(self)
    return _legacy_tensor_types.convert(self, dtype, non_blocking)


def _reduce_ex(self: Tensor, protocol: int) -> Any:
    """Plain ``pickle``: the tensor travels as a ``torch.save`` archive (views keep their
    strides; the archive is restored by the same restricted loader as checkpoints)."""
    import io

    from . import _utils, serialization

    buffer = io.BytesIO()
    cls = type(self)
    if cls is Tensor or self.is_sparse or _is_parameter_class(cls):
        # (the archive itself records a Parameter, and a sparse tensor's parts)
        serialization.save(self, buffer)
        return (_utils._tensor_from_bytes, (buffer.getvalue(),))
    # Another subclass: the archive holds the plain tensor; the class travels by reference
    # (plain pickle imports it, as PyTorch's does) with the instance's Python attributes.
    plain = self.detach().as_subclass(Tensor)
    plain._requires_grad = self._requires_grad  # a leaf's flag; a graph never travels
    serialization.save(plain, buffer)
    return (_utils._subclass_from_bytes, (cls, buffer.getvalue(), _utils.tensor_state(self)))


def _share_memory_(self: Tensor) -> Tensor:
    """Move the tensor's storage into shared memory (a no-op when it is there already, and
    for tensors of other devices than the CPU); see ``torch.multiprocessing``."""
    self.untyped_storage().share_memory_()
    return self


def _is_shared(self: Tensor) -> bool:
    """Whether the tensor's storage is in shared memory."""
    return self.untyped_storage().is_shared()


def _pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """A copy in pinned host memory (``self`` if it is pinned already), for asynchronous
    copies to the accelerator. Plait's backends copy from any host memory, so the copy is
    marked pinned (``is_pinned()``) rather than allocated differently; as in PyTorch, it needs
    an accelerator, and only CPU tensors can be pinned."""
    if self._device.type != "cpu":
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if self.untyped_storage().is_pinned():
        return self
    from .accelerator import is_available

    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    out = clone(self, memory_format=_layout.preserve_format)
    out.untyped_storage()._pinned = True
    return out


def _is_parameter_class(cls: type) -> bool:
    import sys

    nn = sys.modules.get("torch.nn")  # a Parameter can only exist once torch.nn is imported
    return nn is not None and issubclass(cls, nn.Parameter)


def _deepcopy(self: Tensor, memo: dict[int, Any]) -> Tensor:
    if self.grad_fn is not None:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                           "the deepcopy protocol at the moment.")
    if id(self) in memo:
        return memo[id(self)]
    import copy

    out = clone(self.detach())
    if type(out) is not type(self):  # (a wrapper subclass's own detach/clone keep its class)
        out = _rewrap(out, type(self))
    out._requires_grad = self.requires_grad
    memo[id(self)] = out
    if self._grad is not None:
        out._grad = copy.deepcopy(self._grad, memo)
    if type(self) is not Tensor:
        # a subclass's Python attributes (a wrapper's inner tensors, metadata, a custom
        # parameter's _is_param mark) are copied too, as in PyTorch
        vars(out).update(copy.deepcopy(vars(self), memo))
    return out


# Tensor method name -> function; torch._functions binds every op module's table.
METHODS: dict[str, Any] = {
    "storage": _utils.tensor_storage,
    "add": add,
    "mul": mul,
    "multiply": mul,
    "sum": sum,
    "add_": inplace_method(add),
    "mul_": inplace_method(mul),
    "__add__": _fast.binary("add", _aten_add, _binary_method(add)),
    "__radd__": _fast.binary("add", _aten_add, _reflected(add), reflected=True),
    "__iadd__": inplace_method(add),
    "__mul__": _fast.binary("mul", _aten_mul, _binary_method(mul)),
    "__rmul__": _fast.binary("mul", _aten_mul, _reflected(mul), reflected=True),
    "__imul__": inplace_method(mul),
    "copy_": copy_,
    "fill_": fill_,
    "zero_": zero_,
    "to": to,
    "cpu": _cpu,
    "cuda": _cuda,
    "type": _type,
    "clone": clone,
    "contiguous": contiguous,
    "numpy": numpy,
    "tolist": tolist,
    "item": item,
    "__bool__": is_nonzero,
    "is_nonzero": is_nonzero,
    "__reduce_ex__": _reduce_ex,
    "share_memory_": _share_memory_,
    "is_shared": _is_shared,
    "pin_memory": _pin_memory,
    "__deepcopy__": _deepcopy,
    "__float__": _float,
    "__int__": _scalar_method(int),
    "__complex__": _scalar_method(complex),
    "__index__": _index,
    "__format__": _format,
    # (new_empty/new_zeros/new_ones/new_full: torch._aten.factories, aten operators of their own)
    "new_empty_strided": lambda self, size, stride, **kw: empty_strided(
        size, stride, **{"dtype": self._dtype, "device": self._device, **kw}),
    "new": _legacy_new,
    "resize_": _resize_,
    "set_": _set_,
    "new_tensor": lambda self, data, **kw: tensor(data, **{"dtype": self._dtype,
                                                           "device": self._device, **kw}),
}


for _name, _dt in (("float", _dtype.float32), ("double", _dtype.float64),
                   ("half", _dtype.float16), ("bfloat16", _dtype.bfloat16),
                   ("int", _dtype.int32), ("long", _dtype.int64), ("short", _dtype.int16),
                   ("char", _dtype.int8), ("byte", _dtype.uint8), ("bool", _dtype.bool_)):
    METHODS[_name] = _cast_method(_dt)

