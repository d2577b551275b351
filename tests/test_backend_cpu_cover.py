"""plait-backend-cpu: every in-scope case of the indexing, scan, sort and random primitives runs
natively (issue 5, item 1).

Each case runs the backend's wrapper next to core's reference kernel
(``torch._refs.CPU_KERNELS``) over every dtype and over contiguous, transposed, broadcast
(stride-0), sliced, zero-size and 0-d operands; the results must agree and the wrapper must not
have called the reference. The cases that stay with the reference (an output sharing memory
with an input, an output with repeated elements, dtypes core never passes) are checked to
still give the reference's answer. The public API is also run with the reference kernels
replaced by ones that raise, and the native results must not depend on the thread count.
"""

from __future__ import annotations

import numpy as np
import pytest

C = pytest.importorskip("plait_backend_cpu._C", reason="plait-backend-cpu is not installed")
from cpu_wrappers import (  # noqa: E402
    DTYPES,
    LAYOUTS,
    Native,
    tensor,
    thread_count,
)

import torch  # noqa: E402
from torch._refs import CPU_KERNELS  # noqa: E402
from torch._refs.common import load  # noqa: E402

HALF = (torch.float16, torch.bfloat16)
REDUCES = ["none", "sum", "prod", "amax", "amin", "mean"]


native = pytest.fixture(Native.fresh, name="native")
# yields set_num_threads, restores the count after
threads = pytest.fixture(thread_count, name="threads")


def sample(shape, dtype, rng, low=-4, high=5, nan=False) -> np.ndarray:
    """Small values every dtype holds exactly (with ties); floats get quarters and, when
    asked, some NaN."""
    if dtype is torch.bool:
        return np.array(rng.integers(0, 2, size=shape), bool)
    if dtype is torch.uint8:
        low = 0
    v = np.array(rng.integers(low, high, size=shape), np.float64)
    if dtype.is_floating_point:
        v = np.array(v + rng.integers(0, 4, size=shape) / 4)
        if nan and v.size:
            v[np.array(rng.random(shape)) < 0.1] = np.nan
    return v


def make(shape, dtype, layout, rng, **kw) -> torch.Tensor:
    """A tensor of ``shape`` in ``layout``: contiguous, transposed (all dims reversed),
    broadcast (stride 0 along the first dim of size > 1) or sliced (every other element of
    the last dim). Layouts that do not apply to a shape (0-d) give a contiguous tensor."""
    shape = tuple(shape)
    if layout == "transposed" and len(shape) >= 2:
        order = list(range(len(shape)))[::-1]
        return tensor(sample(shape[::-1], dtype, rng, **kw), dtype).permute(order)
    if layout == "broadcast" and len(shape) >= 1 and shape[0] > 1:
        return tensor(sample((1,) + shape[1:], dtype, rng, **kw), dtype).expand(shape)
    if layout == "sliced" and len(shape) >= 1:
        wide = shape[:-1] + (2 * shape[-1] + 1,)
        return tensor(sample(wide, dtype, rng, **kw), dtype)[..., 1::2]
    return tensor(sample(shape, dtype, rng, **kw), dtype)


def empty(shape, dtype, layout="contiguous") -> torch.Tensor:
    """An output of ``shape`` in ``layout`` (broadcast is not an output layout)."""
    shape = tuple(shape)
    if layout == "transposed" and len(shape) >= 2:
        return torch.zeros(shape[::-1], dtype=dtype).permute(list(range(len(shape)))[::-1])
    if layout == "sliced" and len(shape) >= 1:
        return torch.zeros(shape[:-1] + (2 * shape[-1] + 1,), dtype=dtype)[..., 1::2]
    return torch.zeros(shape, dtype=dtype)


def values(t: torch.Tensor) -> np.ndarray:
    return np.array(load(t))


def assert_same(got: torch.Tensor, want: torch.Tensor, rtol: float = 0.0) -> None:
    g, w = values(got), values(want)
    assert g.shape == w.shape
    if rtol and g.dtype.kind == "f":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(g, w)


def index_tensor(shape, size, layout, rng) -> torch.Tensor:
    if layout == "broadcast" and len(shape) >= 1 and shape[0] > 1:
        row = tensor(rng.integers(0, size, size=(1,) + tuple(shape[1:])), torch.int64)
        return row.expand(tuple(shape))
    if layout == "transposed" and len(shape) >= 2:
        order = list(range(len(shape)))[::-1]
        return tensor(rng.integers(0, size, size=tuple(shape)[::-1]), torch.int64).permute(order)
    return tensor(rng.integers(0, size, size=shape), torch.int64)


