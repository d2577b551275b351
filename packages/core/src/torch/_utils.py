"""What checkpoints name: the typed storage classes (``torch.FloatStorage``...) and the rebuild
functions (``torch._utils._rebuild_tensor_v2``...) that ``torch.save`` pickles and
``torch.load`` calls. The names are PyTorch's, so files move between Plait and PyTorch.

Loaded on first use by :mod:`torch.serialization`; nothing here imports numpy at module level.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from typing import Any

from . import _dtype
from ._tensor import Tensor, storage_extent


class TypedStorage:
    """An :class:`~torch.UntypedStorage` viewed as elements of one dtype.

    PyTorch keeps this class for compatibility; here it is what ``torch.load`` hands the
    rebuild functions (the bytes plus the dtype the checkpoint names) and what loading a
    checkpoint that holds a bare storage returns.
    """

    __slots__ = ("_untyped", "dtype")

    def __init__(self, *, wrap_storage: Any, dtype: _dtype.dtype) -> None:
        from ._storage import UntypedStorage

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
_STORAGE_TYPE_OF_DTYPE = {cls._dtype: cls for cls in STORAGE_TYPES.values()}  # type: ignore
# Module attributes too, so the facade can serve them lazily as torch.FloatStorage...
globals().update(STORAGE_TYPES)


def storage_type_of(dt: _dtype.dtype) -> type:
    """The legacy storage class (``torch.FloatStorage``...) that names ``dt`` in a checkpoint."""
    return _STORAGE_TYPE_OF_DTYPE[dt]


def dtype_of_storage_type(storage_type: Any) -> _dtype.dtype:
    """The dtype a persistent id's storage type stands for (``UntypedStorage`` is bytes)."""
    dt = getattr(storage_type, "_dtype", None)
    if isinstance(dt, _dtype.dtype):
        return dt
    from ._storage import UntypedStorage

    if storage_type is UntypedStorage:
        return _dtype.uint8
    raise RuntimeError(f"unknown storage type in checkpoint: {storage_type!r}")


def _install_names() -> None:
    """Make ``torch._tensor._rebuild_from_type_v2`` exist where PyTorch keeps it, so the
    pickler can name it (the facade serves ``torch.FloatStorage``... and ``torch.TypedStorage``
    from this module lazily)."""
    tensor_mod = sys.modules["torch._tensor"]
    if "_rebuild_from_type_v2" not in vars(tensor_mod):
        # pickled as torch._tensor._rebuild_from_type_v2, where PyTorch keeps it
        _rebuild_from_type_v2.__module__ = "torch._tensor"
        tensor_mod._rebuild_from_type_v2 = _rebuild_from_type_v2  # type: ignore[attr-defined]


# -- rebuild functions (called by torch.load; their names and arguments are PyTorch's) ---------


def _unwrap_storage(storage: Any) -> tuple[Any, _dtype.dtype]:
    from ._storage import UntypedStorage

    if isinstance(storage, TypedStorage):
        return storage._untyped, storage.dtype
    if isinstance(storage, UntypedStorage):
        return storage, _dtype.uint8
    raise TypeError(f"expected a storage to rebuild a tensor from, got {type(storage).__name__}")


def _check_int_tuple(name: str, value: Any) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise RuntimeError(f"invalid tensor {name} in checkpoint: {value!r}")
    return tuple(value)


def _rebuild_tensor(storage: Any, storage_offset: int, size: Any, stride: Any) -> Tensor:
    """A tensor viewing ``storage`` (checked to hold every element it addresses)."""
    untyped, dt = _unwrap_storage(storage)
    shape = _check_int_tuple("size", size)
    strides = _check_int_tuple("stride", stride)
    if (len(shape) != len(strides) or not isinstance(storage_offset, int)
            or storage_offset < 0 or any(s < 0 for s in shape + strides)):
        raise RuntimeError(f"invalid tensor layout in checkpoint: size {list(shape)}, stride "
                           f"{list(strides)}, storage offset {storage_offset}")
    extent = storage_extent(shape, strides)
    needed = (storage_offset + extent) * dt.itemsize if extent else 0
    if needed > untyped.nbytes():
        raise RuntimeError(
            f"setStorage: sizes {list(shape)}, strides {list(strides)}, storage offset "
            f"{storage_offset}, and itemsize {dt.itemsize} requiring a storage size of {needed} "
            f"are out of bounds for storage of size {untyped.nbytes()}")
    return Tensor._make(untyped, shape, strides, storage_offset, dt, untyped.device)


