"""torch.utils.data: datasets, samplers, collation and DataLoader (in-process and workers)."""

from __future__ import annotations

import collections
import os
import re

import numpy as np
import pytest

import torch
from torch.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return {"x": torch.tensor([float(i)]), "y": i * i}


class Counting(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class Failing(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise ValueError("sample 2 is broken")
        return i


class WorkerIds(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return torch.tensor([i, info.id, os.getpid(), info.seed % 1000,
                             int(torch.randint(0, 10**6, (1,)).item())])


def test_datasets():
    ds = TensorDataset(torch.arange(5), torch.arange(5) * 2)
    assert len(ds) == 5 and [t.item() for t in ds[3]] == [3, 6]
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(torch.ones(2), torch.ones(3))
    cat = ConcatDataset([Squares(3), Squares(2)])
    assert len(cat) == 5 and cat[3]["y"] == 0 and cat[-1]["y"] == 1
    sub = Subset(Squares(10), [9, 1])
    assert len(sub) == 2 and sub[0]["y"] == 81
    stack = StackDataset(a=Squares(2), b=TensorDataset(torch.arange(2)))
    assert stack[1]["a"]["y"] == 1 and stack[1]["b"][0].item() == 1
    chain = ChainDataset([Counting(2), Counting(3)])
    assert list(chain) == [0, 1, 0, 1, 2]
    assert len(Squares(2) + Squares(3)) == 5


def test_random_split_counts_fractions_and_generator():
    g = torch.Generator().manual_seed(0)
    a, b = random_split(range(10), [7, 3], generator=g)
    assert len(a) == 7 and len(b) == 3 and sorted(list(a) + list(b)) == list(range(10))
    parts = random_split(range(11), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [6, 3, 2]  # remainders round-robin from the first
    again = random_split(range(10), [7, 3], generator=torch.Generator().manual_seed(0))
    assert list(again[0]) == list(a)
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(5), [2, 2])


def test_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = torch.Generator().manual_seed(3)
    perm = list(RandomSampler(range(6), generator=g))
    assert sorted(perm) == list(range(6))
    draws = list(RandomSampler(range(3), replacement=True, num_samples=50, generator=g))
    assert len(draws) == 50 and set(draws) <= {0, 1, 2}
    assert sorted(SubsetRandomSampler([5, 7, 9], generator=g)) == [5, 7, 9]
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0], 5, generator=g))
    assert w == [1] * 5
    assert list(BatchSampler(range(5), 2, drop_last=False)) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(range(5), 2, drop_last=True)) == [[0, 1], [2, 3]]
    assert len(BatchSampler(range(5), 2, drop_last=False)) == 3
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(range(5), 0, False)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(3), num_samples=0)


def test_default_collate_nested_structures():
    Point = collections.namedtuple("Point", "x y")
    batch = [{"a": np.array([1.0, 2.0]), "b": (1, 2.5), "c": Point(torch.ones(2), "s")}
             for _ in range(3)]
    out = default_collate(batch)
    assert out["a"].shape == (3, 2) and out["a"].dtype is torch.float64
    assert out["b"][0].tolist() == [1, 1, 1] and out["b"][0].dtype is torch.int64
    assert out["b"][1].dtype is torch.float64
    assert isinstance(out["c"], Point) and out["c"].x.shape == (3, 2) and out["c"].y == ["s"] * 3
    assert default_collate([True, False]).dtype is torch.bool
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object()])
    conv = default_convert({"a": np.arange(3), "b": [np.float32(1.5)]})
    assert isinstance(conv["a"], torch.Tensor) and isinstance(conv["b"][0], torch.Tensor)


def test_dataloader_in_process():
    dl = DataLoader(Squares(5), batch_size=2)
    batches = list(dl)
    assert len(dl) == 3 and len(batches) == 3
    assert batches[0]["x"].tolist() == [[0.0], [1.0]] and batches[2]["y"].tolist() == [16]
    assert len(list(DataLoader(Squares(5), batch_size=2, drop_last=True))) == 2
    g = torch.Generator().manual_seed(4)
    shuffled = [b["y"].item() for b in DataLoader(Squares(6), shuffle=True, generator=g)]
    assert sorted(shuffled) == [0, 1, 4, 9, 16, 25]
    unbatched = list(DataLoader(Squares(2), batch_size=None))
    assert unbatched[1]["y"] == 1 and unbatched[1]["x"].shape == (1,)
    dl = DataLoader(Squares(4), batch_sampler=[[3, 0], [1]])
    assert [b["y"].tolist() for b in dl] == [[9, 0], [1]]
    it = DataLoader(Counting(5), batch_size=2)
    assert [b.tolist() for b in it] == [[0, 1], [2, 3], [4]]
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(Squares(4), batch_size=2, batch_sampler=[[0]])
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(Squares(4), shuffle=True, sampler=[0, 1])
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(Squares(4), num_workers=-1)
    with pytest.raises(ValueError, match="expected unspecified shuffle"):
        DataLoader(Counting(3), shuffle=True)


