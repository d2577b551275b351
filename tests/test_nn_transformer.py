"""MultiheadAttention and the transformer layers: outputs against numpy re-implementations of
the documented equations (with the module's own weights), masks, gradients by finite
differences in float64, reprs and state_dict keys as PyTorch 2.13 prints them."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from numgrad import check_grad

import torch
import torch.nn as nn
import torch.nn.functional as F

F64 = torch.float64


def _np(t: torch.Tensor | None) -> np.ndarray | None:
    return None if t is None else t.detach().numpy()


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _additive(mask: np.ndarray | None) -> np.ndarray | None:
    if mask is None or mask.dtype != np.bool_:
        return mask
    return np.where(mask, -np.inf, 0.0)


def _np_mha(m: nn.MultiheadAttention, q: np.ndarray, k: np.ndarray, v: np.ndarray,
            key_padding_mask: np.ndarray | None = None,
            attn_mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Sequence-first batched (L, N, E) inputs; returns the output (L, N, E) and the per-head
    weights (N, H, L, S)."""
    e, h = m.embed_dim, m.num_heads
    if m.in_proj_weight is not None:
        wq, wk, wv = np.split(_np(m.in_proj_weight), 3)
    else:
        wq, wk, wv = _np(m.q_proj_weight), _np(m.k_proj_weight), _np(m.v_proj_weight)
    bq, bk, bv = (np.split(_np(m.in_proj_bias), 3) if m.in_proj_bias is not None
                  else (np.zeros(e),) * 3)
    qp, kp, vp = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv   # (L|S, N, E)
    n = q.shape[1]
    kpm = _additive(key_padding_mask)
    am = _additive(attn_mask)
    if m.bias_k is not None:
        kp = np.concatenate([kp, np.broadcast_to(_np(m.bias_k), (1, n, e))], 0)
        vp = np.concatenate([vp, np.broadcast_to(_np(m.bias_v), (1, n, e))], 0)
        kpm = None if kpm is None else np.pad(kpm, ((0, 0), (0, 1)))
        am = None if am is None else np.pad(am, ((0, 0),) * (am.ndim - 1) + ((0, 1),))
    if m.add_zero_attn:
        kp = np.concatenate([kp, np.zeros((1, n, e))], 0)
        vp = np.concatenate([vp, np.zeros((1, n, e))], 0)
        kpm = None if kpm is None else np.pad(kpm, ((0, 0), (0, 1)))
        am = None if am is None else np.pad(am, ((0, 0),) * (am.ndim - 1) + ((0, 1),))
    d = e // h
    L, S = qp.shape[0], kp.shape[0]
    out = np.zeros((L, n, e))
    weights = np.zeros((n, h, L, S))
    for b in range(n):
        for head in range(h):
            sl = slice(head * d, (head + 1) * d)
            scores = qp[:, b, sl] @ kp[:, b, sl].T / math.sqrt(d)
            if am is not None:
                scores = scores + (am if am.ndim == 2 else am[b * h + head])
            if kpm is not None:
                scores = scores + kpm[b][None, :]
            w = _softmax(scores)
            weights[b, head] = w
            out[:, b, sl] = w @ vp[:, b, sl]
    out = out @ _np(m.out_proj.weight).T
    if m.out_proj.bias is not None:
        out = out + _np(m.out_proj.bias)
    return out, weights


def _load_random(m: nn.Module, seed: int, scale: float = 0.3) -> nn.Module:
    gen = np.random.default_rng(seed)
    m.load_state_dict({k: torch.tensor(gen.standard_normal(tuple(v.shape)) * scale)
                       for k, v in m.state_dict().items()})
    return m.eval()


@pytest.fixture
def qkv() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gen = np.random.default_rng(0)
    return (gen.standard_normal((4, 3, 8)), gen.standard_normal((5, 3, 8)),
            gen.standard_normal((5, 3, 8)))


