"""Recurrent layers and ``nn.utils.rnn``: outputs against numpy re-implementations of the
documented equations (with the module's own weights), packing round trips, gradients by finite
differences in float64, reprs and state_dict keys as PyTorch 2.13 prints them."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from numgrad import check_grad

import torch
import torch.nn as nn
from torch.nn.utils import rnn as rnn_utils

F64 = torch.float64


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().numpy()


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


# -- numpy references ----------------------------------------------------------------------------


def _np_cell(mode: str, x: np.ndarray, state: object, p: dict[str, np.ndarray]) -> object:
    """One step of the documented equations; ``p`` has w_ih, w_hh, b_ih, b_hh (, w_hr)."""
    gi = x @ p["w_ih"].T + p["b_ih"]
    if mode == "LSTM":
        h, c = state
        gh = h @ p["w_hh"].T + p["b_hh"]
        i, f, g, o = np.split(gi + gh, 4, -1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        if "w_hr" in p:
            h = h @ p["w_hr"].T
        return h, c
    h = state
    gh = h @ p["w_hh"].T + p["b_hh"]
    if mode == "GRU":
        i_r, i_z, i_n = np.split(gi, 3, -1)
        h_r, h_z, h_n = np.split(gh, 3, -1)
        r, z = _sigmoid(i_r + h_r), _sigmoid(i_z + h_z)
        n = np.tanh(i_n + r * h_n)
        return (1 - z) * n + z * h
    pre = gi + gh
    return np.tanh(pre) if mode == "RNN_TANH" else np.maximum(pre, 0)


def _np_params(m: nn.RNNBase, layer: int, direction: int) -> dict[str, np.ndarray]:
    sfx = f"_l{layer}" + ("_reverse" if direction else "")
    p = {"w_ih": _np(getattr(m, "weight_ih" + sfx)), "w_hh": _np(getattr(m, "weight_hh" + sfx))}
    gates = p["w_ih"].shape[0]
    p["b_ih"] = _np(getattr(m, "bias_ih" + sfx)) if m.bias else np.zeros(gates)
    p["b_hh"] = _np(getattr(m, "bias_hh" + sfx)) if m.bias else np.zeros(gates)
    if m.proj_size:
        p["w_hr"] = _np(getattr(m, "weight_hr" + sfx))
    return p


def _np_rnn(m: nn.RNNBase, x: np.ndarray, h0: np.ndarray, c0: np.ndarray | None,
            lengths: list[int] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The whole layer on a (T, B, I) input, sequence by sequence (each of its own length):
    returns the padded output (zeros past each length), h_n and c_n."""
    steps, batch, _ = x.shape
    lengths = lengths or [steps] * batch
    dirs = 2 if m.bidirectional else 1
    outs = np.zeros((steps, batch, dirs * h0.shape[-1]))
    h_n, c_n = np.zeros_like(h0), None if c0 is None else np.zeros_like(c0)
    for b in range(batch):
        seq = x[:lengths[b], b]
        for layer in range(m.num_layers):
            per_dir = []
            for d in range(dirs):
                idx = layer * dirs + d
                p = _np_params(m, layer, d)
                state = (h0[idx, b], c0[idx, b]) if c0 is not None else h0[idx, b]
                ys = [None] * len(seq)
                order = range(len(seq) - 1, -1, -1) if d else range(len(seq))
                for t in order:
                    state = _np_cell(m.mode, seq[t], state, p)
                    ys[t] = state[0] if c0 is not None else state
                per_dir.append(np.stack(ys))
                if c0 is not None:
                    h_n[idx, b], c_n[idx, b] = state
                else:
                    h_n[idx, b] = state
            seq = np.concatenate(per_dir, -1)
        outs[:lengths[b], b] = seq
    return outs, h_n, c_n


CONFIGS = [
    ("RNN", {"nonlinearity": "tanh"}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 2}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "bias": False}),
]


def _make(kind: str, kw: dict, input_size: int = 3, hidden: int = 4) -> nn.RNNBase:
    torch.manual_seed(0)
    return getattr(nn, kind)(input_size, hidden, dtype=F64, **kw)


