"""Every row of the op database, on Plait alone: invariants that need no external oracle.

For each row, every sample and every dtype: the function and the method agree; ``out=`` writes
the same values into the given tensor and returns it; the in-place method gives the same values
(or refuses when the result cannot be cast to the input's dtype); non-contiguous inputs give the
same values as contiguous ones; the toy plugin device (CPU fallback for what it lacks) gives the
CPU's values; the meta device gives the CPU's shapes and dtypes. Rows marked ``random`` are
compared on dtype and shape only, plus determinism under a fixed seed. Real PyTorch is the
oracle of the parity session (``nox -s parity``), not of these tests.
"""

from __future__ import annotations

import warnings
from collections import Counter
from typing import Any

import pytest

import torch
from torch.testing import _opdb, assert_close
from torch.testing._opdb import OpInfo, SampleInput

ROWS: list[OpInfo] = _opdb.load()


def _ids(rows: list[OpInfo]) -> list[str]:
    seen: Counter[str] = Counter()
    ids = []
    for row in rows:
        seen[row.name] += 1
        ids.append(row.name if seen[row.name] == 1 else f"{row.name}#{seen[row.name]}")
    return ids


IDS = _ids(ROWS)
TOY_DTYPES_EXCLUDED = {"bfloat16"}  # the toy device has no bfloat16 kernels


def _params(predicate: Any = None) -> list[Any]:
    return [pytest.param(row, id=i) for row, i in zip(ROWS, IDS)
            if predicate is None or predicate(row)]


# -- baselines: each (row, dtype) runs once through the function; checks reuse the outcome ----

# (id(row), dtype) -> (row, outcomes); holding the row keeps its id from being reused
_BASELINES: dict[tuple[int, str], tuple[OpInfo, list[tuple[SampleInput, Any]]]] = {}


