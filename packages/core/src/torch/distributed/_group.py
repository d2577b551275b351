"""Process groups: the default group that :func:`init_process_group` makes, the subgroups of
:func:`new_group`, and the questions about them (rank, size, backend, member ranks).

A :class:`ProcessGroup` is an MPI communicator whose rank ``i`` is the group's rank ``i``. Every
process of the job is an MPI process started by the engine's launcher (``torchrun`` starts the
ranks through ``mpirun``; ``mpirun`` may start them directly); the store carries the rendezvous
PyTorch programs expect (``env://``, ``tcp://``, ``file://``) and checks that the ranks the
program was given agree with the engine's world.
"""

from __future__ import annotations

import os
import urllib.parse
from datetime import timedelta
from typing import Any

from ._engine import load_mpi
from ._store import FileStore, PrefixStore, Store, TCPStore

__all__ = ["Backend", "GroupMember", "ProcessGroup", "default_pg_timeout", "destroy_process_group",
           "get_backend", "get_default_backend_for_device", "get_global_rank", "get_group_rank",
           "get_process_group_ranks",
           "get_rank", "get_world_size", "group", "init_process_group", "is_initialized",
           "new_group"]

default_pg_timeout = timedelta(minutes=30)


class Backend(str):
    """A process-group backend name (``Backend.GLOO == "gloo"``). ``gloo`` and ``mpi`` are
    served by the MPI engine; ``nccl`` needs CUDA devices."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    XCCL = "xccl"

    # The engine that serves each name on CPU tensors (PyTorch's CPU default is gloo).
    _CPU_ENGINE = {"gloo": "mpi", "mpi": "mpi", "ucc": "mpi"}

    # The backend a program gets for each device type when it names none (PyTorch's table).
    default_device_backend_map: dict[str, str] = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL,
                                                  "mps": GLOO}

    def __new__(cls, name: str) -> Backend:
        return super().__new__(cls, name.lower())


class ProcessGroup:
    """A group of ranks and the MPI communicator that connects them."""

    def __init__(self, comm: Any, global_ranks: list[int], backend: str, timeout: timedelta,
                 store: Store | None, name: str) -> None:
        self.comm = comm
        self.global_ranks = global_ranks
        self.backend = backend
        self.timeout = timeout
        self.store = store
        self.group_name = name
        self._to_group_rank = {rank: index for index, rank in enumerate(global_ranks)}
        # Asynchronous collectives not known to be finished: held here so that their buffers
        # outlive a Work handle the caller dropped (MPI writes into them until completion).
        self._in_flight: list[Any] = []

    def rank(self) -> int:
        """This process's rank in the group."""
        return self.comm.Get_rank()

    def size(self) -> int:
        """How many processes the group has."""
        return len(self.global_ranks)

    def name(self) -> str:
        """The backend name the group was asked for."""
        return self.backend

    def group_rank(self, global_rank: int) -> int:
        """The group rank of a global rank; ``ValueError`` if it is not a member."""
        try:
            return self._to_group_rank[global_rank]
        except KeyError:
            raise ValueError(f"global rank {global_rank} is not part of this group "
                             f"(ranks {self.global_ranks})") from None

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self.backend!r}, ranks={self.global_ranks})"


