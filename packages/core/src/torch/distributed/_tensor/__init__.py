"""``torch.distributed._tensor``: PyTorch's older home of :mod:`torch.distributed.tensor`."""

from ..tensor import (
    DTensor,
    Partial,
    Placement,
    Replicate,
    Shard,
    distribute_module,
    distribute_tensor,
)

__all__ = ["DTensor", "Partial", "Placement", "Replicate", "Shard", "distribute_module",
           "distribute_tensor"]
