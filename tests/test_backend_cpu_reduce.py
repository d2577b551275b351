"""plait-backend-cpu: the native reduction, scan, indexing, sort and random kernels.

Each native wrapper runs on real Plait tensors next to core's reference kernel
(``torch._refs.CPU_KERNELS``) on the same inputs, over every dtype and over contiguous,
transposed, broadcast (stride-0) and sliced layouts; the outputs must agree (bit for bit except
for float sums and products, whose summation order differs). A recorder checks which cases the
wrappers leave to the reference.
"""

from __future__ import annotations

import numpy as np
import pytest

C = pytest.importorskip("plait_backend_cpu._C", reason="plait-backend-cpu is not installed")
from cpu_wrappers import (  # noqa: E402
    DTYPES,
    LAYOUTS,
    Native,
    np_dtype,
    tensor,
    thread_count,
)

import torch  # noqa: E402
from torch._refs import CPU_KERNELS  # noqa: E402
from torch._refs.common import load  # noqa: E402

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


native = pytest.fixture(Native.fresh, name="native")
# yields set_num_threads, restores the count after
threads = pytest.fixture(thread_count, name="threads")


def sample(shape, dtype, rng, low=-6, high=7, nan=False) -> np.ndarray:
    """Small values that every dtype holds exactly, with ties; floats get a fraction and,
    when asked, some NaN."""
    if dtype is torch.bool:
        return np.array(rng.integers(0, 2, size=shape), bool)
    if dtype is torch.uint8:
        low = 0
    v = np.array(rng.integers(low, high, size=shape), np.float64)  # np.array: 0-d stays array
    if dtype in FLOATS:
        v = np.array(v + rng.integers(0, 4, size=shape) / 4)
        if nan and v.size:
            v[np.array(rng.random(shape)) < 0.1] = np.nan
    return v


def make(shape, dtype, layout, rng, **kw) -> torch.Tensor:
    """A tensor of ``shape`` in ``layout``: contiguous, transposed (a permuted contiguous
    tensor), broadcast (stride 0 along the first dim) or sliced (every other element of the
    last dim)."""
    shape = tuple(shape)
    if layout == "transposed" and len(shape) >= 2:
        order = list(range(len(shape)))[::-1]
        base = tensor(sample(shape[::-1], dtype, rng, **kw), dtype)
        return base.permute(order)
    if layout == "broadcast" and len(shape) >= 1 and shape[0] > 1:
        row = tensor(sample((1,) + shape[1:], dtype, rng, **kw), dtype)
        return row.expand(shape)
    if layout == "sliced" and len(shape) >= 1:
        wide = shape[:-1] + (2 * shape[-1] + 1,)
        return tensor(sample(wide, dtype, rng, **kw), dtype)[..., 1::2]
    return tensor(sample(shape, dtype, rng, **kw), dtype)


def values(t: torch.Tensor) -> np.ndarray:
    """The values of a tensor as numpy (bfloat16 as float32)."""
    return np.array(load(t))


def assert_same(got: torch.Tensor, want: torch.Tensor, rtol: float = 0.0) -> None:
    g, w = values(got), values(want)
    assert g.shape == w.shape
    if rtol and g.dtype.kind == "f":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(g, w)


def kept(shape, dims):
    dims = [d % len(shape) for d in dims] if shape else []
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


# -- sum prod amax amin any all ---------------------------------------------------------------

REDUCE_CASES = [
    ((5, 7), [0]),
    ((5, 7), [1]),
    ((5, 7), [0, 1]),
    ((2, 3, 4), [1]),
    ((2, 3, 4), [0, 2]),
    ((2, 3, 4), [-1]),
    ((4, 1, 300), [0]),
    ((3, 600), [1]),
    ((600, 3), [0]),
    ((7,), [0]),
    ((3, 0), [1]),
    ((0, 3), [1]),
    ((), []),
    ((2, 3), []),
]


