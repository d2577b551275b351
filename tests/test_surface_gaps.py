"""The torch.* surface programs still hit (issue 12): the ATen-signature functions plait-nn
provides at the top level (torch.dropout, torch.batch_norm, the reduction-enum losses, the
recurrent cells and layers), and core's matrix_exp, poisson, in-place views, numpy names in
Tensor methods, 0-d tensors as ints, gradient, histogramdd, the Householder family, lu and the
deprecated norms.

Expected values are formulas written here, numpy's own functions (gradient, histogramdd, the
LAPACK QR), or hand-derived values; the error messages are PyTorch 2.13's.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import torch


def close(a, b, tol=1e-5):
    return np.allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                       atol=tol, rtol=tol)


# --------------------------------------------------------------------------- A: the facade


NN_NAMES = [
    "dropout", "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout",
    "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "embedding",
    "batch_norm", "instance_norm", "group_norm", "native_batch_norm", "max_pool1d", "max_pool2d",
    "max_pool3d", "max_pool1d_with_indices", "avg_pool1d", "adaptive_avg_pool1d",
    "adaptive_max_pool1d", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
    "native_channel_shuffle", "bilinear", "prelu", "threshold", "threshold_", "selu", "selu_",
    "celu", "celu_", "rrelu", "rrelu_", "hardshrink", "kl_div",
    "binary_cross_entropy_with_logits", "hinge_embedding_loss", "margin_ranking_loss",
    "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss", "ctc_loss", "rnn_tanh",
    "rnn_relu", "lstm", "gru", "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell",
]


@pytest.mark.parametrize("name", NN_NAMES)
def test_nn_names_are_torch_functions_listed_by_dir(name):
    assert callable(getattr(torch, name))
    assert name in dir(torch)


def test_nn_names_go_through_torch_function():
    seen = []

    class Logged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    x = torch.ones(2, 3).as_subclass(Logged)
    out = torch.dropout(x, 0.5, False)
    assert torch.dropout in seen
    assert torch.equal(out.as_subclass(torch.Tensor), torch.ones(2, 3))


def test_missing_plait_nn_names_the_distribution():
    # a finder in front of every other that finds no torch.nn stands for plait-nn not being
    # installed (in a wheel install torch/nn shares core's directory, so the path cannot tell)
    code = textwrap.dedent("""
        import sys
        class NoNN:
            def find_spec(self, name, path=None, target=None):
                if name == "torch.nn" or name.startswith("torch.nn."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None
        sys.meta_path.insert(0, NoNN())
        import torch
        try:
            torch.dropout
        except AttributeError as exc:
            print("AttributeError", exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False)
    assert "AttributeError" in out.stdout and "plait-nn" in out.stdout, out.stdout + out.stderr


def test_dropout_family():
    x = torch.ones(200, 4, 3)
    assert torch.dropout(x, 0.5, False) is x
    out = torch.dropout(x, 0.5, True)
    assert set(out.unique().tolist()) <= {0.0, 2.0}
    feature = torch.feature_dropout(x, 0.5, True)
    # one value per (sample, channel): constant over the last dim
    assert torch.equal(feature, feature[..., :1].expand_as(feature))
    assert set(feature.unique().tolist()) <= {0.0, 2.0}
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        torch.feature_dropout(torch.ones(5), 0.5, True)
    with pytest.raises(RuntimeError, match=re.escape("dropout probability has to be between 0 "
                                                     "and 1, but got 1.5")):
        torch.dropout(x, 1.5, True)
    y = torch.ones(50, 3)
    assert torch.dropout_(y, 1.0, True) is y and y.abs().sum().item() == 0
    alpha = torch.alpha_dropout(torch.zeros(4000), 0.2, True)
    # dropped units sit at a * alpha' + b, kept ones at b: two values only
    assert alpha.unique().numel() == 2
    assert torch.equal(torch.feature_alpha_dropout(x, 0.3, False), x)


def test_embedding_aten_order_and_padding():
    weight = torch.arange(8.0).reshape(4, 2).requires_grad_()
    idx = torch.tensor([0, 3, 0])
    out = torch.embedding(weight, idx)
    assert out.tolist() == [[0.0, 1.0], [6.0, 7.0], [0.0, 1.0]]
    out.sum().backward()
    assert weight.grad[0].tolist() == [2.0, 2.0]
    weight.grad = None
    torch.embedding(weight, idx, 0).sum().backward()  # padding_idx=0: no gradient for row 0
    assert weight.grad[0].tolist() == [0.0, 0.0] and weight.grad[3].tolist() == [1.0, 1.0]


def _batch_stats(x):
    dims = [0, *range(2, x.dim())]
    mean = x.double().mean(dims)
    var = ((x.double() - mean.reshape(1, -1, *([1] * (x.dim() - 2)))) ** 2).mean(dims)
    return mean, var


def test_batch_norm_and_native_batch_norm():
    torch.manual_seed(0)
    x = torch.randn(4, 3, 5)
    w, b = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, 0.0, -1.0])
    mean, var = _batch_stats(x)
    expected = ((x.double() - mean[None, :, None]) / (var[None, :, None] + 1e-5).sqrt()
                * w[:, None].double() + b[:, None].double())
    rm, rv = torch.zeros(3), torch.ones(3)
    out = torch.batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5, False)
    assert close(out, expected)
    assert close(rm, 0.1 * mean) and close(rv, 0.9 + 0.1 * var * 20 / 19)
    out, save_mean, save_invstd = torch.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)
    assert close(out, expected) and close(save_mean, mean)
    assert close(save_invstd, 1 / (var + 1e-5).sqrt())
    rm, rv = torch.tensor([0.5, 0.0, 1.0]), torch.tensor([1.0, 4.0, 0.25])
    out, save_mean, save_invstd = torch.native_batch_norm(x, None, None, rm, rv, False, 0.1,
                                                          0.0)
    assert save_mean.shape == (0,) and save_invstd.shape == (0,)
    assert close(out, (x - rm[:, None]) / rv[:, None].sqrt())


