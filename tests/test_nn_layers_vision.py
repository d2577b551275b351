"""Resampling and rearranging layers (interpolate/Upsample, grid_sample, affine_grid,
fold/unfold, pixel and channel shuffles), padding layers, distances: values against numpy
re-implementations, gradients against finite differences (float64), errors, and the reprs of
every layer added with them (strings pasted from PyTorch 2.13)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numgrad import check_grad

import torch
import torch.nn as nn
import torch.nn.functional as F

F64 = torch.float64


def _rand(*shape, seed=0):
    return torch.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=F64)


# --------------------------------------------------------------------------- interpolate


def _cubic(t, a=-0.75):
    t = abs(t)
    if t <= 1:
        return ((a + 2) * t - (a + 3)) * t * t + 1
    if t < 2:
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return 0.0


def _np_matrix(size, out, mode, align_corners, scale):
    """(out, size) resampling matrix of one dim, from the documented coordinate maps."""
    m = np.zeros((out, size))
    ratio = (1.0 / scale) if scale else size / out
    for i in range(out):
        if mode == "nearest":
            m[i, min(math.floor(i * ratio), size - 1)] = 1
        elif mode == "nearest-exact":
            m[i, min(math.floor((i + 0.5) * ratio), size - 1)] = 1
        elif mode == "area":
            lo, hi = (i * size) // out, -(-((i + 1) * size) // out)
            m[i, lo:hi] = 1.0 / (hi - lo)
        else:
            if align_corners:
                src = i * (size - 1) / (out - 1) if out > 1 else 0.0
            else:
                src = (i + 0.5) * ratio - 0.5
            if mode == "cubic":
                base = math.floor(src)
                for k in range(-1, 3):
                    m[i, min(max(base + k, 0), size - 1)] += _cubic(src - (base + k))
            else:
                src = max(src, 0.0)
                lo = min(int(src), size - 1)
                hi = min(lo + 1, size - 1)
                m[i, lo] += 1 - (src - lo)
                m[i, hi] += src - lo
    return m


def _np_interp(x, outs, mode, align_corners=False, scales=None):
    for d, out in enumerate(outs):
        axis = 2 + d
        m = _np_matrix(x.shape[axis], out, mode, align_corners, scales[d] if scales else None)
        x = np.moveaxis(np.tensordot(m, np.moveaxis(x, axis, 0), axes=1), 0, axis)
    return x


_SEP_MODE = {"bilinear": "linear", "bicubic": "cubic", "linear": "linear",
             "trilinear": "linear"}


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic", "area"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolate_2d(mode, align_corners):
    if mode in ("nearest", "nearest-exact", "area") and align_corners:
        pytest.skip("align_corners applies to the interpolating modes")
    ac = align_corners if mode in _SEP_MODE else None
    x = _rand(2, 3, 5, 7)
    np_mode = _SEP_MODE.get(mode, mode)
    got = F.interpolate(x, size=(8, 4), mode=mode, align_corners=ac)
    np.testing.assert_allclose(got.numpy(), _np_interp(x.numpy(), (8, 4), np_mode, ac),
                               atol=1e-12)
    if mode == "area":
        return
    # a scale factor drives the coordinate map unless recompute_scale_factor is set
    got = F.interpolate(x, scale_factor=(1.7, 2.3), mode=mode, align_corners=ac)
    want = _np_interp(x.numpy(), (8, 16), np_mode, ac, scales=(1.7, 2.3))
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    got = F.interpolate(x, scale_factor=(1.7, 2.3), mode=mode, align_corners=ac,
                        recompute_scale_factor=True)
    np.testing.assert_allclose(got.numpy(), _np_interp(x.numpy(), (8, 16), np_mode, ac),
                               atol=1e-12)


def test_interpolate_1d_3d_and_known_values():
    x1 = _rand(2, 3, 6)
    np.testing.assert_allclose(F.interpolate(x1, size=11, mode="linear").numpy(),
                               _np_interp(x1.numpy(), (11,), "linear"), atol=1e-12)
    x3 = _rand(1, 2, 3, 4, 5)
    np.testing.assert_allclose(
        F.interpolate(x3, scale_factor=2, mode="trilinear", align_corners=True).numpy(),
        _np_interp(x3.numpy(), (6, 8, 10), "linear", True), atol=1e-12)
    np.testing.assert_allclose(F.interpolate(x3, size=(2, 5, 3), mode="nearest").numpy(),
                               _np_interp(x3.numpy(), (2, 5, 3), "nearest"), atol=1e-12)
    t = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    assert F.interpolate(t, scale_factor=2).tolist() == [[[[1, 1, 2, 2], [1, 1, 2, 2],
                                                            [3, 3, 4, 4], [3, 3, 4, 4]]]]
    ramp = torch.tensor([[[0.0, 1.0]]])
    assert F.interpolate(ramp, size=3, mode="linear", align_corners=True).tolist() == \
        [[[0.0, 0.5, 1.0]]]
    assert F.interpolate(ramp, size=4, mode="linear").tolist() == [[[0.0, 0.25, 0.75, 1.0]]]


def test_interpolate_grad():
    for mode in ("nearest", "bilinear", "bicubic", "area"):
        ac = None if mode in ("nearest", "area") else False
        check_grad(lambda a, m=mode, c=ac: F.interpolate(a, size=(3, 5), mode=m,
                                                         align_corners=c), _rand(1, 1, 4, 3))


def test_interpolate_errors():
    x = torch.zeros(1, 1, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, size=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="bilinear mode needs 4D input"):
        F.interpolate(torch.zeros(1, 1, 4), size=2, mode="bilinear")
    with pytest.raises(ValueError, match="same number of spatial"):
        F.interpolate(x, size=(2, 2, 2))


def test_upsample_modules():
    x = _rand(1, 2, 3, 4)
    np.testing.assert_allclose(nn.Upsample(scale_factor=2, mode="bilinear")(x).numpy(),
                               _np_interp(x.numpy(), (6, 8), "linear", False, (2.0, 2.0)),
                               atol=1e-12)
    np.testing.assert_allclose(nn.UpsamplingBilinear2d(size=(5, 5))(x).numpy(),
                               _np_interp(x.numpy(), (5, 5), "linear", True), atol=1e-12)
    np.testing.assert_allclose(nn.UpsamplingNearest2d(scale_factor=3)(x).numpy(),
                               x.numpy().repeat(3, 2).repeat(3, 3))


# --------------------------------------------------------------------------- grid sampling


def _np_reflect(c, lo2, hi2):
    if lo2 == hi2:
        return 0.0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    c = abs(c - lo)
    extra = math.fmod(c, span)
    flips = math.floor(c / span)
    return extra + lo if flips % 2 == 0 else span - extra + lo


def _np_source(g, size, padding_mode, ac):
    c = (g + 1) / 2 * (size - 1) if ac else ((g + 1) * size - 1) / 2
    return _np_pad(c, size, padding_mode, ac)


def _np_pad(c, size, padding_mode, ac):
    if padding_mode == "border":
        c = min(max(c, 0), size - 1)
    elif padding_mode == "reflection":
        c = _np_reflect(c, 0, 2 * (size - 1)) if ac else _np_reflect(c, -1, 2 * size - 1)
        c = min(max(c, 0), size - 1)
    return c


def _np_grid_sample(x, grid, mode, padding_mode, ac):
    n, c, h, w = x.shape
    oh, ow = grid.shape[1:3]
    out = np.zeros((n, c, oh, ow))

    def px(b, yy, xx):
        if 0 <= yy < h and 0 <= xx < w:
            return x[b, :, yy, xx]
        return np.zeros(c)

    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                sx = _np_source(grid[b, i, j, 0], w, padding_mode, ac)
                sy = _np_source(grid[b, i, j, 1], h, padding_mode, ac)
                if mode == "nearest":
                    out[b, :, i, j] = px(b, int(np.rint(sy)), int(np.rint(sx)))
                    continue
                if mode == "bicubic":
                    # taps around the unpadded point, each moved by the padding rule
                    rx = (grid[b, i, j, 0] + 1) / 2 * (w - 1) if ac else \
                        ((grid[b, i, j, 0] + 1) * w - 1) / 2
                    ry = (grid[b, i, j, 1] + 1) / 2 * (h - 1) if ac else \
                        ((grid[b, i, j, 1] + 1) * h - 1) / 2
                    x0, y0 = math.floor(rx), math.floor(ry)
                    acc = np.zeros(c)
                    for ty in range(-1, 3):
                        for tx in range(-1, 3):
                            yy = _np_pad(y0 + ty, h, padding_mode, ac)
                            xx = _np_pad(x0 + tx, w, padding_mode, ac)
                            acc += px(b, round(yy), round(xx)) * \
                                _cubic(ry - (y0 + ty)) * _cubic(rx - (x0 + tx))
                    out[b, :, i, j] = acc
                    continue
                x0, y0 = math.floor(sx), math.floor(sy)
                fx, fy = sx - x0, sy - y0
                out[b, :, i, j] = (px(b, y0, x0) * (1 - fx) * (1 - fy) +
                                   px(b, y0, x0 + 1) * fx * (1 - fy) +
                                   px(b, y0 + 1, x0) * (1 - fx) * fy +
                                   px(b, y0 + 1, x0 + 1) * fx * fy)
    return out


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample(mode, padding_mode, align_corners):
    x = _rand(2, 3, 5, 7)
    grid = torch.tensor(np.random.default_rng(1).uniform(-1.3, 1.3, (2, 4, 6, 2)))
    got = F.grid_sample(x, grid, mode=mode, padding_mode=padding_mode,
                        align_corners=align_corners)
    want = _np_grid_sample(x.numpy(), grid.numpy(), mode, padding_mode, align_corners)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)


def test_grid_sample_3d_grad_and_errors():
    x = _rand(1, 2, 3, 4, 5)
    ident = F.affine_grid(torch.eye(3, 4, dtype=F64).unsqueeze(0), [1, 2, 3, 4, 5],
                          align_corners=False)
    # sampling at the identity grid returns the input
    np.testing.assert_allclose(F.grid_sample(x, ident, align_corners=False).numpy(),
                               x.numpy(), atol=1e-12)
    grid = torch.tensor(np.random.default_rng(2).uniform(-0.9, 0.9, (1, 2, 3, 2)))
    check_grad(lambda a, g: F.grid_sample(a, g, padding_mode="border", align_corners=True),
               _rand(1, 2, 3, 4), grid)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, ident)
    check_grad(lambda a, g: F.grid_sample(a, g, mode="bicubic", align_corners=False),
               _rand(1, 1, 3, 4), grid)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D"):
        F.grid_sample(x, ident, mode="bicubic", align_corners=False)
    with pytest.raises(ValueError, match="expected mode"):
        F.grid_sample(x[..., 0], grid, mode="cubic")
    with pytest.raises(ValueError, match="expected padding_mode"):
        F.grid_sample(x[..., 0], grid, padding_mode="wrap")
    with pytest.raises(RuntimeError, match="same batch size"):
        F.grid_sample(_rand(2, 1, 3, 3), grid, align_corners=False)


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(align_corners):
    theta = _rand(2, 2, 3)
    got = F.affine_grid(theta, [2, 3, 5, 4], align_corners=align_corners)

    def axis(s):
        v = np.linspace(-1, 1, s)
        return v if align_corners else v * (s - 1) / s

    ys, xs = np.meshgrid(axis(5), axis(4), indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], -1)
    want = np.einsum("hwk,njk->nhwj", base, theta.numpy())
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    got3 = F.affine_grid(_rand(2, 3, 4), [2, 1, 2, 3, 4], align_corners=align_corners)
    assert tuple(got3.shape) == (2, 2, 3, 4, 3)
    check_grad(lambda t: F.affine_grid(t, [1, 1, 2, 3], align_corners=align_corners),
               _rand(1, 2, 3))
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(_rand(1, 3, 4), [1, 1, 2, 3], align_corners=False)


# --------------------------------------------------------------------------- fold / unfold


def _np_unfold(x, k, d, p, s):
    x = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    n, c, h, w = x.shape
    oh = (h - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c * k[0] * k[1], oh * ow))
    for ci in range(c):
        for ki in range(k[0]):
            for kj in range(k[1]):
                row = (ci * k[0] + ki) * k[1] + kj
                for i in range(oh):
                    for j in range(ow):
                        cols[:, row, i * ow + j] = x[:, ci, i * s[0] + ki * d[0],
                                                     j * s[1] + kj * d[1]]
    return cols


def test_unfold_and_fold():
    x = _rand(2, 3, 5, 7)
    got = F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    np.testing.assert_allclose(got.numpy(),
                               _np_unfold(x.numpy(), (2, 3), (1, 2), (1, 1), (2, 1)))
    assert tuple(nn.Unfold(2)(x[0]).shape) == (12, 24)
    # fold is unfold's adjoint: <unfold(x), y> == <x, fold(y)>
    y = _rand(2, 18, 6, seed=1)
    folded = F.fold(y, (5, 6), (2, 3), padding=(1, 0), stride=(2, 2))
    lhs = (F.unfold(x[..., :6], (2, 3), padding=(1, 0), stride=(2, 2)) * y).sum()
    rhs = (x[..., :6] * folded).sum()
    assert abs(float(lhs) - float(rhs)) < 1e-10
    # non-overlapping blocks: fold inverts unfold
    np.testing.assert_allclose(nn.Fold((4, 6), 2, stride=2)(F.unfold(x[:, :, :4, :6], 2,
                                                                     stride=2)).numpy(),
                               x[:, :, :4, :6].numpy())
    check_grad(lambda a: F.fold(a, (3, 3), 2), _rand(1, 4, 4))
    check_grad(lambda a: F.unfold(a, 2, padding=1), _rand(1, 1, 2, 3))
    with pytest.raises(RuntimeError, match="sliding blocks"):
        F.fold(y, (5, 6), (2, 3))
    with pytest.raises(RuntimeError, match="divisible by the product"):
        F.fold(_rand(1, 5, 4), (3, 3), 2)
    with pytest.raises(NotImplementedError, match="3D or 4D"):
        F.unfold(torch.zeros(2, 2), 1)


# --------------------------------------------------------------------------- shuffles


def test_pixel_shuffle_unshuffle():
    x = torch.arange(2 * 8 * 2 * 3, dtype=F64).reshape(2, 8, 2, 3)
    got = nn.PixelShuffle(2)(x)
    xn = x.numpy().reshape(2, 2, 2, 2, 2, 3)  # (N, C, r, r, H, W)
    want = xn.transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 4, 6)
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(nn.PixelUnshuffle(2)(got).numpy(), x.numpy())
    assert tuple(F.pixel_shuffle(torch.zeros(3, 1, 9, 2, 2), 3).shape) == (3, 1, 1, 6, 6)
    check_grad(lambda a: F.pixel_unshuffle(a, 2), _rand(1, 1, 2, 4))
    with pytest.raises(RuntimeError, match="divisible by the square"):
        F.pixel_shuffle(torch.zeros(1, 3, 2, 2), 2)
    with pytest.raises(RuntimeError, match="divisible by downscale_factor"):
        F.pixel_unshuffle(torch.zeros(1, 1, 3, 4), 2)


def test_channel_shuffle():
    x = torch.arange(2 * 6 * 2, dtype=F64).reshape(2, 6, 2)
    got = nn.ChannelShuffle(3)(x)
    order = np.arange(6).reshape(3, 2).T.reshape(-1)  # [0, 2, 4, 1, 3, 5]
    np.testing.assert_array_equal(got.numpy(), x.numpy()[:, order])
    with pytest.raises(RuntimeError, match="divisible by groups"):
        F.channel_shuffle(x, 4)


# --------------------------------------------------------------------------- padding


@pytest.mark.parametrize("n", [1, 2, 3])
def test_padding_layers(n):
    x = _rand(2, 3, *([4] * n))
    pad = tuple(range(1, 2 * n + 1)) if n < 3 else (1, 0, 2, 1, 0, 3)
    pad = tuple(min(v, 3) for v in pad)
    np_pad = [(0, 0), (0, 0)] + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(n))]
    xn = x.numpy()
    for cls, kw in (("ZeroPad", dict(mode="constant")), ("ReflectionPad", dict(mode="reflect")),
                    ("ReplicationPad", dict(mode="edge")), ("CircularPad", dict(mode="wrap"))):
        got = getattr(nn, f"{cls}{n}d")(pad)(x)
        np.testing.assert_allclose(got.numpy(), np.pad(xn, np_pad, **kw))
    got = getattr(nn, f"ConstantPad{n}d")(pad, 2.5)(x)
    np.testing.assert_allclose(got.numpy(), np.pad(xn, np_pad, constant_values=2.5))
    # unbatched input
    got = getattr(nn, f"ReflectionPad{n}d")(1)(x[0])
    np.testing.assert_allclose(got.numpy(), np.pad(xn[0], [(0, 0)] + [(1, 1)] * n,
                                                   mode="reflect"))
    check_grad(lambda a: getattr(nn, f"ReplicationPad{n}d")(1)(a), _rand(1, 1, *([2] * n)))


def test_padding_errors():
    bad = nn.ZeroPad2d((1, 2, 3))  # PyTorch checks the length in forward
    with pytest.raises(RuntimeError, match="divisible by 2"):
        bad(torch.zeros(1, 2, 2))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.CircularPad1d(1)(torch.zeros(1, 1, 1, 4))
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        nn.ReflectionPad1d(4)(torch.zeros(1, 1, 4))


# --------------------------------------------------------------------------- distances


def test_cosine_similarity():
    a, b = _rand(3, 4, 2), _rand(1, 4, 2, seed=1)
    got = nn.CosineSimilarity(dim=1)(a, b)
    an, bn = a.numpy(), b.numpy()
    want = (an * bn).sum(1) / (np.linalg.norm(an, axis=1) * np.linalg.norm(bn, axis=1))
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    z = torch.zeros(2, 3, dtype=F64)
    assert F.cosine_similarity(z, _rand(2, 3)).tolist() == [0.0, 0.0]
    check_grad(lambda x, y: F.cosine_similarity(x, y, dim=0), _rand(3, 2), _rand(3, 2, seed=2))


def test_pairwise_distance_and_pdist():
    a, b = _rand(5, 4), _rand(5, 4, seed=1)
    got = nn.PairwiseDistance(p=3, keepdim=True)(a, b)
    want = (np.abs(a.numpy() - b.numpy() + 1e-6) ** 3).sum(-1, keepdims=True) ** (1 / 3)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    np.testing.assert_allclose(F.pairwise_distance(a, b, 1).numpy(),
                               np.abs(a.numpy() - b.numpy() + 1e-6).sum(-1), atol=1e-12)
    got = F.pdist(a, 1.5)
    an = a.numpy()
    want = [(np.abs(an[i] - an[j]) ** 1.5).sum() ** (1 / 1.5) for i in range(5)
            for j in range(i + 1, 5)]
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    assert F.pdist(a[:1]).shape == (0,)
    check_grad(lambda x: F.pdist(x), _rand(3, 2))
    check_grad(lambda x, y: F.pairwise_distance(x, y), _rand(2, 3), _rand(2, 3, seed=3))
    with pytest.raises(RuntimeError, match="2D tensors"):
        F.pdist(_rand(2, 2, 2))


# --------------------------------------------------------------------------- reprs

REPRS = {
    "nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2, "
    "bias=False)": "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), "
                   "dilation=(2, 2), output_padding=(1, 1), groups=2, bias=False)",
    "nn.ConvTranspose1d(4, 6, 3)": "ConvTranspose1d(4, 6, kernel_size=(3,), stride=(1,))",
    "nn.ConvTranspose3d(2, 2, (1, 2, 3), stride=(1, 2, 1))":
        "ConvTranspose3d(2, 2, kernel_size=(1, 2, 3), stride=(1, 2, 1))",
    "nn.MaxUnpool2d(2)": "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))",
    "nn.MaxUnpool1d(2, stride=1, padding=1)":
        "MaxUnpool1d(kernel_size=(2,), stride=(1,), padding=(1,))",
    "nn.MaxUnpool3d(3, 2)":
        "MaxUnpool3d(kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(0, 0, 0))",
    "nn.LPPool2d(2, 3)": "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)",
    "nn.LPPool1d(1.5, 3, 2, ceil_mode=True)":
        "LPPool1d(norm_type=1.5, kernel_size=3, stride=2, ceil_mode=True)",
    "nn.LPPool3d(2, (1, 2, 2))":
        "LPPool3d(norm_type=2, kernel_size=(1, 2, 2), stride=None, ceil_mode=False)",
    "nn.AdaptiveMaxPool2d((3, None), True)": "AdaptiveMaxPool2d(output_size=(3, None))",
    "nn.AdaptiveMaxPool3d(2)": "AdaptiveMaxPool3d(output_size=2)",
    "nn.GroupNorm(2, 4)": "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)",
    "nn.GroupNorm(2, 4, eps=1e-3, affine=False)":
        "GroupNorm(2, 4, eps=0.001, affine=False, bias=False)",
    "nn.GroupNorm(2, 4, bias=False)": "GroupNorm(2, 4, eps=1e-05, affine=True, bias=False)",
    "nn.RMSNorm(4)": "RMSNorm((4,), eps=None, elementwise_affine=True)",
    "nn.RMSNorm([3, 4], eps=1e-3, elementwise_affine=False)":
        "RMSNorm((3, 4), eps=0.001, elementwise_affine=False)",
    "nn.InstanceNorm2d(3)": "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, "
                            "bias=False, track_running_stats=False)",
    "nn.InstanceNorm1d(3, affine=True, track_running_stats=True)":
        "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
        "track_running_stats=True)",
    "nn.InstanceNorm3d(3, affine=True, bias=False)":
        "InstanceNorm3d(3, eps=1e-05, momentum=0.1, affine=True, bias=False, "
        "track_running_stats=False)",
    "nn.LocalResponseNorm(3)": "LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1.0)",
    "nn.LocalResponseNorm(2, 0.1, 0.5, 2)": "LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2)",
    "nn.Dropout1d()": "Dropout1d(p=0.5, inplace=False)",
    "nn.Dropout2d(0.2, True)": "Dropout2d(p=0.2, inplace=True)",
    "nn.Dropout3d(0.1)": "Dropout3d(p=0.1, inplace=False)",
    "nn.AlphaDropout()": "AlphaDropout(p=0.5, inplace=False)",
    "nn.FeatureAlphaDropout(0.3)": "FeatureAlphaDropout(p=0.3, inplace=False)",
    "nn.Embedding(10, 3)": "Embedding(10, 3)",
    "nn.Embedding(10, 3, padding_idx=-1, max_norm=1.0, norm_type=3., scale_grad_by_freq=True)":
        "Embedding(10, 3, padding_idx=9, max_norm=1.0, norm_type=3.0, scale_grad_by_freq=True)",
    "nn.EmbeddingBag(10, 3)": "EmbeddingBag(10, 3, mode='mean')",
    "nn.EmbeddingBag(10, 3, mode='max', padding_idx=2, include_last_offset=True, max_norm=2)":
        "EmbeddingBag(10, 3, max_norm=2, mode='max', padding_idx=2)",
    "nn.EmbeddingBag(10, 3, norm_type=1.0, scale_grad_by_freq=True, mode='sum')":
        "EmbeddingBag(10, 3, norm_type=1.0, scale_grad_by_freq=True, mode='sum')",
    "nn.Upsample(scale_factor=2)": "Upsample(scale_factor=2.0, mode='nearest')",
    "nn.Upsample(size=(3, 4), mode='bilinear', align_corners=True)":
        "Upsample(size=(3, 4), mode='bilinear')",
    "nn.Upsample(scale_factor=(2, 3), mode='bicubic')":
        "Upsample(scale_factor=(2.0, 3.0), mode='bicubic')",
    "nn.UpsamplingNearest2d(scale_factor=2)":
        "UpsamplingNearest2d(scale_factor=2.0, mode='nearest')",
    "nn.UpsamplingBilinear2d(size=3)": "UpsamplingBilinear2d(size=3, mode='bilinear')",
    "nn.PixelShuffle(2)": "PixelShuffle(upscale_factor=2)",
    "nn.PixelUnshuffle(3)": "PixelUnshuffle(downscale_factor=3)",
    "nn.ChannelShuffle(2)": "ChannelShuffle(groups=2)",
    "nn.Fold((4, 5), 2)":
        "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)",
    "nn.Fold(4, (2, 3), dilation=2, padding=(1, 0), stride=2)":
        "Fold(output_size=4, kernel_size=(2, 3), dilation=2, padding=(1, 0), stride=2)",
    "nn.Unfold(2, dilation=2, padding=1, stride=2)":
        "Unfold(kernel_size=2, dilation=2, padding=1, stride=2)",
    "nn.ZeroPad1d(2)": "ZeroPad1d((2, 2))",
    "nn.ZeroPad2d((1, 2, 3, 4))": "ZeroPad2d((1, 2, 3, 4))",
    "nn.ZeroPad3d(1)": "ZeroPad3d((1, 1, 1, 1, 1, 1))",
    "nn.ConstantPad1d(2, 3.5)": "ConstantPad1d(padding=(2, 2), value=3.5)",
    "nn.ConstantPad2d((1, 0, 2, 0), -1)": "ConstantPad2d(padding=(1, 0, 2, 0), value=-1)",
    "nn.ConstantPad3d(1, 0)": "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=0)",
    "nn.ReflectionPad1d((1, 2))": "ReflectionPad1d((1, 2))",
    "nn.ReflectionPad2d(1)": "ReflectionPad2d((1, 1, 1, 1))",
    "nn.ReplicationPad3d(1)": "ReplicationPad3d((1, 1, 1, 1, 1, 1))",
    "nn.CircularPad2d((1, 2, 0, 1))": "CircularPad2d((1, 2, 0, 1))",
    "nn.CosineSimilarity(0, 1e-3)": "CosineSimilarity()",
    "nn.PairwiseDistance(1, 1e-3, True)": "PairwiseDistance()",
    "nn.Sequential(nn.ConvTranspose2d(2, 2, 2), nn.GroupNorm(1, 2), "
    "nn.Upsample(scale_factor=2.5))":
        "Sequential(\n  (0): ConvTranspose2d(2, 2, kernel_size=(2, 2), stride=(1, 1))\n"
        "  (1): GroupNorm(1, 2, eps=1e-05, affine=True, bias=True)\n"
        "  (2): Upsample(scale_factor=2.5, mode='nearest')\n)",
}


@pytest.mark.parametrize("expr", sorted(REPRS))
def test_repr(expr):
    assert repr(eval(expr)) == REPRS[expr]
