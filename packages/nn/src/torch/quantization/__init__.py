"""``torch.quantization``: PyTorch's older name of :mod:`torch.ao.quantization`."""

from torch.ao.quantization import *  # noqa: F403
from torch.ao.quantization import __all__  # noqa: F401