def test_instance_and_group_norm():
    torch.manual_seed(1)
    x = torch.randn(2, 4, 6)
    xd = x.double()
    inst = (xd - xd.mean(-1, keepdim=True)) / (xd.var(-1, unbiased=False, keepdim=True)
                                                + 1e-5).sqrt()
    assert close(torch.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False), inst)
    groups = xd.reshape(2, 2, 12)
    grouped = ((groups - groups.mean(-1, keepdim=True))
               / (groups.var(-1, unbiased=False, keepdim=True) + 1e-5).sqrt()).reshape(2, 4, 6)
    assert close(torch.group_norm(x, 2), grouped)
    w = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert close(torch.group_norm(x, 2, w, None, 1e-5, True), grouped * w[:, None].double())


def test_pools_with_aten_defaults():
    x = torch.tensor([[[1.0, 5.0, 2.0, 0.0, 7.0, 3.0]]])
    assert torch.max_pool1d(x, 2).tolist() == [[[5.0, 2.0, 7.0]]]  # stride = kernel
    assert torch.max_pool1d(x, [2], []).tolist() == [[[5.0, 2.0, 7.0]]]
    values, indices = torch.max_pool1d_with_indices(x, 3)
    assert values.tolist() == [[[5.0, 7.0]]] and indices.tolist() == [[[1, 4]]]
    assert torch.avg_pool1d(x, 2).tolist() == [[[3.0, 1.0, 5.0]]]
    assert close(torch.adaptive_avg_pool1d(x, 2), [[[8 / 3, 10 / 3]]])
    values, indices = torch.adaptive_max_pool1d(x, 2)
    assert values.tolist() == [[[5.0, 7.0]]] and indices.tolist() == [[[1, 4]]]
    img = torch.arange(16.0).reshape(1, 1, 4, 4)
    assert torch.max_pool2d(img, 2).tolist() == [[[[5.0, 7.0], [13.0, 15.0]]]]
    vol = torch.arange(8.0).reshape(1, 1, 2, 2, 2)
    assert torch.max_pool3d(vol, 2).flatten().tolist() == [7.0]


def test_shuffles_bilinear_prelu():
    x = torch.arange(8.0).reshape(1, 4, 1, 2)
    up = torch.pixel_shuffle(x, 2)
    assert up.shape == (1, 1, 2, 4)
    assert up.flatten().tolist() == [0.0, 2.0, 1.0, 3.0, 4.0, 6.0, 5.0, 7.0]
    assert torch.equal(torch.pixel_unshuffle(up, 2), x)
    channels = torch.arange(6.0).reshape(1, 6, 1)
    # groups of 2 channels -> (2, 3) transposed to (3, 2)
    assert torch.channel_shuffle(channels, 2).flatten().tolist() == [0, 3, 1, 4, 2, 5]
    assert torch.native_channel_shuffle(channels, 3).flatten().tolist() == [0, 2, 4, 1, 3, 5]
    torch.manual_seed(2)
    a, c, w, bias = torch.randn(3, 2), torch.randn(3, 4), torch.randn(5, 2, 4), torch.randn(5)
    expected = np.einsum("ni,oij,nj->no", a.numpy(), w.numpy(), c.numpy()) + bias.numpy()
    assert close(torch.bilinear(a, c, w, bias), expected)
    t = torch.tensor([-2.0, 3.0])
    assert torch.prelu(t, torch.tensor([0.25])).tolist() == [-0.5, 3.0]


def test_activations():
    x = torch.tensor([-2.0, -0.25, 0.0, 0.5, 3.0])
    assert torch.threshold(x, 0.25, -9.0).tolist() == [-9.0, -9.0, -9.0, 0.5, 3.0]
    y = x.clone()
    assert torch.threshold_(y, 0.0, 1.0) is y and y.tolist() == [1.0, 1.0, 1.0, 0.5, 3.0]
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    selu = [scale * (v if v > 0 else alpha * (math.exp(v) - 1)) for v in x.tolist()]
    assert close(torch.selu(x), selu)
    celu = [v if v > 0 else 2.0 * (math.exp(v / 2.0) - 1) for v in x.tolist()]
    assert close(torch.celu(x, 2.0), celu)
    z = x.clone()
    assert torch.celu_(z) is z and close(z, [v if v > 0 else math.exp(v) - 1
                                            for v in x.tolist()])
    assert close(torch.rrelu(x), [v if v > 0 else v * (0.125 + 1 / 3) / 2 for v in x.tolist()])
    first = torch.rrelu(x, 0.1, 0.3, True, torch.Generator().manual_seed(5))
    again = torch.rrelu(x, 0.1, 0.3, True, torch.Generator().manual_seed(5))
    assert torch.equal(first, again)
    slopes = first[:2] / x[:2]
    assert bool(((slopes >= 0.1) & (slopes <= 0.3)).all())
    assert torch.hardshrink(x, 0.5).tolist() == [-2.0, 0.0, 0.0, 0.0, 3.0]


