"""How tensors and storages travel between processes through :mod:`multiprocessing`.

:func:`init_reductions` registers these with :class:`multiprocessing.reduction.ForkingPickler`,
the pickler of every queue, pipe and process argument of :mod:`multiprocessing` (so also of
plain ``multiprocessing`` queues, as in PyTorch). A CPU tensor or storage is moved into shared
memory (in place, once) and only the way to map that memory travels: the receiver's tensor views
the same bytes, so a write on either side is seen on the other. ``nn.Parameter`` pickles its
data as a plain tensor, so parameters share too.
"""

from __future__ import annotations

from multiprocessing.reduction import DupFd, ForkingPickler
from typing import Any

from .._core import storage as _storage
from .._core.tensor import Tensor
from . import _shared_memory

__all__ = ["init_reductions", "rebuild_storage_fd", "rebuild_storage_filename",
           "rebuild_tensor", "reduce_storage", "reduce_tensor"]


def _check_device(device: Any, what: str) -> None:
    if device.type != "cpu":
        raise RuntimeError(
            f"cannot share a {device.type} {what} between processes: only CPU memory is shared "
            f"(PyTorch's CUDA IPC is not implemented); move it to the CPU first (.cpu()) or "
            f"send it from the process that owns the device")


def reduce_storage(storage: Any) -> tuple[Any, ...]:
    """Pickle a CPU storage as a way to map its (now shared) memory."""
    _check_device(storage.device, "storage")
    _shared_memory.share_storage_(storage)
    segment = _shared_memory.segment_of(storage)
    assert segment is not None  # (just shared)
    nbytes = storage.nbytes()
    offset = storage.data_ptr() - segment.data_address if nbytes else 0
    if segment.name is not None:
        return (rebuild_storage_filename, (segment.name, segment.length, offset, nbytes))
    return (rebuild_storage_fd, (DupFd(segment.fd), segment.length, offset, nbytes))


def rebuild_storage_fd(dup: Any, length: int, offset: int, nbytes: int) -> Any:
    """Unpickle a storage sent with the ``file_descriptor`` strategy."""
    segment = _shared_memory.attach_fd(dup.detach(), length)
    return _shared_memory.storage_over(segment, offset, nbytes)


def rebuild_storage_filename(path: str, length: int, offset: int, nbytes: int) -> Any:
    """Unpickle a storage sent with the ``file_system`` strategy."""
    segment = _shared_memory.attach_name(path, length)
    return _shared_memory.storage_over(segment, offset, nbytes)


def reduce_tensor(tensor: Tensor) -> tuple[Any, ...]:
    """Pickle a CPU tensor as its storage (shared) and its geometry."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the "
            "queue).")
    _check_device(tensor.device, "tensor")
    if tensor.is_sparse or not isinstance(tensor.untyped_storage(), _storage.UntypedStorage):
        return tensor.__reduce_ex__(2)  # (a sparse tensor's parts travel as a copy)
    return (rebuild_tensor, (tensor.untyped_storage(), tensor.storage_offset(),
                             tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype,
                             tensor.requires_grad))


def rebuild_tensor(storage: Any, offset: int, shape: tuple[int, ...], stride: tuple[int, ...],
                   dtype: Any, requires_grad: bool) -> Tensor:
    """Unpickle a tensor over a shared storage."""
    tensor = Tensor._make(storage, shape, stride, offset, dtype, storage.device)
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def init_reductions() -> None:
    """Register the reductions with :mod:`multiprocessing`'s pickler (idempotent)."""
    ForkingPickler.register(Tensor, reduce_tensor)
    ForkingPickler.register(_storage.UntypedStorage, reduce_storage)
