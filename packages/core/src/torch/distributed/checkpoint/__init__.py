"""``torch.distributed.checkpoint``: the names libraries import; sharded checkpoints are not
built yet (rank 0 ``torch.save`` / every rank ``torch.load`` works: docs/distributed.md)."""

from __future__ import annotations

from .._not_built import not_built_class, not_built_function

_CLASSES = ("FileSystemReader", "FileSystemWriter", "StorageReader", "StorageWriter")
_FUNCTIONS = ("load", "load_state_dict", "save", "save_state_dict", "async_save")
__all__ = [*_CLASSES, *_FUNCTIONS]

_WHAT = "torch.distributed.checkpoint (sharded checkpoints)"
globals().update({name: not_built_class(name, _WHAT) for name in _CLASSES})
globals().update({name: not_built_function(name, _WHAT) for name in _FUNCTIONS})
