"""Complex values on plait-backend-xpu (PoCL's CPU device here): every complex function,
reduction, scan and matmul runs on the device (the CPU fallback is disabled in these tests),
and agrees with numpy's complex128 functions, which serve as the independent formulas.

Skips, saying why, where no OpenCL device exists.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import torch

XC = pytest.importorskip("plait_backend_xpu._C", reason="plait-backend-xpu is not installed")
from plait_backend_xpu import kernels as xpu_kernels  # noqa: E402

COUNT, REASON = XC.device_count("all")
# PoCL (a CPU OpenCL device) counts as an xpu device here
pytestmark = [pytest.mark.skipif(COUNT == 0, reason=f"no OpenCL device: {REASON}"),
              pytest.mark.usefixtures("xpu_all_devices")]

# relative to |expected|, plus an absolute floor: complex64 within a few float ulps of the
# magnitude, complex128 within a few double ulps
TOLERANCE = {"complex64": (2e-6, 1e-6), "complex128": (1e-13, 1e-300)}



@contextlib.contextmanager
def on_device_only():
    """A block in which the CPU fallback is an error (core's switch)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TORCH_DEVICE_CPU_FALLBACK", "0")
        yield


def _sample(dtype: str, n: int = 64, scale: float = 3.0, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = rng.uniform(-scale, scale, n) + 1j * rng.uniform(-scale, scale, n)
    return values.astype(dtype)


def _close(got: np.ndarray, want: np.ndarray, dtype: str, what: str) -> None:
    rtol, atol = TOLERANCE[dtype]
    with np.errstate(invalid="ignore"):
        error = np.abs(got - want)
    allowed = atol + rtol * np.abs(want)
    bad = ~((error <= allowed) | (np.isnan(got) & np.isnan(want)) | (got == want))
    assert not bad.any(), (f"{what} ({dtype}): {int(bad.sum())} of {bad.size} off, e.g. "
                           f"{got[bad][:3]} vs {want[bad][:3]}")


def _log1p(z: np.ndarray) -> np.ndarray:
    # numpy's complex log1p is log(1 + z), which loses tiny z's digits: the series there
    series = z - z**2 / 2 + z**3 / 3 - z**4 / 4
    return np.where(np.abs(z) < 1e-3, series, np.log1p(z))


# torch function -> numpy formula on complex128 (rsqrt, reciprocal, sigmoid written out)
FUNCTIONS = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": _log1p, "sqrt": np.sqrt, "rsqrt": lambda z: 1 / np.sqrt(z),
    "reciprocal": lambda z: 1 / z, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "sigmoid": lambda z: 1 / (1 + np.exp(-z)), "sgn": lambda z: z / np.abs(z),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_functions_run_on_the_device_and_match_numpy(dtype):
    z = _sample(dtype)
    x = torch.from_numpy(z).to("xpu")
    exact = z.astype(np.complex128)
    with on_device_only():
        for name, formula in FUNCTIONS.items():
            before = sum(xpu_kernels.CALLS.values())
            got = getattr(torch, name)(x).cpu().numpy()
            assert sum(xpu_kernels.CALLS.values()) > before, name
            with np.errstate(all="ignore"):
                _close(got, formula(exact).astype(dtype), dtype, name)
        got = torch.abs(x).cpu().numpy()
        np.testing.assert_allclose(got, np.abs(exact), rtol=TOLERANCE[dtype][0])
        got = (x ** torch.from_numpy(_sample(dtype, seed=4) / 2).to("xpu")).cpu().numpy()
        _close(got, (exact ** (_sample(dtype, seed=4).astype(np.complex128) / 2)).astype(dtype),
               dtype, "pow")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_branch_cuts_and_wide_ranges_follow_numpy(dtype):
    # points on the cuts (signed zeros pick the side), far out (no overflow in the
    # intermediate squares), and tiny (no cancellation in log1p/expm1/asinh/atanh)
    zero = np.zeros(4)
    real = np.array([-3.0, -1.5, 1.5, 3.0])
    cuts = np.concatenate([real + 1j * zero, real - 1j * zero,
                           zero * 1 + 1j * real, -zero + 1j * real])
    wide = np.array([1e15 + 2e15j, -3e15 + 1e14j, 1e-6 + 2e-6j, -3e-7 + 1e-7j, 0.5 - 40j])
    z = np.concatenate([cuts, wide]).astype(dtype)
    x = torch.from_numpy(z).to("xpu")
    exact = z.astype(np.complex128)
    with on_device_only():
        for name in ("sqrt", "log", "log1p", "expm1", "asin", "acos", "atan", "asinh", "acosh",
                     "atanh", "tanh"):
            got = getattr(torch, name)(x).cpu().numpy()
            with np.errstate(all="ignore"):
                want = FUNCTIONS[name](exact).astype(dtype)
            _close(got, want, dtype, name)


def test_pow_follows_numpys_special_exponents():
    z = np.array([0j, 0j, 0j, 2 - 1j, -1.5 + 0.5j, 2 - 1j], np.complex128)
    w = np.array([2 + 0j, 0j, 1j, 0j, 3 + 0j, -2 + 0j], np.complex128)
    with on_device_only():
        got = (torch.from_numpy(z).to("xpu") ** torch.from_numpy(w).to("xpu")).cpu().numpy()
    # 0 ** 2 = 0, z ** 0 = 1, 0 ** i is NaN, integer powers by repeated products
    want = np.array([0, 1, complex("nan+nanj"), 1, (-1.5 + 0.5j) ** 3, 1 / (2 - 1j) ** 2])
    _close(got, want, "complex128", "pow")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_reductions_scans_and_matmul(dtype):
    a = _sample(dtype, 6 * 70, scale=1.0).reshape(6, 70)
    # factors of magnitude about 1, so that long products stay finite
    unit = (a / np.abs(a)).astype(dtype)
    x, u = torch.from_numpy(a).to("xpu"), torch.from_numpy(unit).to("xpu")
    b = _sample(dtype, 70 * 5, seed=5).reshape(70, 5)
    with on_device_only():
        for got, want, what in (
                (x.sum(1), a.astype(np.complex128).sum(1), "sum"),
                (x.t().sum(0), a.astype(np.complex128).sum(1), "sum of a transpose"),
                (x.sum(), a.astype(np.complex128).sum(), "full sum"),
                (x.mean(0), a.astype(np.complex128).mean(0), "mean"),
                (u.prod(1), unit.astype(np.complex128).prod(1), "prod"),
                (x.cumsum(1), a.astype(np.complex128).cumsum(1), "cumsum"),
                (u.cumprod(0), unit.astype(np.complex128).cumprod(0), "cumprod"),
                (x @ torch.from_numpy(b).to("xpu"), a.astype(np.complex128) @ b, "matmul")):
            rtol = 2e-5 if dtype == "complex64" else 1e-12
            np.testing.assert_allclose(got.cpu().numpy(), want, rtol=rtol, atol=rtol, err_msg=what)


def test_complex_compare_truth_and_casts():
    z = np.array([1 + 2j, 1 - 2j, 0j, complex("nan"), -1 + 0j], np.complex64)
    x = torch.from_numpy(z).to("xpu")
    with on_device_only():
        assert x.isnan().cpu().tolist() == [False, False, False, True, False]
        assert torch.logical_not(x).cpu().tolist() == [False, False, True, False, False]
        assert torch.isclose(x, x + 1e-9).cpu().tolist() == [True, True, True, False, True]
        assert torch.isfinite(x).cpu().tolist() == [True, True, True, False, True]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            real = x.to(torch.float32)
            as_int = x.to(torch.int32)
        assert real.cpu().tolist()[:3] == [1.0, 1.0, 0.0]
        assert as_int.cpu().tolist()[:3] == [1, 1, 0]
        assert any("discards the imaginary part" in str(w.message) for w in caught)


def _scatter_formula(init: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray,
                     reduce: str, include_self: bool) -> np.ndarray:
    """scatter_ with a reduction, element by element in index order (PyTorch's definition)."""
    out = init.astype(np.complex128)
    groups: dict[tuple[int, int], list[complex]] = {}
    for i in range(index.shape[0]):
        for j in range(index.shape[1]):
            target = (int(index[i, j]), j) if dim == 0 else (i, int(index[i, j]))
            groups.setdefault(target, []).append(complex(src[i, j]))
    for target, values in groups.items():
        values = ([complex(out[target])] if include_self else []) + values
        total = values[0]
        for v in values[1:]:
            total = total * v if reduce == "prod" else total + v
        out[target] = total / len(values) if reduce == "mean" else total
    return out


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean"])
def test_complex_scatter_reductions(reduce):
    rng = np.random.default_rng(11)
    prim = torch.backends.contract.primitive("scatter_")
    for dim, include_self in ((0, True), (1, False)):
        init = _sample("complex64", 24, scale=1.0, seed=12).reshape(4, 6)
        src = _sample("complex64", 36, scale=1.0, seed=13).reshape(6, 6)
        index = rng.integers(0, init.shape[dim], (3, 5))
        got = torch.from_numpy(init).to("xpu")
        with on_device_only():
            prim(got, dim, torch.from_numpy(index).to("xpu"), torch.from_numpy(src).to("xpu"),
                 reduce=reduce, include_self=include_self)
        want = _scatter_formula(init, dim, index, src, reduce, include_self)
        np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{reduce} dim={dim}")
