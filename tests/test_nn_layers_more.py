"""Transposed convolutions, unpooling/LP/adaptive-max pooling, group/RMS/instance/local-response
norms, channel and alpha dropouts, embeddings: values against numpy re-implementations of the
documented formulas, gradients against finite differences (float64), errors."""

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


def _rand(*shape, seed=0):
    return torch.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=F64)


# --------------------------------------------------------------------------- conv transpose


def _np_conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation):
    """Scatter every input element times the kernel into the (uncropped) output."""
    n, cin = x.shape[:2]
    sp = x.shape[2:]
    k = w.shape[2:]
    d = len(sp)
    cout_g = w.shape[1]
    full = [(sp[i] - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1 + output_padding[i]
            for i in range(d)]
    out = np.zeros((n, cout_g * groups, *full))
    cin_g = cin // groups
    for ci in range(cin):
        g = ci // cin_g
        for pos in np.ndindex(*sp):
            for kp in np.ndindex(*k):
                o = tuple(pos[i] * stride[i] + kp[i] * dilation[i] for i in range(d))
                for co in range(cout_g):
                    out[(slice(None), g * cout_g + co, *o)] += x[(slice(None), ci, *pos)] * \
                        w[(ci, co, *kp)]
    crop = tuple(slice(padding[i], full[i] - padding[i]) for i in range(d))
    out = out[(slice(None), slice(None), *crop)]
    if b is not None:
        out = out + b.reshape(1, -1, *([1] * d))
    return out


@pytest.mark.parametrize("n,stride,padding,output_padding,groups,dilation", [
    (1, (2,), (1,), (1,), 1, (1,)),
    (2, (2, 1), (1, 0), (1, 0), 2, (1, 2)),
    (3, (1, 2, 1), (0, 1, 0), (0, 0, 0), 1, (1, 1, 2)),
])
def test_conv_transpose_values(n, stride, padding, output_padding, groups, dilation):
    x = _rand(2, 4, *([3] * n))
    w = _rand(4, 3, *([2] * n), seed=1)
    b = _rand(3 * groups, seed=2)
    fn = getattr(F, f"conv_transpose{n}d")
    got = fn(x, w, b, stride, padding, output_padding, groups, dilation)
    want = _np_conv_transpose(x.numpy(), w.numpy(), b.numpy(), stride, padding, output_padding,
                              groups, dilation)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-10)


def test_conv_transpose_module_output_size_and_grad():
    m = nn.ConvTranspose2d(4, 4, (3, 2), stride=(2, 1), padding=(1, 0), groups=2,
                           dilation=(1, 2), dtype=F64)
    assert tuple(m.weight.shape) == (4, 2, 3, 2)
    x = _rand(2, 4, 5, 3)
    assert tuple(m(x).shape) == (2, 4, 9, 5)
    out = m(x, output_size=[10, 5])
    assert tuple(out.shape) == (2, 4, 10, 5)
    want = _np_conv_transpose(x.numpy(), m.weight.detach().numpy(), m.bias.detach().numpy(),
                              (2, 1), (1, 0), (1, 0), 2, (1, 2))
    np.testing.assert_allclose(out.detach().numpy(), want, atol=1e-10)
    assert tuple(m(x, output_size=[2, 4, 10, 5]).shape) == (2, 4, 10, 5)
    with pytest.raises(ValueError, match="valid sizes range from"):
        m(x, output_size=[11, 5])
    # unbatched input
    assert tuple(m(x[0]).shape) == (4, 9, 5)
    check_grad(lambda a, w: F.conv_transpose1d(a, w, None, 2, 1, 1), _rand(1, 2, 3),
               _rand(2, 2, 3, seed=3))


def test_conv_transpose_errors():
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.ConvTranspose1d(3, 2, 3, groups=2)
    with pytest.raises(RuntimeError, match="Expected 2D"):
        nn.ConvTranspose1d(2, 2, 3)(torch.zeros(2, 2, 2, 4))


# --------------------------------------------------------------------------- pooling


