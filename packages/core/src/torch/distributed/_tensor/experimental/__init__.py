"""``torch.distributed._tensor.experimental``: PyTorch's older home of
:mod:`torch.distributed.tensor.experimental`."""

from ...tensor.experimental import implicit_replication, local_map, register_sharding

__all__ = ["implicit_replication", "local_map", "register_sharding"]
