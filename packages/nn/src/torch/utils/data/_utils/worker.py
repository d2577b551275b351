"""What a DataLoader worker process knows about itself: ``get_worker_info()``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["WorkerInfo", "get_worker_info"]

_WORD = 2**32


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: its id, the number of workers, its
    seed and its copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The current worker's id, count, seed and dataset copy; ``None`` in the main process."""
    return _worker_info


def _set_worker_info(info: WorkerInfo) -> None:
    """Called once in each worker process before it loads anything."""
    global _worker_info
    _worker_info = info


def _generate_state(base_seed: int, worker_id: int) -> list[int]:
    """The numpy seed of worker ``worker_id`` of a loader whose base seed is ``base_seed``
    (PyTorch's: four 32-bit words of numpy's ``SeedSequence`` over the worker id and the two
    halves of the base seed), so that workers draw different numpy streams, the same ones as
    under PyTorch for the same seeds."""
    import numpy as np

    entropy = [worker_id % _WORD, base_seed % _WORD, (base_seed // _WORD) % _WORD]
    return [int(w) for w in np.random.SeedSequence(entropy).generate_state(4)]
