"""``torch.nn.modules.instancenorm``: PyTorch's path for the instance-norm layers (defined in
:mod:`.normalization`), the module name pickles record for them."""

from __future__ import annotations

from .normalization import (
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    _InstanceNorm,
)

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]

for _cls in (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d,
             LazyInstanceNorm2d, LazyInstanceNorm3d, _InstanceNorm):
    _cls.__module__ = __name__
del _cls
