"""Tensor collectives and point-to-point messages on the MPI engine.

MPI reads and writes the tensors' own memory (numpy views of CPU tensors) where it can: a
contiguous tensor of a dtype MPI reduces natively is handed over as it is. A staging copy is
made, and written back when the collective finishes, only for a non-contiguous tensor or, in
reductions, for ``float16``/``bfloat16`` (reduced in ``float32``: MPI has no half types).
Collectives that only move data move bytes, so every dtype travels without conversion.

Every call starts a non-blocking MPI operation and returns a :class:`Work`; without
``async_op`` it waits at once. Waiting polls with the group's timeout, so a rank that never
arrives makes the others raise :class:`DistBackendError` instead of hanging.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import torch

from .._refs.common import np_view
from ._engine import load_mpi
from ._group import GroupMember, ProcessGroup, resolve
from ._work import Work

__all__ = ["ReduceOp", "all_gather", "all_gather_into_tensor", "all_reduce", "all_to_all",
           "all_to_all_single", "barrier", "broadcast", "gather", "irecv", "isend",
           "monitored_barrier", "recv", "reduce", "reduce_scatter", "reduce_scatter_tensor",
           "scatter", "send"]


class _RedOpType(enum.Enum):
    """The reduction kinds (``ReduceOp.RedOpType``; ``ReduceOp.SUM`` is one of them)."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9


class ReduceOp:
    """How a reduction combines the processes' tensors: ``ReduceOp.SUM`` ... are
    ``ReduceOp.RedOpType`` members (as in PyTorch), and ``ReduceOp(kind)`` wraps one."""

    RedOpType = _RedOpType
    SUM = _RedOpType.SUM
    AVG = _RedOpType.AVG
    PRODUCT = _RedOpType.PRODUCT
    MIN = _RedOpType.MIN
    MAX = _RedOpType.MAX
    BAND = _RedOpType.BAND
    BOR = _RedOpType.BOR
    BXOR = _RedOpType.BXOR
    PREMUL_SUM = _RedOpType.PREMUL_SUM
    UNUSED = _RedOpType.UNUSED

    def __init__(self, op: _RedOpType = _RedOpType.SUM) -> None:
        self.op = _kind(op)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (ReduceOp, _RedOpType)) and self.op == _kind(other)

    def __hash__(self) -> int:
        return hash(self.op)

    def __repr__(self) -> str:
        return f"ReduceOp.{self.op.name}"


def _kind(op: Any) -> _RedOpType:
    """The RedOpType of ``op`` (a RedOpType or a ReduceOp)."""
    kind = op.op if isinstance(op, ReduceOp) else op
    if not isinstance(kind, _RedOpType):
        raise TypeError(f"expected a torch.distributed.ReduceOp, got {op!r}")
    return kind


# The MPI operation of each ReduceOp: for numbers, and for bool (logical operations, as
# PyTorch's sum of bools saturates to True). AVG is a SUM divided afterwards.
_NUMBER_OPS = {ReduceOp.SUM: "SUM", ReduceOp.AVG: "SUM", ReduceOp.PRODUCT: "PROD",
               ReduceOp.MIN: "MIN", ReduceOp.MAX: "MAX", ReduceOp.BAND: "BAND",
               ReduceOp.BOR: "BOR", ReduceOp.BXOR: "BXOR"}
_BOOL_OPS = {ReduceOp.SUM: "LOR", ReduceOp.PRODUCT: "LAND", ReduceOp.MIN: "LAND",
             ReduceOp.MAX: "LOR", ReduceOp.BAND: "LAND", ReduceOp.BOR: "LOR",
             ReduceOp.BXOR: "LXOR"}
_BITWISE = frozenset((ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR))
# Dtypes MPI cannot reduce: reduced in float32 and cast back.
_REDUCED_AS_FLOAT32 = frozenset((torch.float16, torch.bfloat16))


# (op, dtype) -> the MPI operation: the checks below run once per pair, not once per call.
_MPI_OPS: dict[tuple[Any, torch.dtype], Any] = {}


