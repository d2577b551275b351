"""``nox -s bench-dist``: torch.distributed on its MPI engine, 2 ranks on this machine.

Run by ``torchrun --nproc-per-node 2 benchmarks/dist.py [--output DIR] [--quick]``. Rank 0
writes ``benchmarks/results/dist.md``:

- ``all_reduce`` (SUM, float32) of 1, 16 and 256 MiB: bus bandwidth (2 (n - 1) / n bytes per
  second, n ranks) of ``torch.distributed.all_reduce`` against mpi4py's own blocking
  ``Allreduce`` on numpy buffers of the same size, in the same run (target: at least 0.9x);
- DDP training of the examples' GPT (``examples/char_gpt.py``'s model): the step time of 2 ranks
  under ``DistributedDataParallel``, each on half the batch, against one rank's step on the same
  half batch without DDP (no communication; target: at most 1.2x). Each figure is the best of
  several rounds.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

ROOT = Path(__file__).resolve().parent.parent
MIB = 1 << 20


def _gpt_class() -> type:
    spec = importlib.util.spec_from_file_location("char_gpt", ROOT / "examples" / "char_gpt.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.GPT


def _best(fn, rounds: int, number: int) -> float:
    """Seconds per call, the best round (ranks aligned by a barrier before each round)."""
    fn()
    best = float("inf")
    for _ in range(rounds):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def _all_reduce_rows(sizes: list[int], rounds: int) -> list[tuple[str, ...]]:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    n = dist.get_world_size()
    rows = []
    for size in sizes:
        count = size // 4
        tensor = torch.ones(count)
        send = np.ones(count, dtype=np.float32)
        recv = np.empty_like(send)
        number = max(1, (64 * MIB) // size)
        plait = mpi = float("inf")
        for _ in range(rounds):  # alternating, as in _ddp_row
            plait = min(plait, _best(lambda t=tensor: dist.all_reduce(t), 1, number))
            mpi = min(mpi, _best(lambda s=send, r=recv: comm.Allreduce(s, r, op=MPI.SUM), 1,
                                 number))
        factor = 2 * (n - 1) / n * size / 1e9
        ratio = mpi / plait  # bandwidth ratio
        rows.append((f"all_reduce {size // MIB} MiB float32", f"{factor / mpi:.2f} GB/s",
                     f"{factor / plait:.2f} GB/s", f"{ratio:.2f}", ">= 0.9",
                     "yes" if ratio >= 0.9 else "no"))
    return rows


def _ddp_row(quick: bool, rounds: int) -> tuple[str, ...]:
    torch.manual_seed(0)
    layers, width, block, batch = (1, 32, 16, 4) if quick else (4, 128, 64, 12)
    gpt = _gpt_class()
    model = gpt(65, block, layers, 4, width, 0.0)
    half = batch // 2
    gen = torch.Generator().manual_seed(1 + dist.get_rank())
    idx = torch.randint(0, 65, (half, block), generator=gen)
    targets = torch.randint(0, 65, (half, block), generator=gen)

    def step_of(net: torch.nn.Module):
        opt = torch.optim.AdamW(net.parameters(), lr=1e-3)

        def step() -> None:
            logits, _ = net(idx)
            loss = F.cross_entropy(logits.view(-1, 65), targets.view(-1))
            loss.backward()
            opt.step()
            opt.zero_grad()
        return step

    # Rounds of the two alternate, so that a burst of load on this shared machine falls on
    # both alike; each figure is its best round.
    local_step, ddp_step = step_of(model), step_of(DistributedDataParallel(model))
    local = ddp = float("inf")
    for _ in range(rounds):
        local = min(local, _best(local_step, 1, 3))
        ddp = min(ddp, _best(ddp_step, 1, 3))
    ratio = ddp / local
    return (f"GPT train step ({layers} layers, {width} wide, block {block}), "
            f"2 ranks x batch {half} under DDP vs one rank's batch {half}",
            f"{local * 1e3:.2f} ms", f"{ddp * 1e3:.2f} ms", f"{ratio:.2f}", "<= 1.2",
            "yes" if ratio <= 1.2 else "no")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "results"))
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rounds = 2 if args.quick else 7
    sizes = [MIB] if args.quick else [MIB, 16 * MIB, 256 * MIB]
    rows = _all_reduce_rows(sizes, rounds)
    rows.append(_ddp_row(args.quick, rounds))
    if dist.get_rank() == 0:
        lines = [
            "# Distributed benchmarks: torch.distributed on MPI, 2 ranks",
            "",
            f"- {dist.get_world_size()} ranks started by torchrun (through mpirun) on this "
            "machine; backend requested: gloo (served by the MPI engine). "
            f"Python {sys.version.split()[0]}.",
            "- all_reduce: bus bandwidth of torch.distributed.all_reduce against mpi4py's "
            "blocking Allreduce on numpy buffers of the same size, same run; ratio = Plait's "
            "bandwidth / mpi4py's. DDP: step time ratio, 2 ranks under DDP against one "
            "rank's step on the same half batch without communication. Best of "
            f"{rounds} rounds each, the rounds of the two sides alternating.",
            "",
            "| workload | reference | Plait | ratio | target | met? |",
            "|---|---|---|---|---|---|",
            *(f"| {' | '.join(row)} |" for row in rows),
            "",
        ]
        out = Path(args.output)
        out.mkdir(parents=True, exist_ok=True)
        (out / "dist.md").write_text("\n".join(lines))
        sys.stdout.write("\n".join(lines) + f"\nwrote {out / 'dist.md'}\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
