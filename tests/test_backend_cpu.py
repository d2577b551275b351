"""plait-backend-cpu: the host allocator, the native kernels and the light entry point.

The kernel wrappers only read ``data_ptr()``, ``shape``, ``stride()``, ``dtype`` and ``numel()``,
so most tests drive them with :class:`ArrayTensor`, a stand-in over a numpy array, and compare
with numpy. The tests at the end go through the public ``torch`` API of plait-core.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

C = pytest.importorskip("plait_backend_cpu._C", reason="plait-backend-cpu is not installed")
from plait_backend_cpu.kernels import make_kernels  # noqa: E402

# numpy has no bfloat16: its native kernels are tested in test_backend_cpu_elementwise.py.
NATIVE_DTYPES = [np.dtype(name) for name in C.DTYPES if name != "bfloat16"]
ARITH_DTYPES = [d for d in NATIVE_DTYPES if d != np.bool_]


class ArrayTensor:
    """The slice of the Tensor interface that the kernel wrappers use, over a numpy array."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape

    @property
    def dtype(self) -> np.dtype:
        return self.array.dtype

    def stride(self) -> tuple[int, ...]:
        return tuple(s // self.array.itemsize for s in self.array.strides)

    def data_ptr(self) -> int:
        return self.array.__array_interface__["data"][0]

    def numel(self) -> int:
        return self.array.size


def _np_sum(out: ArrayTensor, a: ArrayTensor, dims: list[int]) -> None:
    out.array[...] = a.array.sum(axis=tuple(dims), keepdims=True, dtype=out.dtype)


def _np_fill(out: ArrayTensor, value: object) -> None:
    with np.errstate(invalid="ignore", over="ignore"):
        out.array[...] = np.array(value).astype(out.dtype, casting="unsafe")


def _np_in_float64(fn):
    def kernel(out: ArrayTensor, a: ArrayTensor) -> None:
        out.array[...] = fn(a.array.astype(np.float64))

    return kernel


REFERENCE = {
    "add": lambda out, a, b: np.add(a.array, b.array, out=out.array),
    "mul": lambda out, a, b: np.multiply(a.array, b.array, out=out.array),
    "copy_": lambda out, src: out.array.__setitem__(..., src.array.astype(out.dtype)),
    "fill_": _np_fill,
    "sum": _np_sum,
    "sub": lambda out, a, b: np.subtract(a.array, b.array, out=out.array),
    "maximum": lambda out, a, b: np.maximum(a.array, b.array, out=out.array),
    "minimum": lambda out, a, b: np.minimum(a.array, b.array, out=out.array),
    "div": lambda out, a, b, rounding_mode=None: out.array.__setitem__(
        ..., np.floor_divide(a.array, b.array) if rounding_mode else a.array / b.array
    ),
    "neg": lambda out, a: np.negative(a.array, out=out.array),
    "abs": lambda out, a: np.abs(a.array, out=out.array),
    **{
        name: _np_in_float64(fn)
        for name, fn in {"exp": np.exp, "log": np.log, "tanh": np.tanh}.items()
    },
}


class Kernels:
    """The wrappers over a reference that records which primitives it had to run."""

    def __init__(self) -> None:
        self.fallbacks: list[str] = []
        codes = {np.dtype(name): code for code, name in enumerate(C.DTYPES) if name != "bfloat16"}
        self.table = make_kernels(C, codes, self._reference)

    def _reference(self, name: str):
        self.fallbacks.append(name)
        return REFERENCE[name]

    def __getattr__(self, name: str):
        kernel = self.table[name]
        return lambda *args: kernel(
            *[ArrayTensor(a) if isinstance(a, np.ndarray) else a for a in args]
        )


@pytest.fixture
def k() -> Kernels:
    return Kernels()


def values(shape, dtype, rng, low=0, high=100):
    """Values that every native dtype holds exactly (non-negative, < 100)."""
    v = rng.integers(low, high, size=shape)
    if dtype == np.bool_:
        v = v % 2
    elif dtype.kind == "f":
        v = v + rng.random(shape)
    return np.asarray(v).astype(dtype)  # asarray: a 0-d array, never a numpy scalar


# -- allocator -----------------------------------------------------------------------------


def host(nbytes):
    """A numpy view of a fresh block (the view keeps the block alive)."""
    return C.host_view(C.allocate(nbytes))


def ptr(view):
    return view.ctypes.data


@pytest.mark.parametrize("nbytes", [0, 1, 63, 64, 65, 255, 257, 1000, 4096, 1 << 20])
def test_allocations_are_64_byte_aligned_blocks(nbytes):
    block = C.allocate(nbytes)
    assert block.nbytes == nbytes and block.ptr % 64 == 0
    view = C.host_view(block)
    assert isinstance(view, np.ndarray)
    assert view.dtype == np.uint8 and view.shape == (nbytes,)
    assert ptr(view) == block.ptr or nbytes == 0
    assert C.size_class(nbytes) >= max(nbytes, 64)
    assert C.size_class(nbytes) % 64 == 0


def test_size_classes_waste_at_most_a_quarter():
    for n in range(257, 1 << 16, 97):
        assert n <= C.size_class(n) <= n * 1.25 + 64


def test_free_list_reuses_blocks_without_aliasing_live_ones():
    C.empty_cache()
    live = []
    for i in range(32):
        block = host(1000)
        block[:] = i
        live.append(block)
    ptrs = {ptr(b) for b in live}
    assert len(ptrs) == len(live)  # no two live blocks share memory

    freed = {ptr(b) for b in live[::2]}
    del live[::2]
    gc.collect()
    hits_before = C.allocator_stats()["hits"]
    again = [host(1000) for _ in range(16)]
    assert C.allocator_stats()["hits"] - hits_before == 16
    assert {ptr(b) for b in again} == freed  # served from the free list
    for block in again:
        block[:] = 255  # writing the reused blocks ...
    for i, block in zip(range(1, 32, 2), live):
        assert (block == i).all()  # ... leaves the live ones alone


def test_a_view_keeps_its_block_alive():
    C.empty_cache()
    block = C.allocate(256)
    address = block.ptr
    view = C.host_view(block)[10:20]
    view[:] = 7
    del block
    gc.collect()
    other = host(256)  # must not get the block the view still uses
    assert ptr(other) != address
    other[:] = 1
    assert (view == 7).all()


def test_stats_and_cache_limit():
    C.empty_cache()
    base = C.allocator_stats()["allocated_bytes"]
    block = C.allocate(10_000)
    stats = C.allocator_stats()
    assert stats["allocated_bytes"] - base == C.size_class(10_000)
    assert stats["peak_bytes"] >= stats["allocated_bytes"]
    del block
    assert C.allocator_stats()["cached_bytes"] == C.size_class(10_000)
    limit = C.allocator_stats()["cache_limit"]
    try:
        C.set_cache_limit(0)  # nothing may stay cached
        assert C.allocator_stats()["cached_bytes"] == 0
        C.allocate(512)
        assert C.allocator_stats()["cached_bytes"] == 0
    finally:
        C.set_cache_limit(limit)


def test_allocator_is_thread_safe():
    errors = []

    def churn(seed):
        try:
            for i in range(2000):
                block = host(64 * (1 + (seed + i) % 7))
                block[:] = seed
                assert (block == seed).all()
        except AssertionError as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=churn, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_host_allocator_protocol():
    from plait_backend_cpu.allocator import HostAllocator

    alloc = HostAllocator(C)
    handle = alloc.allocate(100, 0)
    assert alloc.data_ptr(handle) % 64 == 0
    buf = alloc.host_buffer(handle)
    assert buf.ctypes.data == alloc.data_ptr(handle) and buf.nbytes == 100
    with pytest.raises(ValueError, match="negative"):
        alloc.allocate(-1, 0)


# -- kernels against numpy -----------------------------------------------------------------


def layouts(shape, dtype, rng):
    """(name, array of `shape`) in several memory layouts."""
    rows, cols = shape
    yield "contiguous", values(shape, dtype, rng)
    yield "transposed", values((cols, rows), dtype, rng).T
    yield "strided", values((rows * 2, cols * 3), dtype, rng)[::2, 1::3]
    yield "reversed", values(shape, dtype, rng)[::-1]
    yield "broadcast row", np.broadcast_to(values((1, cols), dtype, rng), shape)
    yield "broadcast scalar", np.broadcast_to(values((), dtype, rng), shape)


@pytest.mark.parametrize("op", ["add", "mul"])
@pytest.mark.parametrize("dtype", ARITH_DTYPES, ids=str)
def test_binary_matches_numpy(k, op, dtype):
    rng = np.random.default_rng(0)
    ufunc = {"add": np.add, "mul": np.multiply}[op]
    shape = (5, 7)
    for a_name, a in layouts(shape, dtype, rng):
        for b_name, b in layouts(shape, dtype, rng):
            out = np.zeros(shape, dtype)
            getattr(k, op)(out, a, b)
            with np.errstate(over="ignore"):
                expected = ufunc(a, b, dtype=dtype)
            np.testing.assert_array_equal(out, expected, err_msg=f"{a_name} {op} {b_name}")
    assert k.fallbacks == []


def test_binary_large_contiguous_and_noncontiguous_output(k):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((300, 500)).astype(np.float32)
    b = rng.standard_normal((300, 500)).astype(np.float32)
    out = np.empty_like(a)
    k.add(out, a, b)
    np.testing.assert_array_equal(out, a + b)
    out_t = np.empty((500, 300), np.float32).T  # a transposed output
    k.mul(out_t, a, b)
    np.testing.assert_array_equal(out_t, a * b)
    assert k.fallbacks == []


def test_integer_arithmetic_wraps(k):
    a = np.array([2**62, -(2**63)], np.int64)
    out = np.empty_like(a)
    k.add(out, a, a)
    np.testing.assert_array_equal(out, [-(2**63), 0])
    b = np.array([100, -100], np.int8)
    out8 = np.empty_like(b)
    k.mul(out8, b, b)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out8, b * b)