class GroupMember:
    """Markers: ``WORLD`` (the default group once initialised) and ``NON_GROUP_MEMBER`` (what
    :func:`new_group` returns to processes outside the new group)."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER: Any = object()


class group:  # PyTorch's lower-case name
    """``group.WORLD``: the default process group."""

    WORLD: ProcessGroup | None = None


_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


def _default() -> ProcessGroup:
    if GroupMember.WORLD is None:
        raise ValueError(_NOT_INITIALIZED)
    return GroupMember.WORLD


def resolve(process_group: ProcessGroup | None) -> ProcessGroup:
    """The group a call names (the default one for ``None``)."""
    return _default() if process_group is None or process_group is group.WORLD else process_group


def is_initialized() -> bool:
    """Whether :func:`init_process_group` has made the default group."""
    return GroupMember.WORLD is not None


# A rank started by mpirun directly (not through torchrun) has the engine's numbering only.
_ENGINE_FALLBACK = {"RANK": "OMPI_COMM_WORLD_RANK", "WORLD_SIZE": "OMPI_COMM_WORLD_SIZE"}


def _env_int(name: str, given: int) -> int:
    if given >= 0:
        return given
    value = os.environ.get(name, os.environ.get(_ENGINE_FALLBACK[name]))
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} expected, but not set")
    return int(value)


def _rendezvous(init_method: str, rank: int, world_size: int,
                timeout: timedelta) -> tuple[Store, int, int]:
    """The store, rank and world size of an ``env://``, ``tcp://`` or ``file://`` URL."""
    url = urllib.parse.urlparse(init_method)
    query = dict(urllib.parse.parse_qsl(url.query))
    rank = int(query.get("rank", rank))
    world_size = int(query.get("world_size", world_size))
    if url.scheme == "env":
        rank, world_size = _env_int("RANK", rank), _env_int("WORLD_SIZE", world_size)
        host = os.environ.get("MASTER_ADDR")
        port = os.environ.get("MASTER_PORT")
        if host is None or port is None:
            missing = "MASTER_ADDR" if host is None else "MASTER_PORT"
            raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                             f"environment variable {missing} expected, but not set")
        return TCPStore(host, int(port), world_size, rank == 0, timeout), rank, world_size
    if rank < 0 or world_size < 0:
        raise ValueError(f"{url.scheme}:// rendezvous needs rank and world_size (arguments "
                         f"or ?rank=&world_size= in the URL)")
    if url.scheme == "tcp":
        if url.hostname is None or url.port is None:
            raise ValueError(f"tcp:// init_method needs host:port, got {init_method!r}")
        return TCPStore(url.hostname, url.port, world_size, rank == 0, timeout), rank, world_size
    if url.scheme == "file":
        return FileStore(url.path, world_size, timeout), rank, world_size
    raise ValueError(f"unsupported init_method {init_method!r}: use env://, tcp://host:port or "
                     f"file:///path")


def _check_backend(backend: str | None) -> str:
    """The backend name to record, after refusing what this machine cannot serve."""
    name = "gloo" if backend is None else str(backend).lower()
    # "cpu:gloo,cuda:nccl" names a backend per device type: CPU tensors use the CPU one.
    per_device = dict(part.split(":", 1) for part in name.split(",") if ":" in part)
    if per_device:
        name = per_device.get("cpu", next(iter(per_device.values())))
    if name == "nccl":
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found! "
                               "Use backend='gloo' (served by the MPI engine) for CPU tensors")
        raise RuntimeError("the NCCL engine is not built in Plait yet (it comes with the "
                           "CUDA backend's distributed support); use backend='gloo' or 'mpi' "
                           "for CPU tensors")
    if name not in Backend._CPU_ENGINE:
        raise ValueError(f"unknown backend {backend!r}: Plait serves 'gloo' and 'mpi' on the "
                         f"MPI engine (and 'nccl' on CUDA devices)")
    return name


