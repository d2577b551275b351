"""``torch._tensor``, PyTorch's home of the Tensor class, kept under that name because files
and libraries name it: a pickled tensor subclass is rebuilt by
``torch._tensor._rebuild_from_type_v2``, in PyTorch's checkpoints and in ours. The class itself
lives in :mod:`torch._core.tensor`."""

from __future__ import annotations

from ._core.tensor import Tensor
from ._utils import _rebuild_from_type_v2

# Pickled under this module's name, where PyTorch keeps it.
_rebuild_from_type_v2.__module__ = __name__

__all__ = ["Tensor", "_rebuild_from_type_v2"]
