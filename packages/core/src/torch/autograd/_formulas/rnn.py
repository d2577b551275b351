"""Derivative formulas: the fused LSTM and GRU cells (``torch/_rnn_cells.py``) and the
whole-sequence LSTM and GRU ops (``torch/_fused/rnn_sequence.py``).

The cells' first derivatives call their aten backward ops, which a backend may fuse, on the
saved outputs. The workspace output (activated gates) is not differentiable, as in PyTorch.
Under ``create_graph`` the rules instead recompute the outputs and the workspace from the
inputs with the composite cell (recorded ops), so that the second derivatives reach the inputs
through the backward ops' own rules, which are written in differentiable ops (higher orders
work too).
"""

from __future__ import annotations

from ..._aten import elementwise as _ew
from ..._aten.factories import zeros_like
from ..._aten.shape import cat
from ..._core import config as _config
from . import derivative


def _aten(name):
    from ..._fused import rnn_cells as _rnn_cells

    return _rnn_cells.ATEN[name]


def _saved_or_recomputed(ctx, cell, names):
    """The cell's outputs for its backward: the saved ones, or under ``create_graph`` the
    composite's recomputed from the inputs, so that the graph of the backward reaches them."""
    if not _config.is_grad_enabled():
        return ctx.result
    from ..._fused import rnn_cells as _rnn_cells

    return getattr(_rnn_cells, cell)(*_args(ctx, names))


def _args(ctx, names):
    """The call's arguments by position, where a caller may have passed some by keyword."""
    args = list(ctx.args[:len(names)])
    return args + [ctx.kwargs.get(n) for n in names[len(args):]]


# -- LSTM ---------------------------------------------------------------------------------------


@derivative("aten::_thnn_fused_lstm_cell")
def _lstm_cell(ctx, grad_hy, grad_cy, _grad_ws):
    names = ("input_gates", "hidden_gates", "cx", "input_bias", "hidden_bias")
    cx = _args(ctx, names)[2]
    _hy, cy, ws = _saved_or_recomputed(ctx, "_lstm_cell", names)
    grad_gates, grad_cx, _ = _aten("_thnn_fused_lstm_cell_backward_impl")(
        grad_hy, grad_cy, cx, cy, ws, False)
    # the engine sums the (B, 4H) gradient down to each bias's (4H,)
    return grad_gates, grad_gates, grad_cx, grad_gates, grad_gates


@derivative("aten::_thnn_fused_lstm_cell_backward_impl")
def _lstm_cell_backward(ctx, u, v, t):
    """With i, f, g, o the activated gates, tc = tanh(cy) and G = grad_cy + grad_hy * o *
    (1 - tc^2), the backward computes d_gates = [G g i(1-i), G cx f(1-f), G i (1-g^2),
    grad_hy tc o(1-o)], grad_cx = G f and grad_bias = sum_batch(d_gates). ``u``, ``v``, ``t``
    are the cotangents of those three outputs."""
    grad_hy, grad_cy, cx, cy, ws = _args(ctx, ("grad_hy", "grad_cy", "cx", "cy", "workspace"))
    i, f, g, o = ws.chunk(4, 1)
    tc = _ew.tanh(cy)
    dtc = 1 - tc * tc
    ghy = zeros_like(cy) if grad_hy is None else grad_hy
    big_g = ghy * o * dtc if grad_cy is None else grad_cy + ghy * o * dtc
    if t is not None:
        u = u + t
    u_i, u_f, u_g, u_o = u.chunk(4, 1)
    w_big_g = u_i * g * i * (1 - i) + u_f * cx * f * (1 - f) + u_g * i * (1 - g * g) + v * f
    need = ctx.needs_input_grad
    d_ghy = w_big_g * o * dtc + u_o * tc * o * (1 - o) if need[0] else None
    d_gcy = w_big_g if need[1] else None
    d_cx = u_f * big_g * f * (1 - f) if need[2] else None
    d_cy = (u_o * o * (1 - o) - 2 * w_big_g * o * tc) * ghy * dtc if need[3] else None
    d_ws = cat([big_g * (u_i * g * (1 - 2 * i) + u_g * (1 - g * g)),
                      big_g * (u_f * cx * (1 - 2 * f) + v),
                      big_g * i * (u_i * (1 - i) - 2 * u_g * g),
                      ghy * (w_big_g * dtc + u_o * tc * (1 - 2 * o))], 1) if need[4] else None
    return d_ghy, d_gcy, d_cx, d_cy, d_ws, None


# -- GRU ----------------------------------------------------------------------------------------


@derivative("aten::_thnn_fused_gru_cell")
def _gru_cell(ctx, grad_hy, _grad_ws):
    names = ("input_gates", "hidden_gates", "hx", "input_bias", "hidden_bias")
    _hy, ws = _saved_or_recomputed(ctx, "_gru_cell", names)
    grad_input, grad_hidden, grad_hx, _, _ = _aten("_thnn_fused_gru_cell_backward")(
        grad_hy, ws, False)
    return grad_input, grad_hidden, grad_hx, grad_input, grad_hidden