def test_losses_take_the_reduction_enum():
    inp = torch.tensor([[-1.0, -2.0], [-0.5, -3.0]])
    tgt = torch.tensor([[0.2, 0.8], [0.6, 0.4]])
    pointwise = tgt * (tgt.log() - inp)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reduction 1 is the plain mean, without F's warning
        assert close(torch.kl_div(inp, tgt, 1), pointwise.mean())
    # an omitted reduction is none: PyTorch's parser reads the schema's Mean default as 0
    assert close(torch.kl_div(inp, tgt), pointwise)
    assert close(torch.kl_div(inp, tgt, 2), pointwise.sum())
    assert close(torch.kl_div(inp, tgt.log(), 2, log_target=True), pointwise.sum())
    logits, y = torch.tensor([0.5, -1.0, 2.0]), torch.tensor([1.0, 0.0, 1.0])
    bce = [-(t * math.log(1 / (1 + math.exp(-v))) + (1 - t) * math.log(1 - 1 / (1 + math.exp(-v))))
           for v, t in zip(logits.tolist(), y.tolist())]
    assert close(torch.binary_cross_entropy_with_logits(logits, y, None, None, 1), sum(bce) / 3)
    assert close(torch.binary_cross_entropy_with_logits(logits, y), bce)
    x, sign = torch.tensor([0.3, 2.0, -1.0]), torch.tensor([1.0, -1.0, -1.0])
    assert close(torch.hinge_embedding_loss(x, sign, 1.0, 0), [0.3, 0.0, 2.0])
    assert close(torch.margin_ranking_loss(x, torch.zeros(3), sign, 0.5, 2),
                 max(0, -0.3 + 0.5) + max(0, 2.0 + 0.5) + max(0, -1.0 + 0.5))
    u, v = torch.tensor([[1.0, 0.0], [0.0, 1.0]]), torch.tensor([[1.0, 1.0], [0.0, -1.0]])
    cos = [1 / math.sqrt(2), -1.0]
    assert close(torch.cosine_embedding_loss(u, v, torch.tensor([1.0, -1.0]), 0.0, 0),
                 [1 - cos[0], max(0.0, cos[1])])
    a, p, n = torch.zeros(1, 2), torch.tensor([[3.0, 4.0]]), torch.tensor([[1.0, 0.0]])
    # distances (with eps 1e-6 added to the difference) 5 and 1: max(0, 5 - 1 + margin 1)
    assert close(torch.triplet_margin_loss(a, p, n), [5.0], tol=1e-4)
    assert torch.triplet_margin_loss(a, p, n, reduction=1).shape == ()
    rate, k = torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])
    assert close(torch.poisson_nll_loss(rate, k, True, False, 1e-8, 0),
                 [math.exp(0.0) - 0.0, math.exp(1.0) - 2.0])


def test_ctc_loss_enum():
    # one frame, one label: the loss is -log p(label) at that frame
    log_probs = torch.tensor([[[math.log(0.25), math.log(0.75)]]])  # (T=1, N=1, C=2)
    targets = torch.tensor([[1]])
    out = torch.ctc_loss(log_probs, targets, [1], [1], 0, 0, False)
    assert close(out, [-math.log(0.75)])
    assert close(torch.ctc_loss(log_probs, targets, torch.tensor([1]), torch.tensor([1]), 0, 1),
                 -math.log(0.75))  # mean divides by the target length (1)
    assert torch.ctc_loss(log_probs, targets, [1], [1]).shape == (1,)  # omitted: none


def _linear(x, w, b):
    return x @ w.T + (b if b is not None else 0)


def test_recurrent_cells():
    torch.manual_seed(3)
    x, h, c = torch.randn(2, 3), torch.randn(2, 4), torch.randn(2, 4)
    w_ih, w_hh, b_ih, b_hh = (torch.randn(12, 3), torch.randn(12, 4), torch.randn(12),
                              torch.randn(12))
    pre = _linear(x, w_ih[:4], b_ih[:4]) + _linear(h, w_hh[:4], b_hh[:4])
    assert close(torch.rnn_tanh_cell(x, h, w_ih[:4], w_hh[:4], b_ih[:4], b_hh[:4]), pre.tanh())
    assert close(torch.rnn_relu_cell(x, h, w_ih[:4], w_hh[:4], b_ih[:4], b_hh[:4]), pre.relu())
    gi, gh = _linear(x, w_ih, b_ih), _linear(h, w_hh, b_hh)
    r = (gi[:, :4] + gh[:, :4]).sigmoid()
    z = (gi[:, 4:8] + gh[:, 4:8]).sigmoid()
    n = (gi[:, 8:] + r * gh[:, 8:]).tanh()
    assert close(torch.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh), (1 - z) * n + z * h)
    w4_ih, w4_hh = torch.randn(16, 3), torch.randn(16, 4)
    g = _linear(x, w4_ih, None) + _linear(h, w4_hh, None)
    i, f, gg, o = g[:, :4].sigmoid(), g[:, 4:8].sigmoid(), g[:, 8:12].tanh(), g[:, 12:].sigmoid()
    c1 = f * c + i * gg
    hy, cy = torch.lstm_cell(x, (h, c), w4_ih, w4_hh)
    assert close(hy, o * c1.tanh()) and close(cy, c1)


