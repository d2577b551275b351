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
