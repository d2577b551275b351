"""The whole-sequence GRU op (``aten::_gru_sequence`` and its backward op): nn.GRU reaches it
(dispatch log, autograd graph) and through it matches the per-step path (outputs, final
states and every gradient) over layers, directions, batch_first, given / absent states and
biases; the op's first and second derivatives by finite differences (float64);
plait-backend-cpu's native loop against the composites (the forward bit for bit); meta shapes;
the cases left to the step loop."""

from __future__ import annotations

import numpy as np
import pytest
from dispatch_log import ops_seen as _seen

import torch
from torch import nn
from torch._core import dispatch as _dispatch
from torch._fused import rnn_sequence
from torch.autograd import gradcheck, gradgradcheck
from torch.nn.modules import rnn as rnn_module

F64 = torch.float64
SEQ, SEQ_BW = "aten::_gru_sequence", "aten::_gru_sequence_backward"


def _rand(shape: tuple[int, ...], dtype: torch.dtype = F64, seed: int = 0,
          scale: float = 1.0) -> torch.Tensor:
    values = np.random.default_rng(seed).standard_normal(shape) * scale
    return torch.tensor(values.tolist(), dtype=F64).reshape(shape).to(dtype)


def _tol(dtype: torch.dtype) -> dict[str, float]:
    return {"atol": 1e-12, "rtol": 1e-10} if dtype == F64 else {"atol": 1e-6, "rtol": 1e-5}


def _run(model: nn.GRU, x, state, steps: bool, monkeypatch):
    """Outputs, final state and every gradient of a loss over both; ``steps``: through the
    per-step path (the whole-sequence op switched off)."""
    with monkeypatch.context() as m:
        if steps:
            m.setattr(rnn_module, "_SEQUENCE_DTYPES", ())
        model.zero_grad()
        x = x.detach().requires_grad_()
        if state is not None:
            state = state.detach().requires_grad_()
        out, h = model(x, state)
        weights = _rand(tuple(out.shape), out.dtype, seed=7)
        loss = (out * weights).sum() + (h * h).sum()
        loss.backward()
    grads = [x.grad] + ([state.grad] if state is not None else [])
    grads += [p.grad for p in model.parameters()]
    return [out, h], grads


@pytest.mark.parametrize("dtype", [torch.float32, F64])
@pytest.mark.parametrize(("layers", "bidirectional", "batch_first", "with_state", "bias"), [
    (1, False, False, False, True),
    (1, False, True, True, True),
    (2, True, False, True, True),
    (2, True, True, False, False),
    (1, True, False, True, False),
])
def test_nn_gru_whole_sequence_matches_the_steps(dtype, layers, bidirectional, batch_first,
                                                 with_state, bias, monkeypatch):
    torch.manual_seed(0)
    model = nn.GRU(5, 6, layers, bias=bias, batch_first=batch_first,
                   bidirectional=bidirectional).to(dtype)
    t, b, d = 7, 3, 2 if bidirectional else 1
    x = _rand((b, t, 5) if batch_first else (t, b, 5), dtype)
    state = _rand((layers * d, b, 6), dtype, seed=1) if with_state else None
    fused_values, fused_grads = _run(model, x, state, False, monkeypatch)
    step_values, step_grads = _run(model, x, state, True, monkeypatch)
    for a, b_ in zip(fused_values, step_values, strict=True):
        torch.testing.assert_close(a, b_, **_tol(dtype))
    for a, b_ in zip(fused_grads, step_grads, strict=True):
        assert a is not None and b_ is not None
        torch.testing.assert_close(a, b_, **_tol(dtype))


def test_nn_gru_forward_is_the_step_loops_bits(monkeypatch):
    """The native loop runs the step loop's own kernels: equal outputs, not merely close."""
    torch.manual_seed(0)
    model = nn.GRU(5, 8, 2, bidirectional=True)
    x = _rand((9, 4, 5), torch.float32)
    with torch.no_grad():
        fused = model(x)
        monkeypatch.setattr(rnn_module, "_SEQUENCE_DTYPES", ())
        steps = model(x)
    for a, b_ in zip(fused, steps, strict=True):
        assert torch.equal(a, b_)