class Raised:
    """A sample whose baseline call raised."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
        self.category = _opdb.exception_category(exc)


def _run(fn: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn()
        except Exception as exc:  # the outcome under test: compared, never swallowed
            return Raised(exc)


def baseline(row: OpInfo, dtype: str) -> list[tuple[SampleInput, Any]]:
    key = (id(row), dtype)
    if key not in _BASELINES:
        outcomes = []
        for sample in _opdb.samples(row, torch, dtype):
            if row.random:
                torch.manual_seed(0)
            outcomes.append((sample, _run(lambda s=sample: _opdb.call(torch, row, s))))
        _BASELINES[key] = (row, outcomes)
    return _BASELINES[key][1]


def successes(row: OpInfo, dtype: str) -> list[tuple[SampleInput, Any]]:
    return [(s, r) for s, r in baseline(row, dtype) if not isinstance(r, Raised)]


def _tol(row: OpInfo) -> dict[str, Any]:
    if row.atol is None and row.rtol is None:
        return {}
    return {"atol": row.atol or 0.0, "rtol": row.rtol or 0.0}


def same(actual: Any, expected: Any, row: OpInfo, where: str, exact: bool = True,
         check_stride: bool = False) -> None:
    """``actual`` matches ``expected`` leaf by leaf (values skipped for random rows)."""
    a, e = _opdb.leaves(actual), _opdb.leaves(expected)
    assert type(actual) is type(expected) or not isinstance(expected, (tuple, list)), (
        f"{where}: result type {type(actual).__name__} != {type(expected).__name__}")
    assert len(a) == len(e), f"{where}: {len(a)} results != {len(e)}"
    for i, (x, y) in enumerate(zip(a, e)):
        label = f"{where}, result {i}"
        if isinstance(y, torch.Tensor):
            assert isinstance(x, torch.Tensor), f"{label}: got {type(x).__name__}"
            if row.random:
                assert (x.shape, x.dtype) == (y.shape, y.dtype), label
                continue
            tol = {"atol": 0.0, "rtol": 0.0} if exact else _tol(row)
            assert_close(x, y, equal_nan=True, check_stride=check_stride,
                         msg=lambda m, label=label: f"{label}:\n{m}", **tol)
        elif not row.random:
            assert type(x) is type(y) and (x == y or (x != x and y != y)), (
                f"{label}: {x!r} != {y!r}")


def _dtypes(row: OpInfo, exclude: set[str] = frozenset()) -> list[str]:
    return [d for d in row.dtypes if d not in exclude]


# -- the checks --------------------------------------------------------------------------------


@pytest.mark.parametrize("row", _params())
def test_row_runs(row: OpInfo) -> None:
    """The op exists and at least one sample of each of its dtypes runs."""
    if row.function:
        _opdb.resolve(torch, row.name)
    else:
        assert row.method and hasattr(torch.Tensor, row.method), row.method
    for dtype in row.dtypes:
        outcomes = baseline(row, dtype)
        assert outcomes, f"{row.name}: no samples for {dtype}"
        if not any(not isinstance(r, Raised) for _, r in outcomes):
            first = outcomes[0][1].exc
            raise AssertionError(f"{row.name} [{dtype}]: every sample raised; first: "
                                 f"{type(first).__name__}: {first}")


@pytest.mark.parametrize("row", _params(lambda r: r.method and r.function))
def test_method_matches_function(row: OpInfo) -> None:
    for dtype in row.dtypes:
        for sample, expected in baseline(row, dtype):
            if not isinstance(sample.input, torch.Tensor):
                continue
            where = f"{row.name} [{dtype}] {sample.name!r}: method {row.method}"
            if row.random:
                torch.manual_seed(0)
            got = _run(lambda s=sample: _opdb.call_method(row, s))
            if isinstance(expected, Raised) or isinstance(got, Raised):
                assert (isinstance(expected, Raised) and isinstance(got, Raised)
                        and got.category == expected.category), (
                    f"{where}: function gave {_describe(expected)}, method {_describe(got)}")
                continue
            same(got, expected, row, where, check_stride=row.view)


def _describe(outcome: Any) -> str:
    if isinstance(outcome, Raised):
        return f"{type(outcome.exc).__name__}({outcome.exc})"
    return "a result"


def _empty_like(t: torch.Tensor, zero: bool = False) -> torch.Tensor:
    return torch.empty((0,) if zero else t.shape, dtype=t.dtype)


@pytest.mark.parametrize("row", _params(lambda r: r.supports_out and r.function))
def test_out(row: OpInfo) -> None:
    for dtype in row.dtypes:
        for sample, expected in successes(row, dtype):
            where = f"{row.name} [{dtype}] {sample.name!r}: out="
            single = isinstance(expected, torch.Tensor)
            variants = [False, True] if single else [False]
            for zero in variants:
                if single:
                    out: Any = _empty_like(expected, zero)
                else:
                    out = tuple(_empty_like(t) for t in expected)
                if row.random:
                    torch.manual_seed(0)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # deprecated ops (torch.range) still count
                    got = _opdb.call(torch, row, sample, out=out)
                if single:
                    assert got is out, f"{where}: did not return the out tensor"
                else:
                    assert all(g is o for g, o in zip(got, out)), f"{where}: not the outs"
                same(out, expected, row, where + (" (resized from 0 elements)" if zero else ""))


@pytest.mark.parametrize("row", _params(lambda r: r.inplace))
def test_inplace(row: OpInfo) -> None:
    for dtype in row.dtypes:
        for sample, expected in successes(row, dtype):
            if not (isinstance(sample.input, torch.Tensor) and isinstance(expected, torch.Tensor)):
                continue
            where = f"{row.name} [{dtype}] {sample.name!r}: in-place {row.inplace}"
            target = sample.input.clone()
            allowed = (torch.can_cast(expected.dtype, target.dtype)
                       and tuple(expected.shape) == tuple(target.shape))
            if row.random:
                torch.manual_seed(0)
            got = _run(lambda s=sample, t=target: _opdb.call_inplace(row, s, t))
            if not allowed:
                assert isinstance(got, Raised), (
                    f"{where}: a {expected.dtype} result of shape {tuple(expected.shape)} was "
                    f"written into a {target.dtype} input of shape {tuple(target.shape)}")
                continue
            if isinstance(got, Raised) and expected.dtype != target.dtype:
                continue  # e.g. float_power_ insists on its result dtype: refusing is fine
            assert not isinstance(got, Raised), f"{where}: raised {_describe(got)}"
            assert got is target, f"{where}: did not return self"
            same(target, expected.to(target.dtype), row, where)


def noncontiguous(t: torch.Tensor) -> torch.Tensor:
    """The same values in a strided view (every other element of a wider tensor)."""
    if t.dim() == 0 or t.numel() < 2:
        return t
    shape = tuple(t.shape)
    wide = torch.empty(shape[:-1] + (2 * shape[-1],), dtype=t.dtype)
    view = wide[..., ::2]
    view.copy_(t)
    return view


# Ops whose results depend on the inputs' strides by definition, for rows that do not say so.
LAYOUT_DEPENDENT = {"as_strided", "stride", "is_contiguous", "storage_offset", "data_ptr"}


@pytest.mark.parametrize("row", _params(lambda r: not r.layout_dependent
                                        and r.name not in LAYOUT_DEPENDENT))
def test_noncontiguous_inputs(row: OpInfo) -> None:
    for dtype in row.dtypes:
        for sample, expected in successes(row, dtype):
            if not _opdb.has_tensors(torch, sample):
                continue
            strided = _opdb.map_sample(torch, sample, noncontiguous)
            where = f"{row.name} [{dtype}] {sample.name!r}: non-contiguous inputs"
            if row.random:
                torch.manual_seed(0)
            got = _run(lambda s=strided: _opdb.call(torch, row, s))
            if isinstance(got, Raised) and row.view and got.category == "RuntimeError":
                continue  # view() of a non-contiguous tensor may legitimately be refused
            assert not isinstance(got, Raised), f"{where}: raised {_describe(got)}"
            same(got, expected, row, where, exact=False)


def _toy_available() -> bool:
    try:
        torch.empty(1, device="toy")
    except (RuntimeError, ValueError):
        return False
    return True


@pytest.mark.parametrize("row", _params())
def test_toy_device_matches_cpu(row: OpInfo) -> None:
    if not _toy_available():
        pytest.skip("the toy device plugin is not installed")
    for dtype in _dtypes(row, TOY_DTYPES_EXCLUDED):
        for sample, expected in successes(row, dtype):
            if not _opdb.has_tensors(torch, sample) or _has_bfloat16(sample):
                continue
            on_toy = _opdb.map_sample(torch, sample, lambda t: t.to("toy"))
            where = f"{row.name} [{dtype}] {sample.name!r}: toy device"
            if row.random:
                torch.manual_seed(0)
            got = _run(lambda s=on_toy: _opdb.call(torch, row, s))
            assert not isinstance(got, Raised), f"{where}: raised {_describe(got)}"
            for i, leaf in enumerate(_opdb.leaves(got)):
                if isinstance(leaf, torch.Tensor):
                    assert leaf.device.type == "toy", f"{where}, result {i} on {leaf.device}"
            back = _to_cpu(got)
            same(back, expected, row, where, exact=False)


def _has_bfloat16(sample: SampleInput) -> bool:
    found: list[Any] = []
    _opdb.map_tensors(torch, (sample.input, sample.args, sample.kwargs), found.append)
    return any(t.dtype == torch.bfloat16 for t in found)


def _to_cpu(result: Any) -> Any:
    if isinstance(result, torch.Tensor):
        return result.cpu()
    if isinstance(result, (tuple, list)):
        items = [_to_cpu(x) for x in result]
        if hasattr(result, "_make"):  # a named tuple
            return result._make(items)
        return type(result)(items)  # tuple, list, or a struct sequence (torch.return_types)
    return result


@pytest.mark.parametrize("row", _params(lambda r: r.supports_meta is not False))
def test_meta_shapes_and_dtypes(row: OpInfo) -> None:
    checked = 0
    for dtype in row.dtypes:
        for sample, expected in successes(row, dtype):
            if not _opdb.has_tensors(torch, sample):
                continue
            on_meta = _opdb.map_sample(torch, sample, lambda t: t.to("meta"))
            where = f"{row.name} [{dtype}] {sample.name!r}: meta device"
            got = _run(lambda s=on_meta: _opdb.call(torch, row, s))
            if isinstance(got, Raised):
                assert row.supports_meta is not True, f"{where}: raised {_describe(got)}"
                continue
            got_leaves, exp_leaves = _opdb.leaves(got), _opdb.leaves(expected)
            assert len(got_leaves) == len(exp_leaves), where
            for i, (x, y) in enumerate(zip(got_leaves, exp_leaves)):
                if isinstance(y, torch.Tensor):
                    assert isinstance(x, torch.Tensor) and x.device.type == "meta", (
                        f"{where}, result {i}")
                    assert (tuple(x.shape), x.dtype) == (tuple(y.shape), y.dtype), (
                        f"{where}, result {i}: {tuple(x.shape)} {x.dtype} on meta, "
                        f"{tuple(y.shape)} {y.dtype} on cpu")
            checked += 1
    if checked == 0:
        pytest.skip(f"{row.name} runs on no meta sample")


@pytest.mark.parametrize("row", _params(lambda r: r.random))
def test_random_is_deterministic_under_a_seed(row: OpInfo) -> None:
    for dtype in row.dtypes:
        for sample, expected in successes(row, dtype):
            torch.manual_seed(0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                again = _opdb.call(torch, row, sample)
            where = f"{row.name} [{dtype}] {sample.name!r}: under manual_seed(0)"
            for i, (x, y) in enumerate(zip(_opdb.leaves(again), _opdb.leaves(expected))):
                if isinstance(y, torch.Tensor):
                    assert_close(x, y, atol=0.0, rtol=0.0, equal_nan=True,
                                 msg=lambda m, i=i, w=where: f"{w}, result {i}:\n{m}")


def test_every_area_module_loads_and_rows_are_well_formed() -> None:
    """The database itself: rows name dtypes torch has, methods Tensor has."""
    for area in _opdb.AREAS:
        __import__(f"torch.testing._opdb.{area}")
    for row in ROWS:
        assert row.function or row.method, f"{row.name}: neither a function nor a method"
        for dtype in row.dtypes:
            assert isinstance(getattr(torch, dtype), torch.dtype), (row.name, dtype)
        if row.inplace:
            assert row.inplace.endswith("_"), row.inplace


# -- the harness itself: each check catches the fault it is there for --------------------------


def _pair_samples(torch: Any, dtype: str, make: Any) -> Any:
    yield SampleInput(make((3, 4), dtype), (make((3, 4), dtype),), name="pair")


def _single_samples(torch: Any, dtype: str, make: Any) -> Any:
    yield SampleInput(make((3, 4), dtype), name="single")


def _fake(monkeypatch: pytest.MonkeyPatch, fn: Any, samples: Any = _pair_samples,
          **fields: Any) -> OpInfo:
    monkeypatch.setattr(torch, "_opdb_fake", fn, raising=False)
    return OpInfo("_opdb_fake", samples, dtypes=("float32",), **fields)


def test_harness_catches_a_method_that_disagrees(monkeypatch: pytest.MonkeyPatch) -> None:
    row = _fake(monkeypatch, torch.add, method="mul")
    with pytest.raises(AssertionError, match="method mul"):
        test_method_matches_function(row)


def test_harness_catches_an_ignored_out(monkeypatch: pytest.MonkeyPatch) -> None:
    def ignores_out(a: Any, b: Any, out: Any = None) -> Any:
        return torch.add(a, b)

    with pytest.raises(AssertionError, match="did not return the out tensor"):
        test_out(_fake(monkeypatch, ignores_out, supports_out=True))


def test_harness_catches_a_wrong_inplace_method(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(AssertionError, match="in-place mul_"):
        test_inplace(_fake(monkeypatch, torch.add, inplace="mul_"))


def test_harness_catches_layout_dependent_values(monkeypatch: pytest.MonkeyPatch) -> None:
    def layout_dependent(a: Any) -> Any:
        return a.clone() if a.is_contiguous() else torch.add(a, 1)

    with pytest.raises(AssertionError, match="non-contiguous"):
        test_noncontiguous_inputs(_fake(monkeypatch, layout_dependent, _single_samples))


def test_harness_catches_a_device_that_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    if not _toy_available():
        pytest.skip("the toy device plugin is not installed")

    def device_dependent(a: Any) -> Any:
        return torch.add(a, 1) if a.device.type == "toy" else a.clone()

    with pytest.raises(AssertionError, match="toy device"):
        test_toy_device_matches_cpu(_fake(monkeypatch, device_dependent, _single_samples))


def test_harness_catches_a_wrong_meta_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    def meta_dependent(a: Any) -> Any:
        return torch.sum(a, 0) if a.device.type == "meta" else a.clone()

    with pytest.raises(AssertionError, match="meta device"):
        test_meta_shapes_and_dtypes(_fake(monkeypatch, meta_dependent, _single_samples))


def test_harness_catches_a_nondeterministic_random_op(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = iter(range(1000))

    def drifting(a: Any) -> Any:
        return torch.add(a, next(calls))

    with pytest.raises(AssertionError, match="manual_seed"):
        test_random_is_deterministic_under_a_seed(
            _fake(monkeypatch, drifting, _single_samples, random=True))


def test_harness_requires_a_sample_that_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    def always_fails(a: Any) -> Any:
        raise NotImplementedError("not yet")

    with pytest.raises(AssertionError, match="every sample raised"):
        test_row_runs(_fake(monkeypatch, always_fails, _single_samples))


# -- the parity runner's verdicts (benchmarks/parity/run.py), on hand-made records ------------


@pytest.fixture(scope="module")
def parity() -> Any:
    import importlib.util
    import pathlib
    import sys

    folder = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "parity"
    if not (folder / "run.py").exists():
        pytest.skip("benchmarks/parity is not in this checkout")
    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location("parity_run", folder / "run.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    return module


def _tensor_record(values: list[Any], dtype: str = "float32", npdtype: str = "<f4",
                   shape: tuple[int, ...] | None = None) -> dict[str, Any]:
    shape = (len(values),) if shape is None else shape
    return {"status": "ok", "repr": "t", "result": {
        "kind": "tensor", "dtype": dtype, "shape": shape, "device": "cpu",
        "values": (npdtype, shape, values)}}


def _raised(kind: str, category: str | None = None) -> dict[str, Any]:
    return {"status": "raised", "type": kind, "category": category or kind, "message": "m"}


def test_parity_verdicts(parity: Any) -> None:
    row = OpInfo("x", _single_samples)
    cmp = parity.compare_outcomes
    assert cmp(_tensor_record([1.0, 2.0]), _tensor_record([1.0, 2.0]), row) is None
    assert cmp(_tensor_record([1.0, 2.0]), _tensor_record([1.0, 2.0 + 1e-6]), row) is None
    assert "values differ" in cmp(_tensor_record([1.0, 2.0]), _tensor_record([1.0, 2.1]), row)
    assert "dtype" in cmp(_tensor_record([1.0], "float64", "<f8"), _tensor_record([1.0]), row)
    assert "shape" in cmp(_tensor_record([1.0, 2.0], shape=(2, 1)),
                          _tensor_record([1.0, 2.0]), row)
    assert cmp(_raised("IndexError"), _raised("IndexError"), row) is None
    assert "differently" in cmp(_raised("NotImplementedError"), _raised("RuntimeError"), row)
    assert "Plait raised" in cmp(_raised("TypeError"), _tensor_record([1.0]), row)
    assert "PyTorch raised" in cmp(_tensor_record([1.0]), _raised("TypeError"), row)
    # the row's tolerances replace the defaults; random rows compare dtype and shape only
    loose = OpInfo("x", _single_samples, atol=0.2, rtol=0.0)
    assert cmp(_tensor_record([1.0, 2.0]), _tensor_record([1.0, 2.1]), loose) is None
    rnd = OpInfo("x", _single_samples, random=True)
    assert cmp(_tensor_record([1.0, 2.0]), _tensor_record([5.0, 6.0]), rnd) is None
    assert cmp(_tensor_record([1.0]), _tensor_record([5.0, 6.0]), rnd) is not None


def test_parity_checks_strides_of_views_and_structure(parity: Any) -> None:
    a = {"kind": "tensor", "dtype": "int64", "shape": (2,), "stride": (1,), "device": "cpu",
         "values": ("<i8", (2,), [1, 2])}
    b = dict(a, stride=(2,))
    assert "stride" in parity.compare_results(a, b, None, False)
    pair = {"kind": "tuple", "items": [a, a]}
    assert parity.compare_results(pair, {"kind": "tuple", "items": [a]}, None, False)
    scalar = {"kind": "scalar", "type": "int", "value": 3}
    assert parity.compare_results(scalar, dict(scalar, value=4), None, False)
    assert parity.compare_results(scalar, dict(scalar, type="float", value=3.0), None, False)
