"""Type promotion and broadcasting, with PyTorch's rules: dimensioned tensors, then zero-dim
tensors, then Python scalars; shapes broadcast from the right."""

from __future__ import annotations

import sys as _sys
from typing import Any

from . import config as _config, dtype as _dtype, storage as _storage
from .device import device as _device
from .symbolic import SymBool, SymFloat, SymInt
from .tensor import Size, Tensor

# What arithmetic takes as a number beside tensors: Python's, and the symbolic sizes a traced
# program computes with (``x * x.shape[0]`` under a shape environment).
NUMBER_TYPES = (bool, int, float, complex, SymBool, SymInt, SymFloat)


def numpy_scalar(value: Any) -> Any:
    """The Python number a numpy scalar holds (``np.float32(2)``, ``arr.sum()``), which
    PyTorch's operators take as a number; ``NotImplemented`` for anything else."""
    if type(value).__module__ == "numpy" and isinstance(value, _sys.modules["numpy"].generic):
        item = value.item()
        if isinstance(item, (bool, int, float, complex)):
            return item
    return NotImplemented

__all__ = ["broadcast_shapes", "can_cast", "promote_types", "result_type"]

def scalar_dtype(value: Any) -> _dtype.dtype:
    """The dtype PyTorch gives a Python scalar standing alone (``torch.tensor(2.5)``)."""
    if isinstance(value, (bool, SymBool)):
        return _dtype.bool_
    if isinstance(value, (int, SymInt)):
        return _dtype.int64
    if isinstance(value, (float, SymFloat)):
        return _config.get_default_dtype()
    if isinstance(value, complex):
        return _config.get_default_complex_dtype()
    raise TypeError(f"expected a number, got {type(value).__name__}")


def promote_types(type1: _dtype.dtype, type2: _dtype.dtype) -> _dtype.dtype:
    """The smallest dtype to which both can be cast without losing category."""
    return _dtype.promote_types(type1, type2)


def can_cast(from_: _dtype.dtype, to: _dtype.dtype) -> bool:
    """Whether casting ``from_`` to ``to`` is allowed by PyTorch's casting rules."""
    return _dtype.can_cast(from_, to)


def result_type(*operands: Any) -> _dtype.dtype:
    """The dtype of an arithmetic op's result: dimensioned tensors, then zero-dim tensors, then
    Python scalars; a lower class only counts when its category is higher."""
    dim = zero = wrapped = None
    for o in operands:
        if isinstance(o, Tensor):
            if o._shape:
                dim = o._dtype if dim is None else _dtype.promote_types(dim, o._dtype)
            else:
                zero = o._dtype if zero is None else _dtype.promote_types(zero, o._dtype)
        else:
            try:
                d = scalar_dtype(o)
            except TypeError:
                raise TypeError(f"result_type: expected Tensor or Number, got "
                                f"{type(o).__name__}") from None
            wrapped = d if wrapped is None else _dtype.promote_types(wrapped, d)
    out = _dtype.combine_categories(dim, _dtype.combine_categories(zero, wrapped))
    if out is None:
        raise TypeError("result_type expects at least one operand")
    return out


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape all ``shapes`` broadcast to (a bare int is a 1-d shape); RuntimeError naming
    the clashing sizes, ValueError for a negative size."""
    shapes = tuple((s,) if isinstance(s, int) else tuple(s) for s in shapes)
    for s in shapes:
        if any(n < 0 for n in s):
            raise ValueError("Attempting to broadcast a dimension with negative length!")
    return broadcast_shape_tuples(*shapes)


def broadcast_shape_tuples(*shapes: tuple[int, ...]) -> Size:
    """:func:`broadcast_shapes` for shapes core already holds as tuples (the hot path)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if out[i] == 1:
                out[i] = n
            elif n != 1 and n != out[i]:
                raise RuntimeError(f"The size of tensor a ({out[i]}) must match the size of "
                                   f"tensor b ({n}) at non-singleton dimension {i}")
    return Size(out)


def common_device(tensors: list[Tensor]) -> _device:
    dev = None
    weak = True
    for t in tensors:
        scalar = t._device.type == "cpu" and not t._shape
        if dev is None or (weak and not scalar):
            dev, weak = t._device, scalar
        elif t._device is not dev and t._device != dev and not scalar:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {dev} and {t._device}!")
    return dev if dev is not None else _storage._normalise("cpu")