def reduce_dtypes(name, dtype):
    """(input dtype, output dtype) as core calls the primitive."""
    integral = dtype in (torch.bool,) or not (dtype.is_floating_point)
    if name in ("sum", "prod"):
        return (torch.int64, torch.int64) if integral else (dtype, dtype)
    if name in ("any", "all"):
        return dtype, torch.uint8 if dtype is torch.uint8 else torch.bool
    return dtype, dtype


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "any", "all"])
def test_reductions_match_reference(native, name, dtype):
    rng = np.random.default_rng(1)
    in_dtype, out_dtype = reduce_dtypes(name, dtype)
    for shape, dims in REDUCE_CASES:
        if name in ("amax", "amin") and 0 in shape:
            continue  # no identity: core raises before the primitive runs
        for layout in LAYOUTS:
            a = make(shape, dtype, layout, rng, nan=True, low=-2 if name == "prod" else -6,
                     high=3 if name == "prod" else 7).to(in_dtype)
            got = torch.full(kept(shape, dims), 7, dtype=out_dtype)
            want = torch.full(kept(shape, dims), 7, dtype=out_dtype)
            native.table[name](got, a, dims)
            CPU_KERNELS[name](want, a, dims)
            rtol = {torch.float16: 1e-3, torch.bfloat16: 1e-2}.get(out_dtype, 1e-6)
            assert_same(got, want, rtol if name in ("sum", "prod") else 0.0)
    assert native.fallbacks == []


@pytest.mark.parametrize("name", ["sum", "amax", "amin", "prod", "any"])
def test_reductions_over_long_ranges_and_few_outputs(native, name):
    """Sizes that take the fixed-block paths (few outputs, long reduced ranges)."""
    rng = np.random.default_rng(2)
    for shape, dims in [((300_001,), [0]), ((3, 100_000), [1]), ((100_000, 3), [0]),
                        ((2, 50_000, 3), [0, 1]), ((70_000, 300), [0])]:
        x = rng.standard_normal(shape)
        if name == "prod":
            x = 1 + x * 1e-4
        x[tuple(rng.integers(0, s) for s in shape)] = 5.0  # a unique maximum
        a = tensor(x, torch.float64)
        out_dtype = torch.bool if name == "any" else torch.float64
        got = torch.zeros(kept(shape, dims), dtype=out_dtype)
        native.table[name](got, a, dims)
        reducer = {"sum": np.sum, "amax": np.max, "amin": np.min, "prod": np.prod,
                   "any": np.any}[name]
        np.testing.assert_allclose(values(got), reducer(x, axis=tuple(dims), keepdims=True),
                                   rtol=1e-10)
    assert native.fallbacks == []


def test_float32_sums_accumulate_accurately(native):
    rng = np.random.default_rng(4)
    x = rng.random(1_000_003).astype(np.float32)
    out = torch.zeros((1,), dtype=torch.float32)
    native.sum(out, tensor(x, torch.float32), [0])
    exact = x.astype(np.float64).sum()
    assert abs(values(out)[0] - exact) / exact < 1e-7
    out64 = torch.zeros((1,), dtype=torch.float64)  # float32 into float64
    native.sum(out64, tensor(x, torch.float32), [0])
    assert abs(values(out64)[0] - exact) / exact < 1e-12


def test_integer_sums_wrap_and_widen(native):
    big = tensor(np.array([2**62] * 3), torch.int64)
    out = torch.zeros((1,), dtype=torch.int64)
    native.sum(out, big, [0])
    assert values(out)[0] == np.array([2**62] * 3, np.int64).sum()
    small = tensor(np.full(1000, 100), torch.int8)  # int8 into int64: no int8 overflow
    native.sum(out, small, [0])
    assert values(out)[0] == 100_000
    assert native.fallbacks == []