def test_in_place_exact_alias_runs_natively(k):
    a = np.arange(10, dtype=np.float64)
    b = np.ones(10)
    k.add(a, a, b)
    np.testing.assert_array_equal(a, np.arange(10) + 1)
    assert k.fallbacks == []


def test_partial_overlap_goes_to_the_reference(k):
    a = np.arange(10, dtype=np.float32)
    k.add(a[1:], a[:-1], np.ones(9, np.float32))
    assert k.fallbacks == ["add"]


def test_zero_size_and_zero_dim(k):
    empty = np.empty((0, 3), np.float32)
    k.add(empty, empty, empty)
    out = np.zeros((), np.float64)
    k.mul(out, np.array(3.0), np.array(4.0))
    assert out == 12.0
    assert k.fallbacks == []


def test_unsupported_dtype_falls_back(k):
    a = np.ones(4, np.complex64)
    out = np.empty_like(a)
    k.add(out, a, a)
    np.testing.assert_array_equal(out, 2 * a)
    assert k.fallbacks == ["add"]


def test_bool_arithmetic_is_logical(k):
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    out = np.empty_like(a)
    k.add(out, a, b)
    np.testing.assert_array_equal(out, a | b)
    k.mul(out, a, b)
    np.testing.assert_array_equal(out, a & b)
    assert k.fallbacks == []


