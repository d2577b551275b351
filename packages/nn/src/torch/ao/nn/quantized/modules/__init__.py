"""``torch.ao.nn.quantized.modules``: the packed parameters of quantized linear layers."""

from .linear import LinearPackedParams

__all__ = ["LinearPackedParams"]