def test_nan_propagates_through_amax_amin(native):
    x = np.arange(40, dtype=np.float32).reshape(4, 10)
    x[1, 3] = np.nan
    x[2, 9] = np.nan
    for name in ("amax", "amin"):
        for dims in ([0], [1], [0, 1]):
            got = torch.zeros(kept(x.shape, dims), dtype=torch.float32)
            native.table[name](got, tensor(x, torch.float32), dims)
            fn = np.max if name == "amax" else np.min
            np.testing.assert_array_equal(values(got), fn(x, axis=tuple(dims), keepdims=True))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_amax_amin_of_long_runs_with_infinities_and_nan(native, dtype):
    # Infinities of both signs in one vector lane, and sums that overflow to both infinities,
    # must not read as NaN (a NaN test on partial sums would), and a NaN anywhere must win.
    x = np.linspace(-5, 5, 1000)
    x[[10, 500]] = np.inf
    x[[14, 18, 700]] = -np.inf  # 10, 14 and 18 share a lane of one step (4- or 8-wide)
    with_nan = x.copy()
    with_nan[900] = np.nan
    width = 32 // np_dtype(dtype).itemsize
    big = np.full(1000, np.finfo(np_dtype(dtype)).max)
    big[np.arange(1000) // width % 4 >= 2] *= -1  # a step's sums overflow to +inf and -inf
    for data in (x, with_nan, big):
        for name, fn in (("amax", np.max), ("amin", np.min)):
            out = torch.zeros((1,), dtype=dtype)
            native.table[name](out, tensor(data, dtype), [0])
            np.testing.assert_array_equal(values(out), [fn(data.astype(np_dtype(dtype)))])
    assert native.fallbacks == []


@pytest.mark.parametrize("name", ["sum", "prod", "amax", "argmax"])
def test_results_do_not_depend_on_the_thread_count(native, threads, name):
    rng = np.random.default_rng(5)
    results = []
    for count in (1, 2, 3):
        threads(count)
        outs = []
        for shape, dim in [((1_000_000,), 0), ((8, 200_000), 1), ((200_000, 8), 0),
                           ((4096, 1024), 1)]:
            x = (1 + rng.standard_normal(shape) * (1e-3 if name == "prod" else 1.0))
            rng = np.random.default_rng(5)  # the same data for every thread count
            a = tensor(x, torch.float32)
            out_dtype = torch.int64 if name == "argmax" else torch.float32
            out = torch.zeros(kept(shape, [dim]), dtype=out_dtype)
            native.table[name](out, a, dim if name == "argmax" else [dim])
            outs.append(values(out).tobytes())
        results.append(outs)
    assert results[0] == results[1] == results[2]
    assert native.fallbacks == []


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.float16],
                         ids=str)
