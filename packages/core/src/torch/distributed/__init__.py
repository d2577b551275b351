"""``torch.distributed``: importable, and answering as PyTorch built without distributed
support does. The distributed engine is a later piece of work; until it lands
:func:`is_available` is False, :func:`is_initialized` False, and every call that would need a
process group raises a :class:`RuntimeError` saying so. The enums and the ``group`` namespace
libraries name at import time (``ReduceOp.SUM`` as a default argument) exist."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, NoReturn

__all__ = ["Backend", "ReduceOp", "group", "is_available", "is_gloo_available",
           "is_initialized", "is_mpi_available", "is_nccl_available",
           "is_torchelastic_launched"]

_NOT_BUILT = ("torch.distributed is not available in Plait yet (is_available() is False): "
              "{name}() needs a process group, and the distributed engine is not built")


def is_available() -> bool:
    """Whether the distributed package is built in: not yet in Plait."""
    return False


def is_initialized() -> bool:
    """Whether a default process group exists: never without the distributed package."""
    return False


def is_nccl_available() -> bool:
    """Whether the NCCL backend is built in."""
    return False


def is_gloo_available() -> bool:
    """Whether the Gloo backend is built in."""
    return False


def is_mpi_available() -> bool:
    """Whether the MPI backend is built in."""
    return False


def is_torchelastic_launched() -> bool:
    """Whether this process was started by torchelastic (``torchrun``)."""
    import os

    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


class ReduceOp(enum.Enum):
    """How a collective combines the processes' tensors."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    PREMUL_SUM = "premul_sum"


class Backend(str):
    """A process-group backend name (``Backend.GLOO == "gloo"``)."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    def __new__(cls, name: str) -> Backend:
        return super().__new__(cls, name.lower())


class group:  # PyTorch's lower-case name
    """The default process group (``group.WORLD``): none without the distributed package."""

    WORLD: Any = None


# What needs a process group: each raises the error above.
_NEED_PROCESS_GROUP = (
    "init_process_group", "destroy_process_group", "new_group", "get_rank", "get_world_size",
    "get_backend", "get_process_group_ranks", "barrier", "monitored_barrier", "broadcast",
    "broadcast_object_list", "all_reduce", "reduce", "all_gather", "all_gather_into_tensor",
    "all_gather_object", "gather", "gather_object", "scatter", "scatter_object_list",
    "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "send",
    "recv", "isend", "irecv", "get_global_rank", "get_group_rank", "new_subgroups",
    "init_device_mesh",
)


def _needs_process_group(name: str) -> Callable[..., NoReturn]:
    def unavailable(*args: Any, **kwargs: Any) -> NoReturn:
        raise RuntimeError(_NOT_BUILT.format(name=name))

    unavailable.__name__ = unavailable.__qualname__ = name
    unavailable.__doc__ = f"Needs a process group: raises RuntimeError without one ({name})."
    return unavailable


globals().update({name: _needs_process_group(name) for name in _NEED_PROCESS_GROUP})
