"""Workloads timed under whichever ``torch`` this interpreter imports (Plait or PyTorch).

Prints one JSON object: workload name -> median seconds. ``run.py`` runs this under both and
compares. Each timing is the median of repeated runs after a warm-up.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any


def median_time(fn: Callable[[], Any], number: int, repeat: int = 7) -> float:
    """Median over ``repeat`` rounds of the mean time of ``number`` calls."""
    for _ in range(max(1, number // 10)):
        fn()
    rounds = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        rounds.append((time.perf_counter() - t0) / number)
    return statistics.median(rounds)


def import_time(runs: int = 10) -> float:
    """Median wall time of ``import torch`` in fresh processes."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        times.append(time.perf_counter() - t0)
    baseline = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        baseline.append(time.perf_counter() - t0)
    return statistics.median(times), statistics.median(baseline)


def main() -> None:
    import torch

    torch.set_num_threads(2)
    a = torch.tensor([1.0, 2.0, 3.0, 4.0])
    b = torch.tensor([5.0, 6.0, 7.0, 8.0])
    m = torch.ones(2, 4)
    ga = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    gb = torch.tensor([5.0, 6.0, 7.0, 8.0], requires_grad=True)
    n = 20000
    results = {
        "a + b (4 floats)": median_time(lambda: a + b, n),
        "a + 1.0 (4 floats)": median_time(lambda: a + 1.0, n),
        "(2,4) + (4,) broadcast": median_time(lambda: m + a, n),
        "a + b, requires_grad inputs": median_time(lambda: ga + gb, n),
        "a.sum() (4 floats)": median_time(lambda: a.sum(), n),
        "torch.zeros(4)": median_time(lambda: torch.zeros(4), n),
    }
    imp, bare = import_time()
    results["import torch (wall, fresh process)"] = imp
    results["bare python start (wall)"] = bare
    json.dump({"torch": torch.__version__, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