@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin"])
def test_row_reductions_take_one_order_per_row(native, threads, name, dtype):
    # `x.sum(-1)` of contiguous rows runs a multi-row kernel; every row must get the same bits
    # as that row reduced alone (the single-run path), for any row length (vector tails
    # included) and thread count, and float sums must stay accurate.
    rng = np.random.default_rng(12)
    for n in (1, 15, 16, 63, 64, 65, 100, 1023, 1024, 1025):
        rows = max(4, 40_000 // n)
        scale = 1e-3 if name == "prod" else 1.0
        x = 1 + rng.standard_normal((rows, n)) * scale if dtype.is_floating_point else (
            rng.integers(-50, 50, size=(rows, n)))
        a = tensor(x, dtype)
        out_dtype = torch.int64 if not dtype.is_floating_point and name in ("sum", "prod") \
            else dtype
        results = []
        for count in (1, 2, 3):
            threads(count)
            out = torch.zeros((rows, 1), dtype=out_dtype)
            native.table[name](out, a, [1])
            results.append(values(out).tobytes())
        assert results[0] == results[1] == results[2]
        got = values(out)
        for r in (0, rows // 2, rows - 1):
            alone = torch.zeros((1,), dtype=out_dtype)
            native.table[name](alone, tensor(np.array(x[r]), dtype), [0])
            assert got[r, 0].tobytes() == values(alone)[0].tobytes()
        if name == "sum" and dtype in (torch.float32, torch.float64):
            exact = values(a).astype(np.float64).sum(axis=1, keepdims=True)
            np.testing.assert_allclose(got, exact, rtol=2e-6 if dtype is torch.float32 else 1e-13)
    assert native.fallbacks == []


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_reductions_of_0d_inputs_are_native(native, dtype):
    rng = np.random.default_rng(13)
    a = make((), dtype, "contiguous", rng)
    for name in ("sum", "prod", "amax", "amin", "any", "all"):
        a_dtype, out_dtype = reduce_dtypes(name, dtype)
        x = a.to(a_dtype)
        want = torch.zeros((), dtype=out_dtype)
        CPU_KERNELS[name](want, x, [])
        for dims in ([], [0], [-1]):  # a 0-d input accepts dimension 0 and -1, like PyTorch
            got = torch.zeros((), dtype=out_dtype)
            native.table[name](got, x, dims)
            assert_same(got, want)
    for name in ("argmax", "argmin"):
        for dim in (0, -1):
            got = torch.full((), -1, dtype=torch.int64)
            native.table[name](got, a, dim)
            assert values(got) == 0
        with pytest.raises(IndexError, match="out of range"):
            native.table[name](torch.zeros((), dtype=torch.int64), a, 1)
    assert native.fallbacks == []


def test_reduction_boundary_checks(native):
    a = torch.zeros((2, 3))
    with pytest.raises(ValueError, match=r"prims\.amax"):
        native.amax(torch.zeros((2, 2)), a, [1])
    with pytest.raises(IndexError, match="out of range"):
        native.sum(torch.zeros((2, 1)), a, [2])
    with pytest.raises(ValueError, match="dimensions"):
        native.any(torch.zeros((1,), dtype=torch.bool), a, [0, 1])


def test_unsupported_dtype_combinations_fall_back(native):
    a = tensor(np.arange(6).reshape(2, 3), torch.int32)
    out = torch.zeros((1, 3), dtype=torch.float32)  # not a sum dtype of the primitive
    native.sum(out, a, [0])
    np.testing.assert_array_equal(values(out), [[3, 5, 7]])
    assert native.fallbacks == ["sum"]


# -- argmax argmin ----------------------------------------------------------------------------

ARG_CASES = [((5, 7), 0), ((5, 7), 1), ((2, 3, 4), 1), ((4, 1, 300), 0), ((3, 600), 1),
             ((600, 3), 0), ((9,), 0), ((3, 1), 1), ((0, 4), 1)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions_match_reference(native, name, dtype):
    rng = np.random.default_rng(6)
    for shape, dim in ARG_CASES:
        for layout in LAYOUTS:
            a = make(shape, dtype, layout, rng, nan=True, low=-2, high=3)  # many ties
            got = torch.full(kept(shape, [dim]), -1, dtype=torch.int64)
            want = torch.full(kept(shape, [dim]), -1, dtype=torch.int64)
            native.table[name](got, a, dim)
            CPU_KERNELS[name](want, a, dim)
            assert_same(got, want)
    assert native.fallbacks == []


def test_argmax_picks_the_first_nan_and_the_first_tie(native):
    x = np.array([[1, 3, 3, np.nan, 2, np.nan], [0, 5, 5, 1, 5, 0]], np.float64)
    for dim in (1, 0):
        x_in = x if dim == 1 else x.T.copy()
        for name, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
            out = torch.zeros(kept(x_in.shape, [dim]), dtype=torch.int64)
            native.table[name](out, tensor(x_in, torch.float64), dim)
            np.testing.assert_array_equal(values(out), fn(x_in, axis=dim, keepdims=True))
    big = np.zeros(300_000)
    big[[1000, 200_000]] = np.nan
    out = torch.zeros((1,), dtype=torch.int64)
    native.argmax(out, tensor(big, torch.float64), 0)
    assert values(out)[0] == 1000


# -- cumsum cumprod cummax cummin -------------------------------------------------------------

SCAN_CASES = [((5, 7), 0), ((5, 7), 1), ((2, 3, 4), 1), ((2, 3, 4), 2), ((300, 3), 0),
              ((3, 300), 1), ((8,), 0), ((3, 0), 0), ((4, 1), 1)]


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d is not torch.bool], ids=str)
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans_match_reference_bitwise(native, name, dtype):
    rng = np.random.default_rng(7)
    for shape, dim in SCAN_CASES:
        for layout in LAYOUTS:
            a = make(shape, dtype, layout, rng, nan=True, low=-2, high=3)
            got = torch.zeros(shape, dtype=dtype)
            want = torch.zeros(shape, dtype=dtype)
            native.table[name](got, a, dim)
            CPU_KERNELS[name](want, a, dim)
            assert_same(got, want)
    assert native.fallbacks == []


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_running_extremes_match_reference(native, name, dtype):
    rng = np.random.default_rng(8)
    for shape, dim in SCAN_CASES:
        for layout in LAYOUTS:
            a = make(shape, dtype, layout, rng, nan=True, low=-2, high=3)
            got_v, want_v = torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype)
            got_i = torch.zeros(shape, dtype=torch.int64)
            want_i = torch.zeros(shape, dtype=torch.int64)
            native.table[name](got_v, got_i, a, dim)
            CPU_KERNELS[name](want_v, want_i, a, dim)
            assert_same(got_v, want_v)
            assert_same(got_i, want_i)
    assert native.fallbacks == []


def test_bool_cumsum_and_0d_scans_are_native(native):
    a = tensor(np.array([True, False, True]), torch.bool)
    out = torch.zeros((3,), dtype=torch.bool)
    native.cumsum(out, a, 0)
    assert values(out).tolist() == [True, True, True]
    scalar = tensor(np.array(2.5), torch.float32)
    out0 = torch.zeros((), dtype=torch.float32)
    native.cumsum(out0, scalar, 0)
    assert values(out0) == 2.5
    assert native.fallbacks == []


