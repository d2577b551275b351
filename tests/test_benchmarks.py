"""The benchmark suite's workloads execute under Plait (``--quick``: tiny sizes, short rounds)
and return numbers, and ``run.py`` turns two result sets into the table, the markdown and the
chart. No timing assertions: speed belongs in ``nox -s bench``."""

from __future__ import annotations

import importlib.util
import math
import pathlib
import sys
from types import ModuleType

import pytest

BENCH = pathlib.Path(__file__).parent.parent / "benchmarks"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"plait_bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def workloads() -> ModuleType:
    return load("workloads")


@pytest.fixture(scope="module")
def quick_results(workloads: ModuleType) -> dict:
    return workloads.run_all(quick=True)


def test_table_covers_the_issue(workloads: ModuleType) -> None:
    names = [w.name for w in workloads.WORKLOADS]
    assert len(names) == len(set(names))
    for needle in ("a + b (4 floats)", "a + 1.0", "broadcast", "requires_grad", "add 1e7",
                   "mul 1e7", "exp 1e7", "sum 1e7", "amax 1e7", "sum (4096,1024)",
                   "amax (4096,1024)", "softmax", "layer_norm", "matmul 256", "matmul 1024",
                   "matmul 2048", "pad 1, forward", "forward+backward", "MLP", "CNN",
                   # issue 11's dispatcher rows: the four small calls and the three workloads
                   "torch.sub(a, b)", "transposed", "float32 + float64", "F.relu",
                   "LSTM-cell step", "GPT block forward+backward", "nanoGPT train step"):
        assert any(needle in n for n in names), needle
    assert all(0 < w.target <= 1.5 for w in workloads.WORKLOADS)


def test_every_workload_returns_numbers_or_names_what_is_missing(quick_results: dict,
                                                                 workloads: ModuleType) -> None:
    results = quick_results["results"]
    assert set(results) == {workloads.IMPORT} | {w.name for w in workloads.WORKLOADS}
    assert results[workloads.IMPORT]["time"] > 0
    for name, entry in results.items():
        assert "error" not in entry, (name, entry.get("error"))
        if "missing" in entry:
            assert entry["missing"], name
            continue
        assert entry["time"] > 0, name
        if name != workloads.IMPORT:
            assert math.isfinite(entry["checksum"]) and entry["scale"] >= 0, name
    assert quick_results["threads"] == 2


def test_elementwise_checksum_is_the_result(workloads: ModuleType) -> None:
    import torch

    case = workloads.small_op(lambda a, b: a + b)(True)
    total, scale = workloads.checksum([case.fn()])
    assert (total, scale) == (36.0, 36.0)
    assert workloads.checksum([(torch.tensor([-1.0, 2.0]), torch.tensor([3.0]))]) == (4.0, 6.0)


def test_missing_op_is_reported_not_raised(workloads: ModuleType) -> None:
    w = workloads.Workload("needs a ghost", "x", 1.0, workloads.layer_norm,
                           ("torch.no_such_op",))
    assert workloads.run_workload(w, True)["missing"] == "torch.no_such_op"
    assert workloads.missing_op(("torch.ops.aten.no_such_op",)) == "torch.ops.aten.no_such_op"
    assert workloads.missing_op(("torch.optim.Adam", "torch.exp")) is None

    def broken(quick: bool) -> object:
        raise ValueError("boom")

    entry = workloads.run_workload(workloads.Workload("broken", "x", 1.0, broken), True)
    assert entry["error"] == "ValueError: boom"


def fake(times: dict[str, float], checksum: float = 1.0) -> dict:
    results = {name: {"group": "g", "target": 1.0, "time": t, "checksum": checksum,
                      "scale": 1.0, "tol": 1e-4, "flops": 2e9} for name, t in times.items()}
    results["gone"] = {"group": "g", "target": 1.5, "missing": "conv2d"}
    return {"torch": "x", "numpy": "1", "python": "3.11", "threads": 2, "results": results}


def test_compare_and_render(tmp_path: pathlib.Path) -> None:
    run = load("run")
    plait = fake({"fast": 0.5, "slow": 3.0})
    ref = fake({"fast": 1.0, "slow": 1.0})
    ref["results"]["gone"] = {"group": "g", "target": 1.5, "time": 1.0, "checksum": 0.0,
                              "scale": 0.0}
    rows = {row["name"]: row for row in run.compare(plait, ref)}
    assert rows["fast"]["status"] == "yes" and rows["fast"]["ratio"] == 0.5
    assert rows["slow"]["status"] == "no: 200% over"
    assert rows["gone"]["status"] == "missing: conv2d" and rows["gone"]["ratio"] is None
    assert "GFLOP/s" in rows["fast"]["note"]
    text = run.render(plait, ref, list(rows.values()), quick=True)
    assert "| fast | 1.00 s | 500.00 ms | 0.50 | ≤ 1 | yes |" in text
    assert "Machine:" in text and "Threads:" in text and "1 of 3 targets met" in text
    assert "slow" in run.console(list(rows.values()))
    pytest.importorskip("matplotlib")
    assert run.chart(list(rows.values()), tmp_path / "cpu.png", quick=True)
    assert (tmp_path / "cpu.png").read_bytes()[:4] == b"\x89PNG"


def test_wrong_result_is_flagged() -> None:
    run = load("run")
    rows = run.compare(fake({"w": 0.1}, checksum=2.0), fake({"w": 1.0}, checksum=1.0))
    assert rows[0]["wrong"] and rows[0]["status"].startswith("WRONG RESULT")


def test_workers_alternate_and_report() -> None:
    """The worker protocol of run.py, with this interpreter on both sides."""
    run = load("run")
    plait, ref = run.measure(sys.executable, quick=True, only=["a + b (4 floats)", "import"])
    assert list(plait["results"]) == ["import torch (wall, fresh process)", "a + b (4 floats)"]
    assert list(ref["results"]) == list(plait["results"])
    rows = run.compare(plait, ref)
    assert all(row["ratio"] > 0 and not row["wrong"] for row in rows)
