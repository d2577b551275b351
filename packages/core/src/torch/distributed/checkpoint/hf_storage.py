"""``torch.distributed.checkpoint.hf_storage``: not built yet (see the package)."""

from __future__ import annotations

from .._not_built import not_built_class

_CLASSES = ("HuggingFaceStorageReader", "HuggingFaceStorageWriter")
__all__ = [*_CLASSES]

globals().update({name: not_built_class(name, "torch.distributed.checkpoint.hf_storage")
                  for name in _CLASSES})