def _states(m: nn.RNNBase, batch: int, gen: np.random.Generator):
    dirs = 2 if m.bidirectional else 1
    real = m.proj_size or m.hidden_size
    h0 = gen.standard_normal((m.num_layers * dirs, batch, real))
    c0 = gen.standard_normal((m.num_layers * dirs, batch, m.hidden_size))
    return h0, (c0 if m.mode == "LSTM" else None)


@pytest.mark.parametrize("kind,kw", CONFIGS)
def test_layers_match_numpy(kind: str, kw: dict) -> None:
    m = _make(kind, kw)
    gen = np.random.default_rng(0)
    x = gen.standard_normal((5, 3, 3))
    h0, c0 = _states(m, 3, gen)
    want_o, want_h, want_c = _np_rnn(m, x, h0, c0)
    hx = torch.tensor(h0) if c0 is None else (torch.tensor(h0), torch.tensor(c0))
    out, state = m(torch.tensor(x), hx)
    np.testing.assert_allclose(_np(out), want_o, atol=1e-12)
    if c0 is None:
        np.testing.assert_allclose(_np(state), want_h, atol=1e-12)
    else:
        np.testing.assert_allclose(_np(state[0]), want_h, atol=1e-12)
        np.testing.assert_allclose(_np(state[1]), want_c, atol=1e-12)
    # no initial state means zeros
    out0, _ = m(torch.tensor(x))
    want0, _, _ = _np_rnn(m, x, np.zeros_like(h0), None if c0 is None else np.zeros_like(c0))
    np.testing.assert_allclose(_np(out0), want0, atol=1e-12)


@pytest.mark.parametrize("kind,kw", CONFIGS)
def test_packed_sequences_match_numpy(kind: str, kw: dict) -> None:
    m = _make(kind, kw)
    gen = np.random.default_rng(1)
    lengths = [2, 5, 3, 5]
    x = gen.standard_normal((5, 4, 3))
    h0, c0 = _states(m, 4, gen)
    want_o, want_h, want_c = _np_rnn(m, x, h0, c0, lengths)
    packed = rnn_utils.pack_padded_sequence(torch.tensor(x), lengths, enforce_sorted=False)
    hx = torch.tensor(h0) if c0 is None else (torch.tensor(h0), torch.tensor(c0))
    out, state = m(packed, hx)
    assert isinstance(out, rnn_utils.PackedSequence)
    padded, lens = rnn_utils.pad_packed_sequence(out)
    assert lens.tolist() == lengths
    np.testing.assert_allclose(_np(padded), want_o, atol=1e-12)
    h = state[0] if c0 is not None else state
    np.testing.assert_allclose(_np(h), want_h, atol=1e-12)
    if c0 is not None:
        np.testing.assert_allclose(_np(state[1]), want_c, atol=1e-12)


def test_batch_first_and_unbatched() -> None:
    m = _make("GRU", {"batch_first": True, "num_layers": 2})
    x = torch.randn(3, 5, 3, dtype=F64)
    out, h = m(x)
    ref = _make("GRU", {"num_layers": 2})
    ref.load_state_dict(m.state_dict())
    out2, h2 = ref(x.transpose(0, 1))
    torch.testing.assert_close(out, out2.transpose(0, 1))
    torch.testing.assert_close(h, h2)
    # unbatched: (T, I) input, (L, H) state
    lstm = _make("LSTM", {"num_layers": 2})
    seq = torch.randn(4, 3, dtype=F64)
    h0, c0 = torch.randn(2, 4, dtype=F64), torch.randn(2, 4, dtype=F64)
    o1, (h1, c1) = lstm(seq, (h0, c0))
    o2, (h2, c2) = lstm(seq.unsqueeze(1), (h0.unsqueeze(1), c0.unsqueeze(1)))
    assert o1.shape == (4, 4) and h1.shape == (2, 4)
    torch.testing.assert_close(o1, o2.squeeze(1))
    torch.testing.assert_close(c1, c2.squeeze(1))


