"""The fused LSTM / GRU cell ops (``aten::_thnn_fused_lstm_cell``, ``_thnn_fused_gru_cell`` and
their backward ops): the composites against numpy, first and second derivatives by finite
differences (float64), the fused CPU kernels of plait-backend-cpu against the composites over
dtypes, layouts and optional operands, their fallbacks, and nn.LSTM / nn.GRU against the
unfused step formulas."""

from __future__ import annotations

import numpy as np
import pytest

import torch
from torch._core import dispatch as _dispatch
from torch.autograd import gradcheck, gradgradcheck
from torch.nn import functional as F

A = torch.ops.aten
F64 = torch.float64
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
LSTM, LSTM_BW = "aten::_thnn_fused_lstm_cell", "aten::_thnn_fused_lstm_cell_backward_impl"
GRU, GRU_BW = "aten::_thnn_fused_gru_cell", "aten::_thnn_fused_gru_cell_backward"


def _tol(dtype: torch.dtype) -> dict[str, float]:
    if dtype == torch.float64:
        return {"atol": 1e-12, "rtol": 1e-10}
    if dtype == torch.float32:
        return {"atol": 2e-6, "rtol": 2e-5}
    # the composite rounds after every op, the kernel once
    return {"atol": 3e-2, "rtol": 3e-2} if dtype == torch.bfloat16 else {"atol": 4e-3,
                                                                          "rtol": 4e-3}


def _rand(shape: tuple[int, ...], dtype: torch.dtype = F64, seed: int = 0,
          scale: float = 1.5) -> torch.Tensor:
    values = np.random.default_rng(seed).standard_normal(shape) * scale
    return torch.tensor(values.tolist(), dtype=F64).reshape(shape).to(dtype)


def _np(t: torch.Tensor) -> np.ndarray:
    return np.array(t.detach().to(F64).tolist(), dtype=np.float64).reshape(tuple(t.shape))


def _composite(qualname: str):
    return _dispatch.get(qualname).kernels["CompositeExplicitAutograd"]


def _fused(qualname: str):
    torch.zeros(1) + 1  # the CPU backend registers its kernels on first use
    kernel = _dispatch.get(qualname).kernels.get("CPU")
    if kernel is None:
        pytest.skip("plait-backend-cpu's fused kernels are not installed")
    return kernel


def _same(a, b, dtype) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.dtype == y.dtype and tuple(x.shape) == tuple(y.shape)
            assert x.is_contiguous()
            torch.testing.assert_close(x, y, equal_nan=True, **_tol(dtype))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


# -- composites against numpy -----------------------------------------------------------------


def test_lstm_cell_matches_numpy():
    ig, hg, cx = _rand((3, 8), seed=1), _rand((3, 8), seed=2), _rand((3, 2), seed=3)
    ib, hb = _rand((8,), seed=4), _rand((8,), seed=5)
    hy, cy, ws = A._thnn_fused_lstm_cell(ig, hg, cx, ib, hb)
    i, f, g, o = np.split(_np(ig) + _np(hg) + _np(ib) + _np(hb), 4, 1)
    i, f, g, o = _sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)
    c = f * _np(cx) + i * g
    np.testing.assert_allclose(_np(cy), c, rtol=1e-12)
    np.testing.assert_allclose(_np(hy), o * np.tanh(c), rtol=1e-12)
    np.testing.assert_allclose(_np(ws), np.concatenate([i, f, g, o], 1), rtol=1e-12)