# -- scatter_: every reduction of every dtype ---------------------------------------------------

SCATTER_CASES = [  # out shape, index shape, src shape, dim
    ((5, 7), (8, 7), (9, 7), 0),
    ((5, 7), (5, 12), (5, 12), 1),
    ((4, 5, 6), (2, 9, 3), (3, 9, 4), 1),
    ((6,), (15,), (15,), 0),
    ((50, 3), (4, 3), (4, 5), 0),  # few updates into long lines: sorted by target
    ((3, 4), (0, 4), (2, 4), 0),  # zero-size index
    ((), (), (), 0),  # 0-d
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_every_reduction_is_native(native, dtype, reduce):
    rng = np.random.default_rng(1)
    rtol = {torch.float16: 2e-3, torch.bfloat16: 1e-2}.get(dtype, 1e-6)
    for out_shape, index_shape, src_shape, dim in SCATTER_CASES:
        for include_self in (True, False):
            for layout in LAYOUTS:
                base = sample(out_shape, dtype, rng, nan=True)
                got = empty(out_shape, dtype, "sliced" if layout == "broadcast" else layout)
                got.copy_(tensor(base, dtype))
                want = tensor(base, dtype)
                idx = index_tensor(index_shape, max(out_shape[dim] if out_shape else 1, 1),
                                   layout, rng)
                src = make(src_shape, dtype, layout, rng, nan=True, low=-2, high=3)
                native.scatter_(got, dim, idx, src, reduce, include_self)
                CPU_KERNELS["scatter_"](want, dim, idx, src, reduce, include_self)
                assert_same(got, want, rtol if reduce in ("sum", "prod", "mean") else 0.0)
    assert native.fallbacks == []


def test_scatter_half_rounds_once_like_the_reference(native):
    """float16 sums accumulate in float32: 3000 * 0.1 stays 300, not float16's 256 plateau."""
    for dtype in HALF:
        got = torch.zeros((1,), dtype=dtype)
        want = torch.zeros((1,), dtype=dtype)
        idx = torch.zeros((3000,), dtype=torch.int64)
        src = torch.full((3000,), 0.1, dtype=dtype)
        native.scatter_(got, 0, idx, src, "sum", True)
        CPU_KERNELS["scatter_"](want, 0, idx, src, "sum", True)
        assert_same(got, want)
        assert abs(float(values(got)[0]) - 300) < 2
    assert native.fallbacks == []


def test_scatter_integer_mean_floors(native):
    """PyTorch's integer mean: floor division by the count (self included or not)."""
    x = tensor(np.array([5, -7, 3, 0]), torch.int32)
    idx = tensor(np.array([0, 0, 1, 1, 2]), torch.int64)
    src = tensor(np.array([2, 2, -4, 1, 9]), torch.int32)
    for include_self, expected in ((True, [3, -4, 6, 0]), (False, [2, -2, 9, 0])):
        out = x.clone()
        native.scatter_(out, 0, idx, src, "mean", include_self)
        np.testing.assert_array_equal(values(out), expected)
    assert native.fallbacks == []


def test_scatter_large_is_thread_count_independent(native, threads):
    rng = np.random.default_rng(2)
    for dtype, reduce, m, n in [(torch.float16, "sum", 200, 500), (torch.float32, "mean", 200, 500),
                                (torch.bfloat16, "prod", 200, 500), (torch.int64, "mean", 200, 500),
                                (torch.float16, "mean", 5000, 300), (torch.int8, "sum", 5000, 300)]:
        base = tensor(sample((300, m), dtype, rng), dtype)
        idx = tensor(rng.integers(0, m, size=(300, n)), torch.int64)
        src = tensor(sample((300, n), dtype, rng, low=-1, high=2), dtype)
        results = []
        for count in (1, 2):
            threads(count)
            out = base.clone()
            native.scatter_(out, 1, idx, src, reduce, False)
            results.append(values(out))
        np.testing.assert_array_equal(results[0], results[1])
        want = base.clone()
        CPU_KERNELS["scatter_"](want, 1, idx, src, reduce, False)
        np.testing.assert_allclose(results[0], values(want), rtol=1e-2, atol=1e-2)
    assert native.fallbacks == []


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32],
                         ids=str)
