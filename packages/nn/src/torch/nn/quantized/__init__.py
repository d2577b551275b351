"""``torch.nn.quantized``: PyTorch's older name of :mod:`torch.ao.nn.quantized`."""

from torch.ao.nn.quantized import *  # noqa: F403
from torch.ao.nn.quantized import __all__  # noqa: F401
