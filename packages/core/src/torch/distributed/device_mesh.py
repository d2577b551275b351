"""``torch.distributed.device_mesh``: the names libraries import. A mesh (ranks in a grid, a
process group per dimension) is not built yet (docs/distributed.md, "Later"); making one
raises ``NotImplementedError``."""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["DeviceMesh", "init_device_mesh"]

_NOT_BUILT = ("DeviceMesh is not built in Plait yet: use torch.distributed.new_group for "
              "process groups over some ranks")


class DeviceMesh:
    """Ranks arranged in a grid: not built yet."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(_NOT_BUILT)


def init_device_mesh(*args: Any, **kwargs: Any) -> NoReturn:
    """Make a DeviceMesh: not built yet."""
    raise NotImplementedError(_NOT_BUILT)