def test_scatter_of_whole_slices_matches_the_reference(native, threads, dtype):
    """index_add's layout (one index per slice, broadcast along the slice, which is contiguous
    in out and src) takes a row-at-a-time path: every reduction, outer dims, repeated targets
    and both thread counts give the reference's result."""
    rng = np.random.default_rng(3)
    cases = [((7, 40), (30, 40), 0), ((3, 6, 16), (3, 11, 16), 1), ((5, 4, 8), (9, 4, 8), 0)]
    for out_shape, src_shape, dim in cases:
        rows = rng.integers(0, out_shape[dim], size=src_shape[dim])
        view = [1] * len(src_shape)
        view[dim] = src_shape[dim]
        idx = tensor(rows, torch.int64).reshape(view).expand(src_shape)
        for reduce in ("sum", "prod", "amax", "amin"):
            base = sample(out_shape, dtype, rng, low=-2, high=3)
            src = tensor(sample(src_shape, dtype, rng, low=-2, high=3), dtype)
            results = []
            for count in (1, 2):
                threads(count)
                got = tensor(base, dtype)
                native.scatter_(got, dim, idx, src, reduce, True)
                results.append(values(got))
            want = tensor(base, dtype)
            CPU_KERNELS["scatter_"](want, dim, idx, src, reduce, True)
            np.testing.assert_array_equal(results[0], results[1])
            np.testing.assert_allclose(results[0], values(want), rtol=1e-6)
    assert native.fallbacks == []


def test_scatter_unknown_reduce_raises_the_reference_error(native):
    out = torch.zeros((3,))
    with pytest.raises(RuntimeError, match="reduce argument must be"):
        native.scatter_(out, 0, torch.zeros((2,), dtype=torch.int64), torch.ones((2,)), "avg",
                        True)
    assert native.fallbacks == ["scatter_"]  # the reference words the error


# -- gather, nonzero: 0-d and zero-size ---------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gather_and_nonzero_0d_and_zero_size_are_native(native, dtype):
    rng = np.random.default_rng(3)
    for a_shape, index_shape, dim in [((), (), 0), ((), (), -1), ((4, 0), (2, 0), 0),
                                      ((3, 4), (0, 4), 0), ((5,), (7,), 0)]:
        for layout in LAYOUTS:
            a = make(a_shape, dtype, layout, rng, nan=True)
            idx = index_tensor(index_shape, max(a_shape[dim] if a_shape else 1, 1), layout, rng)
            if a.numel() == 0 and idx.numel():
                continue
            got, want = torch.zeros(index_shape, dtype=dtype), torch.zeros(index_shape,
                                                                           dtype=dtype)
            native.gather(got, a, dim, idx)
            CPU_KERNELS["gather"](want, a, dim, idx)
            assert_same(got, want)
    for shape in [(), (0,), (3, 0)]:
        x = make(shape, dtype, "contiguous", rng)
        got, want = native.nonzero(x), CPU_KERNELS["nonzero"](x)
        assert tuple(got.shape) == tuple(want.shape)
        assert_same(got, want)
    assert native.fallbacks == []


# -- scans: bool, 0-d, zero-size ----------------------------------------------------------------

SCAN_CASES = [((5, 7), 0), ((5, 7), 1), ((2, 3, 4), 1), ((300, 3), 0), ((3, 300), 1),
              ((8,), 0), ((3, 0), 0), ((0,), 0), ((), 0), ((), -1)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans_every_dtype_and_0d_are_native(native, name, dtype):
    rng = np.random.default_rng(4)
    for shape, dim in SCAN_CASES:
        for layout in LAYOUTS:
            a = make(shape, dtype, layout, rng, nan=True, low=-2, high=3)
            for out_layout in ("contiguous", "transposed"):
                got, want = empty(shape, dtype, out_layout), torch.zeros(shape, dtype=dtype)
                native.table[name](got, a, dim)
                CPU_KERNELS[name](want, a, dim)
                assert_same(got, want)
    assert native.fallbacks == []


def test_scans_are_thread_count_independent(native, threads):
    rng = np.random.default_rng(9)
    for dtype, name, shape, dim in [(torch.bool, "cumsum", (300, 400), 0),
                                    (torch.bool, "cumprod", (400, 300), 1),
                                    (torch.float16, "cumsum", (300, 400), 0),
                                    (torch.int16, "cumprod", (300, 400), 1)]:
        a = make(shape, dtype, "transposed", rng, low=-1, high=2)
        results = []
        for count in (1, 2):
            threads(count)
            out = torch.zeros(shape, dtype=dtype)
            native.table[name](out, a, dim)
            results.append(values(out))
        np.testing.assert_array_equal(results[0], results[1])
        want = torch.zeros(shape, dtype=dtype)
        CPU_KERNELS[name](want, a, dim)
        np.testing.assert_array_equal(results[0], values(want))
    assert native.fallbacks == []


def test_bool_scans_are_running_or_and_and(native):
    a = tensor(np.array([False, True, False, True]), torch.bool)
    out = torch.zeros((4,), dtype=torch.bool)
    native.cumsum(out, a, 0)
    assert values(out).tolist() == [False, True, True, True]
    native.cumprod(out, tensor(np.array([True, True, False, True]), torch.bool), 0)
    assert values(out).tolist() == [True, True, False, False]
    assert native.fallbacks == []


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_running_extremes_0d_and_zero_size_are_native(native, name, dtype):
    rng = np.random.default_rng(5)
    for shape, dim in SCAN_CASES:
        for layout in ("contiguous", "broadcast"):
            a = make(shape, dtype, layout, rng, nan=True, low=-2, high=3)
            got_v, want_v = torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype)
            got_i = torch.full(shape, 5, dtype=torch.int64)
            want_i = torch.full(shape, 5, dtype=torch.int64)
            native.table[name](got_v, got_i, a, dim)
            CPU_KERNELS[name](want_v, want_i, a, dim)
            assert_same(got_v, want_v)
            assert_same(got_i, want_i)
    assert native.fallbacks == []