def test_recurrent_layers_from_flat_params():
    torch.manual_seed(4)
    seq, h0, c0 = torch.randn(5, 2, 3), torch.zeros(1, 2, 4), torch.randn(1, 2, 4)
    w_ih, w_hh, b_ih, b_hh = torch.randn(16, 3), torch.randn(16, 4), torch.randn(16), \
        torch.randn(16)
    out, hn, cn = torch.lstm(seq, (h0, c0), [w_ih, w_hh, b_ih, b_hh], True, 1, 0.0, False,
                             False, False)
    h, c = h0[0], c0[0]
    steps = []
    for t in range(5):
        g = _linear(seq[t], w_ih, b_ih) + _linear(h, w_hh, b_hh)
        i, f, gg, o = (g[:, :4].sigmoid(), g[:, 4:8].sigmoid(), g[:, 8:12].tanh(),
                       g[:, 12:].sigmoid())
        c = f * c + i * gg
        h = o * c.tanh()
        steps.append(h)
    assert close(out, torch.stack(steps)) and close(hn[0], h) and close(cn[0], c)
    w_ih3, w_hh3 = torch.randn(4, 3), torch.randn(4, 4)
    out, hn = torch.rnn_tanh(seq.transpose(0, 1), h0, [w_ih3, w_hh3], False, 1, 0.0, False,
                             False, True)
    h = h0[0]
    for t in range(5):
        h = (_linear(seq[t], w_ih3, None) + _linear(h, w_hh3, None)).tanh()
    assert out.shape == (2, 5, 4) and close(out[:, -1], h) and close(hn[0], h)
    out, hn = torch.gru(seq, h0, [torch.randn(12, 3), torch.randn(12, 4)], False, 2 // 2, 0.0,
                        False, False, False)
    assert out.shape == (5, 2, 4) and hn.shape == (1, 2, 4)
    with pytest.raises(RuntimeError, match="expected 4 parameters"):
        torch.rnn_relu(seq, h0, [w_ih3], True, 1, 0.0, False, False, False)


# --------------------------------------------------------------------------- B: core gaps


