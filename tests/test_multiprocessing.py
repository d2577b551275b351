"""``torch.multiprocessing``: CPU tensors, storages and parameters that travel between processes
through shared memory (both sharing strategies), ``share_memory_``/``is_shared``, a Hogwild
model trained by two processes, DataLoader workers returning shared batches, and the errors for
what cannot be shared. Children are started with ``spawn`` (a fresh interpreter), so nothing
is inherited by ``fork``."""

from __future__ import annotations

import gc
import os
import pickle
from multiprocessing.reduction import ForkingPickler

import pytest

import torch
import torch.multiprocessing as mp
from torch import nn
from torch.multiprocessing import _shared_memory
from torch.utils.data import DataLoader, TensorDataset

SPAWN = mp.get_context("spawn")
TIMEOUT = 60  # seconds a child may take to answer (a spawned interpreter imports torch)


@pytest.fixture
def strategy(request):
    """Run under the sharing strategy ``request.param``, restoring the default afterwards."""
    before = mp.get_sharing_strategy()
    mp.set_sharing_strategy(request.param)
    yield request.param
    mp.set_sharing_strategy(before)


# -- in one process -----------------------------------------------------------------------------


def test_sharing_strategies_are_pytorchs():
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    assert mp.get_sharing_strategy() == "file_descriptor"  # PyTorch's default on Linux
    with pytest.raises(ValueError, match="carrier_pigeon"):
        mp.set_sharing_strategy("carrier_pigeon")


@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"], indirect=True)
def test_share_memory_moves_the_storage_in_place(strategy):
    base = torch.arange(6.0)
    view = base[2:].view(2, 2)
    assert not base.is_shared()
    assert base.share_memory_() is base
    assert base.is_shared() and view.is_shared()
    assert base.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    view[0, 0] = 20.0  # the view made before the move still aliases the moved bytes
    assert base[2].item() == 20.0
    pointer = base.data_ptr()
    base.share_memory_()  # already shared: nothing moves
    assert base.data_ptr() == pointer


def test_new_shared_storage_and_parameters():
    storage = torch.UntypedStorage._new_shared(16)
    assert storage.is_shared() and storage.nbytes() == 16
    assert not torch.UntypedStorage(16).is_shared()
    model = nn.Linear(3, 2)
    model.weight.grad = torch.ones(2, 3)
    assert model.share_memory() is model
    assert all(t.is_shared() for t in (model.weight, model.bias, model.weight.grad))
    assert isinstance(model.weight, nn.Parameter)


def test_a_file_descriptor_segment_closes_its_descriptor_with_the_last_tensor():
    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc to count descriptors")
    gc.collect()
    before = open_fds()
    t = torch.zeros(1000).share_memory_()
    view = t[10:]
    assert open_fds() == before + 1
    del t
    gc.collect()
    assert open_fds() == before + 1  # the view keeps the memory mapped
    del view
    gc.collect()
    assert open_fds() == before


@pytest.mark.parametrize("strategy", ["file_system"], indirect=True)
def test_a_file_system_segment_is_removed_with_the_last_tensor(strategy):
    t = torch.zeros(8).share_memory_()
    path = _shared_memory.segment_of(t.untyped_storage()).name
    assert os.path.exists(path)
    del t
    gc.collect()
    assert not os.path.exists(path)


def test_what_cannot_be_shared_raises_when_pickled():
    weight = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf tensor which requires_grad"):
        ForkingPickler.dumps(weight * 2)
    with pytest.raises(RuntimeError, match="cannot share a meta tensor"):
        ForkingPickler.dumps(torch.empty(2, device="meta"))
    pytest.importorskip("plait_toy_device", reason="the toy accelerator plugin")
    with pytest.raises(RuntimeError, match=r"cannot share a toy tensor.*CUDA IPC"):
        ForkingPickler.dumps(torch.ones(2, device="toy"))


def test_plain_pickle_still_copies():
    t = torch.arange(4)
    copy = pickle.loads(pickle.dumps(t))
    copy += 1
    assert t.tolist() == [0, 1, 2, 3] and not copy.is_shared()


# -- across processes ---------------------------------------------------------------------------


def _add_one_and_answer(inbox, outbox) -> None:
    """Receive a tensor, its view, a storage and a parameter; change them in place; answer
    what arrived; then hold them until told to let go."""
    tensor, view, storage, param = inbox.get(timeout=TIMEOUT)
    tensor += 1
    storage[0] = 7
    with torch.no_grad():
        param.mul_(-1)
    outbox.send((tensor.is_shared(), view.untyped_storage() is tensor.untyped_storage(),
                 type(param).__name__, param.requires_grad, view.tolist()))
    inbox.get(timeout=TIMEOUT)  # the parent checks the memory is still there, then says go


@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"], indirect=True)
def test_a_queue_shares_tensors_storages_and_parameters_with_a_spawned_process(strategy):
    inbox = SPAWN.Queue()
    parent_end, child_end = SPAWN.Pipe()
    child = SPAWN.Process(target=_add_one_and_answer, args=(inbox, child_end))
    child.start()
    try:
        tensor = torch.zeros(5)
        storage = torch.UntypedStorage(4)
        param = nn.Parameter(torch.ones(3))
        inbox.put((tensor, tensor[3:], storage, param))
        assert parent_end.poll(TIMEOUT)
        shared, same_storage, kind, requires_grad, view = parent_end.recv()
        assert (shared, same_storage, kind, requires_grad) == (True, True, "Parameter", True)
        assert view == [1.0, 1.0]  # the child's view sees the child's write
        assert tensor.tolist() == [1.0] * 5  # ... and so does the parent
        assert storage[0] == 7
        assert param.tolist() == [-1.0, -1.0, -1.0]
        path = _shared_memory.segment_of(tensor.untyped_storage()).name
        del tensor, storage, param
        gc.collect()
        if strategy == "file_system":
            assert os.path.exists(path)  # the child still maps it
        inbox.put("go")
        child.join(TIMEOUT)
        assert child.exitcode == 0
        if strategy == "file_system":
            assert not os.path.exists(path)  # the last process let go: removed
    finally:
        if child.is_alive():
            child.kill()


def _hogwild(rank: int, model: nn.Module, steps: int) -> None:
    """Train the shared model on y = x . [1, 2, 3, 4] with plain SGD, from its own data."""
    generator = torch.Generator().manual_seed(rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    target_weight = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    for _ in range(steps):
        x = torch.randn(16, 4, generator=generator)
        loss = ((model(x) - x @ target_weight.T) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test_hogwild_two_processes_train_one_shared_model():
    torch.manual_seed(0)
    model = nn.Linear(4, 1, bias=False)
    with torch.no_grad():
        model.weight.zero_()
    model.share_memory()
    mp.spawn(_hogwild, args=(model, 25), nprocs=2)
    # Both children trained the parent's own parameter: unshared it would still be zero, and
    # one process's 25 steps alone leave it about 0.26 away from the target (run in one
    # process: 0.257 and 0.265 for each child's data; 0.016 for both one after the other).
    assert torch.allclose(model.weight, torch.tensor([[1.0, 2.0, 3.0, 4.0]]), atol=0.08)


def test_dataloader_workers_return_batches_in_shared_memory():
    data = torch.arange(24.0).view(12, 2)
    loader = DataLoader(TensorDataset(data), batch_size=4, num_workers=1,
                        multiprocessing_context="spawn")
    batches = [batch for (batch,) in loader]
    assert all(batch.is_shared() for batch in batches)
    assert torch.equal(torch.cat(batches), data)
