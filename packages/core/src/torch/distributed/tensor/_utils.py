"""DTensor helpers libraries import by name (not built yet: see the package docstring)."""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(*args: Any, **kwargs: Any) -> NoReturn:
    """The local shape and global offset of a DTensor's shard: not built yet."""
    raise NotImplementedError("DTensor is not built in Plait yet")
