"""The fused LSTM and GRU cells (PyTorch's ``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell``
and their backward ops): one step of the recurrence after both matrix products, as single
aten ops so that a backend can run a step's dozen elementwise ops as one kernel.

The composites here are the reference (and the fallback). Their derivative formulas live in
``autograd/_formulas/rnn.py``; the first derivatives call the backward ops below, whose own
formulas are written in differentiable ops, so higher derivatives work too.

Layouts (as PyTorch's): gates are (batch, 4 * hidden) in the order i, f, g, o for the LSTM and
(batch, 3 * hidden) in the order r, z, n for the GRU. The LSTM workspace holds the activated
gates ``[sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)]``; the GRU workspace
``[r, z, n, hx, hn]`` (``hn`` the hidden n gate with its bias, which stays inside ``r * hn``).
"""

from __future__ import annotations

from typing import Any

from .._aten import elementwise as _ew
from .._aten.factories import zeros_like
from .._aten.shape import cat
from .._core import dispatch as _dispatch
from .._core.tensor import Tensor

__all__: list[str] = []
METHODS: dict[str, Any] = {}


def _gates(input_gates: Tensor, hidden_gates: Tensor, input_bias: Tensor | None,
           hidden_bias: Tensor | None) -> Tensor:
    gates = input_gates + hidden_gates
    if input_bias is not None:
        gates = gates + input_bias
    if hidden_bias is not None:
        gates = gates + hidden_bias
    return gates


def _lstm_cell(input_gates: Tensor, hidden_gates: Tensor, cx: Tensor,
               input_bias: Tensor | None = None,
               hidden_bias: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    i, f, g, o = _gates(input_gates, hidden_gates, input_bias, hidden_bias).chunk(4, 1)
    i, f, g, o = _ew.sigmoid(i), _ew.sigmoid(f), _ew.tanh(g), _ew.sigmoid(o)
    cy = f * cx + i * g
    hy = o * _ew.tanh(cy)
    return hy, cy, cat([i, f, g, o], 1)


def _lstm_cell_backward(grad_hy: Tensor | None, grad_cy: Tensor | None, cx: Tensor, cy: Tensor,
                        workspace: Tensor, has_bias: bool
                        ) -> tuple[Tensor, Tensor, Tensor | None]:
    i, f, g, o = workspace.chunk(4, 1)
    tc = _ew.tanh(cy)
    gc = zeros_like(cy) if grad_cy is None else grad_cy  # (B, H): total grad of cy
    if grad_hy is not None:
        gc = gc + grad_hy * o * (1 - tc * tc)
        d_o = grad_hy * tc * o * (1 - o)
    else:
        d_o = zeros_like(o)
    d_i = gc * g * i * (1 - i)
    d_f = gc * cx * f * (1 - f)
    d_g = gc * i * (1 - g * g)
    grad_gates = cat([d_i, d_f, d_g, d_o], 1)  # (B, 4H)
    return grad_gates, gc * f, grad_gates.sum(0) if has_bias else None


def _gru_cell(input_gates: Tensor, hidden_gates: Tensor, hx: Tensor,
              input_bias: Tensor | None = None,
              hidden_bias: Tensor | None = None) -> tuple[Tensor, Tensor]:
    if input_bias is not None:
        input_gates = input_gates + input_bias
    if hidden_bias is not None:
        hidden_gates = hidden_gates + hidden_bias
    i_r, i_z, i_n = input_gates.chunk(3, 1)
    h_r, h_z, h_n = hidden_gates.chunk(3, 1)
    r = _ew.sigmoid(i_r + h_r)
    z = _ew.sigmoid(i_z + h_z)
    n = _ew.tanh(i_n + r * h_n)
    hy = n + z * (hx - n)  # (1 - z) * n + z * hx
    return hy, cat([r, z, n, hx, h_n], 1)


def _gru_cell_backward(grad_hy: Tensor, workspace: Tensor, has_bias: bool
                       ) -> tuple[Tensor, Tensor, Tensor, Tensor | None, Tensor | None]:
    r, z, n, hx, hn = workspace.chunk(5, 1)
    d_n = grad_hy * (1 - z) * (1 - n * n)  # grad of the n gate's pre-activation
    d_z = grad_hy * (hx - n) * z * (1 - z)
    d_r = d_n * hn * r * (1 - r)
    grad_input = cat([d_r, d_z, d_n], 1)  # (B, 3H)
    grad_hidden = cat([d_r, d_z, d_n * r], 1)
    if has_bias:
        return (grad_input, grad_hidden, grad_hy * z, grad_input.sum(0), grad_hidden.sum(0))
    return grad_input, grad_hidden, grad_hy * z, None, None


ATEN = _dispatch.define_aten({
    "_thnn_fused_lstm_cell": (
        "_thnn_fused_lstm_cell(Tensor input_gates, Tensor hidden_gates, Tensor cx, "
        "Tensor? input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor, Tensor)",
        _lstm_cell),
    "_thnn_fused_lstm_cell_backward_impl": (
        "_thnn_fused_lstm_cell_backward_impl(Tensor? grad_hy, Tensor? grad_cy, Tensor cx, "
        "Tensor cy, Tensor workspace, bool has_bias) -> (Tensor, Tensor, Tensor)",
        _lstm_cell_backward),
    "_thnn_fused_gru_cell": (
        "_thnn_fused_gru_cell(Tensor input_gates, Tensor hidden_gates, Tensor hx, "
        "Tensor? input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor)",
        _gru_cell),
    "_thnn_fused_gru_cell_backward": (
        "_thnn_fused_gru_cell_backward(Tensor grad_hy, Tensor workspace, bool has_bias) -> "
        "(Tensor, Tensor, Tensor, Tensor, Tensor)",
        _gru_cell_backward),
})


def _check_cell(name: str, input_gates: Tensor, hidden_gates: Tensor, state: Tensor,
                gates: int) -> None:
    if not all(isinstance(t, Tensor) for t in (input_gates, hidden_gates, state)):
        raise TypeError(f"{name}(): input_gates, hidden_gates and the state must be Tensors")
    if state.ndim != 2 or tuple(input_gates.shape) != (state.shape[0], gates * state.shape[1]) \
            or tuple(hidden_gates.shape) != tuple(input_gates.shape):
        raise RuntimeError(f"{name}(): expected input_gates and hidden_gates of shape "
                           f"(batch, {gates} * hidden) for a state of shape (batch, hidden), got "
                           f"{tuple(input_gates.shape)}, {tuple(hidden_gates.shape)} and "
                           f"{tuple(state.shape)}")


def fused_lstm_cell(input_gates: Tensor, hidden_gates: Tensor, cx: Tensor,
                    input_bias: Tensor | None = None,
                    hidden_bias: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """One LSTM step from its gate pre-activations: ``(hy, cy, workspace)`` (the op
    ``aten::_thnn_fused_lstm_cell``)."""
    _check_cell("_thnn_fused_lstm_cell", input_gates, hidden_gates, cx, 4)
    return ATEN["_thnn_fused_lstm_cell"](input_gates, hidden_gates, cx, input_bias, hidden_bias)


def fused_gru_cell(input_gates: Tensor, hidden_gates: Tensor, hx: Tensor,
                   input_bias: Tensor | None = None,
                   hidden_bias: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """One GRU step from its gate pre-activations: ``(hy, workspace)`` (the op
    ``aten::_thnn_fused_gru_cell``)."""
    _check_cell("_thnn_fused_gru_cell", input_gates, hidden_gates, hx, 3)
    return ATEN["_thnn_fused_gru_cell"](input_gates, hidden_gates, hx, input_bias, hidden_bias)