def test_boundary_validation(k):
    with pytest.raises(ValueError, match="shape"):
        k.add(np.empty(3), np.empty(3), np.empty(4))
    with pytest.raises(TypeError, match="dtype"):
        k.add(np.empty(3), np.empty(3), np.empty(3, np.float32))
    with pytest.raises(ValueError, match="dimensions"):
        k.sum(np.empty((1,)), np.empty((2, 3)), [0])


@pytest.mark.parametrize("src_dtype", NATIVE_DTYPES, ids=str)
def test_copy_casts_like_numpy(k, src_dtype):
    rng = np.random.default_rng(2)
    for _, src in layouts((4, 6), src_dtype, rng):
        for dst_dtype in NATIVE_DTYPES:
            out = np.zeros((4, 6), dst_dtype)
            k.copy_(out, src)
            expected = src != 0 if dst_dtype == np.bool_ else src.astype(dst_dtype)
            np.testing.assert_array_equal(out, expected, err_msg=f"{src_dtype}->{dst_dtype}")
    assert k.fallbacks == []


def test_copy_float_to_int_truncates_toward_zero(k):
    src = np.array([-2.7, -0.5, 0.5, 2.7, 99.9], np.float32)
    for dtype in (np.int8, np.int16, np.int32, np.int64):
        out = np.zeros(5, dtype)
        k.copy_(out, src)
        np.testing.assert_array_equal(out, [-2, 0, 0, 2, 99])