def test_nn_gru_reaches_the_op():
    model = nn.GRU(4, 5, 2, bidirectional=True)
    x = _rand((6, 2, 4), torch.float32)

    def call():
        out, h = model(x)
        (out.sum() + h.sum()).backward()

    names = _seen(call)
    # one forward and one backward op per layer and direction, and no per-step cell
    assert names.count("aten._gru_sequence.default") == 4
    assert names.count("aten._gru_sequence_backward.default") == 4
    assert not any("gru_cell" in n for n in names)


def test_nn_gru_records_one_node_per_layer_direction():
    model = nn.GRU(4, 5, 2, bidirectional=True)
    out, h = model(_rand((6, 2, 4), torch.float32))
    seen, todo, names = set(), [out.grad_fn, h.grad_fn], []
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        todo.extend(f for f, _ in node.next_functions)
    assert sum("GruSequence" in n for n in names) == 4
    assert not any("FusedGruCell" in n for n in names)


def test_nn_gru_double_backward_matches_the_steps(monkeypatch):
    """Under create_graph the op's rule records the composites: the gradient of a gradient
    reaches the parameters and the input as through the step loop."""
    torch.manual_seed(0)
    model = nn.GRU(3, 4, 2, bidirectional=True).to(F64)
    x = _rand((5, 2, 3))

    def second(steps: bool):
        with monkeypatch.context() as m:
            if steps:
                m.setattr(rnn_module, "_SEQUENCE_DTYPES", ())
            xx = x.clone().requires_grad_()
            out, h = model(xx)
            (g,) = torch.autograd.grad((out * out).sum() + h.sum(), xx, create_graph=True)
            return torch.autograd.grad((g * g).sum(), [*model.parameters(), xx])

    for a, b_ in zip(second(False), second(True), strict=True):
        torch.testing.assert_close(a, b_, **_tol(F64))


def _operands(t=4, b=2, h=3, dtype=F64, bias=True):
    return (_rand((t, b, 3 * h), dtype, seed=1), _rand((b, h), dtype, seed=2),
            _rand((3 * h, h), dtype, seed=4, scale=0.6),
            _rand((3 * h,), dtype, seed=5) if bias else None)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_gru_sequence_gradients(reverse, bias):
    args = [a.requires_grad_() if a is not None else None for a in _operands(bias=bias)]
    inputs = tuple(a for a in args if a is not None)

    def fn(*xs):
        full = list(xs) + ([None] if not bias else [])
        return rnn_sequence.gru_sequence(*full, reverse)[:2]

    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def _kernel(qualname: str, key: str):
    torch.zeros(1) + 1  # the CPU backend registers its kernels on first use
    kernel = _dispatch.get(qualname).kernels.get(key)
    assert kernel is not None, f"no {key} kernel for {qualname}"
    return kernel