def test_matrix_exp_values_and_gradient():
    diag = torch.diag(torch.tensor([0.5, -1.0], dtype=torch.float64))
    assert close(torch.matrix_exp(diag), np.diag([math.exp(0.5), math.exp(-1.0)]), 1e-12)
    nilpotent = torch.tensor([[0.0, 1.0], [0.0, 0.0]])
    assert close(nilpotent.matrix_exp(), [[1.0, 1.0], [0.0, 1.0]])
    t = 0.7
    rotation = torch.tensor([[0.0, -t], [t, 0.0]], dtype=torch.float64)
    assert close(torch.linalg.matrix_exp(rotation),
                 [[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]], 1e-12)
    a = torch.randn(2, 3, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(torch.matrix_exp, (a,))


def test_poisson_samples():
    torch.manual_seed(0)
    for rate in (0.5, 4.0, 30.0):
        s = torch.poisson(torch.full((20000,), rate, dtype=torch.float64))
        assert torch.equal(s, s.round()) and bool((s >= 0).all())
        # mean and variance both equal the rate (standard error of the mean ~ sqrt(rate/n))
        assert abs(s.mean().item() - rate) < 6 * math.sqrt(rate / 20000)
        assert abs(s.var().item() / rate - 1) < 0.06
    assert torch.poisson(torch.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    g = torch.Generator().manual_seed(9)
    first = torch.poisson(torch.full((6,), 3.0), generator=g)
    g.manual_seed(9)
    assert torch.equal(first, torch.poisson(torch.full((6,), 3.0), generator=g))
    assert torch.poisson(torch.ones(2, dtype=torch.float16)).dtype == torch.float16
    rates = torch.tensor([1.0, 20.0], requires_grad=True)
    torch.poisson(rates).sum().backward()
    assert rates.grad.tolist() == [0.0, 0.0]  # PyTorch's derivative of poisson is zero
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be "
                                           "non-negative"):
        torch.poisson(torch.tensor([-1.0]))
    with pytest.raises(NotImplementedError, match="\"poisson_cpu\" not implemented for 'Long'"):
        torch.poisson(torch.tensor([1, 2]))


def test_inplace_views_change_metadata_only():
    x = torch.arange(6.0).reshape(2, 3).clone()  # not itself a view
    storage, version = x.untyped_storage().data_ptr(), x._version
    assert x.t_() is x and x.shape == (3, 2) and x.stride() == (1, 3)
    assert x._version == version + 1 and x.untyped_storage().data_ptr() == storage
    assert x.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    x.transpose_(0, 1).unsqueeze_(0)
    assert x.shape == (1, 2, 3)
    x.squeeze_(0).swapdims_(0, 1).swapaxes_(1, 0)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    a = torch.arange(6.0)
    a.as_strided_((2, 2), (1, 2), 1)
    assert a.tolist() == [[1.0, 3.0], [2.0, 4.0]] and a.storage_offset() == 1
    view = x[0:1]
    view.unsqueeze_(0)
    assert view.shape == (1, 1, 3) and view._base is x and view._version == x._version
    b = torch.ones(1, 3, 1)
    b.squeeze_((0, 2))
    assert b.shape == (3,)
    with pytest.raises(RuntimeError, match=r"t_\(\) expects a tensor with <= 2 dimensions, but "
                                           "self is 3D"):
        torch.ones(2, 2, 2).t_()


def test_inplace_views_and_autograd():
    leaf = torch.randn(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        leaf.t_()
    y = leaf * 2
    y.t_()
    assert y.shape == (3, 2)
    (y * torch.arange(6.0).reshape(3, 2)).sum().backward()
    # y[i, j] = 2 * leaf[j, i], weighted by 2 i + j
    assert leaf.grad.tolist() == [[0.0, 4.0, 8.0], [2.0, 6.0, 10.0]]
    e = torch.randn(2, 3, requires_grad=True).exp()  # exp saves its output
    e.unsqueeze_(0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        e.sum().backward()
    with torch.inference_mode():
        inference = torch.ones(2, 2)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside"):
        inference.t_()


def test_methods_take_numpy_names():
    x = torch.arange(12.0).reshape(3, 4)
    assert x.nansum(axis=1).tolist() == [6.0, 22.0, 38.0]
    assert x.mean(axis=0, keepdims=True).tolist() == [[4.0, 5.0, 6.0, 7.0]]
    assert x.cumsum(axis=0)[-1].tolist() == [12.0, 15.0, 18.0, 21.0]
    assert x.argmax(axis=1).tolist() == [3, 3, 3]
    assert x.max(axis=1).values.tolist() == [3.0, 7.0, 11.0]
    assert close(x.std(axis=1), [np.std([0, 1, 2, 3], ddof=1)] * 3)
    assert x.mean(dim=1).tolist() == [1.5, 5.5, 9.5]  # the own names still work
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'"):
        x.mean(axes=1)


def test_zero_dim_tensors_as_ints():
    x = torch.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    k = torch.tensor(2)
    assert x.topk(k).values.tolist() == [[5.0, 3.0], [6.0, 4.0]]
    assert torch.topk(x, k, largest=False).indices.tolist() == [[0, 2], [1, 0]]
    assert x.kthvalue(k).values.tolist() == [3.0, 4.0]
    assert x.narrow(1, torch.tensor(1), k).tolist() == [[5.0, 3.0], [2.0, 6.0]]
    assert x.repeat(k, 1).shape == (4, 3)
    assert torch.ones(4).multinomial(k).shape == (2,)


def test_nuclear_and_frobenius_norms():
    a = torch.tensor([[3.0, 0.0], [4.0, 5.0], [1.0, 2.0]], dtype=torch.float64)
    singular = np.linalg.svd(a.numpy(), compute_uv=False)
    with pytest.warns(UserWarning, match="at::nuclear_norm is deprecated"):
        assert close(torch.nuclear_norm(a), singular.sum(), 1e-10)
    batch = torch.stack([a, 2 * a])
    with pytest.warns(UserWarning):
        out = torch.nuclear_norm(batch, dim=(1, 2), keepdim=True)
    assert out.shape == (2, 1, 1) and close(out.flatten(), [singular.sum(), 2 * singular.sum()])
    with pytest.warns(UserWarning, match="at::frobenius_norm is deprecated"):
        assert close(torch.frobenius_norm(a, (0, 1)), math.sqrt((a ** 2).sum().item()))
    with pytest.warns(UserWarning):
        assert close(torch.frobenius_norm(a, 1), np.sqrt((a.numpy() ** 2).sum(1)))
    with pytest.raises(RuntimeError, match="Expected at most 2 dimensions, but got 3"), \
            pytest.warns(UserWarning):
        torch.frobenius_norm(batch, (0, 1, 2))


def test_lu_is_lu_factor_with_infos():
    torch.manual_seed(5)
    a = torch.randn(2, 3, 3, dtype=torch.float64)
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        lu, pivots = torch.lu(a)
    p, lower, upper = torch.lu_unpack(lu, pivots)
    assert close(p @ lower @ upper, a, 1e-12)
    with pytest.warns(UserWarning):
        lu, pivots, infos = torch.zeros(3, 3).lu(get_infos=True)
    assert infos.item() > 0  # singular: LAPACK's info names the zero pivot


def test_is_same_size():
    assert torch.is_same_size(torch.ones(2, 3), torch.zeros(2, 3)) is True
    assert torch.ones(2).is_same_size(torch.ones(3)) is False
    with pytest.raises(TypeError, match="argument 'other' \\(position 2\\) must be Tensor"):
        torch.is_same_size(torch.ones(2), 3)


def test_gradient_matches_numpy():
    f = torch.tensor([[1.0, 2.0, 4.0, 8.0, 16.0], [0.0, 1.0, 0.0, -1.0, 3.0],
                      [2.0, 2.5, 1.0, 0.0, 0.5]], dtype=torch.float64)
    for edge_order in (1, 2):
        ours = torch.gradient(f, edge_order=edge_order)
        theirs = np.gradient(f.numpy(), edge_order=edge_order)
        assert all(close(o, t, 1e-12) for o, t in zip(ours, theirs, strict=True))
        coords = torch.tensor([0.0, 0.5, 2.0, 2.5, 4.0], dtype=torch.float64)
        (ours,) = torch.gradient(f, spacing=[coords], dim=1, edge_order=edge_order)
        assert close(ours, np.gradient(f.numpy(), coords.numpy(), axis=1,
                                       edge_order=edge_order), 1e-12)
    ours = torch.gradient(f, spacing=(2.0, 3.0))
    theirs = np.gradient(f.numpy(), 2.0, 3.0)
    assert all(close(o, t, 1e-12) for o, t in zip(ours, theirs, strict=True))
    (ints,) = torch.gradient(torch.tensor([1, 4, 9, 16]))
    assert ints.dtype == torch.float32 and ints.tolist() == [3.0, 4.0, 6.0, 7.0]
    assert torch.gradient(torch.tensor(1.0)) == ()
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        torch.gradient(f, edge_order=3)
    with pytest.raises(RuntimeError,
                       match=re.escape("each dimension size to be at least edge_order+1")):
        torch.gradient(torch.tensor([1.0, 2.0]), edge_order=2)
    with pytest.raises(RuntimeError,
                       match=re.escape("a list of length equal to 'self.dim() = 2'")):
        torch.gradient(f, spacing=[1.0, 2.0, 3.0])
    g = f.clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda t: torch.gradient(t, dim=1)[0], (g,))


def test_histogramdd_matches_numpy():
    torch.manual_seed(6)
    points = torch.rand(50, 2, dtype=torch.float64)
    weights = torch.rand(50, dtype=torch.float64)
    hist, edges = torch.histogramdd(points, bins=[3, 4], weight=weights)
    np_hist, np_edges = np.histogramdd(points.numpy(), bins=[3, 4], weights=weights.numpy())
    assert close(hist, np_hist, 1e-12)
    assert all(close(e, n, 1e-12) for e, n in zip(edges, np_edges, strict=True))
    result = torch.histogramdd(points, 2, [0.0, 2.0, 0.0, 1.0], density=True)
    np_hist, _ = np.histogramdd(points.numpy(), bins=2, range=[(0, 2), (0, 1)], density=True)
    assert type(result).__name__ == "histogramdd" and close(result.hist, np_hist, 1e-12)
    custom = [torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64),
              torch.tensor([0.0, 0.2, 1.0], dtype=torch.float64)]
    np_hist, _ = np.histogramdd(points.numpy(), bins=[c.numpy() for c in custom])
    assert close(torch.histogramdd(points, custom).hist, np_hist)
    assert torch.histogramdd(torch.ones(3, 2), bins=2).bin_edges[0].tolist() == [0.5, 1.0, 1.5]
    with pytest.raises(NotImplementedError, match="\"histogramdd\" not implemented for 'Long'"):
        torch.histogramdd(torch.ones(3, 2, dtype=torch.int64), bins=2)
    with pytest.raises(RuntimeError, match="input tensor should have at least 2 dimensions"):
        torch.histogramdd(torch.ones(3), bins=2)


def test_geqrf_householder_product_ormqr():
    torch.manual_seed(7)
    a = torch.randn(2, 5, 3, dtype=torch.float64)
    packed, tau = torch.geqrf(a)
    raw = [np.linalg.qr(m, mode="raw") for m in a.numpy()]
    assert close(packed, np.stack([h.T for h, _ in raw]), 1e-12)
    assert close(tau, np.stack([t for _, t in raw]), 1e-12)
    assert packed.stride() == (15, 1, 5)  # column-major, as LAPACK writes it
    q_reduced = np.stack([np.linalg.qr(m)[0] for m in a.numpy()])
    assert close(torch.linalg.householder_product(packed, tau), q_reduced, 1e-12)
    q_full = np.stack([np.linalg.qr(m, mode="complete")[0] for m in a.numpy()])
    c = torch.randn(2, 5, 4, dtype=torch.float64)
    assert close(torch.ormqr(packed, tau, c), q_full @ c.numpy(), 1e-12)
    assert close(torch.ormqr(packed, tau, c, transpose=True),
                 q_full.transpose(0, 2, 1) @ c.numpy(), 1e-12)
    d = torch.randn(2, 4, 5, dtype=torch.float64)
    assert close(packed.ormqr(tau, d, False), d.numpy() @ q_full, 1e-12)
    assert close(torch.ormqr(packed, tau, d, False, True),
                 d.numpy() @ q_full.transpose(0, 2, 1), 1e-12)
    assert torch.autograd.gradcheck(
        torch.linalg.householder_product,
        (packed.clone().requires_grad_(), tau.clone().requires_grad_()))
    assert torch.autograd.gradcheck(
        torch.ormqr, (packed.clone().requires_grad_(), tau.clone().requires_grad_(),
                      c.requires_grad_()))


def test_complex_reflectors_use_the_conjugate_transpose():
    torch.manual_seed(8)
    a = torch.randn(4, 3, dtype=torch.complex128)
    packed, tau = torch.geqrf(a)
    q_full = np.linalg.qr(a.numpy(), mode="complete")[0]
    c = torch.randn(4, 2, dtype=torch.complex128)
    assert close(np.abs(torch.ormqr(packed, tau, c, transpose=True).numpy()
                        - q_full.conj().T @ c.numpy()), 0.0, 1e-12)
    assert np.allclose(torch.linalg.householder_product(packed, tau).numpy(),
                       np.linalg.qr(a.numpy())[0])


def test_householder_errors():
    with pytest.raises(RuntimeError,
                       match=re.escape("torch.geqrf: input must have at least 2 dim")):
        torch.geqrf(torch.ones(3))
    with pytest.raises(NotImplementedError, match="\"geqrf_cpu\" not implemented for 'Half'"):
        torch.geqrf(torch.ones(2, 2, dtype=torch.float16))
    hp = torch.linalg.householder_product
    with pytest.raises(RuntimeError,
                       match=re.escape("input.shape[-2] must be greater than or equal")):
        hp(torch.randn(3, 4), torch.randn(3))
    with pytest.raises(RuntimeError, match=re.escape("input.shape[-1] must be greater than or "
                                                     "equal to tau.shape[-1]")):
        hp(torch.randn(4, 3), torch.randn(4))
    with pytest.raises(RuntimeError, match="tau dtype Double does not match input dtype Float"):
        hp(torch.randn(4, 3), torch.randn(3, dtype=torch.float64))
    with pytest.raises(RuntimeError, match=re.escape("other.shape[-2] must be equal to "
                                                     "input.shape[-2]")):
        torch.ormqr(torch.randn(4, 3), torch.randn(3), torch.randn(3, 2))
    with pytest.raises(RuntimeError, match=re.escape("tau.shape[-1] must be equal to "
                                                     "min(other.shape[-2], input.shape[-1])")):
        torch.ormqr(torch.randn(4, 3), torch.randn(2), torch.randn(4, 2))


def _symmetric(rng, n, kind):
    if kind == "real":
        m = rng.standard_normal((n, n))
        return m + m.T
    m = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    return m + m.T if kind == "complex symmetric" else m + m.conj().T


@pytest.mark.parametrize("kind", ["real", "complex symmetric", "hermitian"])
def test_ldl_factor_is_lapacks_and_solves(kind):
    # scipy's LAPACK sytrf/hetrf (lower) is what PyTorch calls: the same LD and pivots
    lapack = pytest.importorskip("scipy.linalg.lapack", reason="scipy's LAPACK as the oracle")
    rng = np.random.default_rng(11)
    hermitian = kind == "hermitian"
    routine = {"real": lapack.dsytrf, "complex symmetric": lapack.zsytrf,
               "hermitian": lapack.zhetrf}[kind]
    for n in (1, 3, 6, 9):
        a = _symmetric(rng, n, kind)
        a[np.abs(a) < 0.4] = 0  # zeros force the 2x2 pivots and the interchanges
        if kind != "hermitian":
            a = np.tril(a) + np.tril(a, -1).T
        else:
            a = np.tril(a) + np.tril(a, -1).conj().T
        ld, pivots, info = torch.linalg.ldl_factor_ex(torch.from_numpy(a), hermitian=hermitian)
        ref_ld, ref_pivots, ref_info = routine(a, lower=1)
        assert np.array_equal(pivots.numpy(), ref_pivots) and info.item() == ref_info
        assert np.allclose(ld.numpy(), np.tril(ref_ld), atol=1e-12)
        if ref_info == 0:
            b = rng.standard_normal((n, 2)).astype(a.dtype)
            x = torch.linalg.ldl_solve(ld, pivots, torch.from_numpy(b), hermitian=hermitian)
            assert np.allclose(a @ x.numpy(), b, atol=1e-9)


def test_ldl_layouts_batches_and_errors():
    a = torch.tensor([[1.0, 2.0, 3.0], [2.0, 0.0, 5.0], [3.0, 5.0, 1.0]], dtype=torch.float64)
    ld, pivots = torch.linalg.ldl_factor(a)
    # hand-derived: rows/columns 2 and 3 swapped, then a 2x2 pivot [[1, 3], [3, 1]]
    assert pivots.tolist() == [-3, -3, 3] and pivots.dtype == torch.int32
    assert close(ld, [[1.0, 0.0, 0.0], [3.0, 1.0, 0.0], [1.625, 0.125, -3.875]], 1e-12)
    assert ld.stride() == (1, 3)  # column-major, as LAPACK writes it
    torch.manual_seed(12)
    batch = torch.randn(2, 4, 4, dtype=torch.float64)
    batch = batch + batch.mT
    result = torch.linalg.ldl_factor(batch)
    assert type(result).__name__ == "linalg_ldl_factor" and result.LD.stride() == (16, 1, 4)
    rhs = torch.randn(2, 4, 3, dtype=torch.float64)
    x = torch.linalg.ldl_solve(result.LD, result.pivots, rhs)
    assert close(batch @ x, rhs, 1e-9)
    ld, pivots, info = torch.linalg.ldl_factor_ex(torch.zeros(2, 2))
    assert pivots.tolist() == [1, 2] and info.item() == 1
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.ldl_factor(torch.zeros(2, 2))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are "
                                           "2 by 3 matrices"):
        torch.linalg.ldl_factor(torch.ones(2, 3))
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        torch.linalg.ldl_factor(torch.ones(2, 2, dtype=torch.float16))
    with pytest.raises(IndexError):
        torch.linalg.ldl_solve(ld, pivots, torch.ones(2))


