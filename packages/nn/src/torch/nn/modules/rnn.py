"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their single-step cells.

The layers are composites over core ops; an LSTM or GRU step is one matmul and one fused cell
op (``aten::_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell``, with derivative formulas). Each
layer and direction projects the whole input sequence at once (one matmul for ``W_ih x +
b_ih`` over every time step), then runs the recurrence. A padded float32 / float64 LSTM without
projection, and a padded float32 / float64 GRU, run it as one op per layer and direction
(``aten::_lstm_sequence`` / ``aten::_gru_sequence``, whose backend kernels loop natively; their
composites are this module's step loop, op for op). Everything else runs the recurrence step by
step in Python. Padded and packed inputs share that loop: a padded
batch is a packed one whose every step has the full batch size.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor
from torch._functorch.batched import is_batched as _is_batched
from torch._fused import rnn_cells as _rnn_cells, rnn_sequence as _rnn_sequence
from torch.nn import functional as F, init
from torch.nn.parameter import Parameter
from torch.nn.utils.rnn import PackedSequence

from .module import Module

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# --------------------------------------------------------------------------- step functions
# Each takes the precomputed input projection ``gi`` = W_ih x + b_ih of one step and the state,
# and returns the new state (a tensor, or the pair (h, c) for the LSTM).


# the aten ops themselves (a torch.ops.aten lookup costs microseconds, once per step)
_LSTM_CELL = _rnn_cells.ATEN["_thnn_fused_lstm_cell"]
_GRU_CELL = _rnn_cells.ATEN["_thnn_fused_gru_cell"]
_LSTM_SEQUENCE = _rnn_sequence.ATEN["_lstm_sequence"]
_GRU_SEQUENCE = _rnn_sequence.ATEN["_gru_sequence"]
# the dtypes whose whole-sequence op has a native loop (the others gain nothing over the steps)
_SEQUENCE_DTYPES = (torch.float32, torch.float64)


def _rnn_step(act: Callable[[Tensor], Tensor]) -> Callable[..., Any]:
    def step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None,
             w_hr: Tensor | None) -> Tensor:
        return act(gi + F.linear(h, w_hh, b_hh))
    return step


def _lstm_step(gi: Tensor, state: tuple[Tensor, Tensor], w_hh: Tensor, b_hh: Tensor | None,
               w_hr: Tensor | None) -> tuple[Tensor, Tensor]:
    h, c = state
    # one fused op for the dozen elementwise ops of a step (sigmoid(f) * c + sigmoid(i) *
    # tanh(g), sigmoid(o) * tanh(c)); b_hh is already in the hidden gates
    h, c, _workspace = _LSTM_CELL(gi, F.linear(h, w_hh, b_hh), c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None,
              w_hr: Tensor | None) -> Tensor:
    # one fused op: r, z = sigmoid(i_r + h_r), sigmoid(i_z + h_z); n = tanh(i_n + r * h_n)
    # with b_hn inside r * (...) (it is in the hidden gates); n + z * (h - n)
    h, _workspace = _GRU_CELL(gi, F.linear(h, w_hh, b_hh), h)
    return h


def _under_vmap(*tensors: Any) -> bool:
    """Whether any operand is a vmap-batched tensor: vmap has rules for the per-step ops (a
    cell folds the vmap dimension into its batch) and none for the whole-sequence op."""
    return any(_is_batched(t) for t in tensors)


def _relu(x: Tensor) -> Tensor:
    return F.relu(x)


_STEPS: dict[str, Callable[..., Any]] = {
    "RNN_TANH": _rnn_step(torch.tanh), "RNN_RELU": _rnn_step(_relu), "LSTM": _lstm_step,
    "GRU": _gru_step,
}


