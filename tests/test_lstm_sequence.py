"""The whole-sequence LSTM op (``aten::_lstm_sequence`` and its backward op): nn.LSTM through
it against the per-step path (outputs, final states and every gradient) over layers,
directions, batch_first, given / absent states and biases; the op's first and second
derivatives by finite differences (float64); plait-backend-cpu's native loop against the
composites; meta shapes; the cases left to the step loop."""

from __future__ import annotations

import numpy as np
import pytest

import torch
from torch import nn
from torch._core import dispatch as _dispatch
from torch._fused import rnn_sequence
from torch.autograd import gradcheck, gradgradcheck
from torch.nn.modules import rnn as rnn_module

F64 = torch.float64
SEQ, SEQ_BW = "aten::_lstm_sequence", "aten::_lstm_sequence_backward"


def _rand(shape: tuple[int, ...], dtype: torch.dtype = F64, seed: int = 0,
          scale: float = 1.0) -> torch.Tensor:
    values = np.random.default_rng(seed).standard_normal(shape) * scale
    return torch.tensor(values.tolist(), dtype=F64).reshape(shape).to(dtype)


def _tol(dtype: torch.dtype) -> dict[str, float]:
    return {"atol": 1e-12, "rtol": 1e-10} if dtype == F64 else {"atol": 1e-6, "rtol": 1e-5}


def _run(model: nn.LSTM, x: torch.Tensor, state, steps: bool, monkeypatch):
    """Outputs, final states and every gradient of a loss over all three; ``steps``: through
    the per-step path (the whole-sequence op switched off)."""
    with monkeypatch.context() as m:
        if steps:
            m.setattr(rnn_module, "_SEQUENCE_DTYPES", ())
        model.zero_grad()
        x = x.detach().requires_grad_()
        if state is not None:
            state = tuple(s.detach().requires_grad_() for s in state)
        out, (h, c) = model(x, state)
        weights = _rand(tuple(out.shape), out.dtype, seed=7)
        loss = (out * weights).sum() + (h * h).sum() + (c * 0.5).sum()
        loss.backward()
    grads = [x.grad] + ([s.grad for s in state] if state is not None else [])
    grads += [p.grad for p in model.parameters()]
    return [out, h, c], grads


@pytest.mark.parametrize("dtype", [torch.float32, F64])
@pytest.mark.parametrize(("layers", "bidirectional", "batch_first", "with_state", "bias"), [
    (1, False, False, False, True),
    (1, False, True, True, True),
    (2, True, False, True, True),
    (2, True, True, False, False),
    (1, True, False, True, False),
])
def test_nn_lstm_whole_sequence_matches_the_steps(dtype, layers, bidirectional, batch_first,
                                                  with_state, bias, monkeypatch):
    torch.manual_seed(0)
    model = nn.LSTM(5, 6, layers, bias=bias, batch_first=batch_first,
                    bidirectional=bidirectional).to(dtype)
    t, b, d = 7, 3, 2 if bidirectional else 1
    x = _rand((b, t, 5) if batch_first else (t, b, 5), dtype)
    state = ((_rand((layers * d, b, 6), dtype, seed=1), _rand((layers * d, b, 6), dtype, seed=2))
             if with_state else None)
    fused_values, fused_grads = _run(model, x, state, False, monkeypatch)
    step_values, step_grads = _run(model, x, state, True, monkeypatch)
    for a, b_ in zip(fused_values, step_values, strict=True):
        torch.testing.assert_close(a, b_, **_tol(dtype))
    for a, b_ in zip(fused_grads, step_grads, strict=True):
        assert a is not None and b_ is not None
        torch.testing.assert_close(a, b_, **_tol(dtype))


def test_nn_lstm_records_one_node_per_layer_direction():
    model = nn.LSTM(4, 5, 2, bidirectional=True)
    out, (h, c) = model(_rand((6, 2, 4), torch.float32))
    seen, todo, names = set(), [out.grad_fn, h.grad_fn, c.grad_fn], []
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        todo.extend(f for f, _ in node.next_functions)
    assert sum("LstmSequence" in n for n in names) == 4
    assert not any("FusedLstmCell" in n for n in names)


