"""``torch.ao.nn.quantized.dynamic.LSTM`` and ``GRU``: recurrent layers whose weights are
quantized (qint8) or stored in float16, computing as PyTorch's CPU kernels do: each layer
applies its input-hidden weights to the whole sequence at once (one set of activation
parameters for the sequence), its hidden-hidden weights at each step, each through the
dynamic linear kernel with its bias fused in; the gate arithmetic is float32."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor
from torch.nn import Module, ModuleList

from ..._kernels import linear_dynamic, linear_dynamic_fp16, quantize_weight
from .. import _engine

__all__ = ["GRU", "LSTM", "GRUCell", "LSTMCell", "PackedParameter", "RNNCell"]

# one layer direction's parameters: (weight_ih, weight_hh, bias_ih, bias_hh); the weights are
# quantized tensors (qint8) or float16 tensors
CellParams = tuple[Tensor, Tensor, "Tensor | None", "Tensor | None"]


class PackedParameter(Module):
    """Holds one layer direction's weights and biases (saved as ``param``)."""

    def __init__(self, param: CellParams) -> None:
        super().__init__()
        self.param = param

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "param"] = self.param

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str,
                              local_metadata: dict[str, Any], strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        if prefix + "param" in state_dict:
            self.param = tuple(state_dict.pop(prefix + "param"))  # type: ignore[attr-defined]
        elif strict:
            missing_keys.append(prefix + "param")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)


def _lstm_cell(gi: Tensor, gh: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, ...]:
    ingate, forgetgate, cellgate, outgate = (gi + gh).chunk(4, 1)
    cy = torch.sigmoid(forgetgate) * state[1] + torch.sigmoid(ingate) * torch.tanh(cellgate)
    return torch.sigmoid(outgate) * torch.tanh(cy), cy


def _gru_cell(gi: Tensor, gh: Tensor, state: tuple[Tensor]) -> tuple[Tensor, ...]:
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    resetgate = torch.sigmoid(i_r + h_r)
    inputgate = torch.sigmoid(i_z + h_z)
    newgate = torch.tanh(i_n + resetgate * h_n)
    return (newgate + inputgate * (state[0] - newgate),)


