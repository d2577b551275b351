"""Names libraries reach for at import or in passing (torch_geometric, lightning, torchmetrics):
``torch.ops.aten`` answering for PyTorch's operator names, operator packets, ``torch.futures``,
``torch.multiprocessing``, ``torch.PyTorchFileReader/Writer``, ``torch._C`` names, pytree node
kinds, ``torch._tensor_str.PRINT_OPTS`` and the flop counter."""

from __future__ import annotations

import collections
import io
import multiprocessing
import threading

import pytest

import torch
import torch.nn as nn


def test_aten_names_pytorch_has_are_operators_or_placeholders() -> None:
    missing = torch.ops.aten._pin_memory.default  # PyTorch has it; Plait does not (yet)
    assert missing is torch.ops.aten._pin_memory.default
    assert {missing: 1}[torch.ops.aten._pin_memory.default] == 1
    with pytest.raises(NotImplementedError, match="aten::_pin_memory"):
        missing(torch.ones(1))
    with pytest.raises(AttributeError):
        getattr(torch.ops.aten, "no_such_operator_anywhere")  # noqa: B009
    add = torch.ops.aten.add
    assert add is torch.ops.aten.add and str(add) == "aten.add"
    assert add.Tensor.overloadpacket is add
    assert "Tensor" in add.overloads()
    x = torch.ones(2)
    # a packet without a default overload picks the one the arguments fit, as PyTorch's does
    assert add(x, x).tolist() == [2.0, 2.0] and add(x, 2).tolist() == [3.0, 3.0]
    assert add(x, x, alpha=3).tolist() == [4.0, 4.0]
    with pytest.raises(TypeError, match="no overload"):
        add("a")


def test_futures_complete_once_chain_and_collect() -> None:
    fut: torch.futures.Future[int] = torch.futures.Future()
    chained = fut.then(lambda f: f.wait() * 10)
    assert not fut.done() and not chained.done()
    threading.Timer(0.01, fut.set_result, args=(4,)).start()
    assert chained.wait() == 40 and fut.value() == 4
    with pytest.raises(RuntimeError, match="completed"):
        fut.set_result(5)
    failing: torch.futures.Future[int] = torch.futures.Future()
    failing.set_exception(ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        failing.wait()
    a, b = torch.futures.Future(), torch.futures.Future()
    both = torch.futures.collect_all([a, b])
    a.set_result(1)
    assert not both.done()
    b.set_result(2)
    assert [f.value() for f in both.wait()] == [1, 2]
    assert torch.futures.wait_all([a, b]) == [1, 2]


def _write_rank(rank: int, queue: multiprocessing.Queue) -> None:
    queue.put((rank, torch.arange(3).mul(rank).tolist()))


def _fail_on_rank_one(rank: int) -> None:
    if rank == 1:
        raise ValueError("rank one failed")


def test_multiprocessing_spawn_runs_every_rank_and_reports_a_failure() -> None:
    import torch.multiprocessing as mp

    assert mp.Queue is multiprocessing.Queue or callable(mp.Queue)
    queue = mp.get_context("spawn").SimpleQueue()
    mp.spawn(_write_rank, args=(queue,), nprocs=2)
    assert sorted(queue.get() for _ in range(2)) == [(0, [0, 0, 0]), (1, [0, 1, 2])]
    with pytest.raises(mp.ProcessRaisedException, match="rank one failed"):
        mp.start_processes(_fail_on_rank_one, nprocs=2, start_method="fork")
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    with pytest.raises(ValueError):
        mp.set_sharing_strategy("carrier_pigeon")


def test_file_reader_and_writer_read_and_write_checkpoint_records() -> None:
    buffer = io.BytesIO()
    torch.save({"w": torch.arange(6, dtype=torch.float32)}, buffer)
    buffer.seek(0)
    reader = torch.PyTorchFileReader(buffer)
    assert reader.has_record("data.pkl") and "data/0" in reader.get_all_records()
    values = reader.get_storage_from_record("data/0", 6, torch.float32)
    assert values.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    out = io.BytesIO()
    writer = torch.PyTorchFileWriter(out)
    writer.write_record("data.pkl", b"payload", 7)
    writer.write_end_of_file()
    out.seek(0)
    assert torch.PyTorchFileReader(out).get_record("data.pkl") == b"payload"


def test_native_module_names_libraries_annotate_with() -> None:
    assert isinstance(torch.Tensor, torch._C._TensorMeta)
    assert issubclass(torch.Tensor, torch._C.TensorBase)
    assert torch._C._get_tracing_state() is None
    torch._C._log_api_usage_once("library.event")


def test_namedtuples_are_one_registered_node_kind() -> None:
    from torch.utils import _pytree

    Point = collections.namedtuple("Point", "x y")
    p = Point(torch.ones(1), 2)
    assert _pytree._get_node_type(p) is collections.namedtuple
    assert collections.namedtuple in _pytree.SUPPORTED_NODES
    assert _pytree._get_node_type([1]) is list and _pytree._is_leaf(3)
    leaves, spec = _pytree.tree_flatten({"p": p})
    assert leaves[1] == 2 and _pytree.tree_unflatten(leaves, spec) == {"p": p}


def test_print_options_are_readable_and_scoped() -> None:
    from torch._tensor_str import PRINT_OPTS, printoptions

    before = PRINT_OPTS.precision
    with printoptions(precision=2):
        assert PRINT_OPTS.precision == 2
        assert repr(torch.tensor([1.23456])) == "tensor([1.23])"
    assert PRINT_OPTS.precision == before


def test_flop_counter_counts_products_per_module() -> None:
    from torch.utils.flop_counter import FlopCounterMode

    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Sequential(nn.Linear(16, 4)))
    with FlopCounterMode(display=False) as counter:
        model(torch.ones(2, 8))
    # two flops per multiply-add: 2*(2*8*16) + 2*(2*16*4)
    assert counter.get_total_flops() == 2 * 2 * 8 * 16 + 2 * 2 * 16 * 4
    counts = counter.get_flop_counts()
    assert sum(counts["Sequential.0"].values()) == 2 * 2 * 8 * 16
    assert sum(counts["Sequential.2.0"].values()) == 2 * 2 * 16 * 4
    x, w = torch.ones(2, 3, 9, 9), torch.ones(5, 3, 3, 3)
    with FlopCounterMode(display=False) as counter:
        torch.nn.functional.conv2d(x, w)
    # every one of 2*5*7*7 outputs takes 3*3*3 multiply-adds
    assert counter.get_total_flops() == 2 * (2 * 5 * 7 * 7) * (3 * 3 * 3)


