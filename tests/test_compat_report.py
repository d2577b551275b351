"""The compatibility report (``benchmarks/parity/compat_*.py``): the table parses into rows of
public names, Plait's side of a few rows records what happened, and the verdicts and counts
follow the records (the full report under real PyTorch is ``nox -s parity``'s ``compat``
section)."""

from __future__ import annotations

import importlib.util
import math
import pathlib
import sys
from typing import Any

import pytest

FOLDER = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "parity"


def _load(name: str, as_name: str | None = None) -> Any:
    sys.path.insert(0, str(FOLDER))  # the parity modules import their neighbours by name
    try:
        spec = importlib.util.spec_from_file_location(as_name or name, FOLDER / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[as_name or name] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(FOLDER))
    return module


@pytest.fixture(scope="module")
def parity() -> Any:
    """cases, collect and compare modules, and run.py's result comparison."""
    cases, collect, compare = (_load(n) for n in (
        "compat_cases", "compat_collect", "compat_compare"))
    run = _load("run", "parity_run")
    return cases, collect, compare, run.compare_results


def test_table_has_hundreds_of_distinct_names_in_every_area(parity):
    cases = parity[0]
    rows = cases.rows()
    assert len(rows) >= 500
    assert len({row.name for row in rows}) >= 500
    assert len({row.id for row in rows}) == len(rows)
    assert {row.name.split(".")[0] for row in rows} <= set(cases.ROOTS)
    groups = {row.group for row in rows}
    assert {"torch.fft and spectral", "torch.distributions", "nn: modules",
            "Tensor: operators and methods"} <= groups


def test_row_names_are_explicit_or_derived_from_the_call(parity):
    cases = parity[0]
    assert cases._parse("g", "torch.cumsum(x, 0)") == cases.Row("g", "torch.cumsum",
                                                                 "torch.cumsum(x, 0)")
    assert cases._parse("g", "x.masked_fill(m, 0.5)").name == "Tensor.masked_fill"
    assert cases._parse("g", "img.mH.shape").name == "Tensor.mH"
    row = cases._parse("g", "Tensor.__or__ | m | (x > 0.5)")
    assert (row.name, row.expr, row.random) == ("Tensor.__or__", "m | (x > 0.5)", False)
    row = cases._parse("g", "nn.Dropout | nn.Dropout(0.3)(x) | random")
    assert (row.name, row.expr, row.random) == ("nn.Dropout", "nn.Dropout(0.3)(x)", True)
    with pytest.raises(ValueError, match="explicit name"):
        cases._parse("g", "x[0].sum()")


def test_names_resolve_through_submodules(parity):
    resolve = parity[1].resolve
    assert resolve("F.relu") and resolve("Tensor.masked_fill") and resolve("nn.GRU")
    assert resolve("torch.nn.modules.batchnorm.BatchNorm2d")
    assert resolve("torch.utils.data.DataLoader")
    assert not resolve("torch.no_such_function")
    assert not resolve("Tensor.no_such_method")
    assert not resolve("torch.linalg.no_such_function")


def test_plait_side_records_values_missing_names_and_errors(parity):
    cases, collect = parity[0], parity[1]
    rows = [cases.Row("g", "torch.cumsum", "torch.cumsum(v, 0)"),
            cases.Row("g", "torch.no_such_function", "torch.no_such_function(v)"),
            cases.Row("g", "Tensor.reshape", "v.reshape(3)"),
            cases.Row("g", "nn.Linear", "init(nn.Linear(4, 1))(x)")]
    records = collect.collect_rows(rows)
    cumsum = records["torch.cumsum(v, 0)"]
    assert cumsum["exists"] and cumsum["status"] == "ok"
    v = [math.sin(1.7 * k + 0.9) for k in range(4)]  # compat_collect.inputs()'s v
    expected = [sum(v[: k + 1]) for k in range(4)]
    assert cumsum["result"]["values"][2] == pytest.approx(expected, rel=1e-6)
    assert records["torch.no_such_function(v)"] == {"exists": False}
    bad = records["v.reshape(3)"]
    assert bad["exists"] and bad["status"] == "raised" and bad["category"] == "RuntimeError"
    # init() writes the same parameters in any library: the j-th value of the parameter of
    # rank r by sorted name (bias, then weight) is 0.5 sin(1.7 j + 0.5 r + 0.2)
    bias = 0.5 * math.sin(0.2)
    weight = [0.5 * math.sin(1.7 * j + 0.7) for j in range(4)]
    x0 = [math.sin(1.7 * j + 0.3) for j in range(4)]
    linear = records["init(nn.Linear(4, 1))(x)"]["result"]["values"][2]
    assert linear[0][0] == pytest.approx(bias + sum(a * b for a, b in zip(weight, x0)), rel=1e-5)