KPM = np.array([[False] * 5, [False, False, False, True, True], [True, False, False, False,
                                                                  False]])


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_masks_match_numpy(qkv, need_weights: bool) -> None:
    q, k, v = qkv
    m = _load_random(nn.MultiheadAttention(8, 2, dtype=F64), 1)
    gen = np.random.default_rng(2)
    float_mask = gen.standard_normal((4, 5))
    bool_mask = gen.random((4, 5)) < 0.3
    bool_mask[:, 0] = False  # every query keeps a key
    bool_3d = gen.random((6, 4, 5)) < 0.3
    bool_3d[..., 1] = False
    for kpm, am in [(None, None), (KPM, float_mask), (None, bool_mask), (KPM, bool_3d)]:
        out, w = m(torch.tensor(q), torch.tensor(k), torch.tensor(v),
                   key_padding_mask=None if kpm is None else torch.tensor(kpm),
                   attn_mask=None if am is None else torch.tensor(am),
                   need_weights=need_weights)
        want_out, want_w = _np_mha(m, q, k, v, kpm, am)
        np.testing.assert_allclose(_np(out), want_out, atol=1e-12)
        if need_weights:
            np.testing.assert_allclose(_np(w), want_w.mean(1), atol=1e-12)
        else:
            assert w is None
    _, w = m(torch.tensor(q), torch.tensor(k), torch.tensor(v), average_attn_weights=False)
    np.testing.assert_allclose(_np(w), _np_mha(m, q, k, v)[1], atol=1e-12)


def test_mha_kdim_vdim_bias_kv_zero_attn_batch_first() -> None:
    gen = np.random.default_rng(3)
    q, k, v = (gen.standard_normal((4, 3, 8)), gen.standard_normal((5, 3, 3)),
               gen.standard_normal((5, 3, 5)))
    m = _load_random(nn.MultiheadAttention(8, 4, kdim=3, vdim=5, add_bias_kv=True,
                                           add_zero_attn=True, batch_first=True, dtype=F64), 4)
    out, w = m(*(torch.tensor(t).transpose(0, 1) for t in (q, k, v)),
               key_padding_mask=torch.tensor(KPM))
    want_out, want_w = _np_mha(m, q, k, v, KPM)
    np.testing.assert_allclose(_np(out), want_out.transpose(1, 0, 2), atol=1e-12)
    np.testing.assert_allclose(_np(w), want_w.mean(1), atol=1e-12)
    assert w.shape == (3, 4, 7)  # S + bias_k + zero_attn
    # unbatched: (L, E) inputs give (L, E) output and (L, S) weights
    out1, w1 = m(torch.tensor(q[:, 0]), torch.tensor(k[:, 0]), torch.tensor(v[:, 0]))
    want1, wantw1 = _np_mha(m, q[:, :1], k[:, :1], v[:, :1])
    np.testing.assert_allclose(_np(out1), want1[:, 0], atol=1e-12)
    np.testing.assert_allclose(_np(w1), wantw1[0].mean(0), atol=1e-12)


def test_multi_head_attention_forward_functional(qkv) -> None:
    q, k, v = (torch.tensor(t) for t in qkv)
    m = _load_random(nn.MultiheadAttention(8, 2, dtype=F64), 5)
    out, w = F.multi_head_attention_forward(
        q, k, v, 8, 2, m.in_proj_weight, m.in_proj_bias, None, None, False, 0.0,
        m.out_proj.weight, m.out_proj.bias, training=False)
    want_out, want_w = _np_mha(m, *qkv)
    np.testing.assert_allclose(_np(out), want_out, atol=1e-12)
    np.testing.assert_allclose(_np(w), want_w.mean(1), atol=1e-12)


def test_mha_causal_and_errors(qkv) -> None:
    q = torch.tensor(qkv[0])
    m = nn.MultiheadAttention(8, 2, dtype=F64).eval()
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(q, q, q, is_causal=True)
    mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=F64)
    a, _ = m(q, q, q, attn_mask=mask, is_causal=True, need_weights=False)
    b, wb = m(q, q, q, attn_mask=mask)
    torch.testing.assert_close(a, b)
    assert float(wb[:, 0, 1:].abs().max()) == 0.0  # the first query sees only itself
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is"):
        m(q, q, q, attn_mask=torch.zeros(3, 4, dtype=F64))
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(8, 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 1)