# -- gather scatter_ nonzero ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gather_matches_reference(native, dtype):
    rng = np.random.default_rng(9)
    for a_shape, index_shape, dim in [((5, 7), (3, 7), 0), ((5, 7), (5, 4), 1),
                                      ((4, 5, 6), (2, 8, 3), 1), ((6,), (10,), 0),
                                      ((3, 4), (0, 4), 0)]:
        for layout in LAYOUTS:
            a = make(a_shape, dtype, layout, rng, nan=True)
            idx = tensor(rng.integers(0, a_shape[dim], size=index_shape), torch.int64)
            if len(index_shape) > 1 and layout == "transposed":
                idx = tensor(rng.integers(0, a_shape[dim], size=index_shape[::-1]),
                             torch.int64).permute(list(range(len(index_shape)))[::-1])
            got, want = torch.zeros(index_shape, dtype=dtype), torch.zeros(index_shape, dtype=dtype)
            native.gather(got, a, dim, idx)
            CPU_KERNELS["gather"](want, a, dim, idx)
            assert_same(got, want)
    assert native.fallbacks == []


def test_gather_refuses_out_of_range_indices(native):
    a = torch.zeros((3, 4))
    out = torch.zeros((2, 4))
    with pytest.raises(IndexError, match="out of bounds"):
        native.gather(out, a, 0, tensor(np.array([[0, 1, 2, 3]] * 2), torch.int64))
    with pytest.raises(IndexError, match="out of bounds"):
        native.gather(out, a, 0, tensor(np.array([[0, -1, 2, 0]] * 2), torch.int64))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduce", ["none", "sum", "prod", "amax", "amin", "mean"])
def test_scatter_matches_reference(native, dtype, reduce):
    rng = np.random.default_rng(10)
    for out_shape, index_shape, src_shape, dim in [((5, 7), (8, 7), (9, 7), 0),
                                                   ((5, 7), (5, 12), (5, 12), 1),
                                                   ((4, 5, 6), (2, 9, 3), (3, 9, 4), 1),
                                                   ((6,), (15,), (15,), 0)]:
        for include_self in (True, False):
            base = tensor(sample(out_shape, dtype, rng, nan=True), dtype)
            got, want = base.clone(), base.clone()
            idx = tensor(rng.integers(0, out_shape[dim], size=index_shape), torch.int64)
            src = make(src_shape, dtype, "sliced", rng, nan=True, low=-2, high=3)
            native.scatter_(got, dim, idx, src, reduce, include_self)
            CPU_KERNELS["scatter_"](want, dim, idx, src, reduce, include_self)
            assert_same(got, want)
    assert native.fallbacks == []  # mean and float16/bfloat16 reductions too


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_nonzero_through_the_api(dtype):
    rng = np.random.default_rng(11)
    for shape in [(5, 7), (2, 3, 4), (9,), (), (0, 3), (70_000,)]:
        for layout in LAYOUTS:
            x = make(shape, dtype, layout, rng, low=-1, high=2)
            got = torch.nonzero(x)
            want = np.argwhere(values(x) != 0)
            assert tuple(got.shape) == want.shape
            np.testing.assert_array_equal(values(got), want)


# -- sort topk searchsorted -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sort_matches_reference(native, dtype):
    rng = np.random.default_rng(12)
    for shape, dim in SCAN_CASES + [((2000,), 0)]:
        for layout in LAYOUTS:
            a = make(shape, dtype, layout, rng, nan=True, low=-3, high=4)  # ties and NaN
            for descending in (False, True):
                got_v, want_v = torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype)
                got_i = torch.zeros(shape, dtype=torch.int64)
                want_i = torch.zeros(shape, dtype=torch.int64)
                native.sort(got_v, got_i, a, dim, descending, True)
                CPU_KERNELS["sort"](want_v, want_i, a, dim, descending, True)
                assert_same(got_v, want_v)
                assert_same(got_i, want_i)
    assert native.fallbacks == []


