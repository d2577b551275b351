"""The modules of ``torch.ao.nn.quantized.dynamic``."""

from .linear import Linear
from .rnn import GRU, LSTM, GRUCell, LSTMCell, RNNCell

__all__ = ["GRU", "LSTM", "GRUCell", "LSTMCell", "Linear", "RNNCell"]