def test_mha_parameters_and_init() -> None:
    torch.manual_seed(0)
    m = nn.MultiheadAttention(8, 2)
    assert list(m.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                    "out_proj.bias"]
    assert m.in_proj_weight.shape == (24, 8)
    assert float(m.in_proj_bias.abs().max()) == 0.0 and float(m.out_proj.bias.abs().max()) == 0
    bound = math.sqrt(6.0 / (24 + 8))  # xavier_uniform_ on (3E, E)
    assert bound * 0.5 < float(m.in_proj_weight.abs().max()) <= bound
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(m.out_proj, nn.Linear)
    m2 = nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True, bias=False)
    assert list(m2.state_dict()) == ["q_proj_weight", "k_proj_weight", "v_proj_weight",
                                     "bias_k", "bias_v", "out_proj.weight"]
    assert m2.in_proj_weight is None and m2.k_proj_weight.shape == (8, 3)


# -- transformer layers ------------------------------------------------------------------------


def _np_ln(x: np.ndarray, ln: nn.LayerNorm) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + ln.eps) * _np(ln.weight) + _np(ln.bias)


def _np_linear(x: np.ndarray, lin: nn.Linear) -> np.ndarray:
    return x @ _np(lin.weight).T + _np(lin.bias)


_erf = np.vectorize(math.erf)
_ACTS = {"relu": lambda x: np.maximum(x, 0), "gelu": lambda x: 0.5 * x * (1 + _erf(x / 2 ** .5))}


def _np_encoder_layer(layer: nn.TransformerEncoderLayer, x: np.ndarray, act: str,
                      mask: np.ndarray | None = None,
                      kpm: np.ndarray | None = None) -> np.ndarray:
    def sa(y: np.ndarray) -> np.ndarray:
        return _np_mha(layer.self_attn, y, y, y, kpm, mask)[0]

    def ff(y: np.ndarray) -> np.ndarray:
        return _np_linear(_ACTS[act](_np_linear(y, layer.linear1)), layer.linear2)

    if layer.norm_first:
        x = x + sa(_np_ln(x, layer.norm1))
        return x + ff(_np_ln(x, layer.norm2))
    x = _np_ln(x + sa(x), layer.norm1)
    return _np_ln(x + ff(x), layer.norm2)


def _np_decoder_layer(layer: nn.TransformerDecoderLayer, x: np.ndarray, mem: np.ndarray,
                      act: str, tgt_mask: np.ndarray | None = None,
                      mem_kpm: np.ndarray | None = None) -> np.ndarray:
    def sa(y: np.ndarray) -> np.ndarray:
        return _np_mha(layer.self_attn, y, y, y, None, tgt_mask)[0]

    def ca(y: np.ndarray) -> np.ndarray:
        return _np_mha(layer.multihead_attn, y, mem, mem, mem_kpm)[0]

    def ff(y: np.ndarray) -> np.ndarray:
        return _np_linear(_ACTS[act](_np_linear(y, layer.linear1)), layer.linear2)

    if layer.norm_first:
        x = x + sa(_np_ln(x, layer.norm1))
        x = x + ca(_np_ln(x, layer.norm2))
        return x + ff(_np_ln(x, layer.norm3))
    x = _np_ln(x + sa(x), layer.norm1)
    x = _np_ln(x + ca(x), layer.norm2)
    return _np_ln(x + ff(x), layer.norm3)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("act", ["relu", "gelu"])
