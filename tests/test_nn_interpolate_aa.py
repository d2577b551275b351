"""``F.interpolate(..., antialias=True)`` (bilinear, bicubic, lanczos): values against an
independent per-pixel numpy implementation of Pillow-style resampling and against literals
computed by real PyTorch 2.13, uint8 fixed point, gradients, and the errors."""

import math

import numpy as np
import pytest
from numgrad import check_grad

import torch
import torch.nn.functional as F

F64 = torch.float64


# ------------------------------------------------------------------- numpy reference
#
# Pillow's resampling as documented: output pixel i along a dim has its centre at
# scale * (i + 0.5) in input pixel units; the filter (radius r) is stretched by the scale when
# shrinking; input pixels whose centres lie within the support contribute with the filter's
# value at their (stretched) distance, normalised to sum 1.


def _filter(mode: str, x: float) -> float:
    x = abs(x)
    if mode == "bilinear":
        return max(0.0, 1.0 - x)
    if mode == "bicubic":  # Keys, a = -0.5
        if x < 1:
            return 1.5 * x ** 3 - 2.5 * x ** 2 + 1
        return -0.5 * x ** 3 + 2.5 * x ** 2 - 4 * x + 2 if x < 2 else 0.0
    if x == 0:
        return 1.0
    return 3 * math.sin(math.pi * x) * math.sin(math.pi * x / 3) / (math.pi * x) ** 2 \
        if x < 3 else 0.0


RADIUS = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}


def _ref_matrix(size: int, out: int, mode: str, align_corners: bool,
                scale_factor: float | None) -> np.ndarray:
    if align_corners:
        scale = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        scale = 1 / scale_factor if scale_factor else size / out
    stretch = max(scale, 1.0)
    support = RADIUS[mode] * stretch
    m = np.zeros((out, size))
    for i in range(out):
        centre = scale * (i + 0.5)
        lo = max(int(centre - support + 0.5), 0)
        hi = min(int(centre + support + 0.5), size)
        row = [_filter(mode, (j + 0.5 - centre) / stretch) for j in range(lo, hi)]
        total = sum(row)
        for j, w in zip(range(lo, hi), row):
            m[i, j] = w / total if total else w
    return m


def _ref(x: np.ndarray, out: tuple, mode: str, align_corners: bool = False,
         scale_factor: tuple | None = None) -> np.ndarray:
    sf = scale_factor or (None, None)
    mh = _ref_matrix(x.shape[2], out[0], mode, align_corners, sf[0])
    mw = _ref_matrix(x.shape[3], out[1], mode, align_corners, sf[1])
    return np.einsum("oh,nchw,pw->ncop", mh, x, mw, optimize=True)