def test_dataloader_workers_order_seeds_and_init_fn():
    inits = []
    dl = DataLoader(WorkerIds(), batch_size=2, num_workers=2,
                    worker_init_fn=lambda wid: inits.append(wid))
    rows = torch.cat(list(dl)).tolist()
    assert [r[0] for r in rows] == list(range(8))  # sampler order kept
    assert {r[1] for r in rows} == {0, 1}
    assert len({r[2] for r in rows}) == 2 and os.getpid() not in {r[2] for r in rows}
    by_worker = {r[1]: r[3] for r in rows}
    assert (by_worker[1] - by_worker[0]) % 1000 == 1  # seed = base_seed + worker id
    assert get_worker_info() is None


def test_dataloader_worker_errors_carry_the_traceback():
    dl = DataLoader(Failing(), batch_size=1, num_workers=2)
    with pytest.raises(ValueError) as err:
        list(dl)
    text = str(err.value)
    assert "Caught ValueError in DataLoader worker process" in text
    assert "sample 2 is broken" in text and "Traceback" in text


def test_dataloader_iterable_dataset_with_workers_and_persistence():
    dl = DataLoader(Counting(7), batch_size=2, num_workers=2)
    got = sorted(x for b in dl for x in b.tolist())
    assert got == list(range(7))
    persistent = DataLoader(Squares(6), batch_size=3, num_workers=2, persistent_workers=True)
    first = [b["y"].tolist() for b in persistent]
    pool = persistent._persistent
    second = [b["y"].tolist() for b in persistent]
    assert first == second == [[0, 1, 4], [9, 16, 25]]
    assert persistent._persistent is pool and all(w.is_alive() for w in pool.workers)
    early = iter(persistent)
    next(early)
    del early  # leaving an epoch early must not leak its batches into the next one
    assert [b["y"].tolist() for b in persistent] == first
    pool.shutdown()
    assert not any(w.is_alive() for w in pool.workers)


def test_dataloader_workers_shut_down_after_an_epoch():
    dl = DataLoader(Squares(4), batch_size=2, num_workers=2)
    it = iter(dl)
    next(it)
    list(it)
    import multiprocessing

    assert not [p for p in multiprocessing.active_children() if p.is_alive()]


def test_dataloader_iterators_are_pytorchs_iterator_objects():
    from torch.utils.data.dataloader import (
        _BaseDataLoaderIter,
        _MultiProcessingDataLoaderIter,
        _SingleProcessDataLoaderIter,
    )

    dl = DataLoader(Squares(5), batch_size=2)
    it = iter(dl)
    assert isinstance(it, _SingleProcessDataLoaderIter) and isinstance(it, _BaseDataLoaderIter)
    assert iter(it) is it and len(it) == 3
    first = next(it)
    assert it._num_yielded == 1 and first["y"].tolist() == [0, 1]
    it._reset(dl)  # a new pass from the start
    assert it._num_yielded == 0 and next(it)["y"].tolist() == [0, 1]
    assert [b["y"].tolist() for b in it] == [[4, 9], [16]]

    class Doubling(_SingleProcessDataLoaderIter):  # libraries override _next_data
        def _next_data(self):
            return super()._next_data()["y"] * 2

    assert [b.tolist() for b in Doubling(dl)] == [[0, 2], [8, 18], [32]]
    workers = DataLoader(Squares(4), batch_size=2, num_workers=2)
    it = iter(workers)
    assert isinstance(it, _MultiProcessingDataLoaderIter)
    assert [b["y"].tolist() for b in it] == [[0, 1], [4, 9]]


