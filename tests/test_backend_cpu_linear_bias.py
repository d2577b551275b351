"""plait-backend-cpu's float32 ``linear`` with a bias on the packed kernels, which write the
bias into each output tile as they reach it: against numpy in float64 over sizes around every
blocking boundary, the same bits for 1, 2 and 3 threads, and, for depths of one 256-deep slab,
the same bits as the product followed by a separate addition (one rounding of each)."""

from __future__ import annotations

import numpy as np
import pytest

import torch
import torch.nn.functional as F

C = pytest.importorskip("plait_backend_cpu._C", reason="plait-backend-cpu is not installed")

SIZES = [1, 5, 6, 7, 12, 13, 31, 32, 33, 48, 49, 97, 255, 256, 257, 513]


def _linear_all_threads(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> dict[int, np.ndarray]:
    old = torch.get_num_threads()
    got = {}
    try:
        for threads in (1, 2, 3):
            torch.set_num_threads(threads)
            got[threads] = F.linear(torch.from_numpy(x), torch.from_numpy(w),
                                    torch.from_numpy(b)).numpy()
    finally:
        torch.set_num_threads(old)
    return got


def test_linear_with_bias_matches_float64_and_threads_agree() -> None:
    rng = np.random.default_rng(31)
    for _ in range(60):
        rows, k, n = (int(rng.choice(SIZES)) for _ in range(3))
        batch = (2, rows) if rng.integers(0, 2) else (rows,)
        x = rng.standard_normal((*batch, k)).astype(np.float32)
        w = rng.standard_normal((n, k)).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        got = _linear_all_threads(x, w, b)
        x64, w64 = x.astype(np.float64), w.astype(np.float64)
        want = x64 @ w64.T + b
        scale = np.abs(x64) @ np.abs(w64).T + np.abs(b)
        assert got[1].shape == want.shape
        assert np.all(np.abs(got[1] - want) <= 1e-5 * scale + 1e-6), (batch, k, n)
        assert got[2].tobytes() == got[1].tobytes(), (batch, k, n)
        assert got[3].tobytes() == got[1].tobytes(), (batch, k, n)


@pytest.mark.parametrize("rows,k,n", [(96, 256, 512), (13, 100, 33), (200, 7, 70)])
def test_one_slab_linear_is_the_product_plus_the_bias(rows, k, n) -> None:
    """Within one depth slab the kernel's sum is rounded once and the bias added once, as in
    ``x @ w.T + b`` computed in two calls."""
    rng = np.random.default_rng(rows + k + n)
    x = torch.from_numpy(rng.standard_normal((rows, k)).astype(np.float32))
    w = torch.from_numpy(rng.standard_normal((n, k)).astype(np.float32))
    b = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    fused = F.linear(x, w, b).numpy()
    separate = ((x @ w.T) + b).numpy()
    assert fused.tobytes() == separate.tobytes()


def test_linear_with_bias_without_the_packed_kernels() -> None:
    """The same call with the packed kernels off (OpenBLAS or the native kernel)."""
    rng = np.random.default_rng(32)
    x = rng.standard_normal((70, 300)).astype(np.float32)
    w = rng.standard_normal((90, 300)).astype(np.float32)
    b = rng.standard_normal(90).astype(np.float32)
    C.packed_disable(True)
    try:
        got = F.linear(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)).numpy()
    finally:
        C.packed_disable(False)
    want = x.astype(np.float64) @ w.astype(np.float64).T + b
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
