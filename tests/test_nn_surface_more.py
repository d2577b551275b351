"""nn names PyTorch programs use: deprecated init/clip spellings, skip_init, conv weight
memory formats and F.max_poolNd_with_indices (references: numpy and PyTorch's documented
semantics)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torch
import torch.nn.functional as F
from torch import nn


def test_init_eye_and_dirac_are_deprecated_spellings() -> None:
    w = torch.empty(3, 4)
    with pytest.warns(FutureWarning, match=r"nn\.init\.eye` is now deprecated.*nn\.init\.eye_"):
        out = nn.init.eye(w)
    assert out is w
    np.testing.assert_array_equal(w.numpy(), np.eye(3, 4, dtype=np.float32))
    k = torch.empty(2, 2, 3)
    with pytest.warns(FutureWarning, match=r"nn\.init\.dirac_"):
        nn.init.dirac(k)
    expected = np.zeros((2, 2, 3), dtype=np.float32)
    expected[0, 0, 1] = expected[1, 1, 1] = 1.0
    np.testing.assert_array_equal(k.numpy(), expected)


def test_clip_grad_norm_deprecated_alias_clips_and_warns() -> None:
    p = nn.Parameter(torch.ones(4))
    p.grad = torch.tensor([3.0, 4.0, 0.0, 0.0])
    with pytest.warns(FutureWarning, match=r"nn\.utils\.clip_grad_norm_"):
        total = nn.utils.clip_grad_norm([p], max_norm=1.0)
    assert abs(float(total) - 5.0) < 1e-6
    # clip coefficient max_norm / (total + 1e-6), as clip_grad_norm_ documents
    np.testing.assert_allclose(p.grad.numpy(), np.array([3, 4, 0, 0]) / (5 + 1e-6), rtol=1e-5)


def test_skip_init_gives_uninitialised_module_on_device() -> None:
    m = nn.utils.skip_init(nn.Linear, 5, 3, bias=True)
    assert isinstance(m, nn.Linear)
    assert m.weight.shape == (3, 5) and m.bias.shape == (3,)
    assert m.weight.device.type == "cpu"
    m = nn.utils.skip_init(nn.Linear, 2, 2, device="cpu")
    assert m.weight.device.type == "cpu"


def test_skip_init_needs_a_device_argument() -> None:
    class NoDevice(nn.Module):
        def __init__(self, n: int) -> None:
            super().__init__()
            self.w = nn.Parameter(torch.zeros(n))

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        nn.utils.skip_init(NoDevice, 3)


def test_convert_conv2d_weight_memory_format() -> None:
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.ConvTranspose2d(4, 2, 2),
                        nn.Linear(2, 2))
    before = [net[0].weight.detach().numpy().copy(), net[2].weight.detach().numpy().copy()]
    out = nn.utils.convert_conv2d_weight_memory_format(net, torch.channels_last)
    assert out is net
    for conv, values in zip((net[0], net[2]), before):
        assert conv.weight.is_contiguous(memory_format=torch.channels_last)
        assert not conv.weight.is_contiguous()
        assert isinstance(conv.weight, nn.Parameter)
        np.testing.assert_array_equal(conv.weight.detach().numpy(), values)
    assert net[3].weight.is_contiguous()


def test_convert_conv3d_weight_memory_format() -> None:
    conv = nn.Conv3d(2, 3, 2)
    values = conv.weight.detach().numpy().copy()
    nn.utils.convert_conv3d_weight_memory_format(conv, torch.channels_last_3d)
    assert conv.weight.is_contiguous(memory_format=torch.channels_last_3d)
    np.testing.assert_array_equal(conv.weight.detach().numpy(), values)
    # a 2-d conversion leaves 3-d convolutions alone
    other = nn.Conv3d(2, 3, 2)
    nn.utils.convert_conv2d_weight_memory_format(other, torch.channels_last)
    assert other.weight.is_contiguous()


def _numpy_max_pool2d(x: np.ndarray, k: int, s: int) -> tuple[np.ndarray, np.ndarray]:
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    vals = np.empty((n, c, oh, ow), x.dtype)
    idx = np.empty((n, c, oh, ow), np.int64)
    for i in range(oh):
        for j in range(ow):
            win = x[:, :, i * s:i * s + k, j * s:j * s + k].reshape(n, c, -1)
            a = win.argmax(-1)
            vals[:, :, i, j] = win.max(-1)
            idx[:, :, i, j] = (i * s + a // k) * w + (j * s + a % k)
    return vals, idx


@pytest.mark.parametrize("return_indices", [False, True])
def test_max_pool2d_with_indices_always_returns_indices(return_indices: bool) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    out, idx = F.max_pool2d_with_indices(torch.tensor(x), 2, 2, return_indices=return_indices)
    ref_vals, ref_idx = _numpy_max_pool2d(x, 2, 2)
    np.testing.assert_array_equal(out.numpy(), ref_vals)
    np.testing.assert_array_equal(idx.numpy(), ref_idx)


def test_max_pool1d_and_3d_with_indices() -> None:
    x = torch.tensor([[[1.0, 5.0, 2.0, 0.0, 7.0, 3.0]]])
    out, idx = F.max_pool1d_with_indices(x, 2)
    assert out.tolist() == [[[5.0, 2.0, 7.0]]]
    assert idx.tolist() == [[[1, 2, 4]]]
    rng = np.random.default_rng(1)
    v = rng.standard_normal((1, 1, 2, 2, 2)).astype(np.float32)
    out3, idx3 = F.max_pool3d_with_indices(torch.tensor(v), 2)
    assert float(out3.reshape(-1)[0]) == v.max()
    assert int(idx3.reshape(-1)[0]) == int(v.reshape(-1).argmax())


def test_names_are_exported() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("max_pool1d_with_indices", "max_pool2d_with_indices",
                     "max_pool3d_with_indices"):
            assert name in F.__all__ and getattr(F, name).__name__ == name
    assert nn.utils.init.skip_init is nn.utils.skip_init


# ------------------------------------------------------------- AdaptiveLogSoftmaxWithLoss


def _log_softmax_np(z: np.ndarray) -> np.ndarray:
    z = z - z.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def _adaptive_full_np(m: nn.AdaptiveLogSoftmaxWithLoss, x: np.ndarray) -> np.ndarray:
    """Every class's log-probability from the module's weights, written out in numpy."""
    head = x @ m.head.weight.detach().numpy().T
    if m.head.bias is not None:
        head = head + m.head.bias.detach().numpy()
    head = _log_softmax_np(head)
    parts = [head[:, :m.shortlist_size]]
    for i, (proj, out) in enumerate(m.tail):
        z = x @ proj.weight.detach().numpy().T @ out.weight.detach().numpy().T
        parts.append(_log_softmax_np(z) + head[:, m.shortlist_size + i:m.shortlist_size + i + 1])
    return np.concatenate(parts, 1)


def test_adaptive_log_softmax_structure() -> None:
    m = nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 10, 15], div_value=2.0, head_bias=True)
    assert m.cutoffs == [5, 10, 15, 20] and m.shortlist_size == 5 and m.n_clusters == 3
    assert tuple(m.head.weight.shape) == (8, 16) and m.head.bias is not None
    hidden = [tuple(p.weight.shape) for p, _ in m.tail]
    assert hidden == [(8, 16), (4, 16), (2, 16)]
    assert [tuple(o.weight.shape) for _, o in m.tail] == [(5, 8), (5, 4), (5, 2)]


def test_adaptive_log_softmax_forward_log_prob_predict_match_numpy() -> None:
    torch.manual_seed(0)
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0).double()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((9, 8))
    target = np.array([0, 4, 11, 2, 7, 3, 6, 10, 1])
    full = _adaptive_full_np(m, x)
    np.testing.assert_allclose(np.exp(full).sum(1), 1.0, rtol=1e-12)
    out, loss = m(torch.tensor(x), torch.tensor(target))
    np.testing.assert_allclose(out.detach().numpy(), full[np.arange(9), target], rtol=1e-10)
    assert abs(float(loss) + full[np.arange(9), target].mean()) < 1e-10
    np.testing.assert_allclose(m.log_prob(torch.tensor(x)).detach().numpy(), full, rtol=1e-10)
    # scale the inputs so that head predictions fall both in and out of the shortlist
    for scale in (0.1, 1.0, 10.0):
        xs = x * scale
        assert m.predict(torch.tensor(xs)).tolist() == _adaptive_full_np(m, xs).argmax(1).tolist()
    # an unbatched example gives a 0-d output
    single, single_loss = m(torch.tensor(x[2]), torch.tensor(11))
    assert single.dim() == 0 and abs(float(single) - full[2, 11]) < 1e-10
    assert abs(float(single_loss) + full[2, 11]) < 1e-10


def test_adaptive_log_softmax_gradients() -> None:
    torch.manual_seed(1)
    m = nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 4], div_value=2.0).double()
    x = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    target = torch.tensor([0, 3, 5, 2, 1])
    assert torch.autograd.gradcheck(lambda inp: m(inp, target).loss, (x,))


def test_adaptive_log_softmax_errors() -> None:
    with pytest.raises(ValueError, match="length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, [])
    for bad in ([5, 3], [0, 4], [4, 10], [3, 3]):
        with pytest.raises(ValueError, match="unique, positive integers sorted"):
            nn.AdaptiveLogSoftmaxWithLoss(4, 10, bad)
    m = nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        m(torch.randn(3, 4), torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input"):
        m(torch.randn(2, 4, 1), torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="0D target tensor expects 1D input"):
        m(torch.randn(2, 4), torch.tensor(1))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        m(torch.randn(2, 4), torch.tensor([[1], [2]]))
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\]"):
        m(torch.randn(2, 4), torch.tensor([1, 10]))


# ------------------------------------------------------------------------ CrossMapLRN2d


def _cross_map_lrn_np(x: np.ndarray, size: int, alpha: float, beta: float,
                      k: float) -> np.ndarray:
    """Lua Torch's running sum over channels, step by step."""
    sq = x * x
    channels = x.shape[1]
    reach = (size - 1) // 2 + 1
    scale = np.zeros_like(x)
    scale[:, 0] = sq[:, :min(reach, channels)].sum(1)
    for c in range(1, channels):
        scale[:, c] = scale[:, c - 1]
        if c < channels - reach + 1:
            scale[:, c] += sq[:, c + reach - 1]
        if c > reach:
            scale[:, c] -= sq[:, c - reach]
    return x * (k + alpha / size * scale) ** -beta


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 7])
def test_cross_map_lrn2d_matches_running_sum(size: int) -> None:
    rng = np.random.default_rng(size)
    x = rng.standard_normal((2, 9, 3, 2))
    m = nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=2.0)
    out = m(torch.tensor(x))
    np.testing.assert_allclose(out.numpy(), _cross_map_lrn_np(x, size, 0.5, 0.75, 2.0),
                               rtol=1e-10)


