"""``torch.storage``: where PyTorch keeps its storage classes, and the module name checkpoints
use for them (``torch.storage.UntypedStorage`` is the storage type of a tensor saved with
``torch._utils._rebuild_tensor_v3``, e.g. a ``uint16`` one)."""

from __future__ import annotations

from ._core.storage import UntypedStorage
from ._utils import TypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]