def _rebuild_tensor_v2(storage: Any, storage_offset: int, size: Any, stride: Any,
                       requires_grad: bool, backward_hooks: Any, metadata: Any = None) -> Tensor:
    """Rebuild a saved tensor: a view of ``storage`` with its size, stride and offset.

    ``backward_hooks`` are not restored (PyTorch warns that they are not serialized either);
    ``metadata`` (PyTorch's extra tensor flags) is accepted and ignored.
    """
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_meta_tensor_no_storage(dtype: _dtype.dtype, size: Any, stride: Any,
                                    requires_grad: bool) -> Tensor:
    """Rebuild a ``meta`` tensor (saved without data)."""
    from ._storage import _normalise, allocate

    if not isinstance(dtype, _dtype.dtype):
        raise RuntimeError(f"invalid dtype in checkpoint: {dtype!r}")
    shape = _check_int_tuple("size", size)
    strides = _check_int_tuple("stride", stride)
    dev = _normalise("meta")
    storage = allocate(storage_extent(shape, strides) * dtype.itemsize, dev)
    t = Tensor._make(storage, shape, strides, 0, dtype, dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _parameter_class() -> Any:
    """``torch.nn.Parameter`` when plait-nn provides it, else None."""
    try:
        import torch.nn as nn
    except ImportError:
        return None
    return getattr(nn, "Parameter", None)


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Tensor:
    """Rebuild an ``nn.Parameter``; without plait-nn, a tensor with ``requires_grad``."""
    param = _parameter_class()
    if param is not None:
        return param(data, requires_grad)
    if requires_grad:
        data.requires_grad_(True)
    return data


def _set_state(obj: Any, state: Any) -> Any:
    """Restore Python attributes saved with a tensor (a dict, or PyTorch's
    ``(dict, slots dict)`` pair)."""
    if state is None:
        return obj
    setstate = getattr(type(obj), "__setstate__", None)
    if setstate is not None and setstate is not getattr(Tensor, "__setstate__", None):
        setstate(obj, state)
        return obj
    dict_state, slots_state = state if isinstance(state, tuple) else (state, None)
    for part in (dict_state, slots_state):
        if part:
            for key, value in part.items():
                setattr(obj, key, value)
    return obj


def _rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any,
                                  state: Any) -> Tensor:
    """``_rebuild_parameter`` plus the Python attributes the parameter carried."""
    return _set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func: Any, new_type: Any, args: tuple[Any, ...], state: Any) -> Any:
    """Rebuild a tensor subclass (or a tensor carrying Python attributes): ``func(*args)``,
    re-typed to ``new_type``, with ``state`` restored."""
    ret = func(*args)
    if type(ret) is not new_type and isinstance(new_type, type) and issubclass(new_type, Tensor):
        view = object.__new__(new_type)
        for slot in ("_storage", "_shape", "_stride", "_offset", "_dtype", "_device", "_vc",
                     "_base", "_grad", "grad_fn", "requires_grad", "_fk"):
            object.__setattr__(view, slot, getattr(ret, slot))
        view._fk = None
        ret = view
    return _set_state(ret, state)


def _tensor_reduce_args(t: Tensor, storage_ref: Any) -> tuple[Any, ...]:
    """The arguments :func:`_rebuild_tensor_v2` gets for ``t`` (``storage_ref`` stands for its
    storage in the pickle)."""
    return (storage_ref, int(t._offset), tuple(int(s) for s in t._shape),
            tuple(int(s) for s in t._stride), bool(t.requires_grad), OrderedDict())


def _tensor_from_bytes(data: bytes) -> Any:
    """Unpickle a tensor that ``Tensor.__reduce_ex__`` wrote as a ``torch.save`` archive."""
    import io

    from . import serialization

    return serialization.load(io.BytesIO(data), weights_only=True)