def test_scan_into_its_own_input_still_gives_the_reference_answer(native):
    """An output sharing memory with the input stays with the reference (documented)."""
    x = tensor(np.arange(6.0), torch.float32)
    want = torch.zeros((6,))
    CPU_KERNELS["cumsum"](want, x.clone(), 0)
    native.cumsum(x, x, 0)
    assert_same(x, want)


# -- sort, topk, searchsorted: 0-d, broadcast sequences -----------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sort_and_topk_0d_are_native(native, dtype):
    rng = np.random.default_rng(6)
    a = make((), dtype, "contiguous", rng)
    for descending in (False, True):
        got_v, got_i = torch.zeros((), dtype=dtype), torch.full((), 3, dtype=torch.int64)
        want_v, want_i = torch.zeros((), dtype=dtype), torch.full((), 3, dtype=torch.int64)
        native.sort(got_v, got_i, a, -1, descending, True)
        CPU_KERNELS["sort"](want_v, want_i, a, -1, descending, True)
        assert_same(got_v, want_v)
        assert_same(got_i, want_i)
    for k in (0, 1):
        for largest in (True, False):
            got_v, got_i = torch.zeros((), dtype=dtype), torch.full((), 3, dtype=torch.int64)
            want_v, want_i = torch.zeros((), dtype=dtype), torch.full((), 3, dtype=torch.int64)
            native.topk(got_v, got_i, a, k, 0, largest, True)
            CPU_KERNELS["topk"](want_v, want_i, a, k, 0, largest, True)
            assert_same(got_v, want_v)
            assert_same(got_i, want_i)
    for shape, dim in [((0,), 0), ((3, 0), 1), ((0, 4), 1)]:
        a = make(shape, dtype, "contiguous", rng)
        got_v, got_i = torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=torch.int64)
        native.sort(got_v, got_i, a, dim, False, True)
    assert native.fallbacks == []


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d is not torch.bool], ids=str)
def test_searchsorted_broadcast_sequences_are_native(native, dtype):
    rng = np.random.default_rng(7)
    for seq_shape, values_shape in [((9,), (4, 6)), ((9,), (2, 3, 5)), ((9,), ()),
                                    ((1, 9), (3, 5)), ((2, 1, 9), (2, 3, 4)), ((0,), (3, 2))]:
        seq = tensor(np.sort(sample(seq_shape, dtype, rng, nan=True), axis=-1), dtype)
        for layout in ("contiguous", "broadcast", "sliced"):
            vals = make(values_shape, dtype, layout, rng, nan=True, low=-5, high=6)
            for right in (False, True):
                got = torch.full(values_shape, -1, dtype=torch.int64)
                native.searchsorted(got, seq, vals, right)
                # The oracle: the reference on the sequence repeated for every row of the
                # values (it takes a 0-d value as a 1-element row).
                v = vals if vals.ndim else vals.reshape(1)
                full = seq.expand(tuple(v.shape[:-1]) + (seq.shape[-1],)).contiguous()
                want = torch.full(tuple(v.shape), -1, dtype=torch.int64)
                CPU_KERNELS["searchsorted"](want, full, v.contiguous(), right)
                np.testing.assert_array_equal(values(got).reshape(-1), values(want).reshape(-1))
    assert native.fallbacks == []


