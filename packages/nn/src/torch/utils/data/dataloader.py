"""``DataLoader``: batches from a dataset, in the main process or in worker processes.

With ``num_workers > 0`` each worker is a process (the platform's default start method) that
receives batches of indices on its own queue and sends collated batches back on a shared one;
the main process hands out up to ``prefetch_factor`` batches per worker and yields results in
sampler order. A worker's exception comes back with its traceback and is re-raised in the main
process; workers are shut down when the iterator is exhausted, deleted or fails (and kept
between epochs with ``persistent_workers``).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import queue
import random
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch

from ._utils.collate import default_collate, default_convert
from ._utils.fetch import _IterableDatasetFetcher, _MapDatasetFetcher
from ._utils.pin_memory import pin_memory
from ._utils.worker import WorkerInfo, _generate_state, _set_worker_info, get_worker_info
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]

# PyTorch's names for the callables a DataLoader takes (libraries annotate with them)
_collate_fn_t = Callable[[list[Any]], Any]
_worker_init_fn_t = Callable[[int], None]


class _DatasetKind:
    """Map-style or iterable dataset, and the fetcher that reads each (PyTorch's names:
    libraries such as fastai drive the iterators below with a loader of their own that has
    the DataLoader's attributes)."""

    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind: int, dataset: Any, auto_collation: bool,
                       collate_fn: Callable[..., Any], drop_last: bool) -> Any:
        fetcher = _MapDatasetFetcher if kind == _DatasetKind.Map else _IterableDatasetFetcher
        return fetcher(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """The sampler of an iterable dataset: ``None`` forever (the dataset decides the end)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class _ExceptionWrapper:
    """An exception raised in a worker, carried back with its formatted traceback."""

    def __init__(self, exc: BaseException, where: str) -> None:
        self.exc_type = type(exc)
        self.message = f"Caught {type(exc).__name__} {where}.\nOriginal " + "".join(
            traceback.format_exception(type(exc), exc, exc.__traceback__))

    def reraise(self) -> None:
        try:
            err = self.exc_type(self.message)
        except Exception:
            err = RuntimeError(self.message)
        raise err


# How often the main process, waiting for a batch, checks that its workers are alive: a dead
# worker is reported within this, whatever the loader's timeout.
_STATUS_INTERVAL = 0.1


class _IterableEnd:
    """Sent by a worker whose iterable dataset is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


def _worker_loop(dataset_kind: int, dataset: Any, index_queue: Any, result_queue: Any,
                 auto_collation: bool, collate: Callable[..., Any], drop_last: bool, seed: int,
                 worker_id: int, num_workers: int,
                 init_fn: Callable[[int], None] | None) -> None:
    # Batches travel through shared memory: importing torch.multiprocessing registers its
    # reductions with the queues' pickler (a spawned worker has not imported it yet).
    import torch.multiprocessing

    torch.set_num_threads(1)  # workers must not oversubscribe the cores
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy as np

        np.random.seed(_generate_state(seed - worker_id, worker_id))
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    _set_worker_info(WorkerInfo(worker_id, num_workers, seed, dataset))
    init_error = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception as exc:
        init_error = _ExceptionWrapper(exc, f"in DataLoader worker process {worker_id}")
    fetcher = None
    if init_error is None:
        try:
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate,
                                                  drop_last)
        except Exception as exc:  # iter(dataset) failed: reported with the first batch
            init_error = _ExceptionWrapper(exc, f"in DataLoader worker process {worker_id}")
    exhausted = False
    while True:
        try:
            task = index_queue.get(timeout=5.0)
        except queue.Empty:
            if os.getppid() == 1:  # the main process died without saying goodbye
                return
            continue
        if task is None:
            return
        idx, indices = task
        if init_error is not None:
            result_queue.put((idx, init_error))
            continue
        try:
            if exhausted:
                data: Any = _IterableEnd(worker_id)
            else:
                data = fetcher.fetch(indices)
        except StopIteration:  # an iterable dataset's end (its last batch was sent)
            exhausted = True
            data = _IterableEnd(worker_id)
        except Exception as exc:
            data = _ExceptionWrapper(exc, f"in DataLoader worker process {worker_id}")
        result_queue.put((idx, data))


