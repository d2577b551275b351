"""The modules of ``torch.ao.nn.quantized.dynamic``."""

from .linear import Linear

__all__ = ["Linear"]