def test_cells_match_numpy() -> None:
    gen = np.random.default_rng(2)
    x = gen.standard_normal((3, 3))
    h = gen.standard_normal((3, 4))
    c = gen.standard_normal((3, 4))
    for cls, mode, kw in [(nn.RNNCell, "RNN_TANH", {}),
                          (nn.RNNCell, "RNN_RELU", {"nonlinearity": "relu"}),
                          (nn.GRUCell, "GRU", {}), (nn.LSTMCell, "LSTM", {})]:
        cell = cls(3, 4, dtype=F64, **kw)
        p = {"w_ih": _np(cell.weight_ih), "w_hh": _np(cell.weight_hh),
             "b_ih": _np(cell.bias_ih), "b_hh": _np(cell.bias_hh)}
        if mode == "LSTM":
            got = cell(torch.tensor(x), (torch.tensor(h), torch.tensor(c)))
            want = _np_cell(mode, x, (h, c), p)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(_np(g), w, atol=1e-12)
            h1, c1 = cell(torch.tensor(x[0]))  # unbatched, zero state
            wh, wc = _np_cell(mode, x[0], (np.zeros(4), np.zeros(4)), p)
            np.testing.assert_allclose(_np(h1), wh, atol=1e-12)
            np.testing.assert_allclose(_np(c1), wc, atol=1e-12)
        else:
            got = cell(torch.tensor(x), torch.tensor(h))
            np.testing.assert_allclose(_np(got), _np_cell(mode, x, h, p), atol=1e-12)
            got1 = cell(torch.tensor(x[1]))
            np.testing.assert_allclose(_np(got1), _np_cell(mode, x[1], np.zeros(4), p),
                                       atol=1e-12)
            assert got1.shape == (4,)


def test_initialisation_range() -> None:
    torch.manual_seed(0)
    m = nn.LSTM(10, 16, num_layers=2, bidirectional=True, proj_size=8)
    bound = 1 / math.sqrt(16)
    for p in m.parameters():
        assert float(p.abs().max()) <= bound
        assert float(p.abs().max()) > bound * 0.5  # spread over the range, not all zero
    cell = nn.GRUCell(5, 9)
    assert all(float(p.abs().max()) <= 1 / 3 for p in cell.parameters())


# -- gradients -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind,kw", [
    ("RNN", {"bidirectional": True}), ("LSTM", {"proj_size": 1, "num_layers": 2}),
    ("GRU", {"bidirectional": True}),
])
def test_gradients_finite_differences(kind: str, kw: dict) -> None:
    m = _make(kind, kw, input_size=2, hidden=3)
    names = [n for n, _ in m.named_parameters()]
    x = torch.randn(2, 2, 2, dtype=F64)

    def fn(x: torch.Tensor, *params: torch.Tensor) -> torch.Tensor:
        for n, p in zip(names, params, strict=True):
            m._parameters[n] = p  # the leaves check_grad differentiates by
        out, state = m(x)
        h = state[0] if isinstance(state, tuple) else state
        return torch.cat([out.reshape(-1), h.reshape(-1)])

    params = [p.detach().clone() for p in m.parameters()]
    check_grad(fn, x, *params)


def test_packed_gradient_finite_differences() -> None:
    m = _make("LSTM", {"bidirectional": True}, input_size=1, hidden=2)
    x = torch.randn(3, 3, 1, dtype=F64)

    def fn(x: torch.Tensor) -> torch.Tensor:
        packed = rnn_utils.pack_padded_sequence(x, [2, 3, 1], enforce_sorted=False)
        out, (h, c) = m(packed)
        return torch.cat([out.data.reshape(-1), h.reshape(-1), c.reshape(-1)])

    check_grad(fn, x)


# -- nn.utils.rnn --------------------------------------------------------------------------------


