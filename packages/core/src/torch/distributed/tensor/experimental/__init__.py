"""``torch.distributed.tensor.experimental``: the names libraries import from it at load time
(opacus imports ``implicit_replication``). DTensor is not built yet, so no operation mixes a
DTensor with a plain tensor and ``implicit_replication`` has nothing to change."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, NoReturn

from .. import _NOT_BUILT

__all__ = ["implicit_replication", "local_map", "register_sharding"]


@contextlib.contextmanager
def implicit_replication() -> Iterator[None]:
    """Within the block, plain tensors would count as replicated DTensors; without DTensors
    (not built yet) the block runs as it is."""
    yield


def local_map(*args: Any, **kwargs: Any) -> NoReturn:
    """Run a function on DTensors' local pieces: not built yet."""
    raise NotImplementedError(_NOT_BUILT)


def register_sharding(*args: Any, **kwargs: Any) -> NoReturn:
    """Register an op's sharding strategy: not built yet."""
    raise NotImplementedError(_NOT_BUILT)
