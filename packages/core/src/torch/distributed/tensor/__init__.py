"""``torch.distributed.tensor`` (DTensor): the names libraries import when
``torch.distributed.is_available()`` is true, so that their modules load. Sharded tensors are
not built yet (docs/distributed.md, "Later"): no tensor is a :class:`DTensor`, and making one
raises ``NotImplementedError``."""

from __future__ import annotations

from typing import Any, NoReturn

from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "Partial", "Placement", "Replicate", "Shard", "distribute_module",
           "distribute_tensor"]

_NOT_BUILT = ("DTensor is not built in Plait yet: torch.distributed offers process groups, "
              "collectives and DistributedDataParallel")


class DTensor:
    """A tensor sharded over a device mesh: not built yet (no tensor is one)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError(_NOT_BUILT)

    @classmethod
    def from_local(cls, *args: Any, **kwargs: Any) -> NoReturn:
        """Make a DTensor from each rank's local piece: not built yet."""
        raise NotImplementedError(_NOT_BUILT)


def distribute_tensor(*args: Any, **kwargs: Any) -> NoReturn:
    """Shard a tensor over a mesh: not built yet."""
    raise NotImplementedError(_NOT_BUILT)


def distribute_module(*args: Any, **kwargs: Any) -> NoReturn:
    """Shard a module's parameters over a mesh: not built yet."""
    raise NotImplementedError(_NOT_BUILT)