@pytest.mark.parametrize("dtype", [torch.float32, F64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("absent", [(), ("grad_hy",), ("grad_output",)])
def test_native_loop_matches_the_composites(dtype, reverse, bias, absent):
    native, native_bw = _kernel(SEQ, "CPU"), _kernel(SEQ_BW, "CPU")
    assert native.__name__ == "_gru_sequence_cpu"
    composite = _kernel(SEQ, "CompositeExplicitAutograd")
    composite_bw = _kernel(SEQ_BW, "CompositeExplicitAutograd")
    ig, hx, w, b = _operands(t=5, b=3, h=4, dtype=dtype, bias=bias)
    got, want = native(ig, hx, w, b, reverse), composite(ig, hx, w, b, reverse)
    for a, b_ in zip(got, want, strict=True):
        assert torch.equal(a, b_)  # the same per-step ops, so the same bits
    _output, _hy, workspace = want
    grads = {"grad_output": _rand((5, 3, 4), dtype, seed=8),
             "grad_hy": _rand((3, 4), dtype, seed=9)}
    grads = [None if k in absent else v for k, v in grads.items()]
    args = (*grads, w, workspace, bias, reverse)
    got, want = native_bw(*args), composite_bw(*args)
    assert (got[3] is None) == (not bias)
    for a, b_ in zip(got, want, strict=True):
        if b_ is not None:
            torch.testing.assert_close(a, b_, **_tol(dtype))


def test_native_backward_without_any_gradient_is_zero():
    native_bw = _kernel(SEQ_BW, "CPU")
    ig, hx, w, b = _operands(dtype=torch.float32)
    _out, _hy, workspace = rnn_sequence.gru_sequence(ig, hx, w, b)
    for g in native_bw(None, None, w, workspace, True, False):
        assert not g.any()


def test_native_loop_falls_back_to_the_composite():
    native, native_bw = _kernel(SEQ, "CPU"), _kernel(SEQ_BW, "CPU")
    composite = _kernel(SEQ, "CompositeExplicitAutograd")
    composite_bw = _kernel(SEQ_BW, "CompositeExplicitAutograd")
    ig, hx, w, b = _operands(dtype=torch.float32)
    half = [a.to(torch.bfloat16) for a in (ig, hx, w, b)]
    for a, b_ in zip(native(*half, False), composite(*half, False), strict=True):
        assert torch.equal(a, b_)
    strided = (ig.transpose(0, 1).contiguous().transpose(0, 1), hx.t().contiguous().t(), w, b)
    got = native(*strided, True)
    for a, b_ in zip(got, composite(*strided, True), strict=True):
        assert torch.equal(a, b_)
    # strided gradients are copied for the native loop; a grad_hy of another dtype or shape
    # goes to the composite, which raises (not a native read out of bounds)
    workspace = got[2]
    grad_output = _rand((2, 4, 3), torch.float32, seed=3).transpose(0, 1)
    args = (grad_output, None, w, workspace, True, True)
    for a, b_ in zip(native_bw(*args), composite_bw(*args), strict=True):
        torch.testing.assert_close(a, b_, **_tol(torch.float32))
    for bad in (_rand((2, 3), F64), _rand((2, 4), torch.float32)):
        with pytest.raises(RuntimeError):
            native_bw(None, bad, w, workspace, True, True)


def test_gru_sequence_meta_shapes():
    ig, hx, w, b = (a.to("meta") for a in _operands(t=6, b=2, h=3))
    out, hy, workspace = rnn_sequence.gru_sequence(ig, hx, w, b)
    assert [tuple(o.shape) for o in (out, hy, workspace)] == [(6, 2, 3), (2, 3), (6, 2, 15)]
    assert all(o.device.type == "meta" for o in (out, hy, workspace))
    grads = rnn_sequence.ATEN["_gru_sequence_backward"](out, None, w, workspace, True, False)
    assert [tuple(g.shape) for g in grads] == [(6, 2, 9), (2, 3), (9, 3), (9,)]


def test_gru_sequence_refuses_bad_layouts():
    ig, hx, w, b = _operands()
    with pytest.raises(RuntimeError, match="expected input_gates"):
        rnn_sequence.gru_sequence(ig[..., :-1], hx, w, b)
    with pytest.raises(RuntimeError, match="at least one time step"):
        rnn_sequence.gru_sequence(ig[:0], hx, w, b)


def test_step_loop_serves_what_the_op_does_not(monkeypatch):
    calls = []
    real = rnn_module._GRU_SEQUENCE
    monkeypatch.setattr(rnn_module, "_GRU_SEQUENCE", lambda *a: calls.append(1) or real(*a))
    x = _rand((4, 2, 3), torch.float32)
    model = nn.GRU(3, 4)
    packed = nn.utils.rnn.pack_padded_sequence(x, [4, 2])
    packed_out, packed_h = model(packed)
    nn.GRU(3, 4).to(torch.bfloat16)(_rand((4, 2, 3), torch.bfloat16))
    assert not calls
    out, h = model(x)
    assert calls
    # the packed loop agrees with the op where the sequences are full length
    full = nn.utils.rnn.pack_padded_sequence(x, [4, 4])
    full_out, full_h = model(full)
    torch.testing.assert_close(nn.utils.rnn.pad_packed_sequence(full_out)[0], out)
    torch.testing.assert_close(full_h, h)
    # and a packed batch's longer sequence equals that sequence run alone
    torch.testing.assert_close(packed_h[:, :1], h[:, :1])
    assert packed_out.data.shape == (6, 4)