def test_gru_cell_matches_numpy():
    ig, hg, hx = _rand((3, 6), seed=1), _rand((3, 6), seed=2), _rand((3, 2), seed=3)
    ib, hb = _rand((6,), seed=4), _rand((6,), seed=5)
    hy, ws = A._thnn_fused_gru_cell(ig, hg, hx, ib, hb)
    i_r, i_z, i_n = np.split(_np(ig) + _np(ib), 3, 1)
    h_r, h_z, h_n = np.split(_np(hg) + _np(hb), 3, 1)
    r, z = _sigmoid(i_r + h_r), _sigmoid(i_z + h_z)
    n = np.tanh(i_n + r * h_n)  # b_hn stays inside r * (...)
    np.testing.assert_allclose(_np(hy), (1 - z) * n + z * _np(hx), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(_np(ws), np.concatenate([r, z, n, _np(hx), h_n], 1),
                               rtol=1e-12)


def test_cell_shape_errors():
    from torch._fused.rnn_cells import fused_gru_cell, fused_lstm_cell

    with pytest.raises(RuntimeError, match="4 \\* hidden"):
        fused_lstm_cell(_rand((3, 6)), _rand((3, 6)), _rand((3, 2)))
    with pytest.raises(RuntimeError, match="3 \\* hidden"):
        fused_gru_cell(_rand((3, 6)), _rand((3, 9)), _rand((3, 2)))
    hy, cy, _ = fused_lstm_cell(_rand((3, 8)), _rand((3, 8)), _rand((3, 2)))
    assert tuple(hy.shape) == tuple(cy.shape) == (3, 2)


# -- derivatives (float64, finite differences) ------------------------------------------------


def _leaves(*shapes: tuple[int, ...]) -> list[torch.Tensor]:
    return [_rand(s, seed=k).requires_grad_() for k, s in enumerate(shapes)]


@pytest.mark.parametrize("bias", [False, True])
def test_lstm_cell_gradients(bias):
    b, h = 3, 2
    args = _leaves((b, 4 * h), (b, 4 * h), (b, h), *([(4 * h,)] * 2 if bias else []))

    def fn(*a):
        return A._thnn_fused_lstm_cell(*a)[:2]  # the workspace is not differentiable

    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


@pytest.mark.parametrize("bias", [False, True])
def test_gru_cell_gradients(bias):
    b, h = 3, 2
    args = _leaves((b, 3 * h), (b, 3 * h), (b, h), *([(3 * h,)] * 2 if bias else []))

    def fn(*a):
        return A._thnn_fused_gru_cell(*a)[0]

    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


@pytest.mark.parametrize("absent", [None, "grad_hy", "grad_cy"])
def test_lstm_cell_backward_gradients(absent):
    b, h = 3, 2
    ghy, gcy, cx = _leaves((b, h), (b, h), (b, h))
    _, cy, ws = A._thnn_fused_lstm_cell(_rand((b, 4 * h), seed=7), _rand((b, 4 * h), seed=8),
                                        cx.detach())
    cy, ws = cy.detach().requires_grad_(), ws.detach().requires_grad_()

    def fn(ghy, gcy, cx, cy, ws):
        return A._thnn_fused_lstm_cell_backward_impl(None if absent == "grad_hy" else ghy,
                                                     None if absent == "grad_cy" else gcy,
                                                     cx, cy, ws, True)

    assert gradcheck(fn, (ghy, gcy, cx, cy, ws))
    assert gradgradcheck(fn, (ghy, gcy, cx, cy, ws))


def test_gru_cell_backward_gradients():
    b, h = 3, 2
    ghy, = _leaves((b, h))
    _, ws = A._thnn_fused_gru_cell(_rand((b, 3 * h), seed=7), _rand((b, 3 * h), seed=8),
                                   _rand((b, h), seed=9))
    ws = ws.requires_grad_()

    def fn(ghy, ws):
        return A._thnn_fused_gru_cell_backward(ghy, ws, True)

    assert gradcheck(fn, (ghy, ws))
    assert gradgradcheck(fn, (ghy, ws))


# -- fused CPU kernels against the composites -------------------------------------------------


def _layout(t: torch.Tensor, how: str) -> torch.Tensor:
    if how == "transposed":  # same values, column-major storage
        return t.t().contiguous().t()
    return t


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("how", ["contiguous", "transposed"])
def test_fused_lstm_cell(dtype, bias, how):
    b, h = 5, 19  # a hidden size that is no multiple of a vector
    ig = _layout(_rand((b, 4 * h), dtype, 1), how)
    hg = _layout(_rand((b, 4 * h), dtype, 2), how)
    cx = _layout(_rand((b, h), dtype, 3), how)
    biases = (_rand((4 * h,), dtype, 4), _rand((4 * h,), dtype, 5)) if bias else (None, None)
    out = _fused(LSTM)(ig, hg, cx, *biases)
    ref = _composite(LSTM)(ig, hg, cx, *biases)
    _same(out, ref, dtype)
    ghy, gcy = _rand((b, h), dtype, 6), _layout(_rand((b, h), dtype, 7), how)
    for grads in ((ghy, gcy), (None, gcy), (ghy, None)):
        _same(_fused(LSTM_BW)(*grads, cx, ref[1], ref[2], bias),
              _composite(LSTM_BW)(*grads, cx, ref[1], ref[2], bias), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("how", ["contiguous", "transposed"])
def test_fused_gru_cell(dtype, bias, how):
    b, h = 5, 19
    ig = _layout(_rand((b, 3 * h), dtype, 1), how)
    hg = _layout(_rand((b, 3 * h), dtype, 2), how)
    hx = _layout(_rand((b, h), dtype, 3), how)
    biases = (_rand((3 * h,), dtype, 4), _rand((3 * h,), dtype, 5)) if bias else (None, None)
    out = _fused(GRU)(ig, hg, hx, *biases)
    ref = _composite(GRU)(ig, hg, hx, *biases)
    _same(out, ref, dtype)
    ghy = _layout(_rand((b, h), dtype, 6), how)
    _same(_fused(GRU_BW)(ghy, ref[1], bias), _composite(GRU_BW)(ghy, ref[1], bias), dtype)


def test_fused_cells_many_rows_are_threaded_alike():
    # enough rows to be split over the threads: every row is computed the same way
    b, h = 300, 64
    ig, hg, cx = _rand((b, 4 * h), torch.float32, 1), _rand((b, 4 * h), torch.float32, 2), \
        _rand((b, h), torch.float32, 3)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = _fused(LSTM)(ig, hg, cx)
        torch.set_num_threads(2)
        two = _fused(LSTM)(ig, hg, cx)
    finally:
        torch.set_num_threads(threads)
    for x, y in zip(one, two, strict=True):
        assert torch.equal(x, y)
    _same(one, _composite(LSTM)(ig, hg, cx), torch.float32)


def test_fused_cells_extreme_values():
    # saturated gates: sigmoid and tanh reach 0 / +-1 without NaN; NaN propagates
    values = torch.tensor([[-1e4, 1e4, -50.0, 50.0, 0.0, float("nan"), -0.0, 3.0]])
    h = 2
    ig = values.repeat(1, 1)
    out = _fused(LSTM)(ig, torch.zeros(1, 4 * h), torch.ones(1, h))
    ref = _composite(LSTM)(ig, torch.zeros(1, 4 * h), torch.ones(1, h))
    _same(out, ref, torch.float32)
    gi = torch.tensor([[-1e4, 1e4, 60.0, -60.0, float("nan"), 2.0]])
    out = _fused(GRU)(gi, torch.zeros(1, 6), torch.ones(1, 2))
    _same(out, _composite(GRU)(gi, torch.zeros(1, 6), torch.ones(1, 2)), torch.float32)


def test_fused_cells_fall_back():
    b, h = 3, 4
    ig, hg, cx = _rand((b, 4 * h), torch.float32, 1), _rand((b, 4 * h), torch.float32, 2), \
        _rand((b, h), torch.float32, 3)
    # a (1, 4H) bias broadcasts in the composite; the kernel takes only (4H,)
    bias = _rand((1, 4 * h), torch.float32, 4)
    _same(_fused(LSTM)(ig, hg, cx, bias), _composite(LSTM)(ig, hg, cx, bias), torch.float32)
    # a broadcast state, mixed dtypes, an empty batch
    row = cx[:1].expand(b, h)
    _same(_fused(LSTM)(ig, hg, row), _composite(LSTM)(ig, hg, row), torch.float32)
    out = _fused(LSTM)(ig, hg.double(), cx)
    _same(out, _composite(LSTM)(ig, hg.double(), cx), torch.float64)
    empty = _fused(GRU)(torch.zeros(0, 3 * h), torch.zeros(0, 3 * h), torch.zeros(0, h))
    assert tuple(empty[0].shape) == (0, h) and tuple(empty[1].shape) == (0, 5 * h)
    # a 1-d state (unbatched) is not the kernel's: the composite answers or raises
    with pytest.raises((IndexError, RuntimeError)):  # chunk(4, 1) of a 1-d tensor
        _fused(LSTM)(ig[0], hg[0], cx[0])


# -- nn layers against the unfused step formulas ----------------------------------------------


def _lstm_reference(x, h, c, w_ih, w_hh, b_ih, b_hh):
    outs = []
    for t in range(x.shape[0]):
        i, f, g, o = (F.linear(x[t], w_ih, b_ih) + F.linear(h, w_hh, b_hh)).chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        outs.append(h)
    return torch.stack(outs), h, c


def _gru_reference(x, h, w_ih, w_hh, b_ih, b_hh):
    outs = []
    for t in range(x.shape[0]):
        i_r, i_z, i_n = F.linear(x[t], w_ih, b_ih).chunk(3, -1)
        h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, -1)
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        h = n + z * (h - n)
        outs.append(h)
    return torch.stack(outs), h


@pytest.mark.parametrize("dtype", [torch.float32, F64])
def test_nn_lstm_matches_unfused_steps(dtype):
    torch.manual_seed(0)
    m = torch.nn.LSTM(5, 7, dtype=dtype)
    x = _rand((6, 3, 5), dtype, 1).requires_grad_()
    out, (hn, cn) = m(x)
    ref, h_ref, c_ref = _lstm_reference(x, torch.zeros(3, 7, dtype=dtype),
                                        torch.zeros(3, 7, dtype=dtype), m.weight_ih_l0,
                                        m.weight_hh_l0, m.bias_ih_l0, m.bias_hh_l0)
    tol = _tol(dtype) if dtype == F64 else {"atol": 1e-5, "rtol": 1e-5}
    torch.testing.assert_close(out, ref, **tol)
    torch.testing.assert_close(hn[0], h_ref, **tol)
    torch.testing.assert_close(cn[0], c_ref, **tol)
    (g_fused,) = torch.autograd.grad((out * out).sum() + cn.sum(), x)
    (g_ref,) = torch.autograd.grad((ref * ref).sum() + c_ref.sum(), x)
    torch.testing.assert_close(g_fused, g_ref, **tol)


@pytest.mark.parametrize("dtype", [torch.float32, F64])
def test_nn_gru_matches_unfused_steps(dtype):
    torch.manual_seed(0)
    m = torch.nn.GRU(5, 7, dtype=dtype)
    x = _rand((6, 3, 5), dtype, 1).requires_grad_()
    h0 = _rand((1, 3, 7), dtype, 2)
    out, hn = m(x, h0)
    ref, h_ref = _gru_reference(x, h0[0], m.weight_ih_l0, m.weight_hh_l0, m.bias_ih_l0,
                                m.bias_hh_l0)
    tol = _tol(dtype) if dtype == F64 else {"atol": 1e-5, "rtol": 1e-5}
    torch.testing.assert_close(out, ref, **tol)
    torch.testing.assert_close(hn[0], h_ref, **tol)
    (g_fused,) = torch.autograd.grad((out * out).sum(), x)
    (g_ref,) = torch.autograd.grad((ref * ref).sum(), x)
    torch.testing.assert_close(g_fused, g_ref, **tol)


def test_nn_cells_double_backward():
    torch.manual_seed(0)
    for cell in (torch.nn.LSTMCell(3, 2, dtype=F64), torch.nn.GRUCell(3, 2, dtype=F64)):
        x = _rand((2, 3), F64, 1).requires_grad_()

        def fn(x, cell=cell):
            out = cell(x)
            return out[0] if isinstance(out, tuple) else out

        assert gradgradcheck(fn, (x,))
