"""The first layers of torch.nn (conv, pooling, normalisation, activations, losses, dropout)
against numpy, and their reprs against the strings PyTorch 2.13 prints."""

from __future__ import annotations

import numpy as np
import pytest

import torch
import torch.nn as nn
from torch.nn import _ops

REPRS = [
    (lambda: nn.Conv2d(1, 16, 3, padding=1),
     "Conv2d(1, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"),
    (lambda: nn.Conv2d(1, 16, (3, 5), stride=2, bias=False, dilation=2),
     "Conv2d(1, 16, kernel_size=(3, 5), stride=(2, 2), dilation=(2, 2), bias=False)"),
    (lambda: nn.Conv2d(2, 4, 3, padding="same", padding_mode="reflect"),
     "Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1), padding=same, padding_mode=reflect)"),
    (lambda: nn.Conv1d(2, 4, 3), "Conv1d(2, 4, kernel_size=(3,), stride=(1,))"),
    (lambda: nn.MaxPool2d(2),
     "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
    (lambda: nn.AvgPool2d(2), "AvgPool2d(kernel_size=2, stride=2, padding=0)"),
    (lambda: nn.AdaptiveAvgPool2d((1, 1)), "AdaptiveAvgPool2d(output_size=(1, 1))"),
    (lambda: nn.BatchNorm2d(3), "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, "
                                "bias=True, track_running_stats=True)"),
    (lambda: nn.BatchNorm1d(5, momentum=None), "BatchNorm1d(5, eps=1e-05, momentum=None, "
                                               "affine=True, bias=True, track_running_stats=True)"),
    (lambda: nn.LayerNorm(4), "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"),
    (lambda: nn.Dropout(), "Dropout(p=0.5, inplace=False)"),
    (lambda: nn.GELU(), "GELU(approximate='none')"),
    (lambda: nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"),
    (lambda: nn.Softmax(dim=1), "Softmax(dim=1)"),
    (lambda: nn.LogSoftmax(dim=-1), "LogSoftmax(dim=-1)"),
    (lambda: nn.ReLU(inplace=True), "ReLU(inplace=True)"),
    (lambda: nn.ReLU(), "ReLU()"),
    (lambda: nn.CrossEntropyLoss(), "CrossEntropyLoss()"),
    (lambda: nn.MSELoss(), "MSELoss()"),
]


@pytest.mark.parametrize(("make", "text"), REPRS, ids=[t for _, t in REPRS])
def test_reprs_match_pytorch(make, text):
    assert repr(make()) == text


@pytest.mark.parametrize("mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"),
                                          ("circular", "wrap"), ("constant", "constant")])
def test_pad_modes_match_numpy(mode, np_mode):
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
    got = _ops.pad(torch.tensor(x), [2, 1, 1, 3], mode=mode)
    want = np.pad(x, ((0, 0), (0, 0), (1, 3), (2, 1)), mode=np_mode)
    np.testing.assert_array_equal(got.numpy(), want)


def test_pad_errors():
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        _ops.pad(torch.ones(1, 1, 2), [2, 0], mode="reflect")
    with pytest.raises(RuntimeError, match="divisible by 2"):
        _ops.pad(torch.ones(2), [1])
    with pytest.raises(RuntimeError, match="less than or equal to two times"):
        _ops.pad(torch.ones(2), [1, 1, 1, 1])


def np_pool(x, k, s, p, fn, fill):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = fn(xp[:, :, i * s:i * s + k, j * s:j * s + k], axis=(2, 3))
    return out


@pytest.mark.parametrize(("k", "s", "p"), [(2, 2, 0), (3, 1, 1), (3, 2, 1), (2, 1, 0)])
def test_pooling_matches_numpy(k, s, p):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 7, 6))
    t = torch.tensor(x)
    np.testing.assert_allclose(nn.MaxPool2d(k, s, p)(t).numpy(),
                               np_pool(x, k, s, p, np.max, -np.inf))
    np.testing.assert_allclose(nn.AvgPool2d(k, s, p)(t).numpy(),
                               np_pool(x, k, s, p, np.sum, 0.0) / (k * k), rtol=1e-12)


def test_max_pool_indices_gradient_and_ceil_mode():
    x = torch.arange(16.0).reshape(1, 1, 4, 4).requires_grad_()
    values, index = nn.MaxPool2d(2, return_indices=True)(x)
    assert values.tolist() == [[[[5.0, 7.0], [13.0, 15.0]]]]
    assert index.tolist() == [[[[5, 7], [13, 15]]]]
    values.sum().backward()
    assert x.grad.reshape(-1).nonzero().reshape(-1).tolist() == [5, 7, 13, 15]
    y = nn.MaxPool2d(2, ceil_mode=True)(torch.arange(25.0).reshape(1, 1, 5, 5))
    assert y.tolist() == [[[[6.0, 8.0, 9.0], [16.0, 18.0, 19.0], [21.0, 23.0, 24.0]]]]
    z = nn.MaxPool1d(3, stride=1, dilation=2)(torch.arange(6.0).reshape(1, 1, 6))
    assert z.tolist() == [[[4.0, 5.0]]]


def test_avg_pool_count_include_pad_false_and_divisor():
    x = torch.ones(1, 1, 3, 3)
    assert nn.AvgPool2d(3, 1, 1, count_include_pad=False)(x).unique().tolist() == [1.0]
    assert nn.AvgPool2d(3, 1, 1)(x)[0, 0, 0, 0].item() == pytest.approx(4 / 9)
    assert nn.AvgPool2d(3, divisor_override=3)(x).item() == 3.0


