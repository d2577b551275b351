"""``torch.jit.annotations``: the type names TorchScript code annotates with.

``BroadcastingList2[int]`` (an int or a list of two ints, as ``kernel_size`` arguments take) is
``list[int]`` to Python's typing; the rest are typing's own names.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: UP035 (TorchScript's names)

__all__ = ["Any", "BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "Dict",
           "List", "Optional", "Tuple", "Union"]


class _BroadcastingList:
    """``BroadcastingListN[T]``: subscripting gives ``List[T]``."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __getitem__(self, item: Any) -> Any:
        return List[item]  # noqa: UP006

    def __repr__(self) -> str:
        return f"BroadcastingList{self.size}"


BroadcastingList1 = _BroadcastingList(1)
BroadcastingList2 = _BroadcastingList(2)
BroadcastingList3 = _BroadcastingList(3)