def _mpi_op(op: Any, dtype: torch.dtype) -> Any:
    try:
        return _MPI_OPS[op, dtype]
    except (KeyError, TypeError):  # (an op that does not hash is checked, and refused, below)
        pass
    mpi_op = _checked_mpi_op(op, dtype)
    _MPI_OPS[op, dtype] = mpi_op
    return mpi_op


def _checked_mpi_op(op: Any, dtype: torch.dtype) -> Any:
    op = _kind(op)
    if dtype == torch.bool:
        table = _BOOL_OPS
    elif op in _BITWISE and (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with {dtype} tensors: bitwise "
                           f"reductions need integer or bool tensors")
    else:
        table = _NUMBER_OPS
    if op not in table:
        raise RuntimeError(f"ReduceOp.{op.name} is not supported for {dtype} tensors by the "
                           f"MPI engine")
    if dtype.is_complex and op in (ReduceOp.MIN, ReduceOp.MAX):
        raise RuntimeError(f"ReduceOp.{op.name} is not defined for complex tensors")
    return getattr(load_mpi(), table[op])


def _host(tensor: torch.Tensor) -> Any:
    """A numpy view of a contiguous CPU tensor's memory (bfloat16 seen as its uint16 bits:
    numpy has no bfloat16). Read from the storage directly: ``detach().numpy()`` costs two
    dispatched calls, a third of a small collective's time in Python."""
    if tensor.device.type != "cpu":
        raise RuntimeError(f"the MPI engine works on CPU tensors, got one on {tensor.device}; "
                           f"CUDA tensors need the NCCL engine")
    return np_view(tensor)


class _Buffer:
    """Memory MPI reads or writes for one tensor: the tensor's own, or a staging copy that
    :meth:`write_back` copies into the tensor when the collective is over."""

    def __init__(self, tensor: torch.Tensor, reduce: bool = False) -> None:
        self.tensor = tensor
        if reduce and tensor.dtype in _REDUCED_AS_FLOAT32:
            self.staging: torch.Tensor | None = tensor.detach().float()
        elif not tensor.is_contiguous():
            self.staging = tensor.detach().contiguous()
        else:
            self.staging = None
        self.array = _host(tensor if self.staging is None else self.staging)

    def as_bytes(self) -> Any:
        """The buffer as a flat uint8 array (for collectives that only move data)."""
        return self.array.reshape(-1).view("uint8")

    def write_back(self) -> None:
        if self.staging is not None:
            self.tensor.detach().copy_(self.staging)