def _engine_world(world_size: int) -> Any:
    """MPI's world communicator, checked to be the world the program asked for."""
    mpi = load_mpi()
    engine_size = mpi.COMM_WORLD.Get_size()
    if engine_size != world_size:
        raise RuntimeError(
            f"init_process_group asked for world_size={world_size}, but the MPI engine started "
            f"this process in a world of {engine_size}: the ranks of a multi-process job must be "
            f"started through the engine's launcher. Run the program with `torchrun "
            f"--nproc-per-node={world_size} script.py` (or `python -m torch.distributed.run`), "
            f"or with `mpirun -n {world_size} python script.py`")
    return mpi.COMM_WORLD


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store: Store | None = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """Make the default process group: rendezvous through ``store`` or ``init_method``
    (``env://`` by default), then join the MPI engine's world in rank order."""
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = _check_backend(backend)
    timeout = default_pg_timeout if timeout is None else timeout
    if store is None:
        store, rank, world_size = _rendezvous(init_method or "env://", rank, world_size, timeout)
    elif rank < 0 or world_size <= 0:
        raise ValueError("init_process_group with a store needs rank and world_size")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is out of range for world_size {world_size}")
    world = _engine_world(world_size)
    # Renumber the engine's processes so that MPI rank == the program's rank.
    comm = world.Split(0, rank)
    _install(ProcessGroup(comm, list(range(world_size)), name, timeout,
                          PrefixStore("default_pg", store), group_name or "0"))


def _install(default: ProcessGroup | None) -> None:
    GroupMember.WORLD = default
    group.WORLD = default


def destroy_process_group(process_group: ProcessGroup | None = None) -> None:
    """Release a group's communicator; without an argument, the default group and every
    group made from it."""
    if process_group is None or process_group is GroupMember.WORLD:
        default = _default()
        for made in _subgroups:
            made.comm.Free()
        _subgroups.clear()
        default.comm.Free()
        _install(None)
    elif process_group is not GroupMember.NON_GROUP_MEMBER:
        process_group.comm.Free()
        _subgroups.remove(process_group)


_subgroups: list[ProcessGroup] = []


def new_group(ranks: list[int] | None = None, timeout: timedelta | None = None,
              backend: str | None = None, pg_options: Any = None,
              use_local_synchronization: bool = False, group_desc: str | None = None,
              device_id: Any = None) -> Any:
    """A group of some of the default group's ranks. Every process of the default group must
    call it (with the same ``ranks``); the others get ``GroupMember.NON_GROUP_MEMBER``."""
    default = _default()
    members = sorted(set(range(default.size()) if ranks is None else ranks))
    for rank in members:
        if not 0 <= rank < default.size():
            raise ValueError(f"new_group: rank {rank} is out of range for world_size "
                             f"{default.size()}")
    mpi = load_mpi()
    me = default.rank()
    comm = default.comm.Split(0 if me in members else mpi.UNDEFINED, me)
    if me not in members:
        return GroupMember.NON_GROUP_MEMBER
    made = ProcessGroup(comm, members, _check_backend(backend) if backend else default.backend,
                        timeout or default.timeout, default.store, str(len(_subgroups) + 1))
    _subgroups.append(made)
    return made


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (the default group), -1 if it is not a member."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """How many processes ``group`` (the default group) has; -1 for a non-member."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).size()


def get_backend(group: ProcessGroup | None = None) -> str:
    """The backend name ``group`` was made with (the name asked for: ``gloo`` stays ``gloo``
    although the MPI engine serves it)."""
    return Backend(resolve(group).backend)


def get_default_backend_for_device(device: str | Any) -> str:
    """The backend PyTorch picks for ``device``'s type (``"cpu"`` -> ``"gloo"``, ``"cuda"`` ->
    ``"nccl"``), from :attr:`Backend.default_device_backend_map`; ``ValueError`` for a device
    type without one. ``device`` is a string or a ``torch.device``."""
    from .. import device as _device  # torch.device; imported late: torch is still loading here

    device_type = device.type if isinstance(device, _device) else _device(device).type
    backend = Backend.default_device_backend_map.get(device_type)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    return list(resolve(group).global_ranks)


def get_global_rank(group: ProcessGroup | None, group_rank: int) -> int:
    """The global rank of ``group``'s rank ``group_rank``."""
    ranks = resolve(group).global_ranks
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"group rank {group_rank} is not part of the group (size {len(ranks)})")
    return ranks[group_rank]


def get_group_rank(group: ProcessGroup | None, global_rank: int) -> int:
    """``global_rank``'s rank in ``group``."""
    return resolve(group).group_rank(global_rank)