class DataLoader:
    """Batches of a dataset: ``DataLoader(dataset, batch_size=1, shuffle=False, ...)`` with
    PyTorch's arguments."""

    def __init__(self, dataset: Dataset[Any], batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler | Iterable[Any] | None = None,
                 batch_sampler: Sampler | Iterable[list[int]] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[list[Any]], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None,
                 generator: torch.Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers > 0 else \
            prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.generator = generator
        iterable = isinstance(dataset, IterableDataset)
        self._dataset_kind = _DatasetKind.Iterable if iterable else _DatasetKind.Map
        self._IterableDataset_len_called: int | None = None
        if iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
            # the dataset decides where the stream ends: a sampler of Nones, batched as usual
            sampler = _InfiniteConstantSampler()
            if batch_size is not None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        else:
            if sampler is not None and shuffle:
                raise ValueError("sampler option is mutually exclusive with shuffle")
            if batch_sampler is not None:
                if batch_size != 1 or shuffle or sampler is not None or drop_last:
                    raise ValueError("batch_sampler option is mutually exclusive with "
                                     "batch_size, shuffle, sampler, and drop_last")
                batch_size = None
                drop_last = False
            elif batch_size is None and drop_last:
                raise ValueError("batch_size=None option disables auto-batching and is "
                                 "mutually exclusive with drop_last")
            if sampler is None:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else \
                    SequentialSampler(dataset)  # type: ignore[arg-type]
            if batch_size is not None and batch_sampler is None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._persistent: _WorkerPool | None = None
        # With persistent workers, the one iterator every pass reuses (PyTorch's attribute:
        # Lightning shuts its workers down through it at the end of fit)
        self._iterator: _BaseDataLoaderIter | None = None

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        """What the iterators draw each batch's indices from (Nones for an iterable
        dataset)."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Iterable:
            n = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self) -> _BaseDataLoaderIter:
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def _get_iterator(self) -> _BaseDataLoaderIter:
        """This pass's iterator: one in the main process, or one over the worker pool."""
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)


class _BaseDataLoaderIter:
    """One pass over a :class:`DataLoader`, as PyTorch's iterator object: ``next`` gives the
    next batch (through ``_next_data``, which subclasses and libraries override), ``len`` the
    loader's length, ``_reset`` starts the pass again."""

    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._num_workers = loader.num_workers
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._collate_fn = loader.collate_fn
        self._timeout = loader.timeout
        self._index_sampler = loader._index_sampler
        self._reset(loader, first_iter=True)

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._loader = loader
        self._num_yielded = 0
        self._batches = self._start(loader)
        if loader.pin_memory:
            if torch.accelerator.is_available():
                self._batches = map(pin_memory, self._batches)
            elif first_iter:
                warnings.warn("'pin_memory' argument is set as true but no accelerator is "
                              "found, then device pinned memory won't be used.", stacklevel=5)

    def _start(self, loader: DataLoader) -> Iterator[Any]:
        raise NotImplementedError

    def _next_data(self) -> Any:
        return next(self._batches)

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        return data

    def __len__(self) -> int:
        if isinstance(self._loader, DataLoader):
            return len(self._loader)
        return len(self._index_sampler)  # a library's own loader object


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """A pass that loads every batch in the main process."""

    def _start(self, loader: DataLoader) -> Iterator[Any]:
        fetcher = _DatasetKind.create_fetcher(loader._dataset_kind, loader.dataset,
                                              loader._auto_collation, loader.collate_fn,
                                              loader.drop_last)
        for index in loader._index_sampler:
            try:
                data = fetcher.fetch(index)
            except StopIteration:  # an iterable dataset ended
                return
            yield data


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """A pass whose batches are loaded by worker processes (kept between passes with
    ``persistent_workers``)."""

    def _start(self, loader: DataLoader) -> Iterator[Any]:
        if loader.persistent_workers:
            if loader._persistent is None or not loader._persistent.alive:
                loader._persistent = _WorkerPool(loader)
            self._workers = loader._persistent
            return self._workers.epoch()
        self._workers = _WorkerPool(loader)
        return self._workers.epoch(shutdown_after=True)

    def _shutdown_workers(self) -> None:
        """Stop this pass's workers, the persistent ones included (a later pass starts new
        ones), as PyTorch's iterator does when a library ends training with it."""
        self._workers.shutdown()
        if getattr(self._loader, "_persistent", None) is self._workers:
            self._loader._persistent = None

    def __del__(self) -> None:
        try:
            self._batches.close()  # a pass left early shuts its (non-persistent) workers down
        except Exception:
            pass


