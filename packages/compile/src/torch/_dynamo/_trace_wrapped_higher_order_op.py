"""``TransformGetItemToIndex``: tensor indexing by 0-d tensors as an index op, not a view.

Mask and score functions written for ``torch.vmap`` index tensors with 0-d index tensors
(``bias[q_idx]``). Under this mode such a ``Tensor.__getitem__`` whose indices are all tensors
or ints becomes advanced indexing with tensor indices, which needs no ``.item()`` (a Python
number cannot be taken out of a batched value). transformers enters it around its vmap'd mask
creation.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.overrides import TorchFunctionMode

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex(TorchFunctionMode):
    """Inside this mode, ``t[i, j]`` with tensor or int indices indexes with tensors."""

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        if func is torch.Tensor.__getitem__:
            tensor, index = args[0], args[1]
            parts = index if isinstance(index, tuple) else (index,)
            if all(isinstance(p, (torch.Tensor, int)) and not isinstance(p, bool) for p in parts):
                as_tensors = tuple(
                    p if isinstance(p, torch.Tensor)
                    else torch.tensor(p, dtype=torch.int64, device=tensor.device)
                    for p in parts)
                return func(tensor, as_tensors)
        return func(*args, **(kwargs or {}))
