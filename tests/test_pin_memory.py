"""Tensor.pin_memory / is_pinned and DataLoader(pin_memory=True), as PyTorch: pinning needs an
accelerator (the toy device counts, in the test environment); without one it raises, and the
DataLoader warns and yields unpinned batches."""

from __future__ import annotations

import collections

import pytest
from conftest import run_json

import torch
from torch.utils.data import DataLoader, Dataset

needs_accelerator = pytest.mark.skipif(
    not torch.accelerator.is_available(),
    reason="no accelerator plugin is available (the toy device provides one under nox)")

Pair = collections.namedtuple("Pair", "index name")


class Items(Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int):
        return {"x": torch.full((2,), float(i)), "pair": Pair(torch.tensor(i), "item")}


@needs_accelerator
def test_pin_memory_copies_into_memory_marked_pinned():
    x = torch.arange(6.0).reshape(2, 3).t()
    assert not x.is_pinned()
    pinned = x.pin_memory()
    assert pinned.is_pinned() and not x.is_pinned()
    assert pinned.stride() == x.stride()  # the layout is kept
    assert torch.equal(pinned, x)
    assert pinned.pin_memory() is pinned
    assert pinned.untyped_storage().is_pinned()
    grad_source = torch.ones(2, requires_grad=True)
    grad_source.pin_memory().sum().backward()  # differentiable, as a copy
    assert grad_source.grad.tolist() == [1.0, 1.0]


@needs_accelerator
def test_a_dataloader_pins_every_tensor_of_its_batches():
    batches = list(DataLoader(Items(), batch_size=2, pin_memory=True))
    assert len(batches) == 2
    for batch in batches:
        assert batch["x"].is_pinned() and batch["pair"].index.is_pinned()
        assert isinstance(batch["pair"], Pair) and batch["pair"].name == ["item", "item"]
    assert batches[1]["x"].tolist() == [[2.0, 2.0], [3.0, 3.0]]
    assert not next(iter(DataLoader(Items(), batch_size=2)))["x"].is_pinned()


def test_without_an_accelerator_pinning_raises_and_the_loader_warns():
    result = run_json("""
import json, warnings, torch
from torch.utils.data import DataLoader, TensorDataset
try:
    torch.ones(2).pin_memory()
    raised = None
except RuntimeError as error:
    raised = str(error)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    batches = [b for (b,) in DataLoader(TensorDataset(torch.ones(4, 2)), batch_size=2,
                                          pin_memory=True)]
print(json.dumps({"raised": raised, "pinned": [b.is_pinned() for b in batches],
                  "warnings": [str(w.message) for w in caught]}))
""", env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert result["raised"] == "Cannot access accelerator device when none is available."
    assert result["pinned"] == [False, False]
    assert any("no accelerator is found" in w for w in result["warnings"])
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        torch.ones(2, device="meta").pin_memory()
