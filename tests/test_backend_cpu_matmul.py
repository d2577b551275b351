"""The native ``matmul`` primitive of plait-backend-cpu (packed float32 kernels, OpenBLAS and
the native kernel).

Every case runs three times: as the CPU would (float32 on the packed AVX2/AVX-512 kernels where
it has them), with those off (``_C.packed_disable``: OpenBLAS), and with OpenBLAS off too
(``_C.blas_disable``: the native kernel). Each is compared with core's reference kernel
(exactly for integers, with a float tolerance since BLAS may sum in another order) and,
through the public API, with numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

C = pytest.importorskip("plait_backend_cpu._C", reason="plait-backend-cpu is not installed")

from conftest import run_json  # noqa: E402
from plait_backend_cpu.kernels import linalg  # noqa: E402

import torch  # noqa: E402
import torch._refs  # noqa: E402
from torch.backends import contract  # noqa: E402

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
DTYPES = FLOATS + INTS
TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-12, 1e-12),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (2e-2, 2e-2),
}


def reference(out, a, b) -> None:
    torch._refs.CPU_KERNELS["matmul"](out, a, b)


@pytest.fixture(scope="module")
def native_matmul():
    """The wrapper that the plugin registers (loads OpenBLAS if it can)."""
    codes = contract.dtype_codes(C.DTYPES)
    return linalg.make_kernels(C, codes, contract.reference)["matmul"]


@pytest.fixture(params=["packed", "blas", "native"])
def path(request, native_matmul):
    """Runs the test on the packed float32 kernels, on OpenBLAS and on the native kernel."""
    info = C.blas_info()
    if request.param == "packed" and not info["packed_kernel"]:
        pytest.skip("no packed float32 kernel on this CPU (it needs AVX2 and FMA)")
    if request.param == "blas" and not info["loaded"]:
        pytest.skip(f"OpenBLAS not loaded: {info['error']}")
    C.packed_disable(request.param != "packed")
    C.blas_disable(request.param == "native")
    try:
        yield request.param
    finally:
        C.packed_disable(False)
        C.blas_disable(False)


def make(shape, dtype, seed, layout="contiguous"):
    """A tensor of `shape` with small values, in one of several memory layouts."""
    rng = np.random.default_rng(seed)
    if dtype.is_floating_point:
        values = rng.standard_normal(shape).astype(np.float32)
    else:
        values = rng.integers(-20 if dtype != torch.uint8 else 0, 20, shape).astype(np.int64)
    t = torch.from_numpy(values).to(dtype)
    if layout == "transposed":  # same values, last two dims column-major
        t = t.mT.contiguous().mT
    elif layout == "strided":  # neither stride of the matrix is 1: BLAS needs a copy
        big = torch.zeros(shape[:-2] + (shape[-2] * 2, shape[-1] * 3), dtype=dtype)
        view = big[..., ::2, ::3]
        view.copy_(t)
        t = view
    return t


def check(out, expected):
    dtype = out.dtype
    got = out.to(torch.float64).numpy() if dtype.is_floating_point else out.numpy()
    want = expected.to(torch.float64).numpy() if dtype.is_floating_point else expected.numpy()
    if dtype.is_floating_point:
        rtol, atol = TOL[dtype]
        scale = max(1.0, float(np.abs(want).max(initial=0)))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale)
    else:
        np.testing.assert_array_equal(got, want)


def run_both(native_matmul, a, b, out_layout="contiguous"):
    shape = tuple(a.shape[:-1]) + (b.shape[-1],)
    out = torch.full(shape, 7, dtype=a.dtype)
    if out_layout == "transposed":
        out = out.mT.contiguous().mT
    expected = torch.empty(shape, dtype=a.dtype)
    native_matmul(out, a, b)
    reference(expected, a, b)
    check(out, expected)
    return out


LAYOUTS = ["contiguous", "transposed", "strided"]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("a_layout", LAYOUTS)
@pytest.mark.parametrize("b_layout", LAYOUTS)
def test_layouts_match_reference(path, native_matmul, dtype, a_layout, b_layout):
    a = make((37, 45), dtype, 1, a_layout)
    b = make((45, 29), dtype, 2, b_layout)
    run_both(native_matmul, a, b)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("out_layout", ["transposed", "strided"])
def test_output_layouts(path, native_matmul, dtype, out_layout):
    a = make((19, 33), dtype, 3)
    b = make((33, 21), dtype, 4, "transposed")
    expected = torch.empty((19, 21), dtype=dtype)
    reference(expected, a, b)
    if out_layout == "transposed":
        out = torch.zeros((21, 19), dtype=dtype).mT
    else:
        out = torch.zeros((38, 63), dtype=dtype)[::2, ::3]
    native_matmul(out, a, b)
    check(out, expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    "m, k, n",
    [(1, 1, 1), (1, 50, 1), (1, 40, 30), (30, 40, 1), (5, 1, 7), (130, 300, 70), (300, 40, 270),
     # around the packed kernels' tiles (6 rows, 16/64 columns, 1-4 vectors in a last partial
     # panel) and slabs (256 deep)
     (12, 256, 32), (13, 257, 33), (11, 255, 31), (25, 513, 65), (96, 100, 512), (97, 3, 513),
     (7, 257, 112), (61, 40, 129), (6, 64, 64)],
)
def test_shapes(path, native_matmul, dtype, m, k, n):
    run_both(native_matmul, make((m, k), dtype, 5), make((k, n), dtype, 6))
    run_both(native_matmul, make((m, k), dtype, 7, "transposed"),
             make((k, n), dtype, 8, "transposed"))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_batched_with_broadcast_batch_dims(path, native_matmul, dtype):
    a = make((3, 1, 6, 9), dtype, 9).expand(3, 4, 6, 9)  # stride 0 on dim 1
    b = make((1, 4, 9, 5), dtype, 10, "transposed").expand(3, 4, 9, 5)  # stride 0 on dim 0
    assert a.stride()[1] == 0 and b.stride()[0] == 0
    out = run_both(native_matmul, a, b)
    # The same as the product of materialised (contiguous) operands.
    materialised = torch.empty((3, 4, 6, 5), dtype=dtype)
    native_matmul(materialised, a.contiguous(), b.contiguous())
    check(out, materialised)
    # A matrix broadcast over every batch item (both batch strides 0).
    a = make((1, 1, 6, 9), dtype, 11).expand(2, 3, 6, 9)
    b = make((2, 3, 9, 4), dtype, 12, "strided")
    run_both(native_matmul, a, b)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_zero_sizes(path, native_matmul, dtype):
    # k == 0: an empty sum is 0 (the output held 7s and NaNs before).
    out = torch.full((4, 3), 7, dtype=dtype)
    if dtype.is_floating_point:
        out[0, 0] = float("nan")
    native_matmul(out, make((4, 0), dtype, 1), make((0, 3), dtype, 2))
    assert (out.to(torch.float64).numpy() == 0).all()
    out = torch.full((2, 4, 3), 7, dtype=dtype)
    native_matmul(out, make((2, 4, 0), dtype, 1), make((2, 0, 3), dtype, 2))
    assert (out.to(torch.float64).numpy() == 0).all()
    # Empty outputs: nothing to do, nothing touched.
    for m, k, n, batch in [(0, 3, 4, ()), (3, 4, 0, ()), (2, 3, 4, (0,))]:
        a = make(batch + (m, k), dtype, 3)
        b = make(batch + (k, n), dtype, 4)
        out = torch.empty(batch + (m, n), dtype=dtype)
        native_matmul(out, a, b)
        assert tuple(out.shape) == batch + (m, n)


def test_large_products_threads_and_tiles(path, native_matmul):
    """Big enough to be split into tiles over threads; 1 and 2 threads agree."""
    a = make((300, 257), torch.float32, 13)
    b = make((257, 513), torch.float32, 14, "transposed")
    expected = torch.empty((300, 513))
    reference(expected, a, b)
    old = torch.get_num_threads()
    try:
        for threads in (1, 2, 3):
            torch.set_num_threads(threads)
            out = torch.empty((300, 513))
            native_matmul(out, a, b)
            check(out, expected)
        # Few batch items with large matrices: tiles within each item.
        a3 = make((2, 200, 128), torch.float64, 15)
        b3 = make((2, 128, 300), torch.float64, 16)
        run_both(native_matmul, a3, b3)
        run_both(native_matmul, make((2, 150, 140), torch.int32, 17),
                 make((2, 140, 160), torch.int32, 18))
    finally:
        torch.set_num_threads(old)


def test_integers_wrap_like_pytorch(path, native_matmul):
    a = torch.full((2, 300), 100, dtype=torch.int8)
    out = torch.empty((2, 2), dtype=torch.int8)
    native_matmul(out, a, a.mT)
    assert (out.numpy() == -64).all()  # 300 * 10000 = 3000000 = -64 (mod 256), as PyTorch gives
    big = torch.full((3, 4), 2**61 + 5, dtype=torch.int64)
    out = torch.empty((3, 3), dtype=torch.int64)
    native_matmul(out, big, torch.full((4, 3), 3, dtype=torch.int64))
    # 12 * (2^61 + 5) = 3 * 2^63 + 60, which is -2^63 + 60 modulo 2^64 (as PyTorch gives).
    assert (out.numpy() == np.int64(-(2**63) + 60)).all()
    run_both(native_matmul, make((40, 70), torch.int16, 19) * 300,
             make((70, 30), torch.int16, 20) * 300)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_types_accumulate_in_float32_and_round_once(path, native_matmul, dtype):
    k = 4096
    a = torch.full((2, k), 1.0, dtype=dtype)
    b = torch.full((k, 3), 1.0, dtype=dtype)
    out = torch.empty((2, 3), dtype=dtype)
    native_matmul(out, a, b)
    # A float16/bfloat16 accumulator would stop growing at 2048 / 256.
    assert (out.to(torch.float64).numpy() == 4096).all()
    a = make((33, 600), dtype, 21)
    b = make((600, 17), dtype, 22)
    out = torch.empty((33, 17), dtype=dtype)
    native_matmul(out, a, b)
    want = (a.float().numpy() @ b.float().numpy()).astype(np.float32)
    got_bits = out.to(torch.float32).numpy()
    rounded = torch.from_numpy(want).to(dtype).to(torch.float32).numpy()
    np.testing.assert_allclose(got_bits, rounded, rtol=1e-2, atol=1e-2)


def test_nan_and_inf_propagate(path, native_matmul):
    a = make((5, 6), torch.float32, 23)
    b = make((6, 4), torch.float32, 24)
    a[1, 2] = float("nan")
    b[3, 0] = float("inf")
    run_both(native_matmul, a, b)
    out = torch.empty((5, 4))
    native_matmul(out, a, b)
    assert np.isnan(out.numpy()[1]).all()


def test_cases_left_to_the_reference(native_matmul):
    # bool (PyTorch has no bool matmul kernel on CPU; core's reference defines it as "any").
    a = torch.from_numpy(np.array([[True, False], [False, False]]))
    out = torch.empty((2, 2), dtype=torch.bool)
    native_matmul(out, a, a)
    np.testing.assert_array_equal(out.numpy(), [[True, False], [False, False]])
    # An output overlapping an input: the reference computes before it stores.
    base = make((4, 4), torch.float32, 25)
    a = base.clone()
    expected = torch.empty((4, 4))
    reference(expected, a, a)
    native_matmul(a, a, a.clone())
    check(a, expected)
    # An output with a stride-0 dimension would be written twice: C returns False.
    assert not C.matmul(6, (2, 2), 2, base.data_ptr(), (0, 1), base.data_ptr(), (2, 1),
                        base.data_ptr(), (2, 1))


def test_boundary_errors(native_matmul):
    a = torch.zeros((3, 4))
    with pytest.raises(ValueError, match="matmul"):
        native_matmul(torch.empty((3, 5)), a, torch.zeros((5, 5)))
    with pytest.raises(ValueError, match="matmul"):
        native_matmul(torch.empty((3,)), torch.zeros((3,)), torch.zeros((3,)))
    with pytest.raises(TypeError, match="matmul"):
        native_matmul(torch.empty((3, 2)), a, torch.zeros((4, 2), dtype=torch.float64))
    with pytest.raises(ValueError):
        C.matmul(6, (3,), 1, 0, (1,), 0, (1,), 0, (1,))


# -- blas.h's gemm, the interface other kernels (conv) build on ------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm_interface(path, dtype, trans_a, trans_b):
    m, n, k = 23, 17, 31
    rng = np.random.default_rng(0)
    npd = np.float32 if dtype == torch.float32 else np.float64
    # Stored operands with padded rows (leading dimension larger than the row).
    a_rows, a_cols = (k, m) if trans_a else (m, k)
    b_rows, b_cols = (n, k) if trans_b else (k, n)
    a = rng.standard_normal((a_rows, a_cols + 3)).astype(npd)
    b = rng.standard_normal((b_rows, b_cols + 5)).astype(npd)
    c = rng.standard_normal((m, n + 2)).astype(npd)
    op_a = a[:, :a_cols].T if trans_a else a[:, :a_cols]
    op_b = b[:, :b_cols].T if trans_b else b[:, :b_cols]
    want = 0.5 * op_a @ op_b + 2.0 * c[:, :n]
    code = C.DTYPES.index(str(dtype).removeprefix("torch."))
    assert C.gemm(code, trans_a, trans_b, m, n, k, 0.5, a.ctypes.data, a.shape[1],
                  b.ctypes.data, b.shape[1], 2.0, c.ctypes.data, c.shape[1])
    rtol = 1e-5 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(c[:, :n], want, rtol=rtol, atol=rtol * 10)
    # beta == 0 ignores C's old values (NaN included); k == 0 leaves beta * C.
    c[:] = np.nan
    C.gemm(code, trans_a, trans_b, m, n, k, 1.0, a.ctypes.data, a.shape[1], b.ctypes.data,
           b.shape[1], 0.0, c.ctypes.data, c.shape[1])
    np.testing.assert_allclose(c[:, :n], op_a @ op_b, rtol=rtol, atol=rtol * 10)
    c[:] = 3.0
    C.gemm(code, trans_a, trans_b, m, n, 0, 1.0, a.ctypes.data, a.shape[1], b.ctypes.data,
           b.shape[1], 0.5, c.ctypes.data, c.shape[1])
    assert (c[:, :n] == 1.5).all()


def test_blas_info():
    info = C.blas_info()
    assert set(info) == {"loaded", "library", "config", "error", "library_threads", "packed_kernel"}
    try:
        linalg.openblas_library()
    except (ImportError, OSError):
        assert not info["loaded"] and info["error"]
        return
    assert info["loaded"], info["error"]
    assert info["error"] == "" and "OpenBLAS" in info["config"]
    # OpenBLAS never threads itself, whatever torch.set_num_threads says: products are tiled
    # over the kernels' own threads.
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(3)
        torch.ones((2, 2)) @ torch.ones((2, 2))
        assert C.get_num_threads() == 3
        assert C.blas_info()["library_threads"] == 1
    finally:
        torch.set_num_threads(old)
    C.blas_disable(True)
    try:
        assert not C.blas_info()["loaded"] and "disabled" in C.blas_info()["error"]
    finally:
        C.blas_disable(False)
    assert C.blas_info()["loaded"]


def test_fallback_when_openblas_is_not_loaded():
    """A process where OpenBLAS never loads: the native kernel serves, and says why."""
    result = run_json(
        """
        import json, numpy as np, torch
        from plait_backend_cpu import plugin
        a = torch.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
        out = (a @ a.mT).numpy()
        want = a.numpy() @ a.numpy().T
        print(json.dumps({"info": plugin.native().blas_info(),
                          "ok": bool(np.allclose(out, want))}))
        """,
        env={linalg.DISABLE_ENV: "1"},
    )
    assert result["ok"]
    assert not result["info"]["loaded"]
    assert result["info"]["error"] == f"not loaded: {linalg.DISABLE_ENV} is set"


# -- the public API -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64], ids=str)
def test_public_api_matches_numpy(path, dtype):
    def np_of(t):
        return t.numpy()

    a = make((6, 5), dtype, 30)
    b = make((5, 4), dtype, 31)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype.is_floating_point else {"rtol": 0, "atol": 0}
    want = np_of(a) @ np_of(b)
    np.testing.assert_allclose(np_of(torch.matmul(a, b)), want, **tol)
    np.testing.assert_allclose(np_of(a @ b), want, **tol)
    np.testing.assert_allclose(np_of(torch.mm(a, b)), want, **tol)
    np.testing.assert_allclose(np_of(torch.mm(b.mT, a.mT)), want.T, **tol)
    x = make((3, 6, 5), dtype, 32)
    y = make((3, 5, 4), dtype, 33, "transposed")
    np.testing.assert_allclose(np_of(torch.bmm(x, y)), np_of(x) @ np_of(y), **tol)
    # Broadcast batch dims, matrix @ vector and vector @ batch.
    z = make((2, 1, 6, 5), dtype, 34)
    w = make((3, 5, 4), dtype, 35)
    np.testing.assert_allclose(np_of(z @ w), np_of(z) @ np_of(w), **tol)
    v = torch.from_numpy(np_of(b)[:, 0].copy())
    np.testing.assert_allclose(np_of(a @ v), np_of(a) @ np_of(v), **tol)
    np.testing.assert_allclose(np_of(torch.from_numpy(np_of(a)[0].copy()) @ w),
                               np_of(a)[0] @ np_of(w), **tol)


def test_public_api_float32_large(path):
    a = make((128, 96), torch.float32, 40)
    b = make((96, 200), torch.float32, 41, "transposed")
    np.testing.assert_allclose((a @ b).numpy(), a.numpy() @ b.numpy(), rtol=1e-4, atol=1e-4)


def test_concurrent_products_from_python_threads(path, native_matmul):
    """Products on several Python threads at once (the GIL is released) stay correct: a
    thread that finds the pool busy runs its tiles inline."""
    import threading

    a = make((2, 160, 120), torch.float32, 50)
    b = make((2, 120, 140), torch.float32, 51, "transposed")
    expected = torch.empty((2, 160, 140))
    reference(expected, a, b)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(5):
                out = torch.empty((2, 160, 140))
                native_matmul(out, a, b)
                check(out, expected)
        except BaseException as exc:  # reported on the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# -- the packed float32 kernels: the same bits whatever the threads and the vector width ------

_PACKED_SCRIPT = r"""
import sys
import numpy as np
import torch

