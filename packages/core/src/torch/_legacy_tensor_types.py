"""PyTorch's legacy tensor types: ``torch.FloatTensor``, ``torch.LongTensor``... and the
``torch.cuda.*Tensor`` names.

They are not subclasses of :class:`torch.Tensor`: each is an instance of the metaclass
:class:`tensortype` that stands for one (device type, dtype) pair. ``isinstance(t,
torch.FloatTensor)`` asks whether ``t`` is a float32 tensor on the CPU, and calling the type is
PyTorch's legacy constructor, which makes a plain ``torch.Tensor``: ``FloatTensor(2, 3)`` an
uninitialised 2x3 tensor, ``LongTensor([1, 2])`` one from data, ``FloatTensor(t)`` an alias of
a float32 CPU tensor ``t``. ``Tensor.type()`` names these types and ``Tensor.type(name)``
converts to one (:func:`convert`).
"""

from __future__ import annotations

from typing import Any

from ._core import dtype as _dtype
from ._core.device import device as _device
from ._core.tensor import LEGACY_TYPE_NAMES, Size, Tensor

__all__ = ["BY_DEVICE_TYPE", "CPU_TYPES", "CUDA_TYPES", "convert", "tensortype", "type_name"]

# The types PyTorch defines (its CPU build has these ten, under torch and torch.cuda).
_DEFINED = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8",
            "uint8", "bool")


class tensortype(type):  # PyTorch's lower-case name
    """The metaclass of the legacy tensor types: one instance per (device type, dtype)."""

    dtype: _dtype.dtype
    _device_type: str

    def __instancecheck__(cls, obj: Any) -> bool:
        # By dtype and device type, as PyTorch does; a Parameter is a float tensor too.
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and obj.device.type == cls._device_type)

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        return _construct(cls, args, device)

    def __getattr__(cls, name: str) -> Any:
        # PyTorch's types carry Tensor's methods (torch.FloatTensor.add is Tensor.add).
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(Tensor, name)

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__name__}'>"


tensortype.__module__ = "torch"


def _make(device_type: str, dtype_name: str) -> tensortype:
    name = LEGACY_TYPE_NAMES[dtype_name]
    module = "torch" if device_type == "cpu" else f"torch.{device_type}"
    namespace = {
        "__module__": module,
        "__qualname__": name,
        "__doc__": f"The legacy {module}.{name} type: {dtype_name} tensors on {device_type}.",
        "dtype": _dtype.DTYPES[dtype_name],
        "_device_type": device_type,
        "layout": None,  # set below (torch.strided) without importing the facade
        "is_sparse": False,
        "is_cuda": False,
    }
    namespace[f"is_{device_type}"] = True  # torch.cuda.FloatTensor.is_cuda
    return tensortype(name, (), namespace)


CPU_TYPES: dict[str, tensortype] = {LEGACY_TYPE_NAMES[n]: _make("cpu", n) for n in _DEFINED}
CUDA_TYPES: dict[str, tensortype] = {LEGACY_TYPE_NAMES[n]: _make("cuda", n) for n in _DEFINED}
# torch.<device type>.<name>Tensor: PyTorch defines them for CUDA only
BY_DEVICE_TYPE: dict[str, dict[str, tensortype]] = {"cuda": CUDA_TYPES}
globals().update(CPU_TYPES)  # torch.FloatTensor... load from here by name


def _set_layouts() -> None:
    from ._core.layout import strided

    for cls in (*CPU_TYPES.values(), *CUDA_TYPES.values()):
        type.__setattr__(cls, "layout", strided)


_set_layouts()


def _is_size(args: tuple[Any, ...]) -> bool:
    """Whether the legacy constructor's arguments are a size (ints, or one Size)."""
    if len(args) == 1 and isinstance(args[0], Size):
        return True
    return all(isinstance(a, int) and not isinstance(a, bool) for a in args)


def _construct(cls: tensortype, args: tuple[Any, ...], device: Any) -> Tensor:
    """PyTorch's legacy constructor: no arguments, a size, a tensor, a storage or data."""
    import torch

    if device is not None and _device(device).type != cls._device_type:
        raise RuntimeError(f"legacy constructor expects device type: {cls._device_type} but "
                           f"device type: {_device(device).type} was passed")
    kind = cls._device_type
    if kind != "cpu" and not torch.get_device_module(kind).is_available():
        raise TypeError(f"type {cls.__module__}.{cls.__name__} not available. Torch not "
                        f"compiled with {kind.upper()} enabled.")
    where = device if device is not None else cls._device_type
    if not args:
        return torch.empty(0, dtype=cls.dtype, device=where)
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype is not cls.dtype or other.device.type != cls._device_type:
            raise TypeError(f"expected {cls.__module__}.{cls.__name__} (got "
                            f"{other.type()})")
        return other.view_as(other)  # an alias: same storage, still in the graph
    if len(args) == 1 and is_storage(args[0]):
        return torch.tensor([], dtype=cls.dtype, device=where).set_(args[0])
    if _is_size(args):
        return torch.empty(*args, dtype=cls.dtype, device=where)
    if len(args) == 1 and isinstance(args[0], (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(args[0]).__name__}'")
    if len(args) == 1 and (args[0] is None or isinstance(args[0], (bool, float, complex))):
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
    if len(args) == 1:
        return torch.tensor(args[0], dtype=cls.dtype, device=where)
    bad = next(a for a in args if not isinstance(a, int) or isinstance(a, bool))
    raise TypeError(f"new(): argument 'size' must be tuple of ints, but found element of type "
                    f"{type(bad).__name__}")


def is_storage(obj: Any) -> bool:
    """Whether ``obj`` is an untyped or typed storage (a tensor may be built on it)."""
    import torch

    return torch.is_storage(obj) or type(obj).__name__.endswith("Storage")


def type_name(t: Tensor) -> str:
    """``Tensor.type()``: ``torch.FloatTensor`` on the CPU, ``torch.<device>.FloatTensor``
    elsewhere."""
    name = LEGACY_TYPE_NAMES.get(t.dtype._name, "Tensor")
    kind = t.device.type
    if t.is_sparse:  # torch.sparse.FloatTensor, torch.cuda.sparse.FloatTensor
        name = "sparse." + name
    return f"torch.{name}" if kind == "cpu" else f"torch.{kind}.{name}"


def _parse(name: str) -> tuple[str, _dtype.dtype]:
    """``'torch.cuda.LongTensor'`` -> ``('cuda', torch.int64)``; ValueError for other names."""
    by_name = {v: _dtype.DTYPES[k] for k, v in LEGACY_TYPE_NAMES.items()}
    parts = name.split(".")
    if parts[0] == "torch" and len(parts) in (2, 3) and parts[-1] in by_name:
        return (parts[1] if len(parts) == 3 else "cpu"), by_name[parts[-1]]
    raise ValueError(f"invalid type: '{name}'")


def convert(t: Tensor, target: Any, non_blocking: bool = False) -> Tensor:
    """``Tensor.type(target)``: ``t`` as the legacy type ``target`` (a name such as
    ``'torch.LongTensor'``, a legacy type, or a dtype); ``t`` itself when it already is one."""
    if isinstance(target, _dtype.dtype):
        return t.to(target, non_blocking=non_blocking)
    if isinstance(target, tensortype):
        kind, dt = target._device_type, target.dtype
    elif target is Tensor:
        return t
    elif isinstance(target, str):
        kind, dt = _parse(target)
    else:
        raise TypeError("dtype must be a type, str, or dtype object")
    if t.device.type == kind:
        return t.to(dt, non_blocking=non_blocking)
    return t.to(kind, dt, non_blocking=non_blocking)