def test_pack_pad_round_trip() -> None:
    seqs = [torch.randn(n, 2) for n in (3, 1, 4)]
    packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    assert packed.batch_sizes.tolist() == [3, 2, 2, 1]
    assert packed.sorted_indices.tolist() == [2, 0, 1]
    assert packed.unsorted_indices.tolist() == [1, 2, 0]
    # data is time-major over the sorted batch
    torch.testing.assert_close(packed.data[:3], torch.stack([seqs[2][0], seqs[0][0],
                                                             seqs[1][0]]))
    padded, lengths = rnn_utils.pad_packed_sequence(packed, batch_first=True,
                                                    padding_value=-1.0, total_length=6)
    assert padded.shape == (3, 6, 2) and lengths.tolist() == [3, 1, 4]
    for i, s in enumerate(seqs):
        torch.testing.assert_close(padded[i, :len(s)], s)
        assert bool((padded[i, len(s):] == -1).all())
    for a, b in zip(rnn_utils.unpack_sequence(packed), seqs, strict=True):
        torch.testing.assert_close(a, b)
    for a, b in zip(rnn_utils.unpad_sequence(padded, lengths, batch_first=True), seqs,
                    strict=True):
        torch.testing.assert_close(a, b)


def test_pad_sequence_sides_and_layout() -> None:
    a, b = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0])
    assert rnn_utils.pad_sequence([a, b]).tolist() == [[1.0, 4.0], [2.0, 0.0], [3.0, 0.0]]
    assert rnn_utils.pad_sequence([a, b], batch_first=True, padding_value=9,
                                  padding_side="left").tolist() == [[1, 2, 3], [9, 9, 4]]
    with pytest.raises(ValueError):
        rnn_utils.pad_sequence([a, b], padding_side="middle")


def test_pack_errors_and_sorted_packing() -> None:
    x = torch.randn(4, 2, 1)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        rnn_utils.pack_padded_sequence(x, [2, 3])
    packed = rnn_utils.pack_padded_sequence(x, torch.tensor([3, 2]))
    assert packed.sorted_indices is None and packed.unsorted_indices is None
    assert packed.batch_sizes.tolist() == [2, 2, 1]
    with pytest.raises(RuntimeError, match="greater than 0"):
        rnn_utils.pack_padded_sequence(x, [3, 0])
    with pytest.raises(ValueError, match="total_length"):
        rnn_utils.pad_packed_sequence(packed, total_length=2)
    packed_bf = rnn_utils.pack_padded_sequence(x.transpose(0, 1), [3, 2], batch_first=True)
    torch.testing.assert_close(packed_bf.data, packed.data)
    assert isinstance(packed, tuple) and packed._fields == (
        "data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert packed.to(torch.float64).data.dtype == torch.float64


# -- construction, errors, reprs, state_dict -----------------------------------------------------


REPRS = [
    (lambda: nn.RNN(3, 4), "RNN(3, 4)"),
    (lambda: nn.RNN(3, 4, 2, nonlinearity="relu", bias=False, batch_first=True, dropout=0.5,
                    bidirectional=True),
     "RNN(3, 4, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)"),
    (lambda: nn.LSTM(3, 4, proj_size=2), "LSTM(3, 4, proj_size=2)"),
    (lambda: nn.GRU(3, 4), "GRU(3, 4)"),
    (lambda: nn.RNNCell(3, 4, nonlinearity="relu", bias=False),
     "RNNCell(3, 4, bias=False, nonlinearity=relu)"),
    (lambda: nn.LSTMCell(3, 4), "LSTMCell(3, 4)"),
    (lambda: nn.GRUCell(3, 4, bias=False), "GRUCell(3, 4, bias=False)"),
]


@pytest.mark.parametrize("make,expected", REPRS)
def test_reprs(make, expected: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert repr(make()) == expected


def test_state_dict_keys_are_pytorchs() -> None:
    # printed by PyTorch 2.13 for nn.LSTM(3, 4, num_layers=2, proj_size=2, bidirectional=True)
    assert list(nn.LSTM(3, 4, num_layers=2, proj_size=2, bidirectional=True).state_dict()) == [
        "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0",
        "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
        "bias_hh_l0_reverse", "weight_hr_l0_reverse", "weight_ih_l1", "weight_hh_l1",
        "bias_ih_l1", "bias_hh_l1", "weight_hr_l1", "weight_ih_l1_reverse",
        "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse",
        "weight_hr_l1_reverse"]
    m = nn.GRU(3, 4, num_layers=2, bias=False)
    assert list(m.state_dict()) == ["weight_ih_l0", "weight_hh_l0", "weight_ih_l1",
                                    "weight_hh_l1"]
    assert m.weight_ih_l0.shape == (12, 3) and m.weight_hh_l1.shape == (12, 4)
    assert m._flat_weights_names == list(m.state_dict())
    assert list(nn.LSTMCell(3, 4).state_dict()) == ["weight_ih", "weight_hh", "bias_ih",
                                                    "bias_hh"]
    lstm = nn.LSTM(3, 5, proj_size=2)
    assert lstm.weight_hh_l0.shape == (20, 2) and lstm.weight_hr_l0.shape == (2, 5)
    lstm.flatten_parameters()  # a no-op, but must exist


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="proj_size has to be smaller"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="dropout should be a number"):
        nn.LSTM(3, 4, dropout=1.5)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.RNN(3, 0)


def test_forward_errors() -> None:
    m = nn.LSTM(3, 4)
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D"):
        m(torch.randn(1, 2, 3, 3))
    with pytest.raises(RuntimeError, match=r"input\.size\(-1\) must be equal to input_size"):
        m(torch.randn(5, 2, 2))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 2, 4\), got "
                                           r"\[1, 3, 4\]"):
        m(torch.randn(5, 2, 3), (torch.zeros(1, 3, 4), torch.zeros(1, 2, 4)))
    g = nn.GRU(3, 4)
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        g(torch.randn(5, 2, 3), torch.zeros(2, 2, 4))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D"):
        g(torch.randn(5, 3), torch.zeros(1, 1, 4))