rng = np.random.default_rng(21)
results = {}
for name, (m, k, n) in {"square": (200, 300, 250), "tall": (777, 129, 65),
                        "wide": (7, 520, 1100)}.items():
    a = torch.from_numpy(rng.standard_normal((m, k)).astype(np.float32))
    b = torch.from_numpy(rng.standard_normal((n, k)).astype(np.float32)).T  # transposed B
    for threads in (1, 2, 3):
        torch.set_num_threads(threads)
        results[f"{name}_{threads}"] = (a @ b).numpy()
        results[f"{name}_t_{threads}"] = (a.T.contiguous().T @ b).numpy()  # transposed A
import plait_backend_cpu._C as C
results["kernel"] = np.array(C.blas_info()["packed_kernel"])
np.savez(sys.argv[1], **results)
"""


def _packed_run(tmp_path, width):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PLAIT_CPU_VECTOR_BYTES"}
    env["PLAIT_CPU_VECTOR_BYTES"] = str(width)
    target = tmp_path / f"packed_{width}.npz"
    subprocess.run([sys.executable, "-c", _PACKED_SCRIPT, str(target)], env=env, check=True,
                   capture_output=True, text=True)
    with np.load(target) as saved:
        return {name: saved[name] for name in saved.files}


def test_packed_kernels_give_the_same_bits_for_every_thread_count_and_width(tmp_path):
    """Each element sums its depth in one order whatever the split over threads, and the
    AVX2 (6x16) and AVX-512 (6x64, with its narrower instances for a last partial panel)
    kernels do the same arithmetic per element."""
    if not C.blas_info()["packed_kernel"]:
        pytest.skip("no packed float32 kernel on this CPU (it needs AVX2 and FMA)")
    runs = {width: _packed_run(tmp_path, width) for width in (32, 64)}
    assert str(runs[32]["kernel"]) == "avx2 6x16"
    rng = np.random.default_rng(21)
    for name, (m, k, n) in {"square": (200, 300, 250), "tall": (777, 129, 65),
                            "wide": (7, 520, 1100)}.items():
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((n, k)).astype(np.float32).T
        want = a.astype(np.float64) @ b.astype(np.float64)
        for width, got in runs.items():
            first = got[f"{name}_1"]
            np.testing.assert_allclose(first, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
            for key in (f"{name}_2", f"{name}_3", f"{name}_t_1", f"{name}_t_2", f"{name}_t_3"):
                assert got[key].tobytes() == first.tobytes(), (width, key)
        if str(runs[64]["kernel"]) == "avx512 6x64":  # else this CPU ran AVX2 for both
            assert runs[64][f"{name}_1"].tobytes() == runs[32][f"{name}_1"].tobytes(), name


def test_packed_kernel_is_reported_and_can_be_switched_off():
    info = C.blas_info()
    if not info["packed_kernel"]:
        pytest.skip("no packed float32 kernel on this CPU (it needs AVX2 and FMA)")
    assert info["packed_kernel"] in ("avx512 6x64", "avx2 6x16")
    C.packed_disable(True)
    try:
        assert C.blas_info()["packed_kernel"] == ""
    finally:
        C.packed_disable(False)
    assert C.blas_info()["packed_kernel"] == info["packed_kernel"]


def _random_operand(rng, rows, cols):
    """A float32 matrix with its values, in a random layout: row- or column-major, sliced out
    of a larger buffer with steps, or a broadcast row/column (stride 0)."""
    values = rng.standard_normal((rows, cols)).astype(np.float32)
    kind = rng.integers(0, 5)
    if kind == 0:
        return torch.from_numpy(values), values
    if kind == 1:
        return torch.from_numpy(values.T.copy()).T, values
    if kind == 2:
        big = np.zeros((rows * 2 + 1, cols * 3 + 2), np.float32)
        big[1::2, 2::3][:rows, :cols] = values
        return torch.from_numpy(big)[1::2, 2::3][:rows, :cols], values
    if kind == 3:
        row = values[:1]
        return torch.from_numpy(row.copy()).expand(rows, cols), np.broadcast_to(row, values.shape)
    column = values[:, :1]
    return torch.from_numpy(column.copy()).expand(rows, cols), np.broadcast_to(column, values.shape)


@pytest.mark.parametrize("threads", [1, 2])
def test_random_float32_products_match_float64(threads):
    """200 products of random sizes around every blocking boundary (tiles of 6 rows and 16/64
    columns, kernels of 1-4 vectors for a last partial panel, 256-deep slabs, 48 rows read in
    place, 96-row and 512/1024-column blocks) and
    random operand layouts, through the public API, against numpy in float64; 1025 crosses
    a block of B's columns (512 to 1024 by the L2 size)."""
    rng = np.random.default_rng(1234)
    sizes = [1, 2, 5, 6, 7, 11, 12, 13, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 95, 97, 129,
             255, 256, 257, 300, 513, 1025]
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for _ in range(200):
            m, k, n = (int(rng.choice(sizes)) for _ in range(3))
            if m * k * n > 2e7:
                continue
            a, a_values = _random_operand(rng, m, k)
            b, b_values = _random_operand(rng, k, n)
            got = (a @ b).numpy()
            want = a_values.astype(np.float64) @ b_values.astype(np.float64)
            scale = np.abs(a_values).astype(np.float64) @ np.abs(b_values).astype(np.float64)
            assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-6), (m, k, n)
    finally:
        torch.set_num_threads(old)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_transposed_weight_products_match_float64(threads):
    """x @ w.T with w (n, k) row-major, the layout a linear layer's weight has: its B is packed
    by 16 x 16 transposes on AVX-512 (8 x 8 on AVX2), with 8 x 8 blocks and single elements
    for what is left. Depths and widths on both sides of 8, 16, 64 and the 256-deep slab, a
    weight sliced out of a wider buffer (row stride > k), against numpy in float64; every
    thread count gives the bits of one thread."""
    rng = np.random.default_rng(77)
    shapes = [(3, 16, 16), (12, 128, 512), (5, 24, 40), (7, 17, 33), (13, 31, 65),
              (49, 257, 80), (2, 8, 48), (20, 300, 129), (6, 15, 7), (97, 64, 1025)]
    old = torch.get_num_threads()
    try:
        for m, k, n in shapes:
            x = rng.standard_normal((m, k)).astype(np.float32)
            wide = rng.standard_normal((n, k + 5)).astype(np.float32)
            dense = wide[:, :k].copy()
            # (values, the same values as a tensor): contiguous, then a view with row stride k + 5
            for weight, w in ((dense, torch.from_numpy(dense)),
                              (wide[:, 3:3 + k], torch.from_numpy(wide)[:, 3:3 + k])):
                want = x.astype(np.float64) @ weight.astype(np.float64).T
                scale = np.abs(x).astype(np.float64) @ np.abs(weight).astype(np.float64).T
                torch.set_num_threads(1)
                single = (torch.from_numpy(x) @ w.T).numpy()
                assert np.all(np.abs(single - want) <= 1e-5 * scale + 1e-6), (m, k, n)
                torch.set_num_threads(threads)
                got = (torch.from_numpy(x) @ w.T).numpy()
                assert got.tobytes() == single.tobytes(), (m, k, n, threads)
                linear = torch.nn.functional.linear(torch.from_numpy(x), w).numpy()
                assert np.all(np.abs(linear - want) <= 1e-5 * scale + 1e-6), (m, k, n)
    finally:
        torch.set_num_threads(old)