def test_encoder_layer_matches_numpy(qkv, norm_first: bool, act: str) -> None:
    x = qkv[1]
    layer = _load_random(nn.TransformerEncoderLayer(8, 2, 16, activation=act,
                                                    norm_first=norm_first, dtype=F64), 6)
    mask = np.random.default_rng(7).standard_normal((5, 5))
    got = layer(torch.tensor(x), src_mask=torch.tensor(mask),
                src_key_padding_mask=torch.tensor(KPM))
    np.testing.assert_allclose(_np(got), _np_encoder_layer(layer, x, act, mask, KPM),
                               atol=1e-10)
    bf = _load_random(nn.TransformerEncoderLayer(8, 2, 16, activation=act, batch_first=True,
                                                 norm_first=norm_first, dtype=F64), 6)
    got_bf = bf(torch.tensor(x).transpose(0, 1))
    np.testing.assert_allclose(_np(got_bf), _np_encoder_layer(layer, x, act).transpose(1, 0, 2),
                               atol=1e-10)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_numpy(qkv, norm_first: bool) -> None:
    tgt, mem = qkv[0], qkv[1]
    layer = _load_random(nn.TransformerDecoderLayer(8, 2, 16, norm_first=norm_first,
                                                    dtype=F64), 8)
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=F64)
    got = layer(torch.tensor(tgt), torch.tensor(mem), tgt_mask=tgt_mask,
                memory_key_padding_mask=torch.tensor(KPM), tgt_is_causal=True)
    want = _np_decoder_layer(layer, tgt, mem, "relu", _np(tgt_mask), KPM)
    np.testing.assert_allclose(_np(got), want, atol=1e-10)


def test_transformer_composes_encoder_and_decoder(qkv) -> None:
    src, tgt = qkv[1], qkv[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = _load_random(nn.Transformer(8, 2, 2, 1, 16, activation="gelu", dtype=F64), 9)
    mem = src
    for layer in t.encoder.layers:
        mem = _np_encoder_layer(layer, mem, "gelu", None, KPM)
    mem = _np_ln(mem, t.encoder.norm)
    tgt_mask = t.generate_square_subsequent_mask(4, dtype=F64)
    out = _np_decoder_layer(t.decoder.layers[0], tgt, mem, "gelu", _np(tgt_mask), KPM)
    out = _np_ln(out, t.decoder.norm)
    got = t(torch.tensor(src), torch.tensor(tgt), tgt_mask=tgt_mask,
            src_key_padding_mask=torch.tensor(KPM), memory_key_padding_mask=torch.tensor(KPM))
    np.testing.assert_allclose(_np(got), out, atol=1e-10)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        t(torch.tensor(src), torch.tensor(tgt[:, :2]))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt"):
        t(torch.tensor(src[..., :4]), torch.tensor(tgt[..., :4]))


def test_square_subsequent_mask_and_clones() -> None:
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    inf = float("-inf")
    assert mask.dtype == torch.float32
    assert mask.tolist() == [[0.0, inf, inf], [0.0, 0.0, inf], [0.0, 0.0, 0.0]]
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    enc = nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
    assert len(enc.layers) == 3 and enc.num_layers == 3
    # deep copies: the same initial values, separate parameters
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    torch.testing.assert_close(enc.layers[0].linear1.weight, enc.layers[2].linear1.weight)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    custom = nn.TransformerEncoderLayer(8, 2, 16, activation=torch.tanh, dropout=0.0).eval()
    assert custom.activation is torch.tanh  # a callable activation is used as is
    relu = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0).eval()
    relu.load_state_dict(custom.state_dict())
    x = torch.randn(2, 1, 8)
    assert not torch.allclose(custom(x), relu(x))


def test_dropout_only_in_training() -> None:
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = torch.randn(4, 2, 8)
    layer.eval()
    torch.testing.assert_close(layer(x), layer(x))
    layer.train()
    assert not torch.allclose(layer(x), layer(x))


# -- gradients ---------------------------------------------------------------------------------


def test_mha_gradients_finite_differences() -> None:
    torch.manual_seed(0)
    m = nn.MultiheadAttention(4, 2, add_bias_kv=True, dtype=F64).eval()
    q, k = torch.randn(2, 1, 4, dtype=F64), torch.randn(3, 1, 4, dtype=F64)
    mask = torch.tensor([[False, True, False], [False, False, False]])

    def fn(q: torch.Tensor, k: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        m._parameters["in_proj_weight"] = w
        out, weights = m(q, k, k, attn_mask=mask)
        return torch.cat([out.reshape(-1), weights.reshape(-1)])

    check_grad(fn, q, k, m.in_proj_weight.detach().clone())

    def fast(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:  # the fused attention path
        return m(q, k, k, attn_mask=mask, need_weights=False)[0]

    check_grad(fast, q, k)


def test_encoder_layer_gradients_finite_differences() -> None:
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation="gelu",
                                       dtype=F64).eval()
    x = torch.randn(3, 1, 4, dtype=F64)
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=F64)
    check_grad(lambda x: layer(x, src_mask=mask), x)