def _np_adaptive_max(x, outs):
    n = len(outs)
    sizes = x.shape[-n:]
    lead = x.shape[:-n]
    vals = np.zeros((*lead, *outs))
    idx = np.zeros((*lead, *outs), dtype=np.int64)
    for lp in np.ndindex(*lead):
        for op in np.ndindex(*outs):
            sl = tuple(slice(op[i] * sizes[i] // outs[i],
                             -(-(op[i] + 1) * sizes[i] // outs[i])) for i in range(n))
            win = x[lp][sl]
            k = int(np.argmax(win))
            pos = np.unravel_index(k, win.shape)
            vals[lp + op] = win[pos]
            idx[lp + op] = np.ravel_multi_index(
                tuple(sl[i].start + pos[i] for i in range(n)), sizes)
    return vals, idx


@pytest.mark.parametrize("n,shape,outs", [
    (1, (2, 3, 7), (3,)), (2, (2, 2, 5, 7), (3, 4)), (2, (3, 5, 6), (2, 6)),
    (3, (1, 2, 3, 4, 5), (2, 3, 2)),
])
def test_adaptive_max_pool_indices(n, shape, outs):
    x = _rand(*shape)
    fn = getattr(F, f"adaptive_max_pool{n}d")
    vals, idx = fn(x, outs, return_indices=True)
    want_v, want_i = _np_adaptive_max(x.numpy(), outs)
    np.testing.assert_allclose(vals.numpy(), want_v)
    np.testing.assert_array_equal(idx.numpy(), want_i)
    assert idx.dtype == torch.int64
    mod = getattr(nn, f"AdaptiveMaxPool{n}d")(outs, return_indices=True)
    np.testing.assert_array_equal(mod(x)[1].numpy(), want_i)
    np.testing.assert_allclose(getattr(nn, f"AdaptiveMaxPool{n}d")(outs)(x).numpy(), want_v)


def test_adaptive_max_pool_none_size_and_grad():
    x = _rand(2, 4, 5)
    vals, idx = F.adaptive_max_pool2d(x, (None, 2), return_indices=True)
    assert tuple(vals.shape) == (2, 4, 2)
    np.testing.assert_array_equal(idx.numpy(), _np_adaptive_max(x.numpy(), (4, 2))[1])
    check_grad(lambda a: F.adaptive_max_pool2d(a, (2, 3)), _rand(1, 5, 7))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_roundtrip(n):
    x = _rand(2, 3, *([4] * n))
    vals, idx = getattr(F, f"max_pool{n}d")(x, 2, return_indices=True)
    up = getattr(F, f"max_unpool{n}d")(vals, idx, 2)
    want = np.zeros(x.numel())
    flat_x = x.reshape(2, 3, -1).numpy()
    want = np.zeros_like(flat_x)
    for b in range(2):
        for c in range(3):
            for v, i in zip(vals[b, c].reshape(-1).tolist(), idx[b, c].reshape(-1).tolist()):
                want[b, c, i] = v
    np.testing.assert_allclose(up.reshape(2, 3, -1).numpy(), want)
    mod = getattr(nn, f"MaxUnpool{n}d")(2)
    np.testing.assert_allclose(mod(vals, idx).numpy(), up.numpy())


def test_max_unpool_output_size_and_errors():
    x = _rand(1, 2, 5, 7)
    vals, idx = F.max_pool2d(x, 2, return_indices=True)
    up = nn.MaxUnpool2d(2)(vals, idx, output_size=x.shape)
    assert tuple(up.shape) == (1, 2, 5, 7)
    mask = up != 0
    np.testing.assert_allclose(up[mask].numpy(), x[mask].numpy())
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool2d(vals, idx, 2, output_size=(9, 7))
    with pytest.raises(RuntimeError, match="shape of indices"):
        F.max_unpool2d(vals, idx[..., :1], 2)
    check_grad(lambda v: F.max_unpool1d(v, torch.tensor([[[1, 2, 5]]]), 2), _rand(1, 1, 3))


def test_lp_pool_values_and_grad():
    x = _rand(2, 3, 5, 7).abs() + 0.1
    got = F.lp_pool2d(x, 3.0, (2, 3), stride=2, ceil_mode=True)
    xn = x.numpy()
    oh, ow = 3, 3  # ceil((5-2)/2)+1, ceil((7-3)/2)+1
    want = np.zeros((2, 3, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xn[:, :, 2 * i: 2 * i + 2, 2 * j: 2 * j + 3]
            # PyTorch's definition: the mean over the in-bounds part of a window (ceil_mode's
            # last windows are cut short) times the full window size
            want[:, :, i, j] = ((win ** 3).mean((-1, -2)) * 6) ** (1 / 3)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)
    got1 = nn.LPPool1d(2, 2)(x[:, :, 0])
    want1 = np.sqrt((xn[:, :, 0, 0:6:2] ** 2) + (xn[:, :, 0, 1:7:2] ** 2))
    np.testing.assert_allclose(got1.numpy(), want1, rtol=1e-10)
    got3 = nn.LPPool3d(1, (1, 2, 2))(x.unsqueeze(0))
    assert tuple(got3.shape) == (1, 2, 3, 2, 3)
    check_grad(lambda a: F.lp_pool1d(a, 2.0, 2), _rand(1, 2, 4).abs() + 0.5)


# --------------------------------------------------------------------------- normalisation


def test_group_norm_values_and_grad():
    x = _rand(2, 6, 3, 4)
    w, b = _rand(6, seed=1), _rand(6, seed=2)
    got = F.group_norm(x, 3, w, b, 1e-3)
    xn = x.numpy().reshape(2, 3, -1)
    want = (xn - xn.mean(-1, keepdims=True)) / np.sqrt(xn.var(-1, keepdims=True) + 1e-3)
    want = want.reshape(2, 6, 3, 4) * w.numpy().reshape(1, 6, 1, 1) + \
        b.numpy().reshape(1, 6, 1, 1)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-10)
    m = nn.GroupNorm(3, 6, dtype=F64)
    np.testing.assert_allclose(m(x).detach().numpy(),
                               F.group_norm(x, 3).numpy(), atol=1e-12)
    assert nn.GroupNorm(3, 6, bias=False).bias is None
    check_grad(lambda a, w, b: F.group_norm(a, 2, w, b), _rand(2, 4, 3), _rand(4, seed=1),
               _rand(4, seed=2))
    with pytest.raises(ValueError, match="divisible by num_groups"):
        nn.GroupNorm(4, 6)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(x, 4)


def test_rms_norm_values_eps_and_grad():
    x = _rand(2, 3, 4)
    w = _rand(3, 4, seed=1)
    got = F.rms_norm(x, (3, 4), w, 1e-5)
    xn = x.numpy()
    want = xn / np.sqrt((xn ** 2).mean((-1, -2), keepdims=True) + 1e-5) * w.numpy()
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    # eps=None uses the dtype's machine epsilon
    z = torch.zeros(2, 4)
    z[0, 0] = 1e-4
    got = F.rms_norm(z, [4])
    eps = float(np.finfo(np.float32).eps)
    want = 1e-4 / math.sqrt(1e-8 / 4 + eps)
    assert abs(float(got[0, 0]) - want) < 1e-3 * want
    m = nn.RMSNorm(4, dtype=F64)
    np.testing.assert_allclose(m(x).detach().numpy(),
                               xn / np.sqrt((xn ** 2).mean(-1, keepdims=True) +
                                            np.finfo(np.float64).eps), atol=1e-12)
    check_grad(lambda a, w: F.rms_norm(a, [4], w), _rand(2, 4), _rand(4, seed=3))
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.rms_norm(x, [3])


def test_instance_norm_values_running_stats_and_module():
    x = _rand(2, 4, 5, 3)
    w, b = _rand(4, seed=1), _rand(4, seed=2)
    rm = _rand(4, seed=3)
    rv = _rand(4, seed=4).abs() + 0.5
    rm0, rv0 = rm.numpy().copy(), rv.numpy().copy()
    got = F.instance_norm(x, rm, rv, w, b, True, 0.2, 1e-4)
    xn = x.numpy().reshape(2, 4, -1)
    mean, var = xn.mean(-1), xn.var(-1)
    want = (xn - mean[..., None]) / np.sqrt(var[..., None] + 1e-4)
    want = want.reshape(x.shape) * w.numpy()[None, :, None, None] + \
        b.numpy()[None, :, None, None]
    np.testing.assert_allclose(got.numpy(), want, atol=1e-10)
    count = 15
    np.testing.assert_allclose(rm.numpy(), 0.8 * rm0 + 0.2 * mean.mean(0), atol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.8 * rv0 + 0.2 * var.mean(0) * count / (count - 1),
                               atol=1e-12)
    ev = F.instance_norm(x, rm, rv, None, None, False, eps=1e-4)
    want_ev = (x.numpy() - rm.numpy()[None, :, None, None]) / \
        np.sqrt(rv.numpy()[None, :, None, None] + 1e-4)
    np.testing.assert_allclose(ev.numpy(), want_ev, atol=1e-10)
    m = nn.InstanceNorm2d(4, affine=True, track_running_stats=True, dtype=F64)
    out = m(x[0])  # unbatched (C, H, W)
    assert tuple(out.shape) == (4, 5, 3)
    assert int(m.num_batches_tracked) == 0
    np.testing.assert_allclose(m.running_mean.numpy(), 0.1 * x[0].numpy().reshape(4, -1).mean(-1),
                               atol=1e-12)
    m.eval()
    np.testing.assert_allclose(m(x).detach().numpy(),
                               F.instance_norm(x, m.running_mean, m.running_var, m.weight,
                                               m.bias, False).detach().numpy())
    assert list(nn.InstanceNorm1d(3).state_dict()) == []
    check_grad(lambda a: F.instance_norm(a), _rand(2, 2, 4))
    with pytest.raises(ValueError, match="expected 3D or 4D input"):
        nn.InstanceNorm2d(3)(torch.zeros(3, 3))
    with pytest.raises(ValueError, match="to match num_features"):
        nn.InstanceNorm1d(3, affine=True)(torch.zeros(2, 4, 5))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        nn.InstanceNorm1d(3)(torch.randn(2, 4, 5))
    assert any("num_features" in str(r.message) for r in rec)


def test_local_response_norm_values_and_grad():
    x = _rand(2, 5, 3, 2)
    for size in (3, 4):
        got = nn.LocalResponseNorm(size, alpha=0.3, beta=0.7, k=2.0)(x)
        xn = x.numpy()
        sq = np.pad(xn ** 2, ((0, 0), (size // 2, (size - 1) // 2), (0, 0), (0, 0)))
        div = np.stack([sq[:, c: c + size].sum(1) for c in range(5)], 1)
        want = xn / (2.0 + 0.3 / size * div) ** 0.7
        np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    check_grad(lambda a: F.local_response_norm(a, 2, alpha=0.5), _rand(1, 3, 4))
    with pytest.raises(ValueError, match="3D or higher"):
        F.local_response_norm(torch.zeros(2, 3), 2)


def test_normalize():
    x = _rand(3, 4, 2)
    got = F.normalize(x, p=3, dim=1)
    xn = x.numpy()
    want = xn / np.maximum((np.abs(xn) ** 3).sum(1, keepdims=True) ** (1 / 3), 1e-12)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    z = torch.zeros(2, 3)
    assert torch.equal(F.normalize(z), z)
    out = torch.empty(3, 4, 2, dtype=F64)
    assert F.normalize(x, out=out) is out
    check_grad(lambda a: F.normalize(a, dim=0), _rand(3, 2))


# --------------------------------------------------------------------------- dropout


@pytest.mark.parametrize("cls,shape,lead", [
    (nn.Dropout1d, (4, 16, 8), 2), (nn.Dropout1d, (16, 8), 1), (nn.Dropout2d, (4, 16, 3, 3), 2),
    (nn.Dropout3d, (2, 16, 2, 2, 2), 2), (nn.Dropout3d, (16, 2, 2, 2), 1),
])
def test_channel_dropout(cls, shape, lead):
    torch.manual_seed(0)
    x = torch.ones(shape, dtype=F64)
    m = cls(0.5)
    out = m(x)
    # every (sample, channel) plane is all zero or all 1/(1-p); both occur
    planes = out.reshape(math.prod(shape[:lead]), -1).tolist()
    assert all(len(set(row)) == 1 for row in planes)
    assert {row[0] for row in planes} == {0.0, 2.0}
    m.eval()
    assert torch.equal(m(x), x)


def test_channel_dropout_errors_and_inplace():
    with pytest.raises(RuntimeError, match="Expected 2D or 3D"):
        F.dropout1d(torch.zeros(2, 2, 2, 2))
    with pytest.warns(UserWarning, match="3-D input to dropout3d"):
        F.dropout3d(torch.zeros(2, 2, 2))
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout2d(1.5)
    x = torch.ones(2, 3, 4)
    assert F.dropout1d(x, 0.5, inplace=True) is x
    assert torch.equal(F.dropout2d(torch.ones(2, 3, 2, 2), 1.0), torch.zeros(2, 3, 2, 2))
    with pytest.warns(UserWarning, match="3D input to dropout2d"):
        F.dropout2d(torch.ones(2, 3, 4))


def test_alpha_dropout_statistics():
    torch.manual_seed(0)
    x = torch.randn(200000, dtype=F64)
    out = F.alpha_dropout(x, 0.3, training=True)
    assert abs(float(out.mean())) < 0.02
    assert abs(float(out.std()) - 1.0) < 0.02
    # dropped units all take one value: a*alpha' + b
    alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
    a = (0.7 + alpha_p ** 2 * 0.7 * 0.3) ** -0.5
    dropped = a * alpha_p + (-a * alpha_p * 0.3)
    frac = float(((out - dropped).abs() < 1e-12).to(F64).mean())
    assert abs(frac - 0.3) < 0.01
    assert torch.equal(F.alpha_dropout(x, 0.3), x)  # training=False by default
    assert torch.equal(nn.AlphaDropout(0.3).eval()(x), x)
    y = nn.FeatureAlphaDropout(0.5)(torch.randn(8, 6, 5, dtype=F64))
    # a dropped channel is constant
    rows = y.reshape(48, 5)
    const = [len({round(v, 12) for v in r}) == 1 for r in rows.tolist()]
    assert 5 < sum(const) < 43
    check_grad(lambda t: F.alpha_dropout(t, 0.0, True), _rand(3))


def test_gumbel_softmax():
    torch.manual_seed(0)
    logits = _rand(4, 5)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).numpy(), np.ones(4), atol=1e-12)
    assert bool((soft > 0).all())
    logits.requires_grad_(True)
    hard = F.gumbel_softmax(logits, hard=True)
    assert sorted(set(hard.detach().reshape(-1).tolist())) == [0.0, 1.0]
    np.testing.assert_allclose(hard.detach().sum(-1).numpy(), np.ones(4))
    (hard * _rand(4, 5, seed=1)).sum().backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0
    # sampling follows the softmax: a dominant logit wins almost always
    big = torch.tensor([[10.0, 0.0, 0.0]]).expand(1000, 3)
    assert float(F.gumbel_softmax(big, hard=True)[:, 0].mean()) > 0.98


# --------------------------------------------------------------------------- embeddings


def test_embedding_values_and_gradients():
    w = _rand(10, 3)
    idx = torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])
    np.testing.assert_allclose(F.embedding(idx, w).numpy(), w.numpy()[idx.numpy()])
    wg = w.clone().requires_grad_(True)
    F.embedding(idx, wg, padding_idx=2).sum().backward()
    counts = np.bincount(idx.numpy().ravel(), minlength=10).astype(float)
    counts[2] = 0  # no gradient reaches the padding row
    np.testing.assert_allclose(wg.grad.numpy(), np.repeat(counts[:, None], 3, 1))
    wg = w.clone().requires_grad_(True)
    F.embedding(idx, wg, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(wg.grad.numpy(), np.repeat((counts > 0)[:, None] |
                                                          (np.arange(10) == 2)[:, None], 3, 1))
    check_grad(lambda t: F.embedding(idx, t), w)


def test_embedding_max_norm_renormalises_in_place():
    w = _rand(10, 3) * 3
    before = w.numpy().copy()
    idx = torch.tensor([1, 4, 4, 7])
    out = F.embedding(idx, w, max_norm=1.0, norm_type=1.5)
    norms = (np.abs(before) ** 1.5).sum(1) ** (1 / 1.5)
    want = before.copy()
    for r in (1, 4, 7):
        if norms[r] > 1.0:
            want[r] = before[r] * (1.0 / (norms[r] + 1e-7))
    np.testing.assert_allclose(w.numpy(), want, atol=1e-12)
    np.testing.assert_allclose(out.numpy(), want[idx.numpy()], atol=1e-12)


def test_embedding_module():
    torch.manual_seed(0)
    m = nn.Embedding(10, 3, padding_idx=-1)
    assert m.padding_idx == 9
    assert torch.equal(m.weight[9], torch.zeros(3))
    pre = _rand(4, 2)
    e = nn.Embedding.from_pretrained(pre)
    assert not e.weight.requires_grad
    np.testing.assert_allclose(e(torch.tensor([3, 0])).numpy(), pre.numpy()[[3, 0]])
    assert nn.Embedding.from_pretrained(pre, freeze=False).weight.requires_grad
    with pytest.raises(AssertionError, match="Padding_idx"):
        nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(RuntimeError, match="Long, Int"):
        m(torch.tensor([1.0]))
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.EmbeddingBag(5, 2, sparse=True)


def _np_bag(w, idx, bags, mode, psw=None, pad=None):
    out = []
    for b in bags:
        rows = [(w[idx[i]] * (psw[i] if psw is not None else 1.0)) for i in b
                if idx[i] != pad]
        if not rows:
            out.append(np.zeros(w.shape[1]))
        elif mode == "sum":
            out.append(np.sum(rows, 0))
        elif mode == "mean":
            out.append(np.mean(rows, 0))
        else:
            out.append(np.max(rows, 0))
    return np.array(out)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_values(mode):
    w = _rand(10, 3)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0])
    off = torch.tensor([0, 2, 2, 5])
    bags = [range(0, 2), range(2, 2), range(2, 5), range(5, 9)]
    wn, ixn = w.numpy(), idx.numpy()
    np.testing.assert_allclose(F.embedding_bag(idx, w, off, mode=mode).numpy(),
                               _np_bag(wn, ixn, bags, mode), atol=1e-12)
    np.testing.assert_allclose(F.embedding_bag(idx, w, off, mode=mode, padding_idx=4).numpy(),
                               _np_bag(wn, ixn, bags, mode, pad=4), atol=1e-12)
    last = torch.tensor([0, 2, 2, 5, 9])
    np.testing.assert_allclose(
        F.embedding_bag(idx, w, last, mode=mode, include_last_offset=True).numpy(),
        _np_bag(wn, ixn, bags, mode), atol=1e-12)
    two = idx[:8].reshape(2, 4)
    np.testing.assert_allclose(F.embedding_bag(two, w, mode=mode).numpy(),
                               _np_bag(wn, ixn, [range(0, 4), range(4, 8)], mode), atol=1e-12)
    m = nn.EmbeddingBag.from_pretrained(w, mode=mode)
    np.testing.assert_allclose(m(idx, off).numpy(), _np_bag(wn, ixn, bags, mode), atol=1e-12)
    check_grad(lambda t: F.embedding_bag(idx, t, off, mode=mode, padding_idx=3), w)


def test_embedding_bag_per_sample_weights_and_errors():
    w = _rand(10, 3)
    idx = torch.tensor([1, 2, 4, 5, 4])
    off = torch.tensor([0, 3])
    psw = _rand(5, seed=1)
    got = nn.EmbeddingBag(10, 3, mode="sum", _weight=w)(idx, off, psw)
    want = _np_bag(w.numpy(), idx.numpy(), [range(0, 3), range(3, 5)], "sum", psw.numpy())
    np.testing.assert_allclose(got.detach().numpy(), want, atol=1e-12)
    check_grad(lambda p: F.embedding_bag(idx, w, off, mode="sum", per_sample_weights=p), psw)
    with pytest.raises(NotImplementedError, match="per_sample_weights"):
        F.embedding_bag(idx, w, off, mode="mean", per_sample_weights=psw)
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(idx.reshape(1, 5), w, off)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor"):
        F.embedding_bag(idx, w)
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(idx, w, torch.tensor([1, 3]))
    with pytest.raises(ValueError, match="mode has to be one of"):
        F.embedding_bag(idx, w, off, mode="min")


def test_one_hot():
    t = torch.tensor([[0, 3], [2, 1]])
    got = F.one_hot(t, 5)
    assert got.dtype == torch.int64
    np.testing.assert_array_equal(got.numpy(), np.eye(5, dtype=np.int64)[t.numpy()])
    assert tuple(F.one_hot(t).shape) == (2, 2, 4)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(t, 3)
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(torch.tensor([-1]))


# --------------------------------------------------------------------------- lazy convolutions


def test_lazy_conv_and_conv_transpose():
    torch.manual_seed(0)
    m = nn.LazyConv2d(5, 3, padding=1)
    assert repr(m) == "LazyConv2d(0, 5, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
    y = m(torch.randn(2, 4, 6, 6))
    assert type(m) is nn.Conv2d and tuple(m.weight.shape) == (5, 4, 3, 3)
    assert tuple(y.shape) == (2, 5, 6, 6) and tuple(m.bias.shape) == (5,)
    x = torch.randn(1, 4, 3, 3)
    np.testing.assert_allclose(m(x).detach().numpy(),
                               F.conv2d(x, m.weight, m.bias, padding=1).detach().numpy())
    t = nn.LazyConvTranspose1d(6, 3, stride=2, groups=2, bias=False)
    out = t(torch.randn(4, 5))  # unbatched: in_channels from dim 0
    assert type(t) is nn.ConvTranspose1d and tuple(t.weight.shape) == (4, 3, 3)
    assert tuple(out.shape) == (6, 11) and t.bias is None
    bound = 1 / math.sqrt(3 * 3)  # kaiming_uniform(a=sqrt(5)) over fan_in = 3 * 3
    assert float(t.weight.abs().max()) <= bound
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.LazyConv1d(4, 3, groups=2)(torch.zeros(1, 3, 5))


# --------------------------------------------------------------------------- dtypes, layouts


def test_float32_strided_and_empty_inputs():
    x64 = _rand(2, 4, 5, 6)
    x32 = x64.to(torch.float32)
    for fn in (lambda t: F.group_norm(t, 2), lambda t: F.rms_norm(t, [6]),
               lambda t: F.instance_norm(t), lambda t: F.local_response_norm(t, 3),
               lambda t: F.lp_pool2d(t.abs(), 2, 2), lambda t: F.adaptive_max_pool2d(t, 3),
               lambda t: F.normalize(t)):
        out32 = fn(x32)
        assert out32.dtype == torch.float32
        np.testing.assert_allclose(out32.numpy(), fn(x64).numpy(), rtol=1e-4, atol=1e-5)
    # transposed (non-contiguous) inputs give the values of their contiguous copies
    xt = x64.transpose(2, 3)
    assert not xt.is_contiguous()
    for fn in (lambda t: F.group_norm(t, 4), lambda t: F.instance_norm(t),
               lambda t: F.adaptive_max_pool2d(t, (2, 3), return_indices=True)[1],
               lambda t: F.conv_transpose2d(t, _rand(4, 2, 2, 2, seed=5), stride=2)):
        np.testing.assert_allclose(fn(xt).numpy(), fn(xt.contiguous()).numpy(), atol=1e-12)
    # zero-size batches keep their shapes
    empty = torch.zeros(0, 4, 5, 6)
    assert tuple(F.group_norm(empty, 2).shape) == (0, 4, 5, 6)
    assert tuple(F.instance_norm(empty).shape) == (0, 4, 5, 6)
    assert tuple(F.adaptive_max_pool2d(empty, 2).shape) == (0, 4, 2, 2)
    assert tuple(F.embedding(torch.zeros(0, 3, dtype=torch.int64), _rand(5, 2)).shape) == \
        (0, 3, 2)
    assert tuple(F.embedding_bag(torch.zeros(0, dtype=torch.int64), _rand(5, 2),
                                 torch.tensor([0, 0])).shape) == (2, 2)
    assert tuple(F.one_hot(torch.zeros(0, dtype=torch.int64), 3).shape) == (0, 3)


# --------------------------------------------------------------------------- fractional pooling


def _np_starts(u, size, out, k):
    if out == 1:
        return [size - k]
    alpha = (size - k) / (out - 1)
    return [int((i + u) * alpha) - int(u * alpha) for i in range(out - 1)] + [size - k]


def test_fractional_max_pool2d_values():
    x = _rand(2, 3, 9, 11)
    u = torch.tensor(np.random.default_rng(1).uniform(0, 1, (2, 3, 2)))
    vals, idx = F.fractional_max_pool2d(x, (2, 3), output_size=(5, 4), return_indices=True,
                                        _random_samples=u)
    xn, un = x.numpy(), u.numpy()
    for b in range(2):
        for c in range(3):
            rows = _np_starts(un[b, c, 1], 9, 5, 2)  # sample 1 drives the height in 2-d
            cols = _np_starts(un[b, c, 0], 11, 4, 3)
            for i, r in enumerate(rows):
                for j, q in enumerate(cols):
                    win = xn[b, c, r: r + 2, q: q + 3]
                    a, bb = np.unravel_index(np.argmax(win), win.shape)
                    assert vals[b, c, i, j].item() == win[a, bb]
                    assert idx[b, c, i, j].item() == (r + a) * 11 + q + bb
    m = nn.FractionalMaxPool2d((2, 3), output_size=(5, 4), _random_samples=u)
    np.testing.assert_array_equal(m(x).numpy(), vals.numpy())
    assert tuple(nn.FractionalMaxPool2d(2, output_ratio=0.5)(x).shape) == (2, 3, 4, 5)
    check_grad(lambda a: F.fractional_max_pool2d(a, 2, output_size=2, _random_samples=u[:1, :1]),
               _rand(1, 1, 4, 4))


def test_fractional_max_pool3d_and_errors():
    x = _rand(1, 2, 5, 6, 7)
    u = torch.tensor(np.random.default_rng(2).uniform(0, 1, (1, 2, 3)))
    vals, idx = F.fractional_max_pool3d(x, 2, output_ratio=0.6, return_indices=True,
                                        _random_samples=u)
    assert tuple(vals.shape) == (1, 2, 3, 3, 4)
    # the values are the input at the indices; in 3-d sample 0 drives the first dim
    np.testing.assert_array_equal(
        x.reshape(1, 2, -1).gather(2, idx.reshape(1, 2, -1)).numpy(), vals.reshape(1, 2, -1))
    starts = _np_starts(u[0, 0, 0].item(), 5, 3, 2)
    for i, s in enumerate(starts):
        depth = idx[0, 0, i].reshape(-1) // 42
        assert bool(((depth >= s) & (depth < s + 2)).all())
    assert nn.FractionalMaxPool3d(2, output_size=3).__repr__() == "FractionalMaxPool3d()"
    with pytest.raises(ValueError, match="either an output size, or a pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(RuntimeError, match="too large"):
        F.fractional_max_pool2d(_rand(1, 1, 4, 4), 3, output_size=3)
