"""``torch.types``: the type aliases libraries annotate with (``Number``, ``_size``,
``Device``, ``_dtype``...). ``Storage`` loads with the storage classes on first use."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, Any

from ._core.device import device as _device
from ._core.dtype import dtype as _dtype
from ._core.layout import layout as _layout
from ._core.symbolic import SymBool, SymFloat, SymInt
from ._core.tensor import Size, Tensor

__all__ = ["Device", "FileLike", "Number", "IntLikeType", "FloatLikeType",
           "BoolLikeType", "PySymType", "py_sym_types"]

# Python's scalar types under the names PyTorch's stubs use (they shadow builtins there).
_bool = bool
_complex = complex
_float = float
_int = int
_str = str
_bytes = bytes

_TensorOrTensors = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors = Tensor | Sequence[Tensor | None]
_size = Size | list[int] | tuple[int, ...]
_symsize = Size | Sequence[int | SymInt]
_dispatchkey = str

Number = int | float | bool
_Number = (int, float, bool)  # for isinstance
Device = _device | str | int | None
FileLike = str | os.PathLike[str] | IO[bytes]
IntLikeType = int | SymInt
FloatLikeType = float | SymFloat
BoolLikeType = bool | SymBool
PySymType = SymInt | SymFloat | SymBool
py_sym_types = (SymInt, SymFloat, SymBool)

_ = (_dtype, _layout)  # re-exported names


def __getattr__(name: str) -> Any:
    # The storage classes import numpy: load them only when asked.
    if name == "Storage":
        from ._core.storage import UntypedStorage

        return UntypedStorage
    raise AttributeError(f"module 'torch.types' has no attribute '{name}'")