def test_recurrent_layers_packed_form():
    # (data, batch_sizes, hx, params, ...): sequences of lengths 3 and 1, packed time-major
    torch.manual_seed(13)
    first, second = torch.randn(3, 2), torch.randn(1, 2)
    data = torch.stack([first[0], second[0], first[1], first[2]])
    batch_sizes = torch.tensor([2, 1, 1])
    w_ih, w_hh, h0 = torch.randn(3, 2), torch.randn(3, 3), torch.randn(1, 2, 3)
    out, hn = torch.rnn_tanh(data, batch_sizes, h0, [w_ih, w_hh], False, 1, 0.0, False, False)

    def run(seq, h):
        steps = []
        for x in seq:
            h = (_linear(x, w_ih, None) + _linear(h, w_hh, None)).tanh()
            steps.append(h)
        return steps, h

    steps_a, last_a = run(first, h0[0, 0])
    steps_b, last_b = run(second, h0[0, 1])
    assert close(out, torch.stack([steps_a[0], steps_b[0], steps_a[1], steps_a[2]]))
    assert close(hn[0], torch.stack([last_a, last_b]))


def test_arguments_without_a_derivative_are_refused_as_in_pytorch():
    x = torch.randn(4, 3, 5)
    mean, var = torch.zeros(3, requires_grad=True), torch.ones(3)
    with pytest.raises(RuntimeError, match="'native_batch_norm' is not differentiable with "
                                           "respect to argument 'running_mean'"):
        torch.batch_norm(x, None, None, mean, var, False, 0.1, 1e-5, False)
    with torch.no_grad():
        assert torch.batch_norm(x, None, None, mean, var, False, 0.1, 1e-5, False).shape == \
            (4, 3, 5)
    with pytest.raises(RuntimeError, match="with respect to argument 'pos_weight'"):
        torch.binary_cross_entropy_with_logits(x, x.sigmoid(), None,
                                               torch.ones(5, requires_grad=True))