# -- random_bits_: any output layout ------------------------------------------------------------


def test_random_bits_into_any_layout_is_native(native, threads):
    for shape, layout in [((4, 6), "transposed"), ((5, 7), "sliced"), ((3, 4, 5), "transposed"),
                          ((), "contiguous"), ((0, 3), "transposed"), ((200, 300), "transposed"),
                          ((70, 1001), "sliced")]:
        want = torch.zeros(shape, dtype=torch.int64)
        CPU_KERNELS["random_bits_"](want, 2**63 + 5, 2**64 - 7)
        for count in (1, 2):
            threads(count)
            got = empty(shape, torch.int64, layout)
            native.random_bits_(got, 2**63 + 5, 2**64 - 7)
            assert_same(got, want)
    assert native.fallbacks == []


def test_random_bits_into_repeated_elements_stays_with_the_reference(native):
    out = torch.zeros((1,), dtype=torch.int64).expand(4)
    native.random_bits_(out, 1, 2)
    assert native.fallbacks == ["random_bits_"]


# -- the public API never reaches the reference kernels for these cases ---------------------------


@pytest.fixture
def no_reference(monkeypatch):
    """Replaces the reference kernels of the covered primitives by ones that raise."""

    def forbidden(name):
        def kernel(*args, **kwargs):
            raise AssertionError(f"the reference kernel of {name} ran")

        return kernel

    for name in ("gather", "scatter_", "nonzero", "cumsum", "cumprod", "cummax", "cummin",
                 "sort", "topk", "searchsorted", "random_bits_"):
        monkeypatch.setitem(CPU_KERNELS, name, forbidden(name))


def test_public_ops_do_not_call_the_reference(no_reference):
    if torch.device("cpu").type != "cpu":  # pragma: no cover - the plain CPU device
        pytest.skip("no CPU device")
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float16)
    idx = torch.tensor([[0, 0, 1], [1, 2, 2]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            torch.zeros(2, 3, dtype=torch.float16).scatter_reduce_(1, idx, x, reduce,
                                                                   include_self=include_self)
    out = torch.tensor([10, 20, 30]).scatter_reduce(0, torch.tensor([0, 0, 2]),
                                                     torch.tensor([1, 2, 3]), "mean")
    assert out.tolist() == [4, 20, 16]  # floor((10 + 1 + 2) / 3), floor(33 / 2)
    assert torch.tensor([True, False, True]).cumsum(0).tolist() == [1, 1, 2]
    scalar = torch.tensor(2.5)
    assert float(scalar.cumsum(0)) == 2.5
    assert float(scalar.cumprod(0)) == 2.5
    assert float(scalar.cummax(0).values) == 2.5
    assert float(scalar.sort().values) == 2.5
    assert float(scalar.topk(1).values) == 2.5
    assert float(scalar.gather(0, torch.tensor(0))) == 2.5
    assert torch.tensor(3).nonzero().shape == (1, 0)
    assert torch.searchsorted(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([[2.5], [0.0]])
                              ).tolist() == [[2], [0]]
    torch.manual_seed(0)
    torch.rand(3, 4)
    torch.randint(0, 10, (5, 2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64],
                         ids=str)
def test_embedding_rows_match_indexing_in_every_layout(dtype):
    """aten::embedding (the backend's one-call kernel, or core's composite for the layouts it
    declines) gives the table's rows at the indices; a bad index is PyTorch's IndexError."""
    rng = np.random.default_rng(4)
    table = sample((9, 5), dtype, rng)
    weights = [tensor(table, dtype), tensor(np.ascontiguousarray(table.T), dtype).t()]
    index = rng.integers(0, 9, size=(3, 4))
    indices = [tensor(index, torch.int64), tensor(index, torch.int32),
               tensor(np.ascontiguousarray(index.T), torch.int64).t(),
               tensor(np.array(7), torch.int64), tensor(np.zeros((0, 2)), torch.int64)]
    for weight in weights:
        for idx in indices:
            got = torch.nn.functional.embedding(idx, weight)
            want = table[values(idx).astype(np.int64)]
            assert got.shape == (*idx.shape, 5) and got.dtype == dtype
            np.testing.assert_array_equal(values(got), want)
        for bad in (9, -1):
            with pytest.raises(IndexError, match="index out of range in self"):
                torch.nn.functional.embedding(tensor(np.array([0, bad]), torch.int64), weight)
