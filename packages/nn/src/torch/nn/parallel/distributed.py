"""``DistributedDataParallel``: needs a ``torch.distributed`` process group, which Plait does
not build yet."""

from __future__ import annotations

from typing import Any

from torch.nn.modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Gradient averaging over processes; constructing one raises until
    ``torch.distributed`` is available."""

    def __init__(self, module: Module, *args: Any, **kwargs: Any) -> None:
        import torch.distributed as dist

        super().__init__()
        if not dist.is_available():
            raise RuntimeError("DistributedDataParallel needs torch.distributed, which is not "
                               "available in Plait yet (torch.distributed.is_available() is "
                               "False)")
        self.module = module

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