def test_outputs_without_derivatives_follow_pytorch():
    a = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    packed, tau = torch.geqrf(a)
    assert packed.requires_grad and tau.requires_grad
    with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not "
                                                  "implemented"):
        tau.sum().backward()
    x = torch.randn(4, 3, 2, requires_grad=True)
    out, save_mean, save_invstd = torch.native_batch_norm(x, None, None, None, None, True, 0.1,
                                                          1e-5)
    assert out.requires_grad and not save_mean.requires_grad and not save_invstd.requires_grad
    hist, edges = torch.histogramdd(torch.rand(5, 2, requires_grad=True), 2)
    assert not hist.requires_grad and not edges[0].requires_grad


def test_meta_and_fake_tensors_get_pytorchs_layouts():
    # shapes and strides as PyTorch 2.13 gives them on the meta device and under
    # FakeTensorMode (recorded with real PyTorch: LAPACK results are column-major)
    from torch._subclasses import FakeTensorMode

    def meta(*shape):
        return torch.empty(*shape, device="meta")

    ld, pivots, info = torch.linalg.ldl_factor_ex(meta(2, 3, 3))
    assert ld.stride() == (9, 1, 3) and pivots.dtype == info.dtype == torch.int32
    assert torch.linalg.ldl_solve(ld, pivots, meta(2, 3, 4)).stride() == (12, 1, 3)
    assert torch.linalg.householder_product(meta(4, 3), meta(2)).stride() == (1, 4)
    assert torch.ormqr(meta(4, 3), meta(3), meta(2, 4), False).stride() == (1, 2)
    assert torch.matrix_exp(meta(2, 3, 3)).stride() == (9, 3, 1)
    assert torch.poisson(meta(3, 4)).shape == (3, 4)
    values, indices = torch.max_pool1d_with_indices(meta(2, 3, 8), 2)
    assert values.shape == indices.shape == (2, 3, 4) and indices.dtype == torch.int64
    with pytest.raises(NotImplementedError):  # PyTorch has no meta kernel for geqrf either
        torch.geqrf(meta(4, 3))
    with FakeTensorMode() as mode:
        packed, tau = torch.geqrf(mode.from_tensor(torch.rand(2, 4, 3)))
        assert packed.stride() == (12, 1, 4) and tau.shape == (2, 3)
        hist, edges = torch.histogramdd(mode.from_tensor(torch.rand(5, 2)), [2, 3])
        assert hist.shape == (2, 3) and [e.shape for e in edges] == [(3,), (4,)]


def test_sum_amax_amin_take_numpy_names_on_methods_and_functions():
    x = torch.arange(6.0).reshape(2, 3)
    assert x.sum(axis=1).tolist() == [3.0, 12.0]
    assert x.sum(axis=0, keepdims=True).tolist() == [[3.0, 5.0, 7.0]]
    assert torch.sum(x, axis=1).tolist() == [3.0, 12.0]
    assert x.amax(axis=1).tolist() == [2.0, 5.0]
    assert x.amin(axis=0, keepdims=True).tolist() == [[0.0, 1.0, 2.0]]
    with pytest.raises(TypeError):
        x.sum(1, axis=1)