def _average(buffer: _Buffer, count: int) -> None:
    import numpy as np

    array = buffer.array
    if array.dtype.kind in "iu":  # integers: truncate toward zero, as NCCL's integer average
        np.copyto(array, np.sign(array) * (np.abs(array) // count), casting="unsafe")
    else:
        array /= count


def _member(group: ProcessGroup | None) -> ProcessGroup | None:
    """The group to run on; None when this process is not a member (the call does nothing,
    as in PyTorch)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    return resolve(group)


def _start(pg: ProcessGroup, requests: list[Any], finish: Callable[[], Any] | None,
           async_op: bool, what: str, result: list[Any] | None = None) -> Work | None:
    work = Work(requests, finish, pg.timeout.total_seconds(), what, result)
    if async_op:
        # A caller may drop the handle without waiting (PyTorch allows it); the group keeps
        # it until it completes, and each new collective finishes the ones that have.
        pg._in_flight = [pending for pending in pg._in_flight if not pending.is_completed()]
        pg._in_flight.append(work)
        return work
    work.wait()
    return None


def _root(pg: ProcessGroup, global_rank: int | None, group_rank: int | None) -> int:
    """A root given as a global rank (``src``/``dst``) or a group rank (``group_src``...)."""
    if group_rank is not None:
        return group_rank
    return pg.group_rank(0 if global_rank is None else global_rank)


def _write_back_all(buffers: list[_Buffer], then: Callable[[], None] | None = None
                    ) -> Callable[[], None]:
    def finish() -> None:
        if then is not None:
            then()
        for buffer in buffers:
            buffer.write_back()

    return finish


def all_reduce(tensor: torch.Tensor, op: Any = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` over the group with ``op``; every rank gets the result in place."""
    pg = _member(group)
    if pg is None:
        return None
    mpi_op = _mpi_op(op, tensor.dtype)
    buffer = _Buffer(tensor, reduce=True)
    request = pg.comm.Iallreduce(load_mpi().IN_PLACE, buffer.array, mpi_op)
    average = (lambda: _average(buffer, pg.size())) if op == ReduceOp.AVG else None
    return _start(pg, [request], _write_back_all([buffer], average), async_op, "all_reduce",
                  [tensor])


def reduce(tensor: torch.Tensor, dst: int | None = None, op: Any = ReduceOp.SUM,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Reduce ``tensor`` over the group into rank ``dst``'s tensor."""
    pg = _member(group)
    if pg is None:
        return None
    root = _root(pg, dst, group_dst)
    mpi_op = _mpi_op(op, tensor.dtype)
    buffer = _Buffer(tensor, reduce=True)
    if pg.rank() == root:
        request = pg.comm.Ireduce(load_mpi().IN_PLACE, buffer.array, mpi_op, root)
        average = (lambda: _average(buffer, pg.size())) if op == ReduceOp.AVG else None
        finish = _write_back_all([buffer], average)
    else:
        request = pg.comm.Ireduce(buffer.array, None, mpi_op, root)
        finish = None
    return _start(pg, [request], finish, async_op, "reduce", [tensor])


def broadcast(tensor: torch.Tensor, src: int | None = None, group: ProcessGroup | None = None,
              async_op: bool = False, group_src: int | None = None) -> Work | None:
    """Copy rank ``src``'s ``tensor`` into every rank's ``tensor``."""
    pg = _member(group)
    if pg is None:
        return None
    buffer = _Buffer(tensor)
    request = pg.comm.Ibcast(buffer.as_bytes(), _root(pg, src, group_src))
    return _start(pg, [request], _write_back_all([buffer]), async_op, "broadcast", [tensor])


def _byte_layout(tensors: list[torch.Tensor]) -> tuple[list[int], list[int]]:
    """Byte counts and displacements of tensors laid end to end."""
    counts = [tensor.numel() * tensor.element_size() for tensor in tensors]
    displacements = [sum(counts[:index]) for index in range(len(counts))]
    return counts, displacements


def _joined(tensors: list[torch.Tensor]) -> Any:
    """One contiguous byte array holding ``tensors`` end to end (a copy)."""
    import numpy as np

    if not tensors:
        return np.empty(0, dtype=np.uint8)
    return np.concatenate([_Buffer(tensor).as_bytes() for tensor in tensors])


def _split_into(data: Any, tensors: list[torch.Tensor]) -> None:
    """Copy a byte array laid out as :func:`_joined` into ``tensors``."""
    counts, displacements = _byte_layout(tensors)
    for tensor, count, start in zip(tensors, counts, displacements):
        buffer = _Buffer(tensor)
        buffer.as_bytes()[:] = data[start:start + count]
        buffer.write_back()


def _empty_bytes(count: int) -> Any:
    import numpy as np

    return np.empty(count, dtype=np.uint8)


def all_gather(tensor_list: list[torch.Tensor], tensor: torch.Tensor,
               group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Every rank's ``tensor`` into ``tensor_list[rank]`` on every rank (sizes may differ
    between ranks when ``tensor_list`` says so)."""
    pg = _member(group)
    if pg is None:
        return None
    if len(tensor_list) != pg.size():
        raise ValueError(f"all_gather needs a list of {pg.size()} tensors, got "
                         f"{len(tensor_list)}")
    counts, displacements = _byte_layout(tensor_list)
    received = _empty_bytes(sum(counts))
    request = pg.comm.Iallgatherv(_Buffer(tensor).as_bytes(),
                                  [received, counts, displacements, load_mpi().BYTE])
    return _start(pg, [request], lambda: _split_into(received, tensor_list), async_op,
                  "all_gather", tensor_list)


def all_gather_into_tensor(output_tensor: torch.Tensor, input_tensor: torch.Tensor,
                           group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """Every rank's ``input_tensor`` laid end to end in ``output_tensor`` (rank order)."""
    pg = _member(group)
    if pg is None:
        return None
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError(f"all_gather_into_tensor: output has {output_tensor.numel()} elements, "
                         f"expected {pg.size()} x {input_tensor.numel()}")
    output = _Buffer(output_tensor)
    request = pg.comm.Iallgather(_Buffer(input_tensor).as_bytes(), output.as_bytes())
    return _start(pg, [request], _write_back_all([output]), async_op, "all_gather_into_tensor",
                  [output_tensor])


def _typed_joined(tensors: list[torch.Tensor]) -> _Buffer:
    """The tensors laid end to end in one array MPI can reduce."""
    return _Buffer(torch.cat([tensor.reshape(-1) for tensor in tensors]), reduce=True)


def reduce_scatter(output: torch.Tensor, input_list: list[torch.Tensor], op: Any = ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Reduce ``input_list[i]`` over the group into rank ``i``'s ``output``."""
    pg = _member(group)
    if pg is None:
        return None
    if len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter needs a list of {pg.size()} tensors, got "
                         f"{len(input_list)}")
    mpi_op = _mpi_op(op, output.dtype)
    joined = _typed_joined(input_list)
    result = _Buffer(output, reduce=True)
    counts = [tensor.numel() for tensor in input_list]
    request = pg.comm.Ireduce_scatter(joined.array, result.array, counts, mpi_op)
    average = (lambda: _average(result, pg.size())) if op == ReduceOp.AVG else None
    return _start(pg, [request], _write_back_all([result], average), async_op, "reduce_scatter",
                  [output])


def reduce_scatter_tensor(output: torch.Tensor, input: torch.Tensor, op: Any = ReduceOp.SUM,
                          group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """Reduce ``input`` (the group's chunks end to end) and give rank ``i`` chunk ``i``."""
    pg = _member(group)
    if pg is None:
        return None
    if input.numel() != output.numel() * pg.size():
        raise ValueError(f"reduce_scatter_tensor: input has {input.numel()} elements, expected "
                         f"{pg.size()} x {output.numel()}")
    mpi_op = _mpi_op(op, output.dtype)
    source = _Buffer(input, reduce=True)
    result = _Buffer(output, reduce=True)
    request = pg.comm.Ireduce_scatter_block(source.array.reshape(-1),
                                            result.array.reshape(-1), mpi_op)
    average = (lambda: _average(result, pg.size())) if op == ReduceOp.AVG else None
    return _start(pg, [request], _write_back_all([result], average), async_op,
                  "reduce_scatter_tensor", [output])


def gather(tensor: torch.Tensor, gather_list: list[torch.Tensor] | None = None,
           dst: int | None = None, group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst``."""
    pg = _member(group)
    if pg is None:
        return None
    root = _root(pg, dst, group_dst)
    source = _Buffer(tensor).as_bytes()
    if pg.rank() != root:
        return _start(pg, [pg.comm.Igatherv(source, None, root)], None, async_op, "gather")
    if gather_list is None or len(gather_list) != pg.size():
        raise ValueError(f"gather: the destination rank needs a gather_list of {pg.size()} "
                         f"tensors")
    counts, displacements = _byte_layout(gather_list)
    received = _empty_bytes(sum(counts))
    request = pg.comm.Igatherv(source, [received, counts, displacements, load_mpi().BYTE], root)
    return _start(pg, [request], lambda: _split_into(received, gather_list), async_op, "gather",
                  gather_list)


def scatter(tensor: torch.Tensor, scatter_list: list[torch.Tensor] | None = None,
            src: int | None = None, group: ProcessGroup | None = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:
    """``scatter_list[i]`` of rank ``src`` into rank ``i``'s ``tensor``."""
    pg = _member(group)
    if pg is None:
        return None
    root = _root(pg, src, group_src)
    output = _Buffer(tensor)
    if pg.rank() == root:
        if scatter_list is None or len(scatter_list) != pg.size():
            raise ValueError(f"scatter: the source rank needs a scatter_list of {pg.size()} "
                             f"tensors")
        counts, displacements = _byte_layout(scatter_list)
        sent = [_joined(scatter_list), counts, displacements, load_mpi().BYTE]
    else:
        sent = None
    request = pg.comm.Iscatterv(sent, output.as_bytes(), root)
    return _start(pg, [request], _write_back_all([output]), async_op, "scatter", [tensor])


def all_to_all(output_tensor_list: list[torch.Tensor], input_tensor_list: list[torch.Tensor],
               group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """``input_tensor_list[j]`` of rank ``i`` into ``output_tensor_list[i]`` of rank ``j``."""
    pg = _member(group)
    if pg is None:
        return None
    if len(input_tensor_list) != pg.size() or len(output_tensor_list) != pg.size():
        raise ValueError(f"all_to_all needs lists of {pg.size()} tensors")
    send_counts, send_displacements = _byte_layout(input_tensor_list)
    receive_counts, receive_displacements = _byte_layout(output_tensor_list)
    received = _empty_bytes(sum(receive_counts))
    byte = load_mpi().BYTE
    request = pg.comm.Ialltoallv(
        [_joined(input_tensor_list), send_counts, send_displacements, byte],
        [received, receive_counts, receive_displacements, byte])
    return _start(pg, [request], lambda: _split_into(received, output_tensor_list), async_op,
                  "all_to_all", output_tensor_list)


def all_to_all_single(output: torch.Tensor, input: torch.Tensor,
                      output_split_sizes: list[int] | None = None,
                      input_split_sizes: list[int] | None = None,
                      group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """:func:`all_to_all` on one tensor split along its first dimension (evenly, or by the
    split sizes)."""
    pg = _member(group)
    if pg is None:
        return None
    outputs = (list(output.split(output_split_sizes)) if output_split_sizes
               else list(output.chunk(pg.size())))
    inputs = (list(input.split(input_split_sizes)) if input_split_sizes
              else list(input.chunk(pg.size())))
    return all_to_all(outputs, inputs, group, async_op)


class _ReceiveRequest:
    """An MPI receive whose status (the sender) is kept for :meth:`Work._source_rank`."""

    def __init__(self, request: Any) -> None:
        self.request = request
        self.status = load_mpi().Status()

    def Test(self) -> bool:  # MPI's request interface: Work polls it
        return self.request.Test(self.status)


def isend(tensor: torch.Tensor, dst: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_dst: int | None = None) -> Work | None:
    """Start sending ``tensor`` to rank ``dst``."""
    pg = _member(group)
    if pg is None:
        return None
    buffer = _Buffer(tensor)
    request = pg.comm.Isend(buffer.as_bytes(), _root(pg, dst, group_dst), tag)
    return Work([request], None, pg.timeout.total_seconds(), "send")


def irecv(tensor: torch.Tensor, src: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_src: int | None = None) -> Work | None:
    """Start receiving into ``tensor`` from rank ``src`` (any rank when ``src`` is None)."""
    pg = _member(group)
    if pg is None:
        return None
    mpi = load_mpi()
    source = mpi.ANY_SOURCE if src is None and group_src is None else _root(pg, src, group_src)
    buffer = _Buffer(tensor)
    receive = _ReceiveRequest(pg.comm.Irecv(buffer.as_bytes(), source, tag))

    def finish() -> int:
        buffer.write_back()
        return pg.global_ranks[receive.status.Get_source()]

    return Work([receive], finish, pg.timeout.total_seconds(), "recv", [tensor])


def send(tensor: torch.Tensor, dst: int | None = None, group: ProcessGroup | None = None,
         tag: int = 0, group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` and wait until it has left."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor: torch.Tensor, src: int | None = None, group: ProcessGroup | None = None,
         tag: int = 0, group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank when None); the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    return work._source_rank()


def barrier(group: ProcessGroup | None = None, async_op: bool = False,
            device_ids: list[int] | None = None) -> Work | None:
    """Wait until every rank of the group has called it."""
    pg = _member(group)
    if pg is None:
        return None
    return _start(pg, [pg.comm.Ibarrier()], None, async_op, "barrier")


def monitored_barrier(group: ProcessGroup | None = None, timeout: Any = None,
                      wait_all_ranks: bool = False) -> None:
    """A barrier that raises after ``timeout`` (the group's by default) naming the wait."""
    pg = _member(group)
    if pg is None:
        return
    work = Work([pg.comm.Ibarrier()], None, pg.timeout.total_seconds(), "monitored_barrier")
    work.wait(timeout)