def test_persistent_workers_reuse_one_iterator_that_a_library_can_shut_down():
    # PyTorch keeps the iterator of persistent workers in loader._iterator; Lightning ends fit
    # with loader._iterator._shutdown_workers()
    from torch.utils.data import DataLoader, TensorDataset

    loader = DataLoader(TensorDataset(torch.arange(8.0)), batch_size=4, num_workers=2,
                        persistent_workers=True)
    first = iter(loader)
    assert [b.tolist() for (b,) in first] == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]
    assert iter(loader) is first is loader._iterator
    pool = loader._persistent
    assert pool is not None and pool.alive
    loader._iterator._shutdown_workers()
    assert not pool.alive and all(not w.is_alive() for w in pool.workers)
    # the next pass starts workers again
    assert [b.tolist() for (b,) in loader] == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]
    assert loader._persistent is not pool and loader._persistent.alive
    loader._iterator._shutdown_workers()


def test_dataloader_parts_under_pytorchs_module_names():
    """Programs import the DataLoader's parts from torch.utils.data._utils (fastai imports
    default_collate and default_convert from _utils.collate)."""
    from torch.utils.data import _utils
    from torch.utils.data._utils.collate import (
        collate,
        default_collate,
        default_collate_err_msg_format,
        default_collate_fn_map,
        default_convert,
    )
    from torch.utils.data._utils.pin_memory import pin_memory
    from torch.utils.data._utils.worker import WorkerInfo, get_worker_info

    assert default_collate is torch.utils.data.default_collate
    assert default_convert is torch.utils.data.default_convert
    assert get_worker_info is torch.utils.data.get_worker_info and get_worker_info() is None
    assert callable(pin_memory) and WorkerInfo(0, 1, 5, None).seed == 5
    assert _utils.MP_STATUS_CHECK_INTERVAL > 0 and _utils.IS_WINDOWS is False

    # A program's own element type, collated by a function registered in a copy of the map.
    class Box:
        def __init__(self, value):
            self.value = value

    def collate_boxes(batch, *, collate_fn_map=None):
        return sum(box.value for box in batch)

    fn_map = {**default_collate_fn_map, Box: collate_boxes}
    batch = collate([{"box": Box(2), "x": torch.ones(2)}, {"box": Box(3), "x": torch.zeros(2)}],
                    collate_fn_map=fn_map)
    assert batch["box"] == 5
    assert batch["x"].tolist() == [[1.0, 1.0], [0.0, 0.0]]
    with pytest.raises(TypeError, match=re.escape(default_collate_err_msg_format.format(Box))):
        default_collate([Box(1), Box(2)])


class _LibraryLoader:
    """A library's own loader object (fastai builds one) with the DataLoader's attributes,
    driving PyTorch's iterator classes: an iterable 'dataset' of ready batches, no automatic
    collation, an endless index sampler."""

    _dataset_kind = 1  # _DatasetKind.Iterable
    _auto_collation = False
    drop_last = False
    pin_memory = False
    timeout = 0
    generator = None
    prefetch_factor = 2
    persistent_workers = False
    in_order = True
    multiprocessing_context = None
    worker_init_fn = None

    def __init__(self, num_workers):
        import itertools

        self.num_workers = num_workers
        self.dataset = self
        self._index_sampler = itertools.count()
        self.collate_fn = lambda batch: batch

    def __iter__(self):
        info = get_worker_info()
        first, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter([torch.full((2,), float(i)) for i in range(first, 6, step)])


@pytest.mark.parametrize("num_workers", [0, 2])
def test_iterators_run_a_libraries_own_loader_object(num_workers):
    from torch.utils.data.dataloader import (
        _DatasetKind,
        _MultiProcessingDataLoaderIter,
        _SingleProcessDataLoaderIter,
    )

    assert (_DatasetKind.Map, _DatasetKind.Iterable) == (0, 1)
    iterator = (_MultiProcessingDataLoaderIter if num_workers else
                _SingleProcessDataLoaderIter)(_LibraryLoader(num_workers))
    got = sorted(batch[0].item() for batch in iterator)
    assert got == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_fetchers_read_map_and_iterable_datasets():
    from torch.utils.data._utils.fetch import _IterableDatasetFetcher, _MapDatasetFetcher

    mapped = _MapDatasetFetcher([10, 20, 30, 40], True, list, False)
    assert mapped.fetch([3, 1]) == [40, 20]
    assert _MapDatasetFetcher([10, 20], False, lambda x: x + 1, False).fetch(1) == 21
    stream = _IterableDatasetFetcher(range(5), True, list, True)
    assert stream.fetch([None] * 2) == [0, 1] and stream.fetch([None] * 2) == [2, 3]
    with pytest.raises(StopIteration):  # one left, and drop_last drops a short batch
        stream.fetch([None] * 2)
    with pytest.raises(StopIteration):
        stream.fetch([None] * 2)
