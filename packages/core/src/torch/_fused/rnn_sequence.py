"""A whole LSTM or GRU layer-direction as one aten op (Plait's own ``aten::_lstm_sequence``,
``aten::_gru_sequence`` and their ``_backward`` ops; PyTorch runs the same recurrences inside
``aten::lstm`` / ``aten::gru``).

``nn.LSTM`` and ``nn.GRU`` project the input of every time step with one matmul, then run the
recurrence ``hidden_gates = h @ W_hh^T + b_hh`` and the fused cell (``_thnn_fused_lstm_cell``
/ ``_thnn_fused_gru_cell``) on ``input_gates[t]`` and them, over the steps. Step by step in
Python that is a matmul, a cell op and their autograd nodes per step; as one op a backend runs
the loop natively and autograd records one node per layer.

The composites here are the reference, the fallback and what meta / fake tensors run: the same
per-step ops (``aten::linear`` and the fused cell) as the module's step loop, so their results
are those of the step loop. The backward composites are written in differentiable ops, so
double backward works (``autograd/_formulas/rnn.py``).

LSTM layouts: ``input_gates`` (T, B, 4H) (the input projection with ``b_ih``), ``hx``, ``cx``
(B, H), ``weight_hh`` (4H, H), ``bias_hh`` (4H) or None. Outputs: ``output`` (T, B, H), the
final ``hy``, ``cy`` (B, H), and for the backward ``gates`` (T, B, 4H, the activated gates of
each step, the cell's workspace) and ``cells`` (T, B, H, each step's cell state).

GRU layouts: ``input_gates`` (T, B, 3H), ``hx`` (B, H), ``weight_hh`` (3H, H), ``bias_hh`` (3H)
or None. Outputs: ``output`` (T, B, H), the final ``hy`` (B, H) and for the backward
``workspace`` (T, B, 5H, each step's fused-cell workspace ``[r, z, n, h_prev, hn]``: it holds
the state the step read, so the backward needs nothing else).

``reverse`` runs the steps from T - 1 down to 0 (a bidirectional layer's second direction); the
rows stay in time order either way."""

from __future__ import annotations

from typing import Any

from .._aten.factories import zeros_like
from .._aten.shape import stack
from .._core import dispatch as _dispatch
from .._core.tensor import Tensor
from . import linear as _linear_ops, rnn_cells as _rnn_cells

__all__: list[str] = []
METHODS: dict[str, Any] = {}


def _linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    return _linear_ops.ATEN["linear"](x, weight, bias)  # (as the module's F.linear calls it)