def test_adaptive_pooling_matches_numpy_windows():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3, 7, 5))
    got = nn.AdaptiveAvgPool2d((3, 2))(torch.tensor(x)).numpy()
    want = np.empty((2, 3, 3, 2))
    for i in range(3):
        for j in range(2):
            h0, h1 = (i * 7) // 3, -(-((i + 1) * 7) // 3)
            w0, w1 = (j * 5) // 2, -(-((j + 1) * 5) // 2)
            want[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert nn.AdaptiveMaxPool2d(1)(torch.tensor(x)).numpy().ravel().tolist() == \
        x.max(axis=(2, 3)).ravel().tolist()


def test_batch_norm_training_and_eval():
    rng = np.random.default_rng(2)
    x = rng.normal(2.0, 3.0, size=(8, 3, 4, 4))
    bn = nn.BatchNorm2d(3).double()
    out = bn(torch.tensor(x)).detach().numpy()
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3))
    want = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(out, want, rtol=1e-10, atol=1e-10)
    unbiased = x.var(axis=(0, 2, 3), ddof=1)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * mean, rtol=1e-10)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * unbiased, rtol=1e-10)
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    got = bn(torch.tensor(x)).detach().numpy()
    want = (x - 0.1 * mean[None, :, None, None]) / np.sqrt(
        (0.9 + 0.1 * unbiased)[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        bn(torch.ones(2, 3))
    cumulative = nn.BatchNorm1d(2, momentum=None)
    cumulative(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    cumulative(torch.tensor([[5.0, 6.0], [7.0, 8.0]]))
    assert cumulative.running_mean.tolist() == [4.0, 5.0]  # the mean of the batch means


def test_batch_norm_loads_old_checkpoints_without_num_batches_tracked():
    bn = nn.BatchNorm1d(2)
    state = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
    bn.load_state_dict(state)  # strict, yet no missing key: the old format is upgraded
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"]


def test_conv_padding_modes_match_numpy_padded_conv():
    torch.manual_seed(3)
    for mode, np_mode in (("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")):
        conv = nn.Conv2d(2, 3, 3, padding=1, padding_mode=mode).double()
        x = np.random.default_rng(4).normal(size=(1, 2, 5, 6))
        padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode=np_mode)
        want = torch.conv2d(torch.tensor(padded), conv.weight, conv.bias)
        np.testing.assert_allclose(conv(torch.tensor(x)).detach().numpy(),
                                   want.detach().numpy(), rtol=1e-12)
    same = nn.Conv1d(1, 1, 4, padding="same", bias=False)
    assert same(torch.ones(1, 1, 9)).shape == (1, 1, 9)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")


def test_activations_and_losses_match_numpy():
    x = np.linspace(-3, 3, 13)
    t = torch.tensor(x)
    np.testing.assert_allclose(nn.ReLU()(t).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(nn.LeakyReLU(0.2)(t).numpy(), np.where(x > 0, x, 0.2 * x))
    np.testing.assert_allclose(nn.Sigmoid()(t).numpy(), 1 / (1 + np.exp(-x)), rtol=1e-12)
    np.testing.assert_allclose(nn.Tanh()(t).numpy(), np.tanh(x), rtol=1e-12)
    np.testing.assert_allclose(nn.SiLU()(t).numpy(), x / (1 + np.exp(-x)), rtol=1e-12)
    logits = np.random.default_rng(5).normal(size=(4, 3))
    target = np.array([0, 2, 1, 2])
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    loss = nn.CrossEntropyLoss()(torch.tensor(logits), torch.tensor(target))
    assert loss.item() == pytest.approx(-logp[np.arange(4), target].mean(), rel=1e-12)
    loss = nn.NLLLoss(reduction="sum")(torch.tensor(logp), torch.tensor(target))
    assert loss.item() == pytest.approx(-logp[np.arange(4), target].sum(), rel=1e-12)
    a, b = np.arange(4.0), np.array([1.0, 1.0, 5.0, 0.0])
    assert nn.MSELoss()(torch.tensor(a), torch.tensor(b)).item() == pytest.approx(
        ((a - b) ** 2).mean())
    assert nn.L1Loss(reduction="sum")(torch.tensor(a), torch.tensor(b)).item() == 7.0


def test_dropout_train_and_eval():
    torch.manual_seed(6)
    d = nn.Dropout(0.25)
    x = torch.ones(10000)
    y = d(x)
    kept = y != 0
    assert abs(kept.float().mean().item() - 0.75) < 0.02
    assert y[kept].unique().tolist() == [pytest.approx(1 / 0.75)]
    d.eval()
    assert d(x) is x or d(x).tolist() == x.tolist()
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout(1.5)


def test_small_cnn_trains():
    torch.manual_seed(7)
    net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 2))
    x = torch.randn(16, 1, 8, 8)
    y = (x.mean((1, 2, 3)) > 0).long()
    loss_fn = nn.CrossEntropyLoss()
    first = None
    for _ in range(30):
        loss = loss_fn(net(x), y)
        first = first if first is not None else loss.item()
        net.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in net.parameters():
                p -= 0.1 * p.grad
    assert loss.item() < 0.5 * first
