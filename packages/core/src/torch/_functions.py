"""The op surface: the public functions of ``torch`` that compute, gathered from the modules
that implement them, and the one place that loads them.

Loaded on first use (through the facade's ``__getattr__`` or ``Tensor.__new__``), because it
imports numpy; loading binds the computing methods onto ``Tensor`` and this module into
:mod:`torch._tensor` as ``_F``. Core does the shared work of every op once (argument parsing,
promotion, broadcasting, output allocation) and hands primitives outputs plus inputs of one
dtype, already broadcast (DESIGN.md §4).
"""

from __future__ import annotations

import sys

from . import _tensor, _tensor_methods  # noqa: F401  (binds Tensor's computing methods)
from ._arith import add, is_floating_point, mul, numel, sum
from ._convert import clone, is_nonzero, to_device, view_dtype
from ._factories import (
    empty,
    empty_like,
    empty_strided,
    full,
    full_like,
    legacy_tensor_new,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from ._promotion import broadcast_shapes, can_cast, promote_types, result_type
from ._tensor_methods import advanced_index

__all__ = [
    "add", "broadcast_shapes", "can_cast", "clone", "empty", "empty_like", "empty_strided", "full",
    "full_like", "is_floating_point", "is_nonzero", "mul", "numel", "ones", "ones_like",
    "promote_types", "result_type", "sum", "tensor", "zeros", "zeros_like",
]

# Used by torch._tensor (indexing, view(dtype), Tensor(...)) and the dispatcher's CPU fallback.
INTERNAL = (advanced_index, legacy_tensor_new, to_device, view_dtype)

_tensor._F = sys.modules[__name__]