def _ok(value: float, dtype: str = "float32") -> dict[str, Any]:
    return {"exists": True, "status": "ok", "repr": repr(value), "result": {
        "kind": "tensor", "dtype": dtype, "shape": (1,), "device": "cpu",
        "values": ("<f4" if dtype == "float32" else "<f8", (1,), [value])}}


def _raised(category: str) -> dict[str, Any]:
    return {"exists": True, "status": "raised", "type": category, "category": category,
            "message": "it failed"}


def test_verdicts_follow_the_two_records(parity):
    classify, compare_results = parity[2].classify, parity[3]

    def verdict(mine: dict[str, Any], ref: dict[str, Any], random: bool = False) -> str:
        return classify(mine, ref, random, compare_results)[0]

    assert verdict({"exists": False}, _ok(1.0)) == "missing"
    assert verdict(_raised("TypeError"), _ok(1.0)) == "raises"
    assert classify(_raised("TypeError"), _ok(1.0), False,
                    compare_results)[1] == "TypeError: it failed"
    assert verdict(_ok(1.0), _ok(1.0)) == "agrees"
    assert verdict(_ok(1.0 + 1e-6), _ok(1.0)) == "agrees"  # within float32 tolerance
    assert verdict(_ok(1.5), _ok(1.0)) == "exists"
    assert verdict(_ok(1.5), _ok(1.0), random=True) == "agrees"  # random: no values
    assert verdict(_ok(1.0, "float64"), _ok(1.0)) == "exists"  # dtype differs
    assert verdict(_raised("ValueError"), _raised("ValueError")) == "agrees"
    assert verdict(_raised("RuntimeError"), _raised("AssertionError")) == "exists"
    assert verdict(_ok(1.0), _raised("AssertionError")) == "exists"
    assert verdict(_ok(1.0), {"exists": False}) == "broken"


def test_summary_counts_each_status(parity):
    cases, compare = parity[0], parity[2]
    rows = [cases.Row("a", f"torch.f{k}", f"torch.f{k}()") for k in range(6)]
    mine = {"rows": {rows[0].id: _ok(1.0), rows[1].id: _ok(2.0), rows[2].id: _ok(1.0),
                     rows[3].id: _raised("TypeError"), rows[4].id: {"exists": False},
                     rows[5].id: _ok(1.0)}}
    ref = {"rows": {row.id: _ok(1.0) for row in rows[:5]} | {rows[5].id: {"exists": False}}}
    judged = compare.judge(rows, mine, ref, parity[3])
    assert [status for _, status, _ in judged] == [
        "agrees", "exists", "agrees", "raises", "missing", "broken"]
    line = compare.summary(judged, "2.13.0+cpu")
    assert line.startswith("compat: 4 of 5 names exist, 2 agree with PyTorch 2.13.0 "
                           "(1 differ, 1 raise, 1 missing;")
    assert line.endswith("; 1 broken rows")
    counts = compare.by_group(judged)["a"]
    assert (counts["agrees"], counts["exists"], counts["raises"], counts["missing"]) == (
        2, 1, 1, 1)
    markdown = "\n".join(compare.report_lines(
        judged, {"version": "plait", "seconds": 1.0}, {"version": "2.13.0", "seconds": 1.0}))
    assert "| a | 6 | 2 | 1 | 1 | 1 |" in markdown
    assert "| raises | `torch.f3` | `torch.f3()` | TypeError: it failed |" in markdown
