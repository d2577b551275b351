"""``torch.multiprocessing``: Python's :mod:`multiprocessing`, plus PyTorch's process launcher.

Everything :mod:`multiprocessing` has is here under the same names (``Process``, ``Queue``,
``get_context``, ``set_start_method``...). On top of it: :func:`spawn` and
:func:`start_processes` (start ``nprocs`` processes running ``fn(i, *args)``, and raise in the
parent the first one's error with its traceback) and tensors that travel through shared
memory: importing this module registers reductions with :mod:`multiprocessing`'s pickler, so a
CPU tensor, storage or ``nn.Parameter`` put on any queue or pipe, or passed to a process, is
moved into shared memory and the receiver maps the same bytes (writes on one side are seen on
the other). How the memory is passed and freed is the sharing strategy
(:func:`set_sharing_strategy`; ``_shared_memory`` explains both).
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import *  # noqa: F403  (the whole of multiprocessing, as PyTorch re-exports)

from .reductions import init_reductions
from .spawn import (
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)

__all__ = [
    "ProcessContext", "ProcessExitedException", "ProcessRaisedException",
    "get_all_sharing_strategies", "get_sharing_strategy", "init_reductions",
    "set_sharing_strategy", "spawn",
    "start_processes", *multiprocessing.__all__,
]

# PyTorch's strategies for passing tensor memory between processes; the default on Linux.
_STRATEGIES = frozenset(("file_descriptor", "file_system"))
_strategy = "file_descriptor"


def get_all_sharing_strategies() -> set[str]:
    """The sharing strategies this platform supports."""
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    """The current sharing strategy."""
    return _strategy


def set_sharing_strategy(new_strategy: str) -> None:
    """Choose how tensors are passed between processes (one of
    :func:`get_all_sharing_strategies`)."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise ValueError(f"invalid sharing strategy {new_strategy!r}; expected one of "
                         f"{sorted(_STRATEGIES)}")
    _strategy = new_strategy


init_reductions()
