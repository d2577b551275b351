"""What checkpoints name: the typed storage classes (``torch.FloatStorage``...) and the rebuild
functions (``torch._utils._rebuild_tensor_v2``...) that ``torch.save`` pickles and
``torch.load`` calls. The names are PyTorch's, so files move between Plait and PyTorch.

Loaded on first use by :mod:`torch.serialization`; nothing here imports numpy at module level.
"""

from __future__ import annotations

import math
import pickle
import reprlib
from collections import OrderedDict
from typing import Any

from ._core import dtype as _dtype, layout as _layout
from ._core.tensor import Tensor, storage_extent


class TypedStorage:
    """An :class:`~torch.UntypedStorage` viewed as elements of one dtype.

    PyTorch keeps this class for compatibility; here it is what ``torch.load`` hands the
    rebuild functions (the bytes plus the dtype the checkpoint names) and what loading a
    checkpoint that holds a bare storage returns.
    """

    __slots__ = ("_untyped", "dtype")

    def __init__(self, *, wrap_storage: Any, dtype: _dtype.dtype) -> None:
        from ._core.storage import UntypedStorage

        if not isinstance(wrap_storage, UntypedStorage):
            raise TypeError(f"wrap_storage must be an UntypedStorage, not "
                            f"{type(wrap_storage).__name__}")
        if not isinstance(dtype, _dtype.dtype):
            raise TypeError(f"dtype must be a torch.dtype, not {type(dtype).__name__}")
        self._untyped = wrap_storage
        self.dtype = dtype

    @property
    def device(self) -> Any:
        return self._untyped.device

    def untyped_storage(self) -> Any:
        """The bytes underneath."""
        return self._untyped

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def size(self) -> int:
        """The number of elements."""
        return self._untyped.nbytes() // self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def untyped(self) -> Any:
        """The bytes underneath (PyTorch's older name of :meth:`untyped_storage`)."""
        return self._untyped

    def data_ptr(self) -> int:
        """The address of the first byte."""
        return self._untyped.data_ptr()

    def is_shared(self) -> bool:
        return False

    def is_pinned(self, device: Any = None) -> bool:
        return False

    def type(self, dtype: Any = None, non_blocking: bool = False) -> str:
        """The legacy class name (``"torch.FloatStorage"``)."""
        return f"torch.{_STORAGE_NAMES.get(str(self.dtype).rpartition('.')[2], 'TypedStorage')}"

    def __setitem__(self, i: Any, value: Any) -> None:
        self._as_tensor()[i] = value

    def _as_tensor(self) -> Tensor:
        n = self.size()
        return Tensor._make(self._untyped, (n,), (1,), 0, self.dtype, self._untyped.device)

    def tolist(self) -> list[Any]:
        return self._as_tensor().tolist()

    def __getitem__(self, i: int) -> Any:
        return self._as_tensor()[i].item()

    def cpu(self) -> TypedStorage:
        return TypedStorage(wrap_storage=self._untyped.cpu(), dtype=self.dtype)

    def __repr__(self) -> str:
        body = "".join(f" {v}\n" for v in self.tolist()) if self.device.type != "meta" else ""
        return (f"{body}[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) "
                f"of size {self.size()}]")


TypedStorage.__module__ = "torch"

