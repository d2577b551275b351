"""``torch.utils.data.distributed.DistributedSampler``: each of ``num_replicas`` processes
reads its own share of a dataset, the same size for all (padded by repeating indices, or
trimmed with ``drop_last``), reshuffled per epoch with :meth:`DistributedSampler.set_epoch`."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized
from typing import Any

import torch

from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler[int]):
    """The indices of ``dataset`` that process ``rank`` of ``num_replicas`` reads."""

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        import torch.distributed as dist

        if num_replicas is None or rank is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        size = len(dataset)
        if drop_last and size % num_replicas:
            # drop the tail so that every process gets the same number of samples
            self.num_samples = math.ceil((size - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(size / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[Any]:
        size = len(self.dataset)
        if self.shuffle:  # the same permutation in every process: seeded by seed + epoch
            generator = torch.Generator()
            generator.manual_seed(self.seed + self.epoch)
            indices = torch.randperm(size, generator=generator).tolist()
        else:
            indices = list(range(size))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            missing = self.total_size - len(indices)
            repeats = math.ceil(missing / len(indices)) if indices else 0
            indices += (indices * max(repeats, 1))[:missing]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use the shuffle of ``epoch`` (call it at the start of each epoch)."""
        self.epoch = epoch
