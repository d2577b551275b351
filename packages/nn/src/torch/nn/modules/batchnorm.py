"""``torch.nn.modules.batchnorm``: where PyTorch keeps the batch-norm layers. The classes live in
:mod:`.normalization` with the other norms; this module is their PyTorch path, the module name
pickles and ``torch.serialization.add_safe_globals`` lists record for them."""

from __future__ import annotations

from typing import Any

from torch import Tensor

from .module import Module
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    _BatchNorm,
    _LazyNorm as _LazyNormBase,
)

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "SyncBatchNorm"]

# PyTorch splits the running-statistics base from the batch-norm one; here one class is both.
_NormBase = _BatchNorm


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose statistics would be reduced over a process group. Without
    ``torch.distributed`` (not built) there is one process, so it normalises as
    ``BatchNorm`` over the local batch, as PyTorch does outside a process group."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every batch-norm layer inside it replaced by a ``SyncBatchNorm``
        holding the same parameters and running statistics."""
        converted = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group,
                            bias=module.bias is not None)
            if module.affine:
                converted.weight = module.weight  # the same Parameters, not copies
                converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted


for _cls in (BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d,
             LazyBatchNorm3d, _BatchNorm, _LazyNormBase):
    _cls.__module__ = __name__
del _cls