@derivative("aten::_thnn_fused_gru_cell_backward")
def _gru_cell_backward(ctx, a, b, c, ta, tb):
    """With r, z, n, hx, hn from the workspace and G = grad_hy, the backward computes
    d_n = G (1-z)(1-n^2), d_z = G (hx-n) z(1-z), d_r = d_n hn r(1-r), grad_input = [d_r, d_z,
    d_n], grad_hidden = [d_r, d_z, d_n r], grad_hx = G z and the biases' batch sums. ``a``,
    ``b``, ``c``, ``ta``, ``tb`` are the cotangents of those five outputs."""
    grad_hy, ws = _args(ctx, ("grad_hy", "workspace"))
    r, z, n, hx, hn = ws.chunk(5, 1)
    if ta is not None:
        a = a + ta
    if tb is not None:
        b = b + tb
    a_r, a_z, a_n = a.chunk(3, 1)
    b_r, b_z, b_n = b.chunk(3, 1)
    c_r, c_z, c_n = a_r + b_r, a_z + b_z, a_n + b_n * r
    s_r, s_z, t_n = r * (1 - r), z * (1 - z), 1 - n * n
    p_n = (1 - z) * t_n  # d_n / G
    need = ctx.needs_input_grad
    d_g = (c_r * p_n * hn * s_r + c_z * (hx - n) * s_z + c_n * p_n + c * z) if need[0] \
        else None
    d_ws = cat([
        grad_hy * (c_r * p_n * hn * (1 - 2 * r) + b_n * p_n),
        grad_hy * (c - c_r * t_n * hn * s_r + c_z * (hx - n) * (1 - 2 * z) - c_n * t_n),
        grad_hy * (-2 * n * (1 - z) * (c_r * hn * s_r + c_n) - c_z * s_z),
        grad_hy * c_z * s_z,
        grad_hy * c_r * p_n * s_r,
    ], 1) if need[1] else None
    return d_g, d_ws, None


# -- a whole LSTM / GRU layer-direction (``_fused/rnn_sequence.py``) ------------------------


@derivative("aten::_lstm_sequence", result=(0, 3, 4), outputs=(0, 1, 2), takes_none=True)
def _lstm_sequence(ctx, grad_output, grad_hy, grad_cy, _grad_gates, _grad_cells):
    """The backward op over the saved outputs; under ``create_graph`` the composites'
    recorded ops instead (the forward recomputed from the inputs, then the backward written in
    differentiable ops), so that higher derivatives reach the inputs."""
    from ..._fused import rnn_cells as _rnn_cells, rnn_sequence as _seq

    names = ("input_gates", "hx", "cx", "weight_hh", "bias_hh", "reverse")
    input_gates, hx, cx, weight_hh, bias_hh, reverse = _args(ctx, names)
    reverse = bool(reverse)
    has_bias = bias_hh is not None and ctx.needs_input_grad[4]
    if _config.is_grad_enabled():
        output, _hy, _cy, gates, cells = _seq._lstm_sequence(
            input_gates, hx, cx, weight_hh, bias_hh, reverse, _rnn_cells._lstm_cell)
        backward = _seq._lstm_sequence_backward
    else:
        output, _hy, _cy, gates, cells = ctx.result
        backward = _seq.ATEN["_lstm_sequence_backward"]
    grads = backward(grad_output, grad_hy, grad_cy, hx, cx, weight_hh, output, gates, cells,
                     has_bias, reverse)
    return (*grads, None)


@derivative("aten::_gru_sequence", result=(2,), outputs=(0, 1), takes_none=True)
def _gru_sequence(ctx, grad_output, grad_hy, _grad_workspace):
    """As :func:`_lstm_sequence`: the backward op over the saved workspace, or under
    ``create_graph`` the composites' recorded ops."""
    from ..._fused import rnn_cells as _rnn_cells, rnn_sequence as _seq

    names = ("input_gates", "hx", "weight_hh", "bias_hh", "reverse")
    input_gates, hx, weight_hh, bias_hh, reverse = _args(ctx, names)
    reverse = bool(reverse)
    has_bias = bias_hh is not None and ctx.needs_input_grad[3]
    if _config.is_grad_enabled():
        _output, _hy, workspace = _seq._gru_sequence(
            input_gates, hx, weight_hh, bias_hh, reverse, _rnn_cells._gru_cell)
        backward = _seq._gru_sequence_backward
    else:
        workspace = ctx.result[2]
        backward = _seq.ATEN["_gru_sequence_backward"]
    grads = backward(grad_output, grad_hy, weight_hh, workspace, has_bias, reverse)
    return (*grads, None)