def test_dropout_between_layers() -> None:
    torch.manual_seed(0)
    m = nn.GRU(3, 8, num_layers=2, dropout=0.5)
    x = torch.randn(4, 2, 3)
    m.eval()
    a, _ = m(x)
    b, _ = m(x)
    torch.testing.assert_close(a, b)
    m.train()
    c, _ = m(x)
    assert not torch.allclose(a, c)  # dropout acted on the first layer's output
    m1 = nn.GRU(3, 8, num_layers=1)
    m1.train()
    torch.testing.assert_close(m1(x)[0], m1(x)[0])  # no dropout after the last layer


def test_padding_gradients_finite_differences() -> None:
    a, b = torch.randn(3, 2, dtype=F64), torch.randn(1, 2, dtype=F64)

    def padded(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return rnn_utils.pad_sequence([a, b], padding_value=0.5, padding_side="left")

    check_grad(padded, a, b)

    def round_trip(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        packed = rnn_utils.pack_sequence([b, a], enforce_sorted=False)
        return rnn_utils.pad_packed_sequence(packed, batch_first=True, total_length=4)[0]

    check_grad(round_trip, a, b)
    out = round_trip(a, b)
    torch.testing.assert_close(out[1, :3], a)
    torch.testing.assert_close(out[0, :1], b)
    assert float(out[0, 1:].abs().max()) == 0.0


def test_initial_state_gradients_packed_unsorted() -> None:
    m = _make("LSTM", {}, input_size=1, hidden=2)
    x = torch.randn(3, 3, 1, dtype=F64)

    def fn(h0: torch.Tensor, c0: torch.Tensor) -> torch.Tensor:
        packed = rnn_utils.pack_padded_sequence(x, [1, 3, 2], enforce_sorted=False)
        out, (h, c) = m(packed, (h0, c0))
        return torch.cat([out.data.reshape(-1), h.reshape(-1), c.reshape(-1)])

    check_grad(fn, torch.randn(1, 3, 2, dtype=F64), torch.randn(1, 3, 2, dtype=F64))