def test_cross_map_lrn2d_window_counts_as_pytorch_prints() -> None:
    # window sizes real PyTorch 2.13 gives for ones over 9 channels (alpha=size, beta=1, k=0)
    printed = {3: [2, 3, 4, 4, 4, 4, 4, 4, 3], 5: [3, 4, 5, 6, 6, 6, 6, 5, 4]}
    for size, counts in printed.items():
        m = nn.CrossMapLRN2d(size, alpha=float(size), beta=1.0, k=0.0)
        out = m(torch.ones(1, 9, 1, 1))
        np.testing.assert_allclose((1 / out).reshape(-1).numpy(), counts, rtol=1e-6)


@pytest.mark.parametrize("size", [2, 3, 4, 11])
def test_cross_map_lrn2d_gradient_is_the_derivative_of_the_running_sum(size: int) -> None:
    # the gradient of the forward as computed (central differences of the numpy running sum),
    # not PyTorch's legacy hand-written backward, which disagrees with its own forward
    rng = np.random.default_rng(size)
    x, seed = rng.standard_normal((2, 5, 2, 2)), rng.standard_normal((2, 5, 2, 2))
    xt = torch.tensor(x, requires_grad=True)
    m = nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=1.0)
    (got,) = torch.autograd.grad(m(xt), xt, torch.tensor(seed))
    want, h = np.zeros_like(x), 1e-6
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        diff = _cross_map_lrn_np(up, size, 0.5, 0.75, 1.0) - _cross_map_lrn_np(
            down, size, 0.5, 0.75, 1.0)
        want[i] = (diff * seed).sum() / (2 * h)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-8)


