"""``torch.distributed.fsdp``: the names libraries import; fully sharded data parallelism is
not built yet (docs/distributed.md, "Later"; see :mod:`torch.distributed._not_built`)."""

from __future__ import annotations

from .._not_built import not_built_class, not_built_function

_CLASSES = ("BackwardPrefetch", "CPUOffload", "CPUOffloadPolicy", "FSDPModule",
            "FullOptimStateDictConfig", "FullStateDictConfig", "FullyShardedDataParallel",
            "MixedPrecision", "MixedPrecisionPolicy", "OffloadPolicy", "OptimStateKeyType",
            "ShardedOptimStateDictConfig", "ShardedStateDictConfig", "ShardingStrategy",
            "StateDictType")
__all__ = [*_CLASSES, "fully_shard"]

globals().update({name: not_built_class(name, "FSDP") for name in _CLASSES})
fully_shard = not_built_function("fully_shard", "FSDP (fully_shard)")
