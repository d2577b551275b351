"""``torch.nn.quantized.dynamic``: PyTorch's older name of :mod:`torch.ao.nn.quantized.dynamic`."""

from torch.ao.nn.quantized.dynamic import *  # noqa: F403
from torch.ao.nn.quantized.dynamic import __all__  # noqa: F401