def test_copy_into_transposed_output(k):
    src = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = np.zeros((4, 3), np.float64).T
    k.copy_(out, src)
    np.testing.assert_array_equal(out, src)
    assert k.fallbacks == []


@pytest.mark.parametrize("dtype", NATIVE_DTYPES, ids=str)
def test_fill(k, dtype):
    out = np.zeros((6, 8), dtype)[::2, 1::2]
    k.fill_(out, 3)
    np.testing.assert_array_equal(out, np.full((3, 4), 3, dtype))
    k.fill_(out, 2.75)
    expected = True if dtype == np.bool_ else (2.75 if dtype.kind == "f" else 2)
    np.testing.assert_array_equal(out, np.full((3, 4), expected, dtype))
    assert k.fallbacks == []


def test_fill_edge_values_go_to_the_reference(k):
    k.fill_(np.zeros(3, np.int32), float("nan"))
    k.fill_(np.zeros(3, np.int8), 300)  # overflow: the reference decides (PyTorch raises)
    k.fill_(np.zeros(3, np.complex64), 1.0)
    assert k.fallbacks == ["fill_", "fill_", "fill_"]


SUM_CASES = [
    ((5, 7), [0]),
    ((5, 7), [1]),
    ((5, 7), [0, 1]),
    ((2, 3, 4), [1]),
    ((2, 3, 4), [0, 2]),
    ((2, 3, 4), [-1]),
    ((3, 0), [1]),
    ((), []),
]


@pytest.mark.parametrize("shape,dims", SUM_CASES)
@pytest.mark.parametrize("dtype", NATIVE_DTYPES, ids=str)
def test_sum_matches_numpy(k, shape, dims, dtype):
    rng = np.random.default_rng(3)
    acc = dtype if dtype.kind == "f" else np.dtype(np.int64)
    base = values(shape, dtype, rng)
    inputs = [base]
    if len(shape) >= 2:
        inputs.append(values(shape[::-1], dtype, rng).T)  # transposed
        inputs.append(np.broadcast_to(values(shape[-1:], dtype, rng), shape))  # stride 0
    for a in inputs:
        out_shape = tuple(
            1 if d in [x % max(len(shape), 1) for x in dims] else s for d, s in enumerate(shape)
        )
        out = np.full(out_shape, 99, acc)
        k.sum(out, a, dims)
        expected = a.astype(np.float64 if acc.kind == "f" else np.int64).sum(
            axis=tuple(dims), keepdims=True
        )
        tol = 1e-6 if acc == np.float32 else 1e-12
        np.testing.assert_allclose(out, expected.astype(acc), rtol=tol)
    assert k.fallbacks == []


