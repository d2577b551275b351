"""``torch.distributed.fsdp.fully_sharded_data_parallel``: the module PyTorch defines
``FullyShardedDataParallel`` and its configuration types in, which libraries import from
(accelerate unwraps models with ``isinstance(model, FullyShardedDataParallel)``). The same
not-built names as :mod:`torch.distributed.fsdp`."""

from . import (
    BackwardPrefetch,
    CPUOffload,
    FullOptimStateDictConfig,
    FullStateDictConfig,
    FullyShardedDataParallel,
    MixedPrecision,
    OptimStateKeyType,
    ShardedOptimStateDictConfig,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictType,
)

__all__ = ["BackwardPrefetch", "CPUOffload", "FullOptimStateDictConfig", "FullStateDictConfig",
           "FullyShardedDataParallel", "MixedPrecision", "OptimStateKeyType",
           "ShardedOptimStateDictConfig", "ShardedStateDictConfig", "ShardingStrategy",
           "StateDictType"]