def _image(shape: tuple, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


CASES = [((6, 7), (3, 3)), ((13, 8), (4, 7)), ((9, 9), (1, 1)), ((5, 11), (12, 4)),
         ((8, 8), (8, 8)), ((20, 3), (7, 9)), ((1, 6), (3, 2))]


MODES_CORNERS = [("bilinear", False), ("bilinear", True), ("bicubic", False),
                 ("bicubic", True), ("lanczos", False)]  # lanczos has no align_corners


@pytest.mark.parametrize("mode,align_corners", MODES_CORNERS)
@pytest.mark.parametrize("shape,size", CASES)
def test_matches_numpy_reference(mode, align_corners, shape, size):
    x = _image((2, 3, *shape))
    got = F.interpolate(torch.from_numpy(x), size=size, mode=mode, antialias=True,
                        align_corners=align_corners or None)
    np.testing.assert_allclose(got.numpy(), _ref(x, size, mode, align_corners), atol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
@pytest.mark.parametrize("scale_factor", [0.5, (0.3, 0.77), (2.5, 0.4), 1.3])
def test_scale_factor_drives_the_map_unless_recomputed(mode, scale_factor):
    x = _image((1, 2, 17, 10), 1)
    t = torch.from_numpy(x)
    factors = scale_factor if isinstance(scale_factor, tuple) else (scale_factor,) * 2
    size = tuple(math.floor(s * f) for s, f in zip(x.shape[2:], factors))
    got = F.interpolate(t, scale_factor=scale_factor, mode=mode, antialias=True)
    np.testing.assert_allclose(got.numpy(), _ref(x, size, mode, scale_factor=factors),
                               atol=1e-12)
    got = F.interpolate(t, scale_factor=scale_factor, mode=mode, antialias=True,
                        recompute_scale_factor=True)
    np.testing.assert_allclose(got.numpy(), _ref(x, size, mode), atol=1e-12)


# values printed by real PyTorch 2.13 for x = arange(42).reshape(1, 1, 6, 7) ** 1.5 / 10
PYTORCH_FLOAT = [
    (dict(size=(4, 3), mode="bilinear"),
     [0.8933248218718092, 1.5277928432560963, 2.323667821315056, 5.056934673146893,
      6.263816368037881, 7.553774034806722, 11.48485005634399, 13.07120650146581,
      14.720713079655464, 19.236465223580442, 21.118965645912873, 23.054662731343164]),
    (dict(size=(2, 5), mode="bicubic", align_corners=True),
     [7.657754982422896, 8.469616052780864, 9.418693805417371, 10.414603960903136,
      11.193883523730522, 19.524452597865267, 20.819144552833656, 22.263339666666088,
      23.724741329125372, 24.84431495778219]),
    (dict(scale_factor=0.6, mode="lanczos"),
     [0.5633969089530737, 0.9807419935243931, 1.526054891888712, 2.227189467543974,
      4.913046829064582, 5.862266474036626, 6.869199225891515, 8.016697274301483,
      14.21265977655492, 15.511511680460911, 16.864391430168, 18.372175649683847]),
]


@pytest.mark.parametrize("kwargs,expected", PYTORCH_FLOAT)
def test_matches_pytorch_literals(kwargs, expected):
    x = (torch.arange(42, dtype=F64).reshape(1, 1, 6, 7) ** 1.5) / 10
    got = F.interpolate(x, antialias=True, **kwargs)
    np.testing.assert_allclose(got.flatten().tolist(), expected, rtol=1e-13, atol=1e-13)
    got32 = F.interpolate(x.float(), antialias=True, **kwargs)
    assert got32.dtype == torch.float32
    np.testing.assert_allclose(got32.flatten().tolist(), expected, rtol=1e-5, atol=1e-5)


# uint8: Pillow's fixed point (int16 weights, rounding and saturation after each pass);
# printed by real PyTorch 2.13 for u = (arange(48).reshape(1, 1, 6, 8) * 37) % 256
PYTORCH_UINT8 = [
    (dict(size=(3, 5), mode="bicubic"),
     [34, 91, 164, 172, 53, 112, 177, 158, 56, 84, 198, 143, 49, 107, 170]),
    (dict(size=(4, 3), mode="lanczos"), [36, 155, 125, 106, 176, 54, 182, 107, 82, 174, 63, 162]),
    (dict(size=(7, 3), mode="bilinear", align_corners=True),
     [59, 147, 88, 89, 141, 54, 122, 122, 56, 148, 101, 83, 161, 92, 116, 157, 95, 149, 135,
      115, 183]),
]


@pytest.mark.parametrize("kwargs,expected", PYTORCH_UINT8)
def test_uint8_matches_pytorch_literals(kwargs, expected):
    u = ((torch.arange(48).reshape(1, 1, 6, 8) * 37) % 256).to(torch.uint8)
    got = F.interpolate(u, antialias=True, **kwargs)
    assert got.dtype == torch.uint8
    assert got.flatten().tolist() == expected


def test_uint8_stays_near_the_exact_result_and_saturates():
    u = torch.from_numpy(np.random.default_rng(2).integers(0, 256, (2, 3, 19, 23))
                         .astype(np.uint8))
    got = F.interpolate(u, size=(6, 31), mode="bilinear", antialias=True)
    ref = _ref(u.numpy().astype(np.float64), (6, 31), "bilinear")
    # non-negative weights and two rounded passes: within 1 of the exact result
    assert np.abs(got.numpy().astype(np.float64) - ref).max() <= 1.0 + 1e-6
    # bicubic overshoots at a hard edge; uint8 saturates instead of wrapping around
    edge = torch.zeros(1, 1, 4, 12, dtype=torch.uint8)
    edge[..., 6:] = 255
    ref = _ref(edge.numpy().astype(np.float64), (4, 5), "bicubic")
    assert ref.min() < 0 and ref.max() > 255
    got = F.interpolate(edge, size=(4, 5), mode="bicubic", antialias=True).numpy()
    np.testing.assert_array_equal(got, np.clip(np.floor(ref + 0.5), 0, 255))


# ------------------------------------------------------------------- properties


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_long_dims_resample_in_row_blocks(mode):
    # dims past 256 pixels multiply blocks of the banded weight matrix: same values
    x = _image((1, 1, 300, 270), 5)
    for size in [(97, 33), (301, 269), (610, 5)]:
        got = F.interpolate(torch.from_numpy(x), size=size, mode=mode, antialias=True)
        np.testing.assert_allclose(got.numpy(), _ref(x, size, mode), atol=1e-12)
    u = torch.from_numpy((x * 40 + 128).clip(0, 255).astype(np.uint8))
    got = F.interpolate(u, size=(97, 33), mode="bilinear", antialias=True)
    ref = _ref(u.numpy().astype(np.float64), (97, 33), "bilinear")
    assert np.abs(got.numpy().astype(np.float64) - ref).max() <= 1.0 + 1e-6


def test_upsampling_bilinear_equals_plain_bilinear():
    x = torch.from_numpy(_image((2, 2, 5, 4)))
    aa = F.interpolate(x, size=(11, 9), mode="bilinear", antialias=True)
    plain = F.interpolate(x, size=(11, 9), mode="bilinear")
    np.testing.assert_allclose(aa.numpy(), plain.numpy(), atol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_same_size_is_identity_and_constants_stay_constant(mode):
    x = torch.from_numpy(_image((1, 3, 7, 5)))
    np.testing.assert_allclose(F.interpolate(x, size=(7, 5), mode=mode, antialias=True).numpy(),
                               x.numpy(), atol=1e-14)
    c = torch.full((1, 1, 12, 9), 2.5, dtype=F64)
    for size in [(3, 4), (1, 1), (25, 2)]:
        got = F.interpolate(c, size=size, mode=mode, antialias=True)
        np.testing.assert_allclose(got.numpy(), 2.5, atol=1e-13)


def test_downsampling_filters_out_a_checkerboard():
    # plain bilinear at exactly 1/2 samples between pixel pairs too, so use 1/3
    board = torch.tensor([[(i + j) % 2 for j in range(30)] for i in range(30)],
                         dtype=F64).reshape(1, 1, 30, 30)
    aa = F.interpolate(board, size=(10, 10), mode="bilinear", antialias=True)
    plain = F.interpolate(board, size=(10, 10), mode="bilinear")
    assert float((aa - 0.5).abs().max()) < 0.1
    assert float((plain - 0.5).abs().max()) > 0.4


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_follows_float32(dtype):
    x = torch.from_numpy(_image((1, 2, 9, 9)).astype(np.float32))
    got = F.interpolate(x.to(dtype), size=(4, 4), mode="bicubic", antialias=True)
    assert got.dtype == dtype
    want = F.interpolate(x.to(dtype).float(), size=(4, 4), mode="bicubic", antialias=True)
    np.testing.assert_allclose(got.float().numpy(), want.to(dtype).float().numpy())


def test_empty_batch():
    got = F.interpolate(torch.zeros(0, 3, 8, 8), size=(3, 5), mode="bilinear", antialias=True)
    assert tuple(got.shape) == (0, 3, 3, 5)


@pytest.mark.parametrize("mode,align_corners", MODES_CORNERS)
def test_gradients(mode, align_corners):
    x = torch.from_numpy(_image((1, 2, 7, 6), 4))
    for size in [(3, 4), (9, 5)]:
        check_grad(lambda a, s=size: F.interpolate(a, size=s, mode=mode, antialias=True,
                                                   align_corners=align_corners or None), x)


# ------------------------------------------------------------------- errors


AA_ERROR = ("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input")


def test_antialias_errors():
    x4 = torch.zeros(1, 1, 8, 8)
    for mode in ["nearest", "nearest-exact", "area", "bogus"]:
        with pytest.raises(ValueError, match=AA_ERROR):
            F.interpolate(x4, size=3, mode=mode, antialias=True)
    for shape, mode in [((1, 1, 8), "linear"), ((1, 1, 8), "bilinear"),
                        ((1, 1, 4, 4, 4), "trilinear"), ((1, 1, 4, 4, 4), "bicubic")]:
        with pytest.raises(ValueError, match=AA_ERROR):
            F.interpolate(torch.zeros(shape), scale_factor=0.5, mode=mode, antialias=True)
    with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
        F.interpolate(x4, size=3, mode="lanczos")
    with pytest.raises(ValueError, match="Lanczos mode does not support align_corners=True"):
        F.interpolate(x4, size=3, mode="lanczos", antialias=True, align_corners=True)
    with pytest.raises(NotImplementedError, match=r"\(got 3D\).*lanczos \| area"):
        F.interpolate(torch.zeros(1, 1, 8), size=3, mode="lanczos")
    with pytest.raises(NotImplementedError, match=r"not implemented for torch\.int64"):
        F.interpolate(x4.long(), size=3, mode="bilinear", antialias=True)
    with pytest.raises(RuntimeError, match=r"got input \(H: 8, W: 8\) output \(H: 2, W: 0\)"):
        F.interpolate(x4, size=(2, 0), mode="bicubic", antialias=True)
    with pytest.raises(RuntimeError, match=r"got input \(H: 0, W: 8\) output \(H: 2, W: 3\)"):
        F.interpolate(torch.zeros(1, 1, 0, 8), size=(2, 3), mode="bilinear", antialias=True)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x4, size=2, scale_factor=0.5, mode="nearest", antialias=True)
    with pytest.raises(ValueError, match="recompute_scale_factor is not meaningful"):
        F.interpolate(x4, size=2, mode="bilinear", recompute_scale_factor=True)
