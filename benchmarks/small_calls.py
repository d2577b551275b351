"""Small repeated calls through the dispatcher, timed under whichever ``torch`` this interpreter
imports: what each call costs above its one native kernel.

``OMP_NUM_THREADS=1 python benchmarks/small_calls.py [--rounds N] [--calls N] [--grad] [--ops]``
(``--ops``: indexing, reductions and shape ops instead of the basic calls) prints
one line per call: its name and the best of ``--rounds`` rounds of ``--calls`` calls, in
microseconds of CPU time (``time.process_time``, which a loaded machine disturbs less than wall
time). Run it under Plait and under PyTorch alternately and compare the figures of one run;
``--json`` prints them as one JSON object instead.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F


def calls(grad: bool) -> dict[str, Callable[[], Any]]:
    """The calls to time, by name, over small float tensors (``grad``: inputs require grad)."""
    a = torch.arange(4, dtype=torch.float32) + 1
    b = torch.arange(4, dtype=torch.float32) + 2
    t = (torch.arange(16, dtype=torch.float32).reshape(4, 4) + 1).t()
    d = torch.arange(4, dtype=torch.float64)
    x = torch.arange(32, dtype=torch.float32).reshape(4, 8) / 32
    m = torch.arange(64, dtype=torch.float32).reshape(8, 8) / 64
    if grad:
        for leaf in (a, b, x, m):
            leaf.requires_grad_()
        t = t.detach().requires_grad_()
    table: dict[str, Callable[[], Any]] = {
        "a + b": lambda: a + b,
        "torch.sub(a, b)": lambda: torch.sub(a, b),
        "torch.mul(a, 2.0)": lambda: torch.mul(a, 2.0),
        "t + t (transposed)": lambda: t + t,
        "float32 + float64": lambda: a + d,
        "F.relu(a)": lambda: F.relu(a),
        "torch.exp(a)": lambda: torch.exp(a),
        "torch.tanh(a)": lambda: torch.tanh(a),
        "x.sum(1)": lambda: x.sum(1),
        "x.sum(0)": lambda: x.sum(0),
        "x.mean()": lambda: x.mean(),
        "m @ m": lambda: m @ m,
        "x.view(8, 4)": lambda: x.view(8, 4),
        "x.transpose(0, 1)": lambda: x.transpose(0, 1),
        "x.reshape(-1)": lambda: x.reshape(-1),
        "F.softmax(x, -1)": lambda: F.softmax(x, -1),
    }
    if grad:
        del table["float32 + float64"]  # a float64 leaf without grad: the same as above
    return table


def op_calls(grad: bool) -> dict[str, Callable[[], Any]]:
    """Indexing, reductions and shape ops over 4..64-element tensors (``grad``: inputs require
    grad): the calls whose kernels are decompositions rather than one primitive."""
    v = torch.arange(8, dtype=torch.float32) / 8 - 0.3
    x = torch.arange(32, dtype=torch.float32).reshape(4, 8) / 32 - 0.4
    m = torch.arange(64, dtype=torch.float32).reshape(8, 8) / 64 - 0.5
    y = torch.arange(32, dtype=torch.float32).reshape(4, 8) / 16 - 1.0
    lo = torch.full((4, 8), -0.2)
    hi = torch.full((4, 8), 0.3)
    if grad:
        for leaf in (v, x, m, y):
            leaf.requires_grad_()
    rows = torch.tensor([2, 0, 3])
    picks = torch.tensor([[0, 7], [1, 6], [2, 5], [3, 4]])
    mask = x.detach() > 0
    table: dict[str, Callable[[], Any]] = {
        "x[1]": lambda: x[1],
        "x[1, 2]": lambda: x[1, 2],
        "x[:, 1:3]": lambda: x[:, 1:3],
        "x[rows]": lambda: x[rows],
        "x.gather(1, picks)": lambda: x.gather(1, picks),
        "x.index_select(0, rows)": lambda: x.index_select(0, rows),
        "m.tril()": lambda: m.tril(),
        "m.triu(1)": lambda: m.triu(1),
        "F.normalize(x)": lambda: F.normalize(x),
        "x.logsumexp(1)": lambda: x.logsumexp(1),
        "x.norm()": lambda: x.norm(),
        "vector_norm(x, dim=1)": lambda: torch.linalg.vector_norm(x, dim=1),
        "x.max(1)": lambda: x.max(1),
        "x.min(1)": lambda: x.min(1),
        "x.argmax(1)": lambda: x.argmax(1),
        "x.argmin()": lambda: x.argmin(),
        "x.masked_fill(mask, 0)": lambda: x.masked_fill(mask, 0.0),
        "torch.stack([x, y])": lambda: torch.stack([x, y]),
        "torch.cat([x, y], 1)": lambda: torch.cat([x, y], 1),
        "torch.where(mask, x, y)": lambda: torch.where(mask, x, y),
        "x.clamp(lo, hi)": lambda: x.clamp(lo, hi),
        "v.topk(3)": lambda: v.topk(3),
        "x.cumsum(1)": lambda: x.cumsum(1),
    }
    return table


def best_us(fn: Callable[[], Any], rounds: int, n: int) -> float:
    """The best of ``rounds`` rounds of ``n`` calls of ``fn``, in CPU microseconds a call."""
    for _ in range(200):
        fn()
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(n):
            fn()
        best = min(best, time.process_time() - start)
    return best / n * 1e6


def main() -> None:
    """Time every call and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--grad", action="store_true", help="inputs that require grad")
    parser.add_argument("--ops", action="store_true",
                        help="the indexing, reduction and shape ops instead of the basic calls")
    parser.add_argument("--only", default="", help="time only calls whose name holds this")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = {name: best_us(fn, args.rounds, args.calls)
               for name, fn in (op_calls if args.ops else calls)(args.grad).items()
               if args.only in name}
    if args.json:
        print(json.dumps({"torch": torch.__version__, "grad": args.grad, "us": figures}))
        return
    for name, us in figures.items():
        print(f"{name:24s} {us:7.2f}")


if __name__ == "__main__":
    main()
