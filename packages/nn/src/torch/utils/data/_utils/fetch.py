"""Fetchers: one batch (or one sample) of a dataset for a DataLoader, given what its sampler
yielded. A map-style dataset is indexed; an iterable one is read in order, and raises
StopIteration once it is exhausted (or would give a short last batch under ``drop_last``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["_BaseDatasetFetcher", "_IterableDatasetFetcher", "_MapDatasetFetcher"]


class _BaseDatasetFetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[..., Any],
                 drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index: Any) -> Any:
        raise NotImplementedError


class _IterableDatasetFetcher(_BaseDatasetFetcher):
    """Reads an iterable dataset: a batch of as many samples as the index batch holds, or one
    sample without automatic batching."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[..., Any],
                 drop_last: bool) -> None:
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


class _MapDatasetFetcher(_BaseDatasetFetcher):
    """Indexes a map-style dataset: ``__getitems__`` for a batch when the dataset has one."""

    def fetch(self, possibly_batched_index: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            data = getitems(possibly_batched_index)
        else:
            data = [self.dataset[i] for i in possibly_batched_index]
        return self.collate_fn(data)
