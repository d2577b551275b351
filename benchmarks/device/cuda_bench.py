"""A small CUDA benchmark that runs unchanged on Plait and on real PyTorch (whichever ``torch``
the interpreter imports), for ``cuda_check.sh``: it prints one JSON object of figures.

Each figure is the best of 7 rounds; a round times ``number`` calls between two
synchronisations, so throughput rows measure the device and the small-op row the host time
per call (the device queue absorbs the kernels). ``python cuda_bench.py [--quick]``
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import torch

ROUNDS = 7


def best(fn: Callable[[], Any], number: int) -> float:
    """Seconds per call of ``fn``: the best of :data:`ROUNDS` rounds of ``number`` calls."""
    fn()
    torch.cuda.synchronize()
    result = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        torch.cuda.synchronize()
        result = min(result, (time.perf_counter() - start) / number)
    return result


def figures(quick: bool) -> dict[str, float]:
    """Name -> figure (GB/s for memory-bound rows, GFLOP/s for matmul, us for host time)."""
    n = 1 << (24 if quick else 26)
    a = torch.ones(n, device="cuda")
    b = torch.ones(n, device="cuda")
    rows = torch.ones(4096, 4096, device="cuda")
    m = 1024 if quick else 2048
    x = torch.ones(m, m, device="cuda")
    small_a = torch.ones(4, device="cuda")
    small_b = torch.ones(4, device="cuda")
    out: dict[str, float] = {}
    out["add float32 GB/s"] = 3 * 4 * n / best(lambda: a + b, 10) / 1e9
    out["sum float32 GB/s"] = 4 * n / best(lambda: a.sum(), 10) / 1e9
    out["exp float32 GB/s"] = 2 * 4 * n / best(lambda: a.exp(), 10) / 1e9
    out["softmax 4096x4096 GB/s"] = 2 * 4 * rows.numel() / best(
        lambda: torch.softmax(rows, -1), 10) / 1e9
    out[f"matmul {m} float32 GFLOP/s"] = 2 * m**3 / best(lambda: x @ x, 3) / 1e9
    out["a + b (4 floats) host us"] = best(lambda: small_a + small_b, 2000) * 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    result: dict[str, Any] = {"torch": torch.__version__, "device": torch.cuda.get_device_name()}
    result["figures"] = figures(args.quick)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
