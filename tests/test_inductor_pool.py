"""Generated CPU kernels split their loops over the backend's thread pool (a C entry the loader
hands each library), and run serially, with the same results, when no pool is given."""

from __future__ import annotations

import ctypes
import math

import numpy as np
import pytest

import torch
import torch.nn.functional as F
from torch._inductor import config, cpp_builder
from torch._inductor.compile_fx import compile_fx
from torch.fx.experimental.proxy_tensor import make_fx

CHUNK = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
PARALLEL_FOR = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                                ctypes.c_void_p)


@pytest.fixture(autouse=True)
def _settings(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "cache_dir", str(tmp_path_factory.getbasetemp() / "pool-cache"))
    monkeypatch.setattr(config, "compile_in_background", False)
    monkeypatch.setattr(config, "cxx", "g++")
    # these tests are about generated kernels: single operators too (by default a lone
    # operator stays a library call, tests/test_inductor_schedule.py)
    monkeypatch.setattr(config, "cpu_single_op_groups", True)
    # Each test loads its libraries afresh, so the loader hands them the pool of its setting.
    cpp_builder.clear()
    yield
    cpp_builder.clear()


class FakePool:
    """A pool in Python: records each call and runs the chunks of `grain` in reverse order
    (a kernel whose chunks depend on their order, or that skips a range, gives wrong results)."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []
        self.entry = PARALLEL_FOR(self._run)

    def _run(self, n: int, grain: int, fn: int, ctx: int) -> None:
        self.calls.append((n, grain))
        chunk = CHUNK(fn)
        starts = list(range(0, n, max(grain, 1)))
        for begin in reversed(starts):
            chunk(begin, min(n, begin + grain), ctx)

    @property
    def address(self) -> int:
        return ctypes.cast(self.entry, ctypes.c_void_p).value


def _compile(fn, *inputs):
    gm = make_fx(fn)(*inputs)
    return compile_fx(gm, list(inputs))


def _library_pool(runner) -> int | None:
    """The pool pointer the runner's library holds (dlopen of the same path: the same copy)."""
    library = ctypes.CDLL(cpp_builder.library_path(cpp_builder.cache_key(runner.source)))
    getter = library.plait_inductor_pool
    getter.restype = ctypes.c_void_p
    return getter()


def _pointwise(x, y, z):
    return F.gelu(x) * y + z


def _flat(x, w):
    return x * w - 1.0


def _reductions(x):
    return (x * 2 + 1).sum(-1), (x.exp() - x).amax(-1)


def _inputs():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(1000, 300, generator=g)
    y = torch.randn(1000, 300, generator=g)
    z = torch.randn(300, generator=g)  # broadcast: the rows loop
    w = torch.randn(1000, 300, generator=g)
    return x, y, z, w


def _numpy_pointwise(x, y, z):
    x, y, z = (t.numpy().astype(np.float64) for t in (x, y, z))
    gelu = x * 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    return (gelu * y + z,)


def _numpy_flat(x, w):
    return (x.numpy().astype(np.float64) * w.numpy() - 1.0,)


def _numpy_reductions(x):
    x = x.numpy().astype(np.float64)
    return (x * 2 + 1).sum(-1), (np.exp(x) - x).max(-1)


def _check_against_numpy(got, want) -> None:
    got = got if isinstance(got, (tuple, list)) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == torch.float32
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-4, atol=1e-3)


def _run_both(pool_address: int | None, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(cpp_builder, "pool_address", lambda: pool_address)
    x, y, z, w = _inputs()
    assert x.numel() > config.parallel_threshold
    pointwise, flat = _compile(_pointwise, x, y, z), _compile(_flat, x, w)
    reductions = _compile(_reductions, x)
    _check_against_numpy(pointwise(x, y, z), _numpy_pointwise(x, y, z))
    _check_against_numpy(flat(x, w), _numpy_flat(x, w))
    _check_against_numpy(reductions(x), _numpy_reductions(x))
    compiled = [pointwise, flat, reductions]
    for graph in compiled:
        assert graph.groups and all(r.calls["compiled"] == 1 for r in graph.groups)
        assert all(_library_pool(r) == pool_address for r in graph.groups)
    return sum(len(graph.groups) for graph in compiled)


def test_large_groups_split_over_the_given_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = FakePool()
    groups = _run_both(pool.address, monkeypatch)
    assert len(pool.calls) == groups  # every group above the threshold went to the pool
    # flat elements in chunks of several thousand; rows (300 elements each) in row chunks
    assert (300_000, 16384) in pool.calls
    assert (1000, 16384 // 300) in pool.calls


def test_small_groups_stay_on_the_calling_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = FakePool()
    monkeypatch.setattr(cpp_builder, "pool_address", lambda: pool.address)
    x = torch.randn(64, 100)
    compiled = _compile(lambda a: (a * 3 + 1, (a * a).sum(-1)), x)
    got = compiled(x)
    assert pool.calls == []
    np.testing.assert_allclose(got[0].numpy(), x.numpy() * 3 + 1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1].numpy(), (x.numpy().astype(np.float64) ** 2).sum(-1),
                               rtol=1e-4)


def test_without_a_pool_kernels_run_serially(monkeypatch: pytest.MonkeyPatch) -> None:
    _run_both(None, monkeypatch)


def test_the_setting_off_gives_no_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "cpu_thread_pool", False)
    assert cpp_builder.pool_address() is None


def test_the_backend_pool_gives_eager_results(monkeypatch: pytest.MonkeyPatch) -> None:
    native = pytest.importorskip("plait_backend_cpu._C")
    address = native.parallel_for_address()
    assert cpp_builder.pool_address() == address
    threads = torch.get_num_threads()
    try:
        for count in (1, 2, 3):
            torch.set_num_threads(count)
            cpp_builder.clear()
            _run_both(address, monkeypatch)
    finally:
        torch.set_num_threads(threads)


def test_generated_source_has_no_openmp_threads() -> None:
    x, y, z, w = _inputs()
    graphs = [_compile(_pointwise, x, y, z), _compile(_flat, x, w), _compile(_reductions, x)]
    for compiled in graphs:
        for runner in compiled.groups:
            assert "omp parallel" not in runner.source
            assert "#pragma omp simd" in runner.source
            assert 'extern "C" void plait_inductor_init(' in runner.source
    assert "-fopenmp" not in cpp_builder._flags()