class _SplitRows(torch.autograd.Function):
    """``x.split(sizes)`` as copies whose backward is one ``cat`` of their gradients. Autograd
    of T views of one tensor would build T gradients of the whole tensor (quadratic in the
    sequence length); this keeps the backward of the time loop linear."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, sizes: list[int]) -> tuple[Tensor, ...]:
        ctx.shapes = [(n, *x.shape[1:]) for n in sizes]
        ctx.dtype, ctx.device = x.dtype, x.device
        return tuple(part.clone() for part in x.split(sizes, 0))

    @staticmethod
    def backward(ctx: Any, *grads: Tensor | None) -> tuple[Tensor, None]:
        parts = [g if g is not None else torch.zeros(shape, dtype=ctx.dtype, device=ctx.device)
                 for g, shape in zip(grads, ctx.shapes, strict=True)]
        return torch.cat(parts, 0), None


def _split_rows(x: Tensor, sizes: list[int]) -> list[Tensor]:
    """The row blocks of ``x`` (N, G) of the given sizes."""
    if not sizes:
        return []
    if x.requires_grad and torch.is_grad_enabled():
        return list(_SplitRows.apply(x, sizes))
    return list(x.split(sizes, 0))


def _map_state(fn: Callable[[Tensor], Tensor], state: Any) -> Any:
    return tuple(fn(s) for s in state) if isinstance(state, tuple) else fn(state)


def _cat_state(parts: list[Any]) -> Any:
    if isinstance(parts[0], tuple):
        return tuple(torch.cat([p[k] for p in parts], 0) for k in range(len(parts[0])))
    return torch.cat(parts, 0)


def _run_direction(step: Callable[..., Any], gis: list[Tensor], sizes: list[int], state0: Any,
                   weights: tuple[Tensor, Tensor | None, Tensor | None],
                   reverse: bool) -> tuple[list[Tensor], Any]:
    """Runs one layer in one direction over steps whose batch sizes ``sizes`` do not increase;
    returns the per-step outputs (in time order) and the final state of every sequence."""
    n = len(gis)
    outs: list[Tensor] = [gis[0]] * n
    if not reverse:
        state, finished = state0, []
        for t in range(n):
            bs = sizes[t]
            rows = (state[0] if isinstance(state, tuple) else state).shape[0]
            if bs < rows:  # the shortest sequences ended: keep their final state
                finished.append(_map_state(lambda s, bs=bs: s[bs:], state))
                state = _map_state(lambda s, bs=bs: s[:bs], state)
            state = step(gis[t], state, *weights)
            outs[t] = state[0] if isinstance(state, tuple) else state
        finished.append(state)
        return outs, _cat_state(finished[::-1]) if len(finished) > 1 else state
    state = _map_state(lambda s: s[:sizes[n - 1]], state0) if n else state0
    for t in range(n - 1, -1, -1):
        bs = sizes[t]
        rows = (state[0] if isinstance(state, tuple) else state).shape[0]
        if bs > rows:  # longer sequences start here, from their initial state
            state = _cat_state([state, _map_state(lambda s, a=rows, b=bs: s[a:b], state0)])
        state = step(gis[t], state, *weights)
        outs[t] = state[0] if isinstance(state, tuple) else state
    return outs, state


# --------------------------------------------------------------------------- layers


class RNNBase(Module):
    """The multi-layer (optionally bidirectional) recurrent layer shared by ``RNN``, ``LSTM``
    and ``GRU``: parameters ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``,
    ``bias_hh_l{k}`` (and ``weight_hr_l{k}`` for a projected LSTM), ``_reverse`` suffixed for the
    backward direction, all from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", UserWarning,
                          stacklevel=2)
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        factory = {"device": device, "dtype": dtype}
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * num_directions
            for direction in range(num_directions):
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(torch.empty(shape, **factory)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Tensor | None]:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op: the weights are never kept in one flat (cuDNN) buffer here."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- shape checks ---------------------------------------------------------------------

    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input: Tensor,
                                 batch_sizes: Tensor | None) -> tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, ...],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    # -- the recurrence -------------------------------------------------------------------

    def _run(self, x: Tensor, sizes: list[int] | None, hx: Any) -> tuple[Tensor, Any]:
        """``x`` is (T, B, I) (``sizes`` None) or packed data (N, I) with per-step batch sizes
        ``sizes``; ``hx`` is (L*D, B, H) (a pair for the LSTM), in packed order. Returns the
        output in the same layout as ``x`` and the final state."""
        step = _STEPS[self.mode]
        num_directions = 2 if self.bidirectional else 1
        lstm = isinstance(hx, tuple)
        batch = x.shape[1] if sizes is None else (sizes[0] if sizes else 0)
        step_sizes = [batch] * x.shape[0] if sizes is None else sizes
        finals: list[Any] = []
        layer_input = x
        whole_sequence = (self.mode in ("LSTM", "GRU") and sizes is None and not self.proj_size
                          and x.shape[0] > 0 and x.dtype in _SEQUENCE_DTYPES
                          and not _under_vmap(x, *(hx if lstm else (hx,)),
                                              *self._flat_weights))
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                names = self._all_weights[layer * num_directions + direction]
                params = dict(zip([n.rsplit("_l", 1)[0] for n in names],
                                  [getattr(self, n) for n in names], strict=True))
                gi = F.linear(layer_input, params["weight_ih"], params.get("bias_ih"))
                idx = layer * num_directions + direction
                if whole_sequence and lstm:  # (T, B, 4H) gates -> one op for the recurrence
                    out, hy, cy, _gates, _cells = _LSTM_SEQUENCE(
                        gi, hx[0][idx], hx[1][idx], params["weight_hh"], params.get("bias_hh"),
                        direction == 1)
                    outputs.append(out)
                    finals.append((hy, cy))
                    continue
                if whole_sequence:  # a GRU's (T, B, 3H) gates
                    out, hy, _workspace = _GRU_SEQUENCE(
                        gi, hx[idx], params["weight_hh"], params.get("bias_hh"), direction == 1)
                    outputs.append(out)
                    finals.append(hy)
                    continue
                gis = _split_rows(gi.reshape(-1, gi.shape[-1]), step_sizes)
                state0 = (hx[0][idx], hx[1][idx]) if lstm else hx[idx]
                outs, final = _run_direction(
                    step, gis, step_sizes, state0,
                    (params["weight_hh"], params.get("bias_hh"), params.get("weight_hr")),
                    reverse=direction == 1)
                if not outs:  # zero time steps
                    out = gi.new_zeros((*gi.shape[:-1], state0[0].shape[-1] if lstm
                                        else state0.shape[-1]))
                else:
                    out = torch.stack(outs, 0) if sizes is None else torch.cat(outs, 0)
                outputs.append(out)
                finals.append(final)
            layer_input = outputs[0] if num_directions == 1 else torch.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        if lstm:
            state = (torch.stack([f[0] for f in finals], 0), torch.stack([f[1] for f in finals], 0))
        else:
            state = torch.stack(finals, 0)
        return layer_input, state

    def _forward_impl(self, input: Any, hx: Any) -> tuple[Any, Any]:
        lstm = self.mode == "LSTM"
        name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            sizes = [int(v) for v in batch_sizes.tolist()]
            batch = sizes[0] if sizes else 0
            unbatched = False
            x = data
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            sizes = None
            if input.dim() not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                                 "tensor instead")
            unbatched = input.dim() == 2
            x = input.unsqueeze(1) if unbatched else input
            if self.batch_first and not unbatched:
                x = x.transpose(0, 1)
            batch = x.shape[1]
        if hx is None:
            zeros = (self.num_layers * num_directions, batch)
            h0 = torch.zeros((*zeros, real_hidden), dtype=x.dtype, device=x.device)
            hx = (h0, torch.zeros((*zeros, self.hidden_size), dtype=x.dtype,
                                  device=x.device)) if lstm else h0
        else:
            if lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise RuntimeError("LSTM: Expected hx to be a tuple of (h_0, c_0)")
                hx = tuple(hx)
                if unbatched:
                    if hx[0].dim() != 2 or hx[1].dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be "
                                           f"2-D but got ({hx[0].dim()}-D, {hx[1].dim()}-D) "
                                           "tensors")
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
                elif not packed and (hx[0].dim() != 3 or hx[1].dim() != 3):
                    raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D "
                                       f"but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            else:
                if unbatched:
                    if hx.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but "
                                           f"got {hx.dim()}-D tensor")
                    hx = hx.unsqueeze(1)
                elif not packed and hx.dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                       f"{hx.dim()}-D tensor")
            if sorted_indices is not None:  # the caller's order -> the packed order
                hx = _map_state(lambda s: s.index_select(1, sorted_indices), hx)
        self.check_input(x, batch_sizes)
        expected = (self.num_layers * num_directions, batch, real_hidden)
        if lstm:
            self.check_hidden_size(hx[0], expected, "Expected hidden[0] size {}, got {}")
            self.check_hidden_size(hx[1], (*expected[:2], self.hidden_size),
                                   "Expected hidden[1] size {}, got {}")
        else:
            self.check_hidden_size(hx, expected)
        out, state = self._run(x, sizes, hx)
        if packed:
            if unsorted_indices is not None:
                state = _map_state(lambda s: s.index_select(1, unsorted_indices), state)
            return PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices), state
        if unbatched:
            return out.squeeze(1), _map_state(lambda s: s.squeeze(1), state)
        if self.batch_first:
            out = out.transpose(0, 1)
        return out, state

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        # (PyTorch's LSTM skips this check for packed input: its matmul raises instead)
        packed = isinstance(input, PackedSequence)
        data = None if packed and self.mode == "LSTM" else input.data if packed else input
        weight = getattr(self, "weight_ih_l0", None)
        if (isinstance(data, Tensor) and isinstance(weight, Tensor) and data.is_floating_point()
                and data.dtype != weight.dtype):
            raise ValueError(f"RNN input dtype ({data.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({data.dtype})")
        return self._forward_impl(input, hx)


