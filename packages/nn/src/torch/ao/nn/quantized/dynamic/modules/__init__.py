"""The modules of ``torch.ao.nn.quantized.dynamic``."""

from .linear import Linear
from .rnn import GRU, LSTM

__all__ = ["GRU", "LSTM", "Linear"]