class _WorkerPool:
    """The worker processes of one DataLoader (one epoch, or many when persistent)."""

    def __init__(self, loader: DataLoader) -> None:
        # (the shared-memory reductions, registered before a forked worker inherits them)
        import torch.multiprocessing

        self.loader = loader
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context()
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        base_seed = loader.generator.initial_seed() if loader.generator is not None else \
            int(torch.empty((), dtype=torch.int64).random_().item())
        self.result_queue = ctx.Queue()
        self.index_queues = []
        self.workers = []
        for wid in range(loader.num_workers):
            iq = ctx.Queue()
            w = ctx.Process(target=_worker_loop, daemon=True, args=(
                loader._dataset_kind, loader.dataset, iq, self.result_queue,
                loader._auto_collation, loader.collate_fn, loader.drop_last, base_seed + wid,
                wid, loader.num_workers, loader.worker_init_fn))
            w.start()
            self.index_queues.append(iq)
            self.workers.append(w)
        self.alive = True
        self.epoch_id = 0

    def epoch(self, shutdown_after: bool = False) -> Iterator[Any]:
        loader = self.loader
        tasks = iter(loader._index_sampler)
        n = loader.num_workers
        outstanding: dict[int, int] = {}  # task index -> worker
        done: dict[int, Any] = {}
        next_task = 0
        next_yield = 0
        finished_workers: set[int] = set()
        exhausted = False
        worker_cycle = itertools.cycle(range(n))
        # Tasks carry the epoch: a persistent pool may still return results of an epoch the
        # caller left early, and those must not be taken for this one's.
        self.epoch_id += 1
        epoch_id = self.epoch_id
        try:
            while True:
                while not exhausted and len(outstanding) < n * loader.prefetch_factor:
                    wid = next(worker_cycle)
                    if wid in finished_workers:
                        if len(finished_workers) == n:
                            exhausted = True
                            break
                        continue
                    try:
                        indices = next(tasks)
                    except StopIteration:
                        exhausted = True
                        break
                    self.index_queues[wid].put(((epoch_id, next_task), indices))
                    outstanding[next_task] = wid
                    next_task += 1
                if next_yield in done:
                    data = done.pop(next_yield)
                    next_yield += 1
                    if isinstance(data, _IterableEnd):
                        continue
                    if isinstance(data, _ExceptionWrapper):
                        # a worker's error surfaces at its batch's turn, after the batches
                        # before it, as in PyTorch
                        data.reraise()
                    yield data
                    continue
                if not outstanding:
                    return
                (task_epoch, idx), data = self._get()
                if task_epoch != epoch_id:
                    continue
                wid = outstanding.pop(idx)
                if isinstance(data, _IterableEnd):
                    finished_workers.add(wid)
                done[idx] = data
        finally:
            if shutdown_after or sys.is_finalizing():
                self.shutdown()

    def _get(self) -> tuple[int, Any]:
        """The next result of any worker. Waits in short slices, checking between them that
        the workers are alive, so that a dead worker is reported at once rather than after
        the loader's ``timeout`` (or never, without one)."""
        timeout = self.loader.timeout
        deadline = time.monotonic() + timeout if timeout else None
        while True:
            wait = _STATUS_INTERVAL
            if deadline is not None:
                wait = min(wait, max(deadline - time.monotonic(), 0.0))
            try:
                return self.result_queue.get(timeout=wait)
            except queue.Empty:
                pass
            dead = [w for w in self.workers if not w.is_alive()]
            if dead:
                pids = ", ".join(str(w.pid) for w in dead)
                codes = ", ".join(str(w.exitcode) for w in dead)
                self.shutdown()
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly "
                                   f"(exit code(s) {codes})")
            if deadline is not None and time.monotonic() >= deadline:
                self.shutdown()
                raise RuntimeError(f"DataLoader timed out after {timeout} seconds")

    def shutdown(self) -> None:
        if not self.alive:
            return
        self.alive = False
        for q in self.index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):  # queue already closed
                pass
        for w in self.workers:
            w.join(timeout=5)
            if w.is_alive():
                w.terminate()
                w.join(timeout=1)
        for q in [*self.index_queues, self.result_queue]:
            q.cancel_join_thread()
            q.close()

    def __del__(self) -> None:
        try:
            self.shutdown()
        except Exception:
            pass