# -- reprs and state_dict keys (printed by PyTorch 2.13) ---------------------------------------

MHA_REPR = """MultiheadAttention(
  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)
)"""

ENCODER_LAYER_REPR = """TransformerEncoderLayer(
  (self_attn): MultiheadAttention(
    (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)
  )
  (linear1): Linear(in_features=8, out_features=16, bias=True)
  (dropout): Dropout(p=0.1, inplace=False)
  (linear2): Linear(in_features=16, out_features=8, bias=True)
  (norm1): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)
  (norm2): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)
  (dropout1): Dropout(p=0.1, inplace=False)
  (dropout2): Dropout(p=0.1, inplace=False)
)"""

TRANSFORMER_KEYS = [
    "encoder.layers.0.self_attn.in_proj_weight", "encoder.layers.0.self_attn.in_proj_bias",
    "encoder.layers.0.self_attn.out_proj.weight", "encoder.layers.0.self_attn.out_proj.bias",
    "encoder.layers.0.linear1.weight", "encoder.layers.0.linear1.bias",
    "encoder.layers.0.linear2.weight", "encoder.layers.0.linear2.bias",
    "encoder.layers.0.norm1.weight", "encoder.layers.0.norm1.bias",
    "encoder.layers.0.norm2.weight", "encoder.layers.0.norm2.bias", "encoder.norm.weight",
    "encoder.norm.bias", "decoder.layers.0.self_attn.in_proj_weight",
    "decoder.layers.0.self_attn.in_proj_bias", "decoder.layers.0.self_attn.out_proj.weight",
    "decoder.layers.0.self_attn.out_proj.bias", "decoder.layers.0.multihead_attn.in_proj_weight",
    "decoder.layers.0.multihead_attn.in_proj_bias",
    "decoder.layers.0.multihead_attn.out_proj.weight",
    "decoder.layers.0.multihead_attn.out_proj.bias", "decoder.layers.0.linear1.weight",
    "decoder.layers.0.linear1.bias", "decoder.layers.0.linear2.weight",
    "decoder.layers.0.linear2.bias", "decoder.layers.0.norm1.weight",
    "decoder.layers.0.norm1.bias", "decoder.layers.0.norm2.weight",
    "decoder.layers.0.norm2.bias", "decoder.layers.0.norm3.weight",
    "decoder.layers.0.norm3.bias", "decoder.norm.weight", "decoder.norm.bias",
]


def test_reprs_and_keys() -> None:
    assert repr(nn.MultiheadAttention(8, 2)) == MHA_REPR
    assert repr(nn.MultiheadAttention(8, 2, kdim=3, vdim=5, bias=False)) == MHA_REPR.replace(
        "bias=True", "bias=False")
    assert repr(nn.TransformerEncoderLayer(8, 2, 16)) == ENCODER_LAYER_REPR
    dec = repr(nn.TransformerDecoderLayer(8, 2, 16, activation="gelu"))
    assert "(multihead_attn): MultiheadAttention(" in dec
    assert "(norm3): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)" in dec
    assert dec.endswith("  (dropout3): Dropout(p=0.1, inplace=False)\n)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = nn.Transformer(8, 2, 1, 1, 16)
    assert list(t.state_dict()) == TRANSFORMER_KEYS
    assert repr(t).startswith("Transformer(\n  (encoder): TransformerEncoder(\n    (layers): "
                              "ModuleList(\n      (0): TransformerEncoderLayer(\n")
    assert "    (norm): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)\n  )\n" \
           "  (decoder): TransformerDecoder(" in repr(t)
    # a Module activation is a child and shows in the repr
    gelu = repr(nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU()))
    assert gelu.endswith("  (activation): GELU(approximate='none')\n)")