def _order(steps: int, reverse: bool) -> range:
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _lstm_sequence(input_gates: Tensor, hx: Tensor, cx: Tensor, weight_hh: Tensor,
                   bias_hh: Tensor | None = None, reverse: bool = False, cell: Any = None
                   ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """The composite; ``cell`` replaces the fused cell op (the derivative rule passes the
    cell's composite, whose activated gates are differentiable where the op's are not)."""
    steps = input_gates.shape[0]
    cell = cell or _rnn_cells.ATEN["_thnn_fused_lstm_cell"]
    outs: list[Any] = [None] * steps
    gates: list[Any] = [None] * steps
    cells: list[Any] = [None] * steps
    h, c = hx, cx
    for t in _order(steps, reverse):
        h, c, ws = cell(input_gates[t], _linear(h, weight_hh, bias_hh), c)
        outs[t], gates[t], cells[t] = h, ws, c
    return stack(outs, 0), h.clone(), c.clone(), stack(gates, 0), stack(cells, 0)


def _lstm_sequence_backward(grad_output: Tensor | None, grad_hy: Tensor | None,
                            grad_cy: Tensor | None, hx: Tensor, cx: Tensor, weight_hh: Tensor,
                            output: Tensor, gates: Tensor, cells: Tensor, has_bias: bool,
                            reverse: bool
                            ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor | None]:
    steps = output.shape[0]
    cell_backward = _rnn_cells.ATEN["_thnn_fused_lstm_cell_backward_impl"]
    order = list(_order(steps, reverse))
    grad_gates: list[Any] = [None] * steps
    h_prev: list[Any] = [None] * steps  # the state each step read, for the weight's gradient
    dh, dc = grad_hy, grad_cy
    for s in range(steps - 1, -1, -1):
        t = order[s]
        first = s == 0
        c_prev = cx if first else cells[order[s - 1]]
        h_prev[t] = hx if first else output[order[s - 1]]
        if grad_output is not None:
            dh = grad_output[t] if dh is None else dh + grad_output[t]
        grad_gates[t], dc, _ = cell_backward(dh, dc, c_prev, cells[t], gates[t], False)
        dh = grad_gates[t].mm(weight_hh)
    if steps == 0:
        dh = zeros_like(hx) if dh is None else dh
        dc = zeros_like(cx) if dc is None else dc
    grad_input_gates = stack(grad_gates, 0)
    rows = grad_input_gates.reshape(-1, grad_input_gates.shape[-1])  # (T * B, 4H)
    grad_weight = rows.t().mm(stack(h_prev, 0).reshape(-1, hx.shape[-1]))
    return grad_input_gates, dh, dc, grad_weight, rows.sum(0) if has_bias else None


def _gru_sequence(input_gates: Tensor, hx: Tensor, weight_hh: Tensor,
                  bias_hh: Tensor | None = None, reverse: bool = False, cell: Any = None
                  ) -> tuple[Tensor, Tensor, Tensor]:
    """The composite (``cell`` as in :func:`_lstm_sequence`)."""
    steps = input_gates.shape[0]
    cell = cell or _rnn_cells.ATEN["_thnn_fused_gru_cell"]
    outs: list[Any] = [None] * steps
    workspace: list[Any] = [None] * steps
    h = hx
    for t in _order(steps, reverse):
        h, workspace[t] = cell(input_gates[t], _linear(h, weight_hh, bias_hh), h)
        outs[t] = h
    return stack(outs, 0), h.clone(), stack(workspace, 0)


def _gru_sequence_backward(grad_output: Tensor | None, grad_hy: Tensor | None,
                           weight_hh: Tensor, workspace: Tensor, has_bias: bool, reverse: bool
                           ) -> tuple[Tensor, Tensor, Tensor, Tensor | None]:
    steps, hidden = workspace.shape[0], weight_hh.shape[-1]
    cell_backward = _rnn_cells.ATEN["_thnn_fused_gru_cell_backward"]
    grad_input: list[Any] = [None] * steps
    grad_hidden: list[Any] = [None] * steps
    dh = grad_hy  # the gradient of the state after the step being differentiated
    for t in reversed(_order(steps, reverse)):
        if grad_output is not None:
            dh = grad_output[t] if dh is None else dh + grad_output[t]
        if dh is None:  # (no gradient reached the last step: the cell op takes zeros)
            dh = zeros_like(workspace[t].narrow(1, 0, hidden))
        grad_input[t], grad_hidden[t], grad_hx, _, _ = cell_backward(dh, workspace[t], False)
        dh = grad_hx + grad_hidden[t].mm(weight_hh)
    if dh is None:
        dh = zeros_like(workspace.narrow(2, 0, hidden).sum(0))
    rows = stack(grad_hidden, 0).reshape(-1, 3 * hidden)  # (T * B, 3H)
    # every step's h_prev is in its workspace (the cell keeps the state it read)
    h_prev = workspace.narrow(2, 3 * hidden, hidden).reshape(-1, hidden)
    return (stack(grad_input, 0), dh, rows.t().mm(h_prev), rows.sum(0) if has_bias else None)


ATEN = _dispatch.define_aten({
    "_lstm_sequence": (
        "_lstm_sequence(Tensor input_gates, Tensor hx, Tensor cx, Tensor weight_hh, "
        "Tensor? bias_hh=None, bool reverse=False) -> (Tensor, Tensor, Tensor, Tensor, Tensor)",
        _lstm_sequence),
    "_lstm_sequence_backward": (
        "_lstm_sequence_backward(Tensor? grad_output, Tensor? grad_hy, Tensor? grad_cy, "
        "Tensor hx, Tensor cx, Tensor weight_hh, Tensor output, Tensor gates, Tensor cells, "
        "bool has_bias, bool reverse) -> (Tensor, Tensor, Tensor, Tensor, Tensor)",
        _lstm_sequence_backward),
    "_gru_sequence": (
        "_gru_sequence(Tensor input_gates, Tensor hx, Tensor weight_hh, Tensor? bias_hh=None, "
        "bool reverse=False) -> (Tensor, Tensor, Tensor)",
        _gru_sequence),
    "_gru_sequence_backward": (
        "_gru_sequence_backward(Tensor? grad_output, Tensor? grad_hy, Tensor weight_hh, "
        "Tensor workspace, bool has_bias, bool reverse) -> (Tensor, Tensor, Tensor, Tensor)",
        _gru_sequence_backward),
})


def _check_sequence(name: str, gates: int, input_gates: Tensor, hx: Tensor, weight_hh: Tensor,
                    bias_hh: Tensor | None, cx: Tensor | None = None) -> None:
    """The layouts of this module's docstring for a cell of ``gates`` gates (``cx`` only for
    the LSTM), and at least one time step; RuntimeError naming what came otherwise."""
    batch, hidden = hx.shape[0], hx.shape[-1]
    width = gates * hidden
    if (input_gates.ndim != 3 or tuple(input_gates.shape[1:]) != (batch, width)
            or (cx is not None and tuple(cx.shape) != (batch, hidden)) or hx.ndim != 2
            or tuple(weight_hh.shape) != (width, hidden)
            or (bias_hh is not None and tuple(bias_hh.shape) != (width,))):
        states = "hx (B, H)" if cx is None else "hx and cx (B, H)"
        got = [tuple(input_gates.shape), tuple(hx.shape)]
        if cx is not None:
            got.append(tuple(cx.shape))
        raise RuntimeError(f"{name}(): expected input_gates (T, B, {gates}H), {states}, "
                           f"weight_hh ({gates}H, H) and bias_hh ({gates}H), got "
                           f"{', '.join(map(str, got))}, {tuple(weight_hh.shape)} and "
                           f"{None if bias_hh is None else tuple(bias_hh.shape)}")
    if input_gates.shape[0] == 0:
        raise RuntimeError(f"{name}(): expected at least one time step")


def lstm_sequence(input_gates: Tensor, hx: Tensor, cx: Tensor, weight_hh: Tensor,
                  bias_hh: Tensor | None = None, reverse: bool = False
                  ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """One LSTM layer-direction over a whole sequence: ``(output, hy, cy, gates, cells)``
    (the op ``aten::_lstm_sequence``; the layouts are in this module's docstring)."""
    _check_sequence("_lstm_sequence", 4, input_gates, hx, weight_hh, bias_hh, cx)
    return ATEN["_lstm_sequence"](input_gates, hx, cx, weight_hh, bias_hh, reverse)


def gru_sequence(input_gates: Tensor, hx: Tensor, weight_hh: Tensor,
                 bias_hh: Tensor | None = None, reverse: bool = False
                 ) -> tuple[Tensor, Tensor, Tensor]:
    """One GRU layer-direction over a whole sequence: ``(output, hy, workspace)`` (the op
    ``aten::_gru_sequence``; the layouts are in this module's docstring)."""
    _check_sequence("_gru_sequence", 3, input_gates, hx, weight_hh, bias_hh)
    return ATEN["_gru_sequence"](input_gates, hx, weight_hh, bias_hh, reverse)