def test_constants_layout_names_and_to_argument_parsing() -> None:
    import math

    assert (torch.e, torch.pi, torch.inf) == (math.e, math.pi, math.inf)
    assert math.isnan(torch.nan) and torch.newaxis is None
    assert torch.ones(2)[torch.newaxis].shape == (1, 2)
    assert torch.ones(2).layout != torch.sparse_csr and torch.sparse_csr is torch.sparse_csr
    parse = torch._C._nn._parse_to
    assert parse("cpu") == (torch.device("cpu"), None, False, None)
    assert parse(torch.float16, non_blocking=True) == (None, torch.float16, True, None)
    reference = torch.ones(1, dtype=torch.float64)
    assert parse(reference)[:2] == (torch.device("cpu"), torch.float64)
    with pytest.raises(TypeError, match="invalid combination"):
        parse(colour="red")


def test_interop_threads_abi_and_variable() -> None:
    import subprocess
    import sys

    code = ("import torch; assert torch.get_num_interop_threads() >= 1; "
            "torch.set_num_interop_threads(2); assert torch.get_num_interop_threads() == 2\n"
            "try:\n    torch.set_num_interop_threads(3)\nexcept RuntimeError as e:\n"
            "    assert 'cannot set number of interop threads' in str(e)\n"
            "else:\n    raise SystemExit('set twice')")
    subprocess.run([sys.executable, "-c", code], check=True)
    assert torch.compiled_with_cxx11_abi() is True
    x = torch.ones(2)
    v = torch.autograd.Variable(x, requires_grad=True)
    assert type(v) is torch.Tensor and v is not x and v.requires_grad
    assert isinstance(x, torch.autograd.Variable) and not isinstance(3, torch.autograd.Variable)
    v.data.mul_(2)  # shares x's data
    assert x.tolist() == [2.0, 2.0]


def test_torch_future_is_the_futures_class() -> None:
    """``torch.Future`` names torch.futures.Future (captum checks isinstance against it)."""
    future = torch.futures.Future()
    assert torch.Future is torch.futures.Future and isinstance(future, torch.Future)
    future.set_result(3)
    assert future.wait() == 3