def _operands(t=4, b=2, h=3, dtype=F64, bias=True):
    return (_rand((t, b, 4 * h), dtype, seed=1), _rand((b, h), dtype, seed=2),
            _rand((b, h), dtype, seed=3), _rand((4 * h, h), dtype, seed=4, scale=0.6),
            _rand((4 * h,), dtype, seed=5) if bias else None)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_lstm_sequence_gradients(reverse, bias):
    args = [a.requires_grad_() if a is not None else None for a in _operands(bias=bias)]
    inputs = tuple(a for a in args if a is not None)

    def fn(*xs):
        full = list(xs) + ([None] if not bias else [])
        return rnn_sequence.lstm_sequence(*full, reverse)[:3]

    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def _kernel(qualname: str, key: str):
    torch.zeros(1) + 1  # the CPU backend registers its kernels on first use
    kernel = _dispatch.get(qualname).kernels.get(key)
    if kernel is None:
        pytest.skip(f"no {key} kernel for {qualname}")
    return kernel


@pytest.mark.parametrize("dtype", [torch.float32, F64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("absent", [(), ("grad_hy",), ("grad_output", "grad_cy")])
def test_native_loop_matches_the_composites(dtype, reverse, absent):
    native, native_bw = _kernel(SEQ, "CPU"), _kernel(SEQ_BW, "CPU")
    composite = _kernel(SEQ, "CompositeExplicitAutograd")
    composite_bw = _kernel(SEQ_BW, "CompositeExplicitAutograd")
    ig, hx, cx, w, b = _operands(t=5, b=3, h=4, dtype=dtype)
    got, want = native(ig, hx, cx, w, b, reverse), composite(ig, hx, cx, w, b, reverse)
    for a, b_ in zip(got, want, strict=True):
        assert torch.equal(a, b_)  # the same per-step ops, so the same bits
    output, _hy, _cy, gates, cells = want
    grads = {"grad_output": _rand((5, 3, 4), dtype, seed=8),
             "grad_hy": _rand((3, 4), dtype, seed=9), "grad_cy": _rand((3, 4), dtype, seed=10)}
    grads = [None if k in absent else v for k, v in grads.items()]
    args = (*grads, hx, cx, w, output, gates, cells, True, reverse)
    for a, b_ in zip(native_bw(*args), composite_bw(*args), strict=True):
        torch.testing.assert_close(a, b_, **_tol(dtype))


def test_native_loop_falls_back_to_the_composite():
    native = _kernel(SEQ, "CPU")
    composite = _kernel(SEQ, "CompositeExplicitAutograd")
    ig, hx, cx, w, b = _operands(dtype=torch.float32)
    half = [a.to(torch.bfloat16) for a in (ig, hx, cx, w, b)]
    for a, b_ in zip(native(*half, False), composite(*half, False), strict=True):
        assert torch.equal(a, b_)
    strided = (ig.transpose(0, 1).contiguous().transpose(0, 1), hx.t().contiguous().t(), cx, w,
               b)
    for a, b_ in zip(native(*strided, True), composite(*strided, True), strict=True):
        assert torch.equal(a, b_)


def test_lstm_sequence_meta_shapes():
    ig, hx, cx, w, b = (a.to("meta") for a in _operands(t=6, b=2, h=3))
    out, hy, cy, gates, cells = rnn_sequence.lstm_sequence(ig, hx, cx, w, b)
    assert [tuple(o.shape) for o in (out, hy, cy, gates, cells)] == [
        (6, 2, 3), (2, 3), (2, 3), (6, 2, 12), (6, 2, 3)]
    assert all(o.device.type == "meta" for o in (out, hy, cy, gates, cells))
    grads = rnn_sequence.ATEN["_lstm_sequence_backward"](
        out, None, cy, hx, cx, w, out, gates, cells, True, False)
    assert [tuple(g.shape) for g in grads] == [(6, 2, 12), (2, 3), (2, 3), (12, 3), (12,)]


def test_lstm_sequence_refuses_bad_layouts():
    ig, hx, cx, w, b = _operands()
    with pytest.raises(RuntimeError, match="expected input_gates"):
        rnn_sequence.lstm_sequence(ig[..., :-1], hx, cx, w, b)
    with pytest.raises(RuntimeError, match="at least one time step"):
        rnn_sequence.lstm_sequence(ig[:0], hx, cx, w, b)


def test_step_loop_serves_what_the_op_does_not(monkeypatch):
    calls = []
    real = rnn_module._LSTM_SEQUENCE
    monkeypatch.setattr(rnn_module, "_LSTM_SEQUENCE", lambda *a: calls.append(1) or real(*a))
    packed = nn.utils.rnn.pack_padded_sequence(_rand((4, 2, 3), torch.float32), [4, 2])
    nn.LSTM(3, 4)(packed)
    nn.LSTM(3, 4, proj_size=2)(_rand((4, 2, 3), torch.float32))
    nn.LSTM(3, 4).to(torch.bfloat16)(_rand((4, 2, 3), torch.bfloat16))
    assert not calls
    nn.LSTM(3, 4)(_rand((4, 2, 3), torch.float32))
    assert calls
