"""``torch.ao.nn.quantized.dynamic``: layers whose weights are quantized ahead of time and
whose inputs are quantized at each call (what ``torch.ao.quantization.quantize_dynamic``
puts in place of ``nn.Linear``, ``nn.LSTM`` and ``nn.GRU``)."""

from .modules import GRU, LSTM, GRUCell, Linear, LSTMCell, RNNCell

__all__ = ["GRU", "LSTM", "GRUCell", "LSTMCell", "Linear", "RNNCell"]
