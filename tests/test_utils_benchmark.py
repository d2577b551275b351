"""torch.utils.benchmark: Timer / Measurement / Compare, driven by a fake clock so that every
expected value is exact (no real timing is asserted)."""

import numpy as np
import pytest

import torch
import torch.utils.benchmark as benchmark
from torch.utils.benchmark.utils.common import Measurement as HomeMeasurement
from torch.utils.benchmark.utils.timer import Timer as HomeTimer


class FakeClock:
    """A clock that only moves when the timed statement calls ``step()``, by the next of
    ``steps`` (cycled)."""

    def __init__(self, steps):
        self.now = 0.0
        self.steps = list(steps)
        self.calls = 0

    def __call__(self):
        return self.now

    def step(self):
        self.now += self.steps[self.calls % len(self.steps)]
        self.calls += 1


def test_public_names_and_homes():
    assert benchmark.Timer is HomeTimer and benchmark.Measurement is HomeMeasurement
    assert callable(benchmark.Compare)


def test_timeit_runs_number_executions():
    clock = FakeClock([2e-6])
    t = benchmark.Timer("clock.step()", timer=clock, globals={"clock": clock})
    m = t.timeit(number=50)
    assert isinstance(m, benchmark.Measurement)
    assert m.number_per_run == 50
    assert m.raw_times == pytest.approx([100e-6])
    assert m.times == pytest.approx([2e-6])
    assert m.mean == pytest.approx(2e-6) and m.median == pytest.approx(2e-6)
    assert clock.calls == 51  # one warm-up execution, then 50


def test_statistics_match_numpy():
    raw = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]
    spec = benchmark.TaskSpec(stmt="f()", setup="pass", label="L", sub_label="s",
                              description="d", num_threads=2)
    m = benchmark.Measurement(number_per_run=4, raw_times=raw, task_spec=spec)
    per_exec = np.array(raw) / 4
    assert m.times == pytest.approx(per_exec.tolist())
    assert m.mean == pytest.approx(per_exec.mean())
    assert m.median == pytest.approx(np.median(per_exec))
    assert m.iqr == pytest.approx(np.percentile(per_exec, 75) - np.percentile(per_exec, 25))
    assert (m.label, m.sub_label, m.description, m.num_threads, m.stmt) == (
        "L", "s", "d", 2, "f()")
    text = repr(m)
    assert "Median:" in text and "IQR:" in text and "8 measurements, 4 runs per measurement" in text
    assert m.has_warnings  # IQR far over 10% of the median


def test_blocked_autorange_spends_at_least_min_run_time():
    clock = FakeClock([1e-3])
    seen = []
    t = benchmark.Timer("clock.step()", timer=clock, globals={"clock": clock})
    m = t.blocked_autorange(callback=lambda n, s: seen.append((n, s)), min_run_time=0.05)
    assert m.times == pytest.approx([1e-3] * len(m.times))
    assert sum(m.raw_times) >= 0.05
    assert len(seen) == len(m.raw_times) and all(n == m.number_per_run for n, _ in seen)


def test_adaptive_autorange_stops_when_stable_or_at_max():
    clock = FakeClock([1e-3])
    m = benchmark.Timer("clock.step()", timer=clock, globals={"clock": clock}) \
        .adaptive_autorange(min_run_time=0.01)
    assert len(m.times) >= 3 and m.iqr == pytest.approx(0.0)
    noisy = FakeClock([1e-3, 5e-3, 1e-3, 9e-3, 2e-3])
    m = benchmark.Timer("clock.step()", timer=noisy, globals={"clock": noisy}) \
        .adaptive_autorange(threshold=1e-9, min_run_time=0.01, max_run_time=0.2)
    assert sum(m.raw_times) >= 0.2  # never stable: ran until max_run_time


def test_statement_setup_and_globals():
    clock = FakeClock([1e-6])
    t = benchmark.Timer("y = x @ x; clock.step()", setup="x = torch.ones(2, 2)", timer=clock,
                        globals={"clock": clock})
    assert t.timeit(3).median == pytest.approx(1e-6)
    with pytest.raises(ValueError):
        benchmark.Timer(lambda: None)


def test_num_threads_restored():
    before = torch.get_num_threads()
    clock = FakeClock([1e-6])
    benchmark.Timer("clock.step()", timer=clock, globals={"clock": clock},
                    num_threads=1).timeit(2)
    assert torch.get_num_threads() == before


def _m(median_s, sub_label, description, label="matmul"):
    spec = benchmark.TaskSpec(stmt="s", setup="pass", label=label, sub_label=sub_label,
                              description=description)
    return benchmark.Measurement(1, [median_s] * 5, spec)


def test_compare_table(capsys):
    results = [_m(12e-6, "64", "plait"), _m(30e-6, "64", "ref"), _m(250e-6, "256", "plait")]
    compare = benchmark.Compare(results)
    compare.print()
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "matmul" in lines[0]
    assert "plait" in lines[1] and "ref" in lines[1]
    assert lines[1].index("plait") < lines[1].index("ref")
    row64 = next(line for line in lines if line.strip().startswith("64 |"))
    row256 = next(line for line in lines if line.strip().startswith("256 |"))
    assert "12.0" in row64 and "30.0" in row64 and "250.0" in row256
    assert "Times are in microseconds (us)." in out
    assert str(compare) == out.rstrip("\n") + "\n"