class _DynamicRNNBase(Module):
    """What LSTM and GRU share: the hyperparameters, the packed weights by layer and
    direction, the loop over layers, directions and steps."""

    _version = 2
    _GATES: int
    _CELL: Callable[..., tuple[Tensor, ...]]
    _STATES: int  # hidden tensors carried (h, c for LSTM; h for GRU)

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, dtype: torch.dtype = torch.qint8) -> None:
        super().__init__()
        if dtype not in (torch.qint8, torch.float16):
            raise RuntimeError(f"Unsupported dtype for dynamic RNN quantization: {dtype}")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.dtype = dtype
        self.training = False
        directions = 2 if bidirectional else 1
        cells = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * directions
            for _ in range(directions):
                weights = [torch.zeros(self._GATES * hidden_size, width)
                           for width in (layer_input, hidden_size)]
                biases = [torch.zeros(self._GATES * hidden_size) if bias else None
                          for _ in range(2)]
                cells.append(PackedParameter(self._pack(weights, biases)))
        self._all_weight_values = ModuleList(cells)

    def _pack(self, weights: list[Tensor], biases: list[Tensor | None]) -> CellParams:
        if self.dtype is torch.float16:
            packed = [w.detach().to(torch.float16) for w in weights]
        else:
            packed = [w if w.is_quantized else torch.quantize_per_tensor(
                w.detach().float(), 1.0, 0, torch.qint8) for w in weights]
        return (packed[0], packed[1], biases[0], biases[1])

    def _get_name(self) -> str:
        return "DynamicQuantized" + type(self).__name__

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            text += f", bidirectional={self.bidirectional}"
        return text

    def __repr__(self) -> str:
        # one line, as PyTorch's: the packed weights are not shown as children
        return f"{self._get_name()}({self.extra_repr()})"

    def _linear(self, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.dtype is torch.float16:
            return linear_dynamic_fp16(x, weight, bias)
        return linear_dynamic(x, weight, bias, _engine.reduce_range())

    def _run_direction(self, x: Tensor, params: CellParams, state: tuple[Tensor, ...],
                       reverse: bool) -> tuple[Tensor, tuple[Tensor, ...]]:
        steps, batch = x.shape[0], x.shape[1]
        weight_ih, weight_hh, bias_ih, bias_hh = params
        gi_all = self._linear(x.reshape(steps * batch, -1), weight_ih, bias_ih)
        gi_all = gi_all.reshape(steps, batch, -1)
        outputs: list[Tensor] = [x] * steps  # (placeholders, each replaced)
        order = range(steps - 1, -1, -1) if reverse else range(steps)
        for t in order:
            gh = self._linear(state[0], weight_hh, bias_hh)
            state = type(self)._CELL(gi_all[t], gh, state)
            outputs[t] = state[0]
        return torch.stack(outputs) if steps else x.new_zeros(0, batch, self.hidden_size), \
            state

    def _forward(self, x: Tensor, hx: tuple[Tensor, ...] | None) -> tuple[Tensor, Any]:
        if not isinstance(x, Tensor):
            raise NotImplementedError("packed sequences are not supported by Plait's dynamic "
                                      "quantized recurrent layers")
        unbatched = x.dim() == 2
        if unbatched:
            x = x.unsqueeze(1)
            if hx is not None:
                hx = tuple(h.unsqueeze(1) for h in hx)
        if self.batch_first:
            x = x.transpose(0, 1)
        directions = 2 if self.bidirectional else 1
        batch = x.shape[1]
        if hx is None:
            zeros = torch.zeros(self.num_layers * directions, batch, self.hidden_size)
            hx = (zeros,) * self._STATES
        with torch.no_grad():
            layer_input = x.detach().float()
            finals: list[list[Tensor]] = [[] for _ in range(self._STATES)]
            for layer in range(self.num_layers):
                outputs = []
                for direction in range(directions):
                    index = layer * directions + direction
                    state = tuple(h[index] for h in hx)
                    out, state = self._run_direction(
                        layer_input, self._all_weight_values[index].param, state,
                        reverse=direction == 1)
                    outputs.append(out)
                    for kept, value in zip(finals, state, strict=True):
                        kept.append(value)
                layer_input = outputs[0] if directions == 1 else torch.cat(outputs, dim=2)
        output = layer_input.transpose(0, 1) if self.batch_first else layer_input
        hidden = tuple(torch.stack(kept) for kept in finals)
        if unbatched:
            output = output.squeeze(1)
            hidden = tuple(h.squeeze(1) for h in hidden)
        return output, hidden

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> Any:
        """The dynamic quantized counterpart of a float ``nn.LSTM``/``nn.GRU`` carrying a
        ``qconfig``: each weight quantized with a fresh weight observer (or kept in float16)."""
        float_type = getattr(torch.nn, cls.__name__)
        if type(mod) is not float_type:
            raise AssertionError(f"nn.quantized.dynamic.{cls.__name__}.from_float only works "
                                 f"for nn.{cls.__name__}")
        qconfig = getattr(mod, "qconfig", None)
        if qconfig is None:
            raise AssertionError("Input float module must have qconfig defined")
        if getattr(mod, "proj_size", 0):
            raise RuntimeError("dynamic quantized LSTM with proj_size is not supported")
        dtype = qconfig.weight().dtype
        out = cls(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias, mod.batch_first,
                  mod.dropout, mod.bidirectional, dtype)
        suffixes = ("", "_reverse") if mod.bidirectional else ("",)
        cells = []
        for layer in range(mod.num_layers):
            for suffix in suffixes:
                names = [f"{kind}_{part}_l{layer}{suffix}" for kind in ("weight", "bias")
                         for part in ("ih", "hh")]
                w_ih, w_hh, b_ih, b_hh = (getattr(mod, name, None) for name in names)
                weights = [w if dtype is torch.float16 else quantize_weight(w, qconfig.weight())
                           for w in (w_ih, w_hh)]
                biases = [None if b is None else b.detach().float() for b in (b_ih, b_hh)]
                cells.append(PackedParameter(out._pack(weights, biases)))
        out._all_weight_values = ModuleList(cells)
        return out


class LSTM(_DynamicRNNBase):
    """A dynamically quantized ``nn.LSTM`` (PyTorch's ``DynamicQuantizedLSTM``)."""

    _GATES = 4
    _CELL = staticmethod(_lstm_cell)
    _STATES = 2

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> Any:
        output, (h, c) = self._forward(input, hx)
        return output, (h, c)


class GRU(_DynamicRNNBase):
    """A dynamically quantized ``nn.GRU`` (PyTorch's ``DynamicQuantizedGRU``)."""

    _GATES = 3
    _CELL = staticmethod(_gru_cell)
    _STATES = 1

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Any:
        output, (h,) = self._forward(input, None if hx is None else (hx,))
        return output, h


def _rnn_tanh_cell(gi: Tensor, gh: Tensor, state: tuple[Tensor]) -> tuple[Tensor, ...]:
    return (torch.tanh(gi + gh),)


def _rnn_relu_cell(gi: Tensor, gh: Tensor, state: tuple[Tensor]) -> tuple[Tensor, ...]:
    return (torch.relu(gi + gh),)


class _DynamicCellBase(Module):
    """What the dynamic quantized cells share: one step, both linears through the dynamic
    kernel with their biases fused in (as PyTorch's quantized cells)."""

    _GATES: int
    _STATES: int

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 dtype: torch.dtype = torch.qint8) -> None:
        super().__init__()
        if dtype not in (torch.qint8, torch.float16):
            raise RuntimeError(f"Unsupported dtype for dynamic RNN quantization: {dtype}")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_dtype = dtype
        rows = self._GATES * hidden_size
        self.bias_ih = torch.zeros(rows) if bias else None
        self.bias_hh = torch.zeros(rows) if bias else None
        self._packed_weight_ih = (self._pack(torch.zeros(rows, input_size)), self.bias_ih)
        self._packed_weight_hh = (self._pack(torch.zeros(rows, hidden_size)), self.bias_hh)

    def _pack(self, weight: Tensor) -> Tensor:
        if self.weight_dtype is torch.float16:
            return weight.detach().to(torch.float16)
        if weight.is_quantized:
            return weight
        return torch.quantize_per_tensor(weight.detach().float(), 1.0, 0, torch.qint8)

    def _get_name(self) -> str:
        return "DynamicQuantized" + type(self).__name__

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "_packed_weight_ih"] = self._packed_weight_ih
        destination[prefix + "_packed_weight_hh"] = self._packed_weight_hh

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str,
                              local_metadata: dict[str, Any], strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        for name in ("_packed_weight_ih", "_packed_weight_hh"):
            if prefix + name in state_dict:
                weight, bias = state_dict.pop(prefix + name)  # type: ignore[attr-defined]
                setattr(self, name, (self._pack(weight), bias))
                setattr(self, "bias" + name[-3:], bias)
            elif strict:
                missing_keys.append(prefix + name)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def _linear(self, x: Tensor, packed: tuple[Tensor, Tensor | None]) -> Tensor:
        if self.weight_dtype is torch.float16:
            return linear_dynamic_fp16(x, *packed)
        return linear_dynamic(x, packed[0], packed[1], _engine.reduce_range())

    def _step(self, cell: Callable[..., tuple[Tensor, ...]], x: Tensor,
              state: tuple[Tensor, ...] | None) -> tuple[Tensor, ...]:
        unbatched = x.dim() == 1
        if unbatched:
            x = x.unsqueeze(0)
            state = None if state is None else tuple(s.unsqueeze(0) for s in state)
        if state is None:
            state = (torch.zeros(x.shape[0], self.hidden_size),) * self._STATES
        with torch.no_grad():
            out = cell(self._linear(x, self._packed_weight_ih),
                       self._linear(state[0], self._packed_weight_hh), state)
        return tuple(s.squeeze(0) for s in out) if unbatched else out

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> Any:
        """The dynamic quantized counterpart of a float cell carrying a ``qconfig``."""
        float_type = getattr(torch.nn, cls.__name__)
        if type(mod) is not float_type:
            raise AssertionError(f"nn.quantized.dynamic.{cls.__name__}.from_float only works "
                                 f"for nn.{cls.__name__}")
        qconfig = getattr(mod, "qconfig", None)
        if qconfig is None:
            raise AssertionError("Input float module must have qconfig defined")
        dtype = qconfig.weight().dtype
        extra = {"nonlinearity": mod.nonlinearity} if cls is RNNCell else {}
        out = cls(mod.input_size, mod.hidden_size, mod.bias, dtype=dtype, **extra)
        packed = []
        for part in ("ih", "hh"):
            weight = getattr(mod, f"weight_{part}")
            bias = getattr(mod, f"bias_{part}", None)
            bias = None if bias is None else bias.detach().float()
            weight = (weight.detach().float() if dtype is torch.float16
                      else quantize_weight(weight, qconfig.weight()))
            packed.append((out._pack(weight), bias))
        out._packed_weight_ih, out._packed_weight_hh = packed
        out.bias_ih, out.bias_hh = packed[0][1], packed[1][1]
        return out


class LSTMCell(_DynamicCellBase):
    """A dynamically quantized ``nn.LSTMCell`` (PyTorch's ``DynamicQuantizedLSTMCell``)."""

    _GATES = 4
    _STATES = 2

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, Tensor]:
        h, c = self._step(_lstm_cell, input, hx)
        return h, c


class GRUCell(_DynamicCellBase):
    """A dynamically quantized ``nn.GRUCell`` (PyTorch's ``DynamicQuantizedGRUCell``)."""

    _GATES = 3
    _STATES = 1

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step(_gru_cell, input, None if hx is None else (hx,))[0]


class RNNCell(_DynamicCellBase):
    """A dynamically quantized ``nn.RNNCell`` (PyTorch's ``DynamicQuantizedRNNCell``)."""

    _GATES = 1
    _STATES = 1
    _CELLS: dict[str, Callable[..., tuple[Tensor, ...]]] = {"tanh": _rnn_tanh_cell,
                                                            "relu": _rnn_relu_cell}

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", dtype: torch.dtype = torch.qint8) -> None:
        if nonlinearity not in self._CELLS:
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step(self._CELLS[self.nonlinearity], input,
                          None if hx is None else (hx,))[0]