def test_sort_keeps_signed_zeros_and_orders_them_stably(native):
    x = np.array([0.0, -0.0, -1.0, np.nan, 0.0, -np.inf, np.inf, -0.0], np.float32)
    v = torch.zeros((8,))
    i = torch.zeros((8,), dtype=torch.int64)
    native.sort(v, i, tensor(x, torch.float32), 0, False, True)
    np.testing.assert_array_equal(values(i), [5, 2, 0, 1, 4, 7, 6, 3])
    assert np.signbit(values(v)).tolist() == [True, True, False, True, False, True, False, False]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_topk_matches_reference(native, dtype):
    rng = np.random.default_rng(13)
    for shape, dim in [((5, 7), 1), ((5, 7), 0), ((2, 30, 4), 1), ((500,), 0)]:
        n = shape[dim]
        for layout in LAYOUTS:
            a = make(shape, dtype, layout, rng, nan=True, low=-3, high=4)
            for k in (0, 1, n // 2, n):
                for largest in (True, False):
                    out_shape = tuple(k if d == dim else s for d, s in enumerate(shape))
                    got_v = torch.zeros(out_shape, dtype=dtype)
                    want_v = torch.zeros(out_shape, dtype=dtype)
                    got_i = torch.zeros(out_shape, dtype=torch.int64)
                    want_i = torch.zeros(out_shape, dtype=torch.int64)
                    native.topk(got_v, got_i, a, k, dim, largest, True)
                    CPU_KERNELS["topk"](want_v, want_i, a, k, dim, largest, True)
                    assert_same(got_v, want_v)
                    assert_same(got_i, want_i)
    assert native.fallbacks == []


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_searchsorted_matches_reference(native, dtype):
    rng = np.random.default_rng(14)
    for seq_shape, values_shape in [((1, 9), (1, 20)), ((3, 8), (3, 5)), ((2, 0), (2, 4)),
                                    ((2, 2, 50), (2, 2, 7))]:
        seq_np = np.sort(sample(seq_shape, dtype, rng, nan=True, low=-3, high=4), axis=-1)
        seq = tensor(seq_np, dtype)
        for layout in ("contiguous", "sliced"):
            vals = make(values_shape, dtype, layout, rng, nan=True, low=-4, high=5)
            for right in (False, True):
                got = torch.full(values_shape, -1, dtype=torch.int64)
                want = torch.full(values_shape, -1, dtype=torch.int64)
                native.searchsorted(got, seq, vals, right)
                CPU_KERNELS["searchsorted"](want, seq, vals, right)
                assert_same(got, want)
    assert native.fallbacks == []


# -- random_bits_ -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed,offset", [(0, 0), (42, 7), (2**64 - 1, 2**64 - 3),
                                         (0x1234_5678_9ABC_DEF0, 2**63), (-1, -5)])
def test_random_bits_is_the_reference_stream(native, seed, offset):
    for shape in [(1,), (7,), (3, 5), (1031,), (0,), ()]:
        got = torch.zeros(shape, dtype=torch.int64)
        want = torch.zeros(shape, dtype=torch.int64)
        native.random_bits_(got, seed, offset)
        CPU_KERNELS["random_bits_"](want, seed, offset)
        assert_same(got, want)
    assert native.fallbacks == []


def test_random_bits_large_and_strided(native, threads):
    want = torch.zeros((100_003,), dtype=torch.int64)
    CPU_KERNELS["random_bits_"](want, 9, 11)
    for count in (1, 2):
        threads(count)
        got = torch.zeros((100_003,), dtype=torch.int64)
        native.random_bits_(got, 9, 11)
        assert_same(got, want)
    strided = torch.zeros((4, 6), dtype=torch.int64).t()  # not row-major: native too
    native.random_bits_(strided, 3, 0)
    ref = torch.zeros((6, 4), dtype=torch.int64)
    CPU_KERNELS["random_bits_"](ref, 3, 0)
    assert_same(strided, ref)
    assert native.fallbacks == []


# -- through the public API ---------------------------------------------------------------------


def test_public_ops_run_the_native_kernels():
    x_np = np.arange(24, dtype=np.float32).reshape(4, 6) - 11.5
    x = torch.from_numpy(x_np.copy())
    np.testing.assert_allclose(x.sum(1).numpy(), x_np.sum(1))
    np.testing.assert_array_equal(x.amax(0).numpy(), x_np.max(0))
    np.testing.assert_array_equal(x.argmax(1).numpy(), x_np.argmax(1))
    np.testing.assert_array_equal(torch.cumsum(x, 0).numpy(), np.cumsum(x_np, 0))
    _, indices = torch.sort(x, dim=1, descending=True)
    np.testing.assert_array_equal(indices.numpy(), np.argsort(-x_np, axis=1, kind="stable"))
    top = torch.topk(x.reshape(-1), 3)
    np.testing.assert_array_equal(top.values.numpy(), [11.5, 10.5, 9.5])
    assert bool(torch.any(x > 11)) and not bool(torch.all(x > 0))