def test_cross_map_lrn2d_gradient_and_errors() -> None:
    x = torch.randn(1, 5, 2, 2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(nn.CrossMapLRN2d(3, alpha=0.3, k=1.5), (x,))
    with pytest.raises(ValueError, match="CrossMapLRN2d: Expected input to be 4D, got 2D"):
        nn.CrossMapLRN2d(3)(torch.ones(2, 3))
    assert repr(nn.CrossMapLRN2d(3)) == "CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)"


# ------------------------------------------------------------------- conv_tbc, torch.hub


@pytest.mark.parametrize("pad", [0, 1, 3])
def test_conv_tbc_matches_numpy(pad: int) -> None:
    rng = np.random.default_rng(pad)
    x = rng.standard_normal((6, 2, 3))
    w = rng.standard_normal((3, 3, 4))
    b = rng.standard_normal(4)
    xp = np.pad(x, ((pad, pad), (0, 0), (0, 0)))
    steps = xp.shape[0] - w.shape[0] + 1
    ref = np.stack([sum(xp[t + j] @ w[j] for j in range(w.shape[0])) + b for t in range(steps)])
    out = F.conv_tbc(torch.tensor(x), torch.tensor(w), torch.tensor(b), pad)
    assert tuple(out.shape) == (6 + 2 * pad - 2, 2, 4)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)


def test_conv_tbc_errors() -> None:
    w, b = torch.randn(2, 3, 4), torch.randn(4)
    with pytest.raises(RuntimeError, match="Input must have 3 dims: time, batch, in_channel"):
        F.conv_tbc(torch.randn(5, 2), w, b)
    with pytest.raises(RuntimeError, match=r"Input dim 2 \(input channels\) is not == dim 1"):
        F.conv_tbc(torch.randn(5, 2, 4), w, b)
    with pytest.raises(RuntimeError, match="Bias size must equal dim 2 in the weight tensor"):
        F.conv_tbc(torch.randn(5, 2, 3), w, torch.randn(5))


def test_hub_constants() -> None:
    import torch.hub as hub

    match = hub.HASH_REGEX.search("resnet18-f37072fd.pth")
    assert match is not None and match.group(1) == "f37072fd"
    assert (hub.MODULE_HUBCONF, hub.VAR_DEPENDENCY, hub.READ_DATA_CHUNK) == (
        "hubconf.py", "dependencies", 131072)
    assert (hub.ENV_TORCH_HOME, hub.ENV_XDG_CACHE_HOME, hub.ENV_GITHUB_TOKEN,
            hub.DEFAULT_CACHE_DIR) == ("TORCH_HOME", "XDG_CACHE_HOME", "GITHUB_TOKEN", "~/.cache")
    assert hub.MAP_LOCATION is not None