# PyTorch's legacy storage class per dtype: the name a checkpoint's persistent id carries.
_STORAGE_NAMES = {
    "bool": "BoolStorage",
    "uint8": "ByteStorage",
    "int8": "CharStorage",
    "int16": "ShortStorage",
    "int32": "IntStorage",
    "int64": "LongStorage",
    "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage",
    "float32": "FloatStorage",
    "float64": "DoubleStorage",
    "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}


def _storage_class(name: str, dt: _dtype.dtype) -> type:
    cls = type(name, (TypedStorage,), {
        "__slots__": (),
        "__doc__": f"The legacy typed storage of ``{dt!r}`` (a name checkpoints use).",
    })
    cls.__module__ = "torch"
    cls._dtype = dt  # type: ignore[attr-defined]
    return cls


STORAGE_TYPES: dict[str, type] = {
    name: _storage_class(name, _dtype.DTYPES[dt]) for dt, name in _STORAGE_NAMES.items()
}
# the storages of quantized tensors' integers, named by the quantized dtype (torch._quantized)
for _name, _dt in (("QInt8Storage", "qint8"), ("QUInt8Storage", "quint8"),
                   ("QInt32Storage", "qint32")):
    STORAGE_TYPES[_name] = _storage_class(_name, _dtype.NAMED_ONLY[_dt])
_STORAGE_TYPE_OF_DTYPE = {cls._dtype: cls for cls in STORAGE_TYPES.values()}  # type: ignore
# Module attributes too, so the facade can serve them lazily as torch.FloatStorage...
globals().update(STORAGE_TYPES)


def has_storage_type(dt: _dtype.dtype) -> bool:
    """Whether ``dt`` has a legacy storage class (``uint16``/``uint32``/``uint64`` have none: a
    checkpoint saves their storages untyped, with ``_rebuild_tensor_v3``)."""
    return dt in _STORAGE_TYPE_OF_DTYPE


def storage_type_of(dt: _dtype.dtype) -> type:
    """The legacy storage class (``torch.FloatStorage``...) that names ``dt`` in a checkpoint."""
    return _STORAGE_TYPE_OF_DTYPE[dt]


def dtype_of_storage_type(storage_type: Any) -> _dtype.dtype:
    """The dtype a persistent id's storage type stands for (``UntypedStorage`` is bytes)."""
    dt = getattr(storage_type, "_dtype", None)
    if isinstance(dt, _dtype.dtype):
        return dt
    from ._core.storage import UntypedStorage

    if storage_type is UntypedStorage:
        return _dtype.uint8
    raise RuntimeError(f"unknown storage type in checkpoint: {shown(storage_type)}")


# -- rebuild functions (called by torch.load; their names and arguments are PyTorch's) ---------
#
# Every tensor a checkpoint describes is checked against the storage it views before it exists:
# sizes, strides and the offset are non-negative int64 values, and the last element it addresses
# lies inside the storage's bytes (measured in the tensor's own dtype). A file therefore cannot
# make a tensor that reads or writes memory it does not own, whatever its pickle says.

_INT64_LIMIT = 2**63  # sizes, strides, offsets and byte counts are int64 in PyTorch


def shown(value: Any) -> str:
    """``value`` for an error message: a short repr (a crafted value may be huge, or nested
    deeper than ``repr`` can go)."""
    return reprlib.repr(value)


def _unwrap_storage(storage: Any) -> tuple[Any, _dtype.dtype]:
    from ._core.storage import UntypedStorage

    if isinstance(storage, TypedStorage):
        return storage._untyped, storage.dtype
    if isinstance(storage, UntypedStorage):
        return storage, _dtype.uint8
    raise RuntimeError(f"expected a storage to rebuild a tensor from, got "
                       f"{type(storage).__name__}")


def _check_int_tuple(name: str, value: Any) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise RuntimeError(f"invalid tensor {name} in checkpoint: {shown(value)}")
    return tuple(value)


def check_layout(nbytes: int, dt: _dtype.dtype, storage_offset: Any, size: Any,
                 stride: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(size, stride)`` as int tuples once they, with ``storage_offset``, describe a view of
    ``dt`` elements that lies inside a storage of ``nbytes`` bytes; else a RuntimeError."""
    if not isinstance(dt, _dtype.dtype):
        raise RuntimeError(f"invalid dtype in checkpoint: {shown(dt)}")
    shape = _check_int_tuple("size", size)
    strides = _check_int_tuple("stride", stride)
    if (len(shape) != len(strides) or not isinstance(storage_offset, int)
            or isinstance(storage_offset, bool)
            or not all(0 <= v < _INT64_LIMIT for v in (storage_offset, *shape, *strides))
            # the contiguous strides of the shape (what an op's result gets) fit int64 too
            or math.prod(max(n, 1) for n in shape) >= _INT64_LIMIT):
        raise RuntimeError(f"invalid tensor layout in checkpoint: size {list(shape)}, stride "
                           f"{list(strides)}, storage offset {shown(storage_offset)}")
    needed = (storage_offset + storage_extent(shape, strides)) * dt.itemsize
    if needed > nbytes:
        raise RuntimeError(
            f"setStorage: sizes {list(shape)}, strides {list(strides)}, storage offset "
            f"{storage_offset}, and itemsize {dt.itemsize} requiring a storage size of {needed} "
            f"are out of bounds for storage of size {nbytes}")
    return shape, strides


def check_tensor(t: Any) -> Any:
    """``t`` once its own size, stride, offset and dtype lie inside its storage (a tensor that a
    rebuild function or restored state produced); else a RuntimeError."""
    from ._core.storage import UntypedStorage

    if not isinstance(t, Tensor):
        raise RuntimeError(f"expected a tensor in checkpoint, got {type(t).__name__}")
    storage = t._storage
    if not isinstance(storage, UntypedStorage):
        raise RuntimeError("invalid tensor in checkpoint: it has no storage")
    check_layout(storage.nbytes(), t._dtype, t._offset, t._shape, t._stride)
    return t


def _view_of(storage: Any, storage_offset: Any, size: Any, stride: Any,
             dt: _dtype.dtype | None = None) -> Tensor:
    untyped, storage_dt = _unwrap_storage(storage)
    dt = storage_dt if dt is None else dt
    shape, strides = check_layout(untyped.nbytes(), dt, storage_offset, size, stride)
    return Tensor._make(untyped, shape, strides, storage_offset, dt, untyped.device)


def _set_requires_grad(t: Tensor, requires_grad: Any) -> Tensor:
    if not isinstance(requires_grad, bool):
        raise RuntimeError(f"invalid requires_grad in checkpoint: {shown(requires_grad)}")
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor(storage: Any, storage_offset: int, size: Any, stride: Any) -> Tensor:
    """A tensor viewing ``storage`` (checked to hold every element it addresses)."""
    return _view_of(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage: Any, storage_offset: int, size: Any, stride: Any,
                       requires_grad: bool, backward_hooks: Any, metadata: Any = None) -> Tensor:
    """Rebuild a saved tensor: a view of ``storage`` with its size, stride and offset.

    ``backward_hooks`` are not restored (PyTorch warns that they are not serialized either);
    ``metadata`` (PyTorch's extra tensor flags) is accepted and ignored.
    """
    return _set_requires_grad(_view_of(storage, storage_offset, size, stride), requires_grad)


def _rebuild_qtensor(storage: Any, storage_offset: int, size: Any, stride: Any,
                     quantizer_params: Any, requires_grad: bool, backward_hooks: Any) -> Tensor:
    """Rebuild a saved quantized tensor (PyTorch's form: its integers' storage, typed by the
    quantized dtype, and ``(qscheme, scale(s), zero point(s)[, axis])``)."""
    from ._quantized import rebuild_qtensor

    tensor = rebuild_qtensor(_view_of, storage, storage_offset, size, stride, quantizer_params)
    return _set_requires_grad(tensor, requires_grad)


def _rebuild_tensor_v3(storage: Any, storage_offset: int, size: Any, stride: Any,
                       requires_grad: bool, backward_hooks: Any, dtype: _dtype.dtype,
                       metadata: Any = None) -> Tensor:
    """``_rebuild_tensor_v2`` for dtypes without a legacy storage class (``uint16``...): the
    storage is untyped and ``dtype`` says how to read it."""
    if not isinstance(dtype, _dtype.dtype):
        raise RuntimeError(f"invalid dtype in checkpoint: {shown(dtype)}")
    return _set_requires_grad(_view_of(storage, storage_offset, size, stride, dtype),
                              requires_grad)


def _rebuild_meta_tensor_no_storage(dtype: _dtype.dtype, size: Any, stride: Any,
                                    requires_grad: bool) -> Tensor:
    """Rebuild a ``meta`` tensor (saved without data)."""
    from ._core.storage import _normalise, allocate

    shape, strides = check_layout(_INT64_LIMIT, dtype, 0, size, stride)
    dev = _normalise("meta")
    storage = allocate(storage_extent(shape, strides) * dtype.itemsize, dev)
    return _set_requires_grad(Tensor._make(storage, shape, strides, 0, dtype, dev),
                              requires_grad)


def _parameter_class() -> Any:
    """``torch.nn.Parameter`` when plait-nn provides it, else None."""
    try:
        import torch.nn as nn
    except ImportError:
        return None
    return getattr(nn, "Parameter", None)


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Tensor:
    """Rebuild an ``nn.Parameter``; without plait-nn, a tensor with ``requires_grad``."""
    check_tensor(data)
    if not isinstance(requires_grad, bool):
        raise RuntimeError(f"invalid requires_grad in checkpoint: {shown(requires_grad)}")
    param = _parameter_class()
    if param is not None:
        return check_tensor(param(data, requires_grad))
    return _set_requires_grad(data, requires_grad)


# What core keeps in a tensor's ``__dict__`` for itself (autograd bookkeeping, inference mode):
# never written to a checkpoint, and skipped when a file has it (files saved before this rule
# carry ``_inference`` for tensors made under inference mode; a loaded tensor is a plain one).
_CORE_TENSOR_KEYS = frozenset(
    ("_inference", "_output_nr", "_leaf_hooks", "_retains_grad", "_grad_accumulator"))


def restorable_attribute(name: Any) -> bool:
    """Whether a checkpoint may set the tensor attribute ``name``: a user's Python attribute,
    i.e. a string that ``torch.Tensor`` does not define (no slot such as ``_shape`` or
    ``_storage``, property such as ``data`` or method) and core does not keep for itself."""
    return (isinstance(name, str) and name not in _CORE_TENSOR_KEYS
            and not hasattr(Tensor, name))


def _check_state_name(name: Any) -> bool:
    """Whether to restore ``name`` on a tensor: True for a user attribute, False for core's
    bookkeeping (skipped); anything ``torch.Tensor`` defines raises."""
    if restorable_attribute(name):
        return True
    if name in _CORE_TENSOR_KEYS:
        return False
    shown = repr(name) if isinstance(name, str) else f"a {type(name).__name__}"
    raise pickle.UnpicklingError(
        f"the checkpoint sets {shown} on a tensor: only Python attributes that torch.Tensor "
        f"does not define can be restored, never its internal fields")


def tensor_state(t: Tensor) -> dict[str, Any]:
    """The Python attributes ``torch.save`` records with ``t`` (see
    :func:`restorable_attribute`)."""
    attrs = vars(t) if hasattr(t, "__dict__") else {}
    return {k: v for k, v in attrs.items() if restorable_attribute(k)}


def _set_state(obj: Any, state: Any) -> Any:
    """Restore Python attributes saved with a tensor (a dict, or PyTorch's
    ``(dict, slots dict)`` pair). On a tensor only :func:`restorable_attribute` names are
    set (core's bookkeeping keys are skipped, any name ``torch.Tensor`` defines raises
    :class:`pickle.UnpicklingError`), and the tensor is checked against its storage
    afterwards."""
    if state is None:
        return obj
    setstate = getattr(type(obj), "__setstate__", None)
    if setstate is not None and setstate is not _set_state:
        setstate(obj, state)  # the subclass's own (a class the user allowed)
        return check_tensor(obj) if isinstance(obj, Tensor) else obj
    if isinstance(state, tuple):
        if len(state) != 2:
            raise pickle.UnpicklingError(f"invalid tensor state in checkpoint: a tuple of "
                                         f"{len(state)}")
        parts = state
    else:
        parts = (state, None)
    is_tensor = isinstance(obj, Tensor)
    for part in parts:
        if part is None:
            continue
        if not isinstance(part, dict):
            raise pickle.UnpicklingError(f"invalid tensor state in checkpoint: a "
                                         f"{type(part).__name__}")
        for key, value in part.items():
            if not is_tensor or _check_state_name(key):
                setattr(obj, key, value)
    return check_tensor(obj) if is_tensor else obj


# ``Tensor.__setstate__``: the BUILD opcode of any full unpickle (``weights_only=False``, plain
# pickle) that reaches a tensor follows the rules above too, instead of ``setattr`` on whatever
# slot the pickle names. Set here, where every pickle that rebuilds a tensor leads.
if "__setstate__" not in vars(Tensor):
    Tensor.__setstate__ = _set_state  # type: ignore[attr-defined]


def _rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any,
                                  state: Any) -> Tensor:
    """``_rebuild_parameter`` plus the Python attributes the parameter carried."""
    return _set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func: Any, new_type: Any, args: tuple[Any, ...], state: Any) -> Any:
    """Rebuild a tensor subclass (or a tensor carrying Python attributes): ``func(*args)``,
    re-typed to ``new_type``, with ``state`` restored."""
    if not isinstance(args, tuple):
        raise pickle.UnpicklingError("_rebuild_from_type_v2 needs a tuple of arguments")
    ret = func(*args)
    if (isinstance(ret, Tensor) and type(ret) is not new_type and isinstance(new_type, type)
            and issubclass(new_type, Tensor)):
        view = new_type._make(ret._storage, ret._shape, ret._stride, ret._offset, ret._dtype,
                              ret._device, ret._vc)
        view._requires_grad = ret.requires_grad
        ret = view
    return _set_state(ret, state)


def _tensor_reduce_args(t: Tensor, storage_ref: Any) -> tuple[Any, ...]:
    """The arguments :func:`_rebuild_tensor_v2` gets for ``t`` (``storage_ref`` stands for its
    storage in the pickle)."""
    return (storage_ref, int(t._offset), tuple(int(s) for s in t._shape),
            tuple(int(s) for s in t._stride), bool(t.requires_grad), OrderedDict())


def _storage_from_bytes(data: bytes) -> Any:
    """Unpickle a storage that ``UntypedStorage.__reduce__`` wrote as a ``torch.save``
    archive."""
    import io

    from . import serialization

    loaded = serialization.load(io.BytesIO(data), weights_only=True)
    return loaded.untyped_storage() if isinstance(loaded, TypedStorage) else loaded


def _rebuild_sparse_tensor(layout: Any, data: tuple[Any, ...]) -> Tensor:
    """Rebuild a saved sparse tensor from its layout and ``(indices, values, size[,
    is_coalesced])``, as PyTorch writes it."""
    from . import _functions  # (the op surface: the sparse operators live there)

    if layout is not _layout.sparse_coo:
        raise NotImplementedError(f"rebuilding a sparse tensor of layout {layout} is not "
                                  "supported (only torch.sparse_coo is)")
    indices, values, size = data[:3]
    coalesced = bool(data[3]) if len(data) > 3 else False
    return _functions._sparse_coo_tensor_unsafe(indices, values, size, is_coalesced=coalesced)


def _subclass_from_bytes(cls: type, data: bytes, attributes: dict[str, Any]) -> Any:
    """Unpickle a tensor subclass instance that ``Tensor.__reduce_ex__`` wrote: the plain
    tensor's archive, then its class and Python attributes (plain pickle only: the restricted
    loader of ``torch.load`` never names this function)."""
    return _set_state(_tensor_from_bytes(data).as_subclass(cls), attributes)


def _tensor_from_bytes(data: bytes) -> Any:
    """Unpickle a tensor that ``Tensor.__reduce_ex__`` wrote as a ``torch.save`` archive."""
    import io

    from . import serialization

    return serialization.load(io.BytesIO(data), weights_only=True)


def _flatten_dense_tensors(tensors: Any) -> Tensor:
    """The tensors' elements one after the other in one new 1-d tensor (mixed precision and
    gradient bucketing code copies parameters into such a buffer)."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("_flatten_dense_tensors: expected a non-empty list of tensors")
    if len(tensors) == 1:
        return tensors[0].contiguous().view(-1)
    flat = tensors[0].new_empty(sum(t.numel() for t in tensors))
    offset = 0
    for t in tensors:
        flat[offset:offset + t.numel()].copy_(t.reshape(-1))
        offset += t.numel()
    return flat


def _unflatten_dense_tensors(flat: Tensor, tensors: Any) -> tuple[Tensor, ...]:
    """Views of ``flat`` shaped like each of ``tensors`` in turn (the inverse of
    :func:`_flatten_dense_tensors`)."""
    outputs = []
    offset = 0
    for t in tensors:
        outputs.append(flat[offset:offset + t.numel()].view(t.shape))
        offset += t.numel()
    return tuple(outputs)


def _get_available_device_type() -> str | None:
    """The type of the accelerator with a usable device (``"cuda"``, ``"xpu"``...); None when
    there is none."""
    from . import accelerator

    device = accelerator.current_accelerator(check_available=True)
    return None if device is None else device.type


def _get_device_module(device_type: str | None = None) -> Any:
    """``torch.<device_type>`` (by default that of the available accelerator, else
    ``torch.cuda``, as in PyTorch)."""
    import torch

    name = device_type or _get_available_device_type() or "cuda"
    return getattr(torch, name)


_typed_storage_warned = False


def tensor_storage(self: Tensor) -> TypedStorage:
    """``Tensor.storage()``: the tensor's storage viewed as elements of its dtype (PyTorch
    warns once that TypedStorage is deprecated, as this does)."""
    global _typed_storage_warned
    if not _typed_storage_warned:
        _typed_storage_warned = True
        import warnings

        warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                      "UntypedStorage will be the only storage class. This should only matter "
                      "to you if you are using storages directly.  To access UntypedStorage "
                      "directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=2)
    return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype)
