"""``torch.distributed.optim``: optimizers for data-parallel training across ranks
(``ZeroRedundancyOptimizer``). Part of plait-nn: the optimizers are torch.optim's, so this
subpackage joins core's ``torch.distributed`` through its ``__path__``."""

from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