def _row_task_product(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """F.linear(x, w, bias) with a bias, else x @ B for a row-major B holding w.T's values."""
    if bias is not None:
        out = torch.nn.functional.linear(torch.from_numpy(x), torch.from_numpy(w),
                                         torch.from_numpy(bias))
        return out.numpy()
    return (torch.from_numpy(x) @ torch.from_numpy(w.T.copy())).numpy()


def test_large_products_as_row_tasks_keep_their_bits_on_every_thread_count():
    """Products large enough to run as row tasks that the threads take as they go (B no wider
    than A is tall, 2^24 multiply-adds and more): several 256-deep slabs (a task adds onto the
    task of the slab before), two blocks of B's columns (1030 > 1024), a last task ending in
    a partial panel of A (rows not a multiple of 6), a transposed B with a bias (F.linear),
    and more threads than this machine may have cores. Against numpy in float64; every
    thread count gives the bits of one."""
    if not C.blas_info()["packed_kernel"]:
        pytest.skip("no packed float32 kernel on this CPU (it needs AVX2 and FMA)")
    rng = np.random.default_rng(5)
    old = torch.get_num_threads()
    try:
        for m, k, n, linear in ((300, 520, 260, False), (1100, 260, 1030, False),
                                (400, 300, 256, True)):
            x = rng.standard_normal((m, k)).astype(np.float32)
            w = rng.standard_normal((n, k)).astype(np.float32)  # B = w.T
            bias = rng.standard_normal(n).astype(np.float32)
            want = x.astype(np.float64) @ w.astype(np.float64).T
            scale = np.abs(x).astype(np.float64) @ np.abs(w).astype(np.float64).T
            if linear:
                want += bias
            torch.set_num_threads(1)
            single = _row_task_product(x, w, bias if linear else None)
            assert np.all(np.abs(single - want) <= 1e-5 * scale + 1e-5), (m, k, n)
            for threads in (2, 3, 4):
                torch.set_num_threads(threads)
                got = _row_task_product(x, w, bias if linear else None)
                assert got.tobytes() == single.tobytes(), (m, k, n, threads)
    finally:
        torch.set_num_threads(old)


def test_weight_gradient_products_keep_their_bits_on_every_thread_count():
    """g.T @ x, a linear layer's weight gradient: A is a transposed view (its panels gather
    six floats from each depth row, prefetched some rows ahead), the depth is long (several
    256-deep slabs) and the threads split the output by rows where a column split would make
    each gather all of A. Heights around the 6-row panel (a last partial panel, fewer rows
    than one panel), widths around the 16/64-column panel, a gradient sliced out of a wider
    buffer, and products both below and above the row-task size. Against numpy in float64;
    every thread count gives the bits of one."""
    if not C.blas_info()["packed_kernel"]:
        pytest.skip("no packed float32 kernel on this CPU (it needs AVX2 and FMA)")
    rng = np.random.default_rng(9)
    old = torch.get_num_threads()
    try:
        for tokens, n, k in ((768, 128, 128), (768, 65, 128), (770, 130, 37), (257, 13, 515),
                             (513, 5, 40), (768, 128, 512), (600, 389, 131)):
            wide = rng.standard_normal((tokens, n + 3)).astype(np.float32)
            g_values = wide[:, 1:1 + n]
            x_values = rng.standard_normal((tokens, k)).astype(np.float32)
            g, x = torch.from_numpy(wide)[:, 1:1 + n], torch.from_numpy(x_values)
            want = g_values.astype(np.float64).T @ x_values.astype(np.float64)
            scale = np.abs(g_values).astype(np.float64).T @ np.abs(x_values).astype(np.float64)
            torch.set_num_threads(1)
            single = (g.T @ x).numpy()
            assert np.all(np.abs(single - want) <= 1e-5 * scale + 1e-5), (tokens, n, k)
            for threads in (2, 3):
                torch.set_num_threads(threads)
                got = (g.T @ x).numpy()
                assert got.tobytes() == single.tobytes(), (tokens, n, k, threads)
    finally:
        torch.set_num_threads(old)


def _linear(x, w, bias):
    import torch.nn.functional as F

    return F.linear(x, w, bias)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vector_products_match_float64_and_keep_their_bits(dtype):
    """Products with one output row or column (dot, matrix-vector, vector-matrix, batched
    matrix-vector, a linear layer on one sample or with one output feature) take their own
    loops instead of padded GEMM tiles: against numpy in float64, over depths around the 32
    lanes, contiguous, transposed and sliced operands; every thread count gives the bits of
    one thread."""
    rng = np.random.default_rng(5)
    tol = 1e-5 if dtype == np.float32 else 1e-12

    def arr(*shape):
        return rng.standard_normal(shape).astype(dtype)

    cases = []
    for k in (1, 7, 31, 32, 33, 300, 4097):
        v, u = arr(k), arr(k)
        m_rows, m_cols = arr(45, k), arr(k, 45)
        wide = arr(45, k + 3)
        cases += [
            ("dot", lambda v=v, u=u: torch.from_numpy(v).dot(torch.from_numpy(u)),
             v.astype(np.float64) @ u),
            ("mv", lambda m=m_rows, v=v: torch.from_numpy(m) @ torch.from_numpy(v),
             m_rows.astype(np.float64) @ v),
            ("mv transposed", lambda m=m_cols, v=v: torch.from_numpy(m).T @ torch.from_numpy(v),
             m_cols.astype(np.float64).T @ v),
            ("vm", lambda m=m_cols, v=v: torch.from_numpy(v) @ torch.from_numpy(m),
             v.astype(np.float64) @ m_cols),
            ("vm sliced",
             lambda w=wide, v=v, k=k: torch.from_numpy(v) @ torch.from_numpy(w)[:, 2:2 + k].T,
             v.astype(np.float64) @ wide[:, 2:2 + k].T),
            ("bmm n=1", lambda m=m_rows, v=v: torch.from_numpy(np.stack([m, m[::-1].copy()]))
             @ torch.from_numpy(np.stack([v, -v]))[..., None],
             np.stack([m_rows @ v.astype(np.float64),
                       m_rows[::-1] @ -v.astype(np.float64)])[..., None]),
        ]
        w1, b1 = arr(1, k), arr(1)
        cases.append(("linear n=1", lambda m=m_rows, w=w1, b=b1: _linear(
            torch.from_numpy(m), torch.from_numpy(w), torch.from_numpy(b)),
            m_rows.astype(np.float64) @ w1.T.astype(np.float64) + b1))
        w, b = arr(70, k), arr(70)
        cases.append(("linear rows=1", lambda v=v, w=w, b=b: _linear(
            torch.from_numpy(v[None]), torch.from_numpy(w), torch.from_numpy(b)),
            v[None].astype(np.float64) @ w.T.astype(np.float64) + b))
    old = torch.get_num_threads()
    try:
        for name, product, want in cases:
            torch.set_num_threads(1)
            single = product().numpy()
            assert single.shape == np.shape(want), name
            assert np.allclose(single, want, rtol=tol, atol=tol * 10), name
            for threads in (2, 3):
                torch.set_num_threads(threads)
                assert product().numpy().tobytes() == single.tobytes(), (name, threads)
    finally:
        torch.set_num_threads(old)
