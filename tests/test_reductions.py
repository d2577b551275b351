"""Reductions, scans, sorting and statistics.

Expected values come from numpy, or are PyTorch 2.13's results written down by hand (marked
"PyTorch:"), never from the code under test.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import torch

NAN = math.nan


def arr(t: torch.Tensor) -> np.ndarray:
    return np.array(t.tolist())


def rng_array(shape, seed=0, low=-5.0, high=5.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


# -- sums, products, means ----------------------------------------------------------------


def test_sum_dims_keepdim_and_dtypes():
    a = rng_array((2, 3, 4))
    t = torch.tensor(a.tolist())
    np.testing.assert_allclose(arr(t.sum()), a.sum(), rtol=1e-5)
    np.testing.assert_allclose(arr(torch.sum(t, (0, 2))), a.sum(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(arr(t.sum(-1, keepdim=True)), a.sum(-1, keepdims=True),
                               rtol=1e-5)
    assert torch.tensor([1, 2], dtype=torch.int8).sum().dtype == torch.int64
    assert torch.tensor([True, True]).sum().item() == 2
    assert torch.tensor([3, 4], dtype=torch.int8).sum(dtype=torch.int8).dtype == torch.int8
    assert torch.sum(torch.tensor([1, 2]), dtype=torch.float64).dtype == torch.float64


def test_sum_half_accumulates_in_float32():
    # 4096 + 1 + 1 + ... is exact in float32; a float16 accumulator would stop at 2048
    t = torch.ones(4096, dtype=torch.float16)
    assert t.sum().item() == 4096.0
    b = torch.ones(1000, dtype=torch.bfloat16)
    assert b.sum().item() == 1000.0  # bfloat16 has 1000 exactly; a bf16 accumulator stalls at 256


def test_empty_reductions_have_identities():
    e = torch.zeros(0, 3)
    assert arr(e.sum(0)).tolist() == [0.0, 0.0, 0.0]
    assert arr(e.prod(0)).tolist() == [1.0, 1.0, 1.0]
    assert torch.zeros(0).sum().item() == 0.0
    assert math.isnan(torch.mean(torch.zeros(0)).item())
    assert torch.any(torch.zeros(0)).item() is False
    assert torch.all(torch.zeros(0)).item() is True


def test_prod_and_nansum_nanmean():
    a = np.array([[1.5, -2.0, 0.5], [3.0, 1.0, -1.0]])
    t = torch.tensor(a.tolist())
    np.testing.assert_allclose(arr(t.prod(1)), a.prod(1))
    assert torch.tensor([2, 3], dtype=torch.int8).prod().dtype == torch.int64
    n = torch.tensor([[1.0, NAN, 2.0], [NAN, NAN, 4.0]])
    assert arr(torch.nansum(n, 1)).tolist() == [3.0, 4.0]
    assert arr(torch.nanmean(n, 1)).tolist() == [1.5, 4.0]
    with pytest.raises(TypeError):
        torch.prod(t, (0, 1))


def test_mean_rules():
    a = rng_array((3, 4), seed=1)
    t = torch.tensor(a.tolist(), dtype=torch.float64)
    np.testing.assert_allclose(arr(t.mean(0)), a.mean(0))
    np.testing.assert_allclose(arr(torch.mean(t, (0, 1), keepdim=True)), a.mean(keepdims=True))
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        torch.mean(torch.arange(3))
    assert torch.mean(torch.arange(3), dtype=torch.float64).item() == 1.0
    with pytest.raises(RuntimeError, match="nanmean"):
        torch.nanmean(torch.tensor([1, 2]))


def test_var_std_against_numpy():
    a = rng_array((3, 5), seed=2)
    t = torch.tensor(a.tolist(), dtype=torch.float64)
    np.testing.assert_allclose(arr(t.var()), a.var(ddof=1))
    np.testing.assert_allclose(arr(t.var(1)), a.var(1, ddof=1))
    np.testing.assert_allclose(arr(torch.var(t, 1, unbiased=False)), a.var(1))
    np.testing.assert_allclose(arr(torch.var(t, 0, correction=2, keepdim=True)),
                               a.var(0, ddof=2, keepdims=True))
    np.testing.assert_allclose(arr(torch.std(t, False)), a.std())
    v, m = torch.var_mean(t, 1)
    np.testing.assert_allclose(arr(v), a.var(1, ddof=1))
    np.testing.assert_allclose(arr(m), a.mean(1))
    s, m = torch.std_mean(t, (0, 1), keepdim=True)
    np.testing.assert_allclose(arr(s), a.std(ddof=1, keepdims=True))
    with pytest.raises(RuntimeError, match="floating point"):
        torch.var(torch.arange(4))


def test_var_without_degrees_of_freedom_warns_and_is_nan():
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert math.isnan(torch.var(torch.ones(1)).item())


def test_std_half_matches_pytorch():
    # PyTorch: tensor(1.5273, dtype=torch.float16)
    s = torch.std(torch.tensor([1.0, 2.0, 4.0], dtype=torch.float16))
    assert s.dtype == torch.float16 and s.item() == pytest.approx(1.5273, abs=1e-4)


# -- extremes ------------------------------------------------------------------------------


def test_max_min_forms():
    t = torch.tensor([[1.0, 3.0, 3.0], [NAN, 2.0, NAN]])
    values, indices = torch.max(t, 1)
    assert math.isnan(values[1].item()) and values[0].item() == 3.0
    assert indices.tolist() == [1, 0]  # first of the tied 3s, first NaN
    r = torch.min(torch.tensor([[1, 3, 1], [2, 2, 1]]), 1, keepdim=True)
    assert r.values.tolist() == [[1], [1]] and r.indices.tolist() == [[0], [2]]
    assert torch.max(torch.tensor([4, 9, 2])).item() == 9
    assert math.isnan(torch.max(t).item())
    assert torch.max(torch.tensor([1, 2]), torch.tensor([3, 0])).tolist() == [3, 2]
    assert torch.tensor([1, 2]).min(torch.tensor([3, 0])).tolist() == [1, 0]


def test_extreme_errors():
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        torch.max(torch.tensor([]))
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        torch.max(torch.zeros(0, 3), 0)
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        torch.amax(torch.zeros(0, 3), 0)
    with pytest.raises(IndexError, match="argmax"):
        torch.argmax(torch.zeros(0, 3))
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.sum(torch.zeros(3), 2)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        torch.sum(torch.zeros(3, 2), (0, -2))
    assert torch.max(torch.zeros(0, 3), 1).values.shape == (0,)


def test_amax_argmax_nan_and_ties():
    t = torch.tensor([[1.0, NAN, 3.0, NAN], [5.0, 5.0, 0.0, 1.0]])
    assert math.isnan(torch.amax(t, 1)[0].item())
    assert torch.argmax(t, 1).tolist() == [1, 0]
    assert torch.argmin(t, 1).tolist() == [1, 2]
    assert torch.argmax(torch.tensor([[1, 5], [7, 2]])).item() == 2  # flattened
    assert torch.argmax(torch.tensor([[1, 5], [7, 2]]), keepdim=True).shape == (1, 1)
    assert torch.amin(torch.tensor([[4, 2], [3, 8]]), (0, 1)).item() == 2
    lo, hi = torch.aminmax(torch.tensor([[0, 1], [2, 2]]), dim=0)
    assert lo.tolist() == [0, 1] and hi.tolist() == [2, 2]


def test_noncontiguous_and_broadcast_inputs():
    a = rng_array((4, 6), seed=3)
    t = torch.tensor(a.tolist(), dtype=torch.float64)
    strided, ref = t[:, ::2], a[:, ::2]
    np.testing.assert_allclose(arr(strided.sum(1)), ref.sum(1))
    np.testing.assert_allclose(arr(t.t().amax(1)), a.T.max(1))
    assert torch.argmin(t.t(), 0).tolist() == a.T.argmin(0).tolist()
    np.testing.assert_allclose(arr(torch.cumsum(strided, 1)), np.cumsum(ref, 1))
    row = torch.tensor([1.0, 2.0, 3.0]).expand(4, 3)
    assert torch.sum(row, 0).tolist() == [4.0, 8.0, 12.0]


def test_logsumexp():
    a = rng_array((3, 4), seed=4)
    t = torch.tensor(a.tolist(), dtype=torch.float64)
    np.testing.assert_allclose(arr(torch.logsumexp(t, 1)), np.log(np.exp(a).sum(1)))
    big = torch.tensor([1000.0, 1000.0])
    assert torch.logsumexp(big, 0).item() == pytest.approx(1000 + math.log(2))
    assert torch.logsumexp(torch.tensor([math.inf, 2.0]), 0).item() == math.inf
    assert torch.logsumexp(torch.tensor([-math.inf, -math.inf]), 0).item() == -math.inf
    assert torch.logsumexp(torch.tensor([1, 2]), 0).dtype == torch.float32
    assert arr(torch.logsumexp(torch.zeros(0, 3), 0)).tolist() == [-math.inf] * 3


def test_all_any_count_nonzero():
    u = torch.tensor([0, 1], dtype=torch.uint8)
    assert torch.any(u).dtype == torch.uint8  # PyTorch's legacy uint8 result
    assert torch.all(torch.tensor([0, 1], dtype=torch.int32)).dtype == torch.bool
    assert torch.any(torch.tensor([0.0, -0.0])).item() is False
    t = torch.tensor([[0, 1, 2], [0, 0, 3]])
    assert torch.all(t, 0).tolist() == [False, False, True]
    assert t.any(1, keepdim=True).tolist() == [[True], [True]]
    assert torch.count_nonzero(t).item() == 3
    assert torch.count_nonzero(t, 0).tolist() == [0, 1, 2]
    assert torch.all(torch.ones(2, 3, 2), (0, 2)).tolist() == [True] * 3


# -- order statistics -----------------------------------------------------------------------


def test_median_and_nanmedian():
    x = torch.tensor([[1, 3, 3, 1, 2], [2, 2, 1, 1, 5]])
    r = torch.median(x, 1)
    assert r.values.tolist() == [2, 2] and r.indices.tolist() == [4, 0]  # PyTorch
    assert torch.median(torch.tensor([4.0, 1.0, 3.0, 2.0])).item() == 2.0  # lower median
    n = torch.tensor([[1.0, NAN, 3.0, 1.0, 2.0], [2.0, 2.0, 1.0, 1.0, 5.0]])
    r = torch.median(n, 1)
    assert math.isnan(r.values[0].item()) and r.indices.tolist() == [1, 0]
    r = torch.nanmedian(n, 1)
    assert r.values.tolist() == [1.0, 2.0] and r.indices.tolist() == [3, 0]  # PyTorch
    assert math.isnan(torch.median(torch.zeros(0)).item())
    with pytest.raises(IndexError, match="non-zero size"):
        torch.median(torch.zeros(0, 3), 0)


def test_kthvalue_and_mode():
    t = torch.tensor([[5.0, 1.0, 4.0, 2.0], [0.0, 7.0, 3.0, 9.0]])
    r = torch.kthvalue(t, 2, 1)
    assert r.values.tolist() == [2.0, 3.0] and r.indices.tolist() == [3, 2]
    with pytest.raises(RuntimeError, match="out of range"):
        torch.kthvalue(t, 5)
    m = torch.mode(torch.tensor([[1, 3, 3, 1, 2], [2, 2, 1, 1, 5]]), 1)
    assert m.values.tolist() == [1, 1] and m.indices.tolist() == [3, 3]  # PyTorch
    assert torch.mode(torch.tensor([4, 7, 7, 2])).values.item() == 7


QUANTILE_X = [[0.0, 3.0, 1.0, 7.0], [2.0, 2.0, 9.0, 4.0]]
# PyTorch 2.13: torch.quantile(x, tensor([0.1, 0.5, 0.9]), 1, interpolation=mode)
QUANTILE_EXPECTED = {
    "linear": [[0.3, 2.0], [2.0, 3.0], [5.8, 7.5]],
    "lower": [[0.0, 2.0], [1.0, 2.0], [3.0, 4.0]],
    "higher": [[1.0, 2.0], [3.0, 4.0], [7.0, 9.0]],
    "nearest": [[0.0, 2.0], [3.0, 4.0], [7.0, 9.0]],
    "midpoint": [[0.5, 2.0], [2.0, 3.0], [5.0, 6.5]],
}


@pytest.mark.parametrize("mode", sorted(QUANTILE_EXPECTED))
def test_quantile_interpolations(mode):
    got = torch.quantile(torch.tensor(QUANTILE_X), torch.tensor([0.1, 0.5, 0.9]), 1,
                         interpolation=mode)
    np.testing.assert_allclose(arr(got), QUANTILE_EXPECTED[mode], rtol=1e-6)


def test_quantile_shapes_nan_and_errors():
    a = rng_array((3, 5), seed=5)
    t = torch.tensor(a.tolist(), dtype=torch.float64)
    np.testing.assert_allclose(arr(torch.quantile(t, 0.3, 1)), np.quantile(a, 0.3, axis=1))
    assert torch.quantile(t, 0.5).shape == ()
    assert torch.quantile(t, 0.5, keepdim=True).shape == (1, 1)
    assert torch.quantile(t, torch.tensor([0.5, 0.2], dtype=torch.float64), 1).shape == (2, 3)
    n = torch.tensor([[1.0, NAN, 3.0], [NAN, NAN, NAN]])
    assert math.isnan(torch.quantile(n, 0.5, 1)[0].item())
    got = torch.nanquantile(n, 0.5, 1)
    assert got[0].item() == 2.0 and math.isnan(got[1].item())
    with pytest.raises(RuntimeError, match=r"q must be in the range \[0, 1\]"):
        torch.quantile(t, 1.5)
    with pytest.raises(RuntimeError, match="float or double"):
        torch.quantile(torch.tensor([1, 2]), 0.5)
    with pytest.raises(RuntimeError, match="non-empty"):
        torch.quantile(torch.tensor([]), 0.5)


# -- scans ----------------------------------------------------------------------------------


def test_cumsum_cumprod():
    a = rng_array((3, 4), seed=6, low=-1.5, high=1.5)
    t = torch.tensor(a.tolist(), dtype=torch.float64)
    np.testing.assert_allclose(arr(torch.cumsum(t, 1)), np.cumsum(a, 1))
    np.testing.assert_allclose(arr(t.cumprod(0)), np.cumprod(a, 0))
    assert torch.cumsum(torch.tensor([2, 3], dtype=torch.int8), 0).dtype == torch.int64
    assert torch.cumsum(torch.tensor([True, True]), 0).tolist() == [1, 2]
    assert torch.cumsum(torch.tensor([1, 2]), 0, dtype=torch.float16).dtype == torch.float16
    i8 = torch.tensor([100, 100], dtype=torch.int8)
    assert i8.cumsum_(0).tolist() == [100, -56]  # PyTorch wraps in place
    with pytest.raises(RuntimeError, match="Bad in-place call"):
        torch.tensor([1, 2]).cumsum_(0, dtype=torch.float32)
    with pytest.raises(NotImplementedError):
        torch.tensor([True]).cumsum_(0)
    assert torch.cumsum(torch.tensor(3), 0).item() == 3


def test_cummax_cummin_ties_and_nan():
    r = torch.cummax(torch.tensor([1.0, 1.0, NAN, 2.0, NAN]), 0)
    assert r.indices.tolist() == [0, 1, 2, 2, 4]  # PyTorch: ties and NaN move the index
    assert r.values[1].item() == 1.0 and all(math.isnan(v) for v in r.values.tolist()[2:])
    a = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])
    r = torch.cummin(torch.tensor(a.tolist()), 1)
    assert r.values.tolist() == np.minimum.accumulate(a, 1).tolist()
    assert r.indices.tolist() == [[0, 1, 1, 3, 3], [0, 1, 1, 1, 1]]


def test_logcumsumexp_is_accurate_over_wide_ranges():
    got = torch.logcumsumexp(torch.tensor([-1000.0, -1000.0, 0.0, -math.inf], dtype=torch.float64),
                             0)
    np.testing.assert_allclose(arr(got), [-1000.0, -1000.0 + math.log(2), 0.0, 0.0], atol=1e-9)
    a = rng_array((2, 7), seed=7)
    t = torch.tensor(a.tolist(), dtype=torch.float64)
    np.testing.assert_allclose(arr(torch.logcumsumexp(t, 1)), np.log(np.cumsum(np.exp(a), 1)))
    with pytest.raises(NotImplementedError):
        torch.logcumsumexp(torch.tensor([1, 2]), 0)


# -- sorting --------------------------------------------------------------------------------


def test_sort_matches_numpy_stable_sort():
    a = np.random.default_rng(8).integers(0, 4, (3, 7))
    t = torch.tensor(a.tolist())
    r = torch.sort(t, 1, stable=True)
    assert r.indices.tolist() == np.argsort(a, 1, kind="stable").tolist()
    assert r.values.tolist() == np.sort(a, 1).tolist()
    r = torch.sort(t, dim=0, descending=True, stable=True)
    expected = (a.shape[0] - 1 - np.flip(np.argsort(np.flip(a, 0), 0, kind="stable"), 0))
    assert r.indices.tolist() == expected.tolist()
    assert torch.argsort(t, 1).tolist() == np.argsort(a, 1, kind="stable").tolist()
    assert torch.msort(t).tolist() == np.sort(a, 0).tolist()


def test_sort_descending_stable_and_nan():
    r = torch.sort(torch.tensor([1, 1, 2]), descending=True, stable=True)
    assert r.values.tolist() == [2, 1, 1] and r.indices.tolist() == [2, 0, 1]  # PyTorch
    r = torch.sort(torch.tensor([3.0, NAN, 1.0, NAN]), descending=True)
    assert r.indices.tolist() == [1, 3, 0, 2]  # PyTorch: NaN is the largest
    r = torch.sort(torch.tensor([3.0, NAN, 1.0]))
    assert r.indices.tolist() == [2, 0, 1]
    half = torch.tensor([0.5, -1.0, 2.0], dtype=torch.bfloat16)
    assert half.sort().values.tolist() == [-1.0, 0.5, 2.0]
    assert torch.sort(torch.tensor(3.0)).indices.item() == 0


def test_topk():
    a = np.random.default_rng(9).permutation(12).reshape(3, 4).astype(np.float64)
    t = torch.tensor(a.tolist())
    r = torch.topk(t, 2)
    assert r.indices.tolist() == np.argsort(-a, 1)[:, :2].tolist()
    assert r.values.tolist() == (-np.sort(-a, 1))[:, :2].tolist()
    r = t.topk(2, 0, largest=False)
    assert r.indices.tolist() == np.argsort(a, 0)[:2].tolist()
    assert torch.topk(torch.tensor([1.0, NAN, 3.0]), 1).indices.tolist() == [1]
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        torch.topk(torch.tensor([3.0, 1.0]), 3)


def test_searchsorted_and_bucketize():
    s = np.array([1, 3, 5, 7, 9])
    v = np.array([[3, 6, 9], [0, 10, 5]])
    st, vt = torch.tensor(s.tolist()), torch.tensor(v.tolist())
    assert torch.searchsorted(st, vt).tolist() == np.searchsorted(s, v).tolist()
    assert (torch.searchsorted(st, vt, right=True).tolist()
            == np.searchsorted(s, v, side="right").tolist())
    assert torch.searchsorted(st, vt, side="right").tolist() == np.searchsorted(
        s, v, side="right").tolist()
    assert torch.searchsorted(st, 6).item() == 3
    assert torch.searchsorted(st, vt, out_int32=True).dtype == torch.int32
    rows = torch.tensor([[1, 3], [2, 4]])
    assert torch.searchsorted(rows, torch.tensor([[2], [2]])).tolist() == [[1], [0]]
    sorter = torch.tensor([1, 2, 0])
    assert torch.searchsorted(torch.tensor([5, 1, 3]), torch.tensor([2, 4]),
                              sorter=sorter).tolist() == [1, 2]
    with_nan = torch.tensor([1.0, 2.0, NAN])
    probe = torch.tensor([NAN, 2.0, 5.0])
    assert torch.searchsorted(with_nan, probe).tolist() == [3, 1, 3]  # PyTorch
    assert torch.searchsorted(with_nan, probe, right=True).tolist() == [3, 3, 3]  # PyTorch
    with pytest.raises(RuntimeError, match="side can only be"):
        torch.searchsorted(st, vt, side="middle")
    with pytest.raises(RuntimeError, match="can't be set to opposites"):
        torch.searchsorted(st, vt, side="left", right=True)
    with pytest.raises(RuntimeError, match="must match"):
        torch.searchsorted(rows, torch.tensor([2, 2]))
    assert torch.bucketize(vt, st).tolist() == np.searchsorted(s, v).tolist()
    assert torch.bucketize(vt, st, right=True).tolist() == np.searchsorted(
        s, v, side="right").tolist()


# -- unique, histograms, differences ----------------------------------------------------------


def test_unique_and_unique_consecutive():
    values, inverse, counts = torch.unique(torch.tensor([3, 1, 2, 3, 1]), return_inverse=True,
                                           return_counts=True)
    assert values.tolist() == [1, 2, 3]
    assert inverse.tolist() == [2, 0, 1, 2, 0] and counts.tolist() == [2, 1, 2]
    rows = torch.tensor([[3, 1], [2, 3], [3, 1]])
    values, inverse, counts = torch.unique(rows, dim=0, return_inverse=True, return_counts=True)
    assert values.tolist() == [[2, 3], [3, 1]]
    assert inverse.tolist() == [1, 0, 1] and counts.tolist() == [1, 2]
    assert torch.unique(rows, dim=1).tolist() == [[1, 3], [3, 2], [1, 3]]  # PyTorch
    got = torch.unique(torch.tensor([1.0, NAN, NAN, 1.0])).tolist()
    assert got[0] == 1.0 and len(got) == 3  # PyTorch: NaNs never merge
    values, inverse, counts = torch.unique_consecutive(
        torch.tensor([1, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True, return_counts=True)
    assert values.tolist() == [1, 2, 3, 1, 2]
    assert inverse.tolist() == [0, 0, 1, 1, 2, 3, 3, 4] and counts.tolist() == [2, 2, 1, 2, 1]
    values, inverse = torch.unique(torch.tensor(3), return_inverse=True)
    assert values.tolist() == [3] and inverse.shape == ()


def test_histc():
    x = torch.tensor([1.0, 2.0, 1.0, 4.0, 2.5])
    assert torch.histc(x, bins=4, min=0, max=3).tolist() == [0.0, 2.0, 1.0, 1.0]  # PyTorch
    assert torch.histc(x, bins=4).tolist() == [2.0, 1.0, 1.0, 1.0]  # data range
    assert torch.histc(torch.tensor([1.0, 1.0]), bins=4).tolist() == [0.0, 0.0, 2.0, 0.0]
    assert torch.histc(torch.arange(11.0), bins=3).tolist() == [4.0, 3.0, 4.0]
    assert torch.histc(torch.tensor([]), bins=4).tolist() == [0.0] * 4
    a = rng_array((50,), seed=10)
    expected, _ = np.histogram(a, bins=5, range=(-4.0, 4.0))
    got = torch.histc(torch.tensor(a.tolist(), dtype=torch.float64), 5, -4, 4)
    assert got.tolist() == expected.astype(float).tolist()
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        torch.histc(x, 4, min=3, max=1)
    with pytest.raises(RuntimeError, match="not finite"):
        torch.histc(torch.tensor([1.0, NAN]), 4)


def test_bincount():
    x = torch.tensor([1, 1, 3])
    assert torch.bincount(x).tolist() == [0, 2, 0, 1]
    assert torch.bincount(x, minlength=6).tolist() == [0, 2, 0, 1, 0, 0]
    w = torch.bincount(x, torch.tensor([0.5, 1.0, 2.0]))
    assert w.dtype == torch.float32 and w.tolist() == [0.0, 1.5, 0.0, 2.0]
    assert torch.bincount(x, torch.tensor([1, 1, 2])).dtype == torch.float64
    assert torch.bincount(torch.tensor([], dtype=torch.int64)).tolist() == []
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.bincount(torch.tensor([-1]))


def test_diff():
    assert torch.diff(torch.tensor([1, 4, 9, 16]), n=2).tolist() == [2, 2]
    assert torch.diff(torch.tensor([1, 4, 9, 16]), n=5).tolist() == []
    assert torch.diff(torch.tensor([True, False, False])).tolist() == [True, False]
    got = torch.diff(torch.tensor([[1, 4], [9, 16]]), dim=0, prepend=torch.tensor([[0, 0]]),
                     append=torch.tensor([[1.5, 2.0]]))
    assert got.tolist() == [[1.0, 4.0], [8.0, 12.0], [-7.5, -14.0]]  # PyTorch
    a = rng_array((3, 6), seed=11)
    np.testing.assert_allclose(arr(torch.diff(torch.tensor(a.tolist(), dtype=torch.float64))),
                               np.diff(a))
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        torch.diff(torch.tensor(3))


# -- return types ---------------------------------------------------------------------------


def test_return_types_are_named_tuples():
    r = torch.max(torch.tensor([[1.0, 5.0], [7.0, 2.0]]), 1)
    assert isinstance(r, torch.return_types.max) and isinstance(r, tuple)
    values, indices = r
    assert values is r.values and indices is r[1] and len(r) == 2
    assert repr(r).startswith("torch.return_types.max(\nvalues=tensor(")
    assert "\nindices=tensor([1, 0]))" in repr(r)
    again = pickle.loads(pickle.dumps(torch.return_types.max((3, 4))))
    assert type(again) is torch.return_types.max and again.indices == 4
    assert torch.return_types.aminmax((1, 2)).max == 2
    with pytest.raises(TypeError):
        torch.return_types.sort((1,))
    for name in ("sort", "topk", "kthvalue", "median", "mode", "cummax", "cummin"):
        assert getattr(torch.return_types, name)._fields == ("values", "indices")


def test_out_arguments():
    t = torch.tensor([[1.0, 5.0], [7.0, 2.0]])
    out = torch.empty(2)
    assert torch.sum(t, 1, out=out) is out and out.tolist() == [6.0, 9.0]
    values, indices = torch.empty(0), torch.empty(0, dtype=torch.int64)
    r = torch.max(t, 1, out=(values, indices))
    assert r.values is values and values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    out = torch.empty(2, 2)
    torch.cumsum(t, 0, out=out)
    assert out.tolist() == [[1.0, 5.0], [8.0, 7.0]]