class RNN(RNNBase):
    """Elman RNN: ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` with ``act`` tanh or
    relu (``nonlinearity``). Arguments as ``RNN(input_size, hidden_size, num_layers=1,
    nonlinearity='tanh', bias=True, batch_first=False, dropout=0.0, bidirectional=False)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory with gates in PyTorch's order (i, f, g, o):
    ``c_t = f * c_{t-1} + i * g``, ``h_t = o * tanh(c_t)`` (then ``W_hr h_t`` when
    ``proj_size > 0``). ``forward(input, (h_0, c_0))`` returns ``output, (h_n, c_n)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor,
                               batch_sizes: Tensor | None) -> tuple[int, int, int]:
        size = self.get_expected_hidden_size(input, batch_sizes)
        return (size[0], size[1], self.hidden_size)


class GRU(RNNBase):
    """Gated recurrent unit with gates (r, z, n):
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# --------------------------------------------------------------------------- cells


class RNNCellBase(Module):
    """One time step of a recurrent layer: ``weight_ih`` (G*hidden, input), ``weight_hh``
    (G*hidden, hidden), ``bias_ih``/``bias_hh`` (G*hidden), all from U(-1/sqrt(hidden),
    1/sqrt(hidden))."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        factory = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(torch.empty((num_chunks * hidden_size, input_size),
                                               **factory))
        self.weight_hh = Parameter(torch.empty((num_chunks * hidden_size, hidden_size),
                                               **factory))
        if bias:
            self.bias_ih = Parameter(torch.empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(torch.empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input: Tensor, hx: Any, name: str) -> tuple[Tensor, bool]:
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        for h in (hx if isinstance(hx, tuple) else (hx,)):
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {h.dim()}D "
                                 "instead")
        if input.size(-1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(-1)} "
                               f"expected {self.input_size}")
        batched = input.dim() == 2
        return (input if batched else input.unsqueeze(0)), batched

    def _state(self, hx: Tensor | None, x: Tensor, batched: bool) -> Tensor:
        if hx is None:
            return torch.zeros((x.shape[0], self.hidden_size), dtype=x.dtype, device=x.device)
        h = hx if batched else hx.unsqueeze(0)
        if h.shape[-1] != self.hidden_size:
            raise RuntimeError(f"hidden0 has inconsistent hidden_size: got {h.shape[-1]}, "
                               f"expected {self.hidden_size}")
        if h.shape[0] != x.shape[0]:
            raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden0 batch "
                               f"size {h.shape[0]}")
        return h


class RNNCell(RNNCellBase):
    """``h' = act(W_ih x + b_ih + W_hh h + b_hh)`` with ``act`` tanh or relu."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        x, batched = self._prepare(input, hx, "RNNCell")
        h = self._state(hx, x, batched)
        step = _STEPS["RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"]
        out = step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                   None)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step (gates i, f, g, o); ``forward(input, (h, c))`` returns ``(h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor,
                hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        x, batched = self._prepare(input, tuple(hx) if hx is not None else None, "LSTMCell")
        if hx is None:
            h = c = self._state(None, x, batched)
        else:
            h, c = self._state(hx[0], x, batched), self._state(hx[1], x, batched)
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), (h, c), self.weight_hh,
                          self.bias_hh, None)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n; ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, batched = self._prepare(input, hx, "GRUCell")
        h = self._state(hx, x, batched)
        out = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                        self.bias_hh, None)
        return out if batched else out.squeeze(0)