def test_sum_float32_is_accurate_on_long_inputs(k):
    rng = np.random.default_rng(4)
    a = rng.random(1_000_003).astype(np.float32)
    out = np.zeros((1,), np.float32)
    k.sum(out, a, [0])
    exact = a.astype(np.float64).sum()
    assert abs(float(out[0]) - exact) / exact < 1e-6


def test_sum_into_float64_and_integer_wrap(k):
    a = np.arange(10, dtype=np.float32)
    out = np.zeros((1,), np.float64)
    k.sum(out, a, [0])
    assert out[0] == 45.0
    big = np.array([2**62, 2**62, 2**62], np.int64)
    out64 = np.zeros((1,), np.int64)
    k.sum(out64, big, [0])
    assert out64[0] == np.array([2**62] * 3, np.int64).sum()
    assert k.fallbacks == []


def test_sum_of_a_large_column_block(k):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((1000, 257))
    out = np.zeros((1, 257))
    k.sum(out, a, [0])
    np.testing.assert_allclose(out, a.sum(axis=0, keepdims=True), rtol=1e-12, atol=1e-12)


# -- the plugin ----------------------------------------------------------------------------


def test_plugin_module_is_light():
    code = textwrap.dedent(
        """
        import sys
        import plait_backend_cpu.plugin
        heavy = [m for m in ("plait_backend_cpu._C", "torch", "numpy") if m in sys.modules]
        print(heavy)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_build_info():
    info = C.build_info()
    assert info["alignment"] == 64
    assert "-O3" in info["flags"]
    assert isinstance(info["simd"], list)
    assert info["compiler"]


def test_plugin_hooks_decline_other_device_types():
    from plait_backend_cpu import plugin

    assert plugin.torch_backend_info(device_type="cuda") is None
    assert plugin.torch_backend_allocator(device_type="cuda") is None
    assert plugin.torch_backend_synchronize(device_type="cuda", device_index=0) is None
    assert plugin.torch_backend_device_module(device_type="cpu") is None
    assert plugin.torch_backend_copy(device_type="cpu") is None
    assert plugin.torch_backend_synchronize(device_type="cpu", device_index=0) is True


# -- more elementwise primitives ---------------------------------------------------------


@pytest.mark.parametrize("op", ["sub", "maximum", "minimum"])
@pytest.mark.parametrize("dtype", ARITH_DTYPES, ids=str)
def test_more_binary_ops_match_numpy(k, op, dtype):
    rng = np.random.default_rng(8)
    ufunc = {"sub": np.subtract, "maximum": np.maximum, "minimum": np.minimum}[op]
    shape = (5, 7)
    for a_name, a in layouts(shape, dtype, rng):
        for b_name, b in layouts(shape, dtype, rng):
            out = np.zeros(shape, dtype)
            getattr(k, op)(out, a, b)
            with np.errstate(over="ignore"):
                expected = ufunc(a, b, dtype=dtype)
            np.testing.assert_array_equal(out, expected, err_msg=f"{a_name} {op} {b_name}")
    assert k.fallbacks == []


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64], ids=str)
def test_integer_neg_abs_sub_wrap(k, dtype):
    info = np.iinfo(dtype)
    a = np.array([info.min, info.max, 0, 1, 7], dtype)
    for op, fn in (("neg", np.negative), ("abs", np.abs)):
        out = np.empty_like(a)
        getattr(k, op)(out, a)
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(out, fn(a), err_msg=op)
    out = np.empty_like(a)
    k.sub(out, a, a[::-1].copy())
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, a - a[::-1])
    assert k.fallbacks == []


def test_div_rounding_modes_native_integer_true_division_to_the_reference(k):
    a = np.array([7.0, -7.0])
    b = np.array([2.0, 2.0])
    out = np.empty_like(a)
    k.div(out, a, b)
    np.testing.assert_array_equal(out, [3.5, -3.5])
    k.div(out, a, b, "floor")
    np.testing.assert_array_equal(out, [3.0, -4.0])
    k.div(out, a, b, "trunc")
    np.testing.assert_array_equal(out, [3.0, -3.0])
    assert k.fallbacks == []
    ints = np.array([7, -7])
    out_i = np.empty_like(ints)
    k.div(out_i, ints, np.array([2, 2]))
    assert k.fallbacks == ["div"]


def test_transcendentals_of_int_go_to_the_reference(k):
    ints = np.array([1, 2], np.int32)
    k.exp(np.empty_like(ints), ints)
    assert k.fallbacks == ["exp"]
    x = np.array([0.5, 2.0])
    for op in ("exp", "log", "tanh", "sqrt", "sin", "cos", "neg", "abs"):
        getattr(k, op)(np.empty_like(x), x)
    assert k.fallbacks == ["exp"]


def test_unary_partial_overlap_and_boundary(k):
    a = np.arange(10, dtype=np.float32)
    k.neg(a[1:], a[:-1])
    assert k.fallbacks == ["neg"]
    with pytest.raises(ValueError, match=r"prims\.abs"):
        k.abs(np.empty(3, np.float32), np.empty(4, np.float32))
    with pytest.raises(TypeError, match=r"prims\.abs"):
        k.abs(np.empty(3, np.float32), np.empty(3, np.float64))
    b = np.array([-1.0, 4.0])
    k.sqrt(b, b)  # an exact alias runs natively
    assert np.isnan(b[0]) and b[1] == 2.0
    assert k.fallbacks == ["neg"]


# -- through the public API of plait-core ----------------------------------------------------


@pytest.fixture
def torch():
    import torch

    return torch


def test_backend_info_through_core(torch):
    from plait_backend_cpu import plugin

    info = plugin.torch_backend_info(device_type="cpu")
    assert info.device_type == "cpu"
    assert info.distribution == "plait-backend-cpu"
    assert {"host_accessible", "float64"} <= info.capabilities


def test_tensor_memory_is_aligned(torch):
    for n in (1, 3, 17, 1000):
        assert torch.empty(n).data_ptr() % 64 == 0


@pytest.mark.parametrize("dtype_name", ["float32", "float64", "int32", "int64"])
def test_public_api_matches_numpy(torch, dtype_name):
    rng = np.random.default_rng(6)
    dtype = getattr(torch, dtype_name)
    np_dtype = np.dtype(dtype_name)
    x_np = values((4, 5), np_dtype, rng)
    y_np = values((4, 5), np_dtype, rng)
    x, y = torch.tensor(x_np), torch.tensor(y_np)

    np.testing.assert_array_equal((x + y).numpy(), x_np + y_np)
    np.testing.assert_array_equal((x * y).numpy(), x_np * y_np)
    # stride-0 broadcasts: a row, a column and a Python scalar
    row_np, col_np = values((1, 5), np_dtype, rng), values((4, 1), np_dtype, rng)
    np.testing.assert_array_equal((x + torch.tensor(row_np)).numpy(), x_np + row_np)
    np.testing.assert_array_equal((torch.tensor(col_np) * y).numpy(), col_np * y_np)
    np.testing.assert_array_equal((x * 3).numpy(), x_np * 3)

    total = x.sum()
    expected = x_np.astype(np.float64 if np_dtype.kind == "f" else np.int64).sum()
    np.testing.assert_allclose(total.item(), expected, rtol=1e-6)

    as_f64 = x.to(torch.float64)
    assert as_f64.dtype == torch.float64
    np.testing.assert_array_equal(as_f64.numpy(), x_np.astype(np.float64))

    filled = torch.empty(3, 2, dtype=dtype)
    filled.fill_(7)
    np.testing.assert_array_equal(filled.numpy(), np.full((3, 2), 7, np_dtype))


def test_public_api_transposed_and_strided(torch):
    rng = np.random.default_rng(7)
    x_np = rng.standard_normal((6, 8)).astype(np.float32)
    y_np = rng.standard_normal((8, 6)).astype(np.float32)
    x, y = torch.tensor(x_np), torch.tensor(y_np)
    xt = x.transpose(0, 1)
    xs = x[::2, 1::2]
    # views share memory with x: no copy was made on the way to the native kernels
    assert xt.data_ptr() == x.data_ptr() and xs.data_ptr() == x.data_ptr() + 4
    np.testing.assert_array_equal((xt + y).numpy(), x_np.T + y_np)
    np.testing.assert_array_equal((xs * xs).numpy(), x_np[::2, 1::2] ** 2)
    np.testing.assert_allclose(xt.sum().item(), x_np.astype(np.float64).sum(), rtol=1e-6)
    copied = torch.zeros(8, 6, dtype=torch.float64)
    copied.copy_(xt)
    np.testing.assert_array_equal(copied.numpy(), x_np.T.astype(np.float64))


BINARY_REF_OPS = ["add", "sub", "mul", "div", "maximum", "minimum"]
UNARY_REF_OPS = ["neg", "abs", "exp", "log", "sqrt", "tanh", "sin", "cos"]


def _special_values(shape, np_dtype, rng):
    """Normal values of both signs and magnitudes, with NaN, infinities, signed zeros and
    overflowing/underflowing arguments scattered in."""
    v = np.asarray(rng.standard_normal(shape) * np.exp(rng.uniform(-8, 8, shape)))
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 100.0, -120.0, 800.0, -1.0])
    mask = rng.random(shape) < 0.3
    v[mask] = rng.choice(special, size=int(mask.sum()))
    with np.errstate(over="ignore"):
        return v.astype(np_dtype)


# Transcendental functions are not bit-exact with numpy: within a few ulp (vecmath.h).
ULP_OPS = {"exp": 2, "log": 2, "tanh": 2, "sin": 2, "cos": 2}


def _ulp_distance(actual, expected):
    """Units in the last place between same-dtype floats (signed zeros are 0 apart)."""
    bits = np.int32 if actual.dtype == np.float32 else np.int64
    lowest = np.int64(np.iinfo(bits).min)

    def ordered(x):
        i = x.view(bits).astype(np.int64)
        return np.where(i < 0, lowest - i, i)

    return np.abs(ordered(actual) - ordered(expected))


def _assert_ulp(actual, expected, ulps, msg):
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(actual), nan, err_msg=msg)
    distance = _ulp_distance(actual[~nan], expected[~nan])
    assert distance.max(initial=0) <= ulps, f"{msg}: {distance.max()} ulp"


def _assert_same_bits(actual, expected, msg):
    """Equal bit for bit, except that any NaN matches any NaN (payloads are libm's)."""
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(actual), nan, err_msg=msg)
    uint = np.uint32 if actual.dtype == np.float32 else np.uint64
    np.testing.assert_array_equal(actual.view(uint)[~nan], expected.view(uint)[~nan], err_msg=msg)


@pytest.mark.parametrize("op", BINARY_REF_OPS + UNARY_REF_OPS)
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_native_matches_reference_kernels(torch, op, dtype_name):
    """The native kernels against core's reference kernels (torch._refs.CPU_KERNELS) on
    contiguous, transposed and stride-0 broadcast operands: bit for bit, but within ULP_OPS
    ulp for the transcendental functions."""
    dtype, np_dtype = getattr(torch, dtype_name), np.dtype(dtype_name)
    codes = {getattr(torch, name): code for code, name in enumerate(C.DTYPES)}
    fallbacks = []

    def reference(name):
        fallbacks.append(name)
        return torch._refs.CPU_KERNELS[name]

    native = make_kernels(C, codes, reference)[op]
    ref = torch._refs.CPU_KERNELS[op]
    rng = np.random.default_rng(9)
    shape = (33, 65)  # odd sizes: vector loop tails

    def operands():
        yield "contiguous", torch.tensor(_special_values(shape, np_dtype, rng))
        yield (
            "transposed",
            torch.tensor(_special_values(shape[::-1], np_dtype, rng)).transpose(0, 1),
        )
        yield "row", torch.tensor(_special_values((1, shape[1]), np_dtype, rng)).expand(*shape)
        yield "scalar", torch.tensor(_special_values((), np_dtype, rng)).expand(*shape)

    arity = 2 if op in BINARY_REF_OPS else 1
    pairs = (
        [(a, b) for a in operands() for b in operands()]
        if arity == 2
        else [(a,) for a in operands()]
    )
    for pair in pairs:
        names = " ".join(name for name, _ in pair)
        inputs = [t for _, t in pair]
        for out_layout in ("contiguous", "transposed"):
            if out_layout == "contiguous":
                out = torch.empty(*shape, dtype=dtype)
            else:
                out = torch.empty(*shape[::-1], dtype=dtype).transpose(0, 1)
            expected = torch.empty(*shape, dtype=dtype)
            native(out, *inputs)
            ref(expected, *inputs)
            msg = f"{op} {dtype_name} {names} -> {out_layout}"
            if op in ULP_OPS:
                _assert_ulp(out.numpy(), expected.numpy(), ULP_OPS[op], msg)
            else:
                _assert_same_bits(out.numpy(), expected.numpy(), msg)
    assert not fallbacks


def test_float32_transcendentals_within_2_ulp_of_double(torch):
    """On many values, float32 exp/log/tanh/sin/cos are within 2 ulp of the double result
    rounded once; sqrt equals it."""
    rng = np.random.default_rng(10)
    x_np = np.concatenate([rng.standard_normal(50_000) * 20, rng.uniform(-105, 90, 50_000)]).astype(
        np.float32
    )
    codes = {getattr(torch, name): code for code, name in enumerate(C.DTYPES)}
    table = make_kernels(C, codes, lambda name: pytest.fail(f"{name} fell back"))
    x = torch.tensor(x_np)
    for op, fn in {
        "exp": np.exp,
        "log": np.log,
        "tanh": np.tanh,
        "sin": np.sin,
        "cos": np.cos,
        "sqrt": np.sqrt,
    }.items():
        out = torch.empty(x_np.size, dtype=torch.float32)
        table[op](out, x)
        with np.errstate(all="ignore"):
            expected = fn(x_np.astype(np.float64)).astype(np.float32)
        _assert_ulp(out.numpy(), expected, ULP_OPS.get(op, 0), op)


@pytest.mark.parametrize("shape, dim", [((50, 16), 0), ((4, 30, 9), 1), ((6, 5, 4, 8), 2),
                                        ((7, 3), 0)])
def test_index_select_copies_whole_slices_as_numpy_takes_them(torch, shape, dim) -> None:
    # index_select's gather: whole contiguous slices per index (one block copy each), or
    # element by element when the slice is short or strided
    import numpy as np

    source = torch.arange(float(np.prod(shape))).reshape(shape)
    index = torch.tensor([2, 0, 2, 1, shape[dim] - 1])
    expected = np.take(source.numpy(), index.numpy(), axis=dim)
    assert np.array_equal(source.index_select(dim, index).numpy(), expected)
    strided = source.transpose(0, -1)  # slices that are not contiguous
    expected_strided = np.take(strided.numpy(), index.clamp(max=strided.shape[dim] - 1).numpy(),
                               axis=dim)
    got = strided.index_select(dim, index.clamp(max=strided.shape[dim] - 1))
    assert np.array_equal(got.numpy(), expected_strided)
    embedded = torch.nn.functional.embedding(torch.tensor([[1, 0], [2, 1]]), source.reshape(
        shape[0], -1))
    assert np.array_equal(embedded.numpy(), source.reshape(shape[0], -1).numpy()[[[1, 0], [2, 1]]])
    with pytest.raises(IndexError, match="index out of range"):
        source.index_select(dim, torch.tensor([shape[dim]]))
