"""``torch._C._functorch``: the queries on batched tensors that code written against PyTorch
calls through the native module (``is_batchedtensor``, ``get_unwrapped``, ``maybe_get_bdim``,
``maybe_get_level``), and the two steps by which ``vmap`` batches an input and unbatches an
output (``_add_batch_dim``, ``_remove_batch_dim``), which libraries batching their own
containers call."""

from __future__ import annotations

from typing import Any

from torch._core.tensor import Tensor

from .batched import BatchedTensor, make_batched

__all__ = ["_add_batch_dim", "_remove_batch_dim", "get_unwrapped", "is_batchedtensor",
           "maybe_get_bdim", "maybe_get_level"]


def is_batchedtensor(tensor: Tensor) -> bool:
    """Whether ``tensor`` is batched by an active ``vmap`` (one sample's view of a batch)."""
    return isinstance(tensor, BatchedTensor)


def get_unwrapped(tensor: Tensor) -> Tensor:
    """The physical tensor under batched ``tensor`` (its batch dim first).

    :raises RuntimeError: ``tensor`` is not batched."""
    if not isinstance(tensor, BatchedTensor):
        raise RuntimeError("get_unwrapped: expected a BatchedTensor")
    return tensor._bt_value


def maybe_get_bdim(tensor: Tensor) -> int:
    """The batch dim of batched ``tensor`` in its physical tensor (always 0 here), else -1."""
    return 0 if isinstance(tensor, BatchedTensor) else -1


def maybe_get_level(tensor: Any) -> int:
    """The ``vmap`` level of batched ``tensor`` (1 for the outermost), else -1."""
    return tensor._bt_level if isinstance(tensor, BatchedTensor) else -1


def _add_batch_dim(tensor: Tensor, in_dim: int, level: int) -> BatchedTensor:
    """``tensor`` as the ``vmap`` of ``level`` sees it: one sample of the batch along
    ``in_dim``. Only meaningful inside that vmap (its mode computes on the result)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_add_batch_dim(): argument 'self' must be Tensor, not "
                        f"{type(tensor).__name__}")
    rank = tensor.dim()
    if not -rank <= in_dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, "
                         f"{rank - 1}], but got {in_dim})")
    return make_batched(tensor.movedim(in_dim, 0), level)


def _remove_batch_dim(tensor: Tensor, level: int, batch_size: int, out_dim: int) -> Tensor:
    """The whole batch behind ``tensor`` at ``level``, the batch along ``out_dim``; a tensor
    not batched at ``level`` (it does not depend on the batch) is expanded to ``batch_size``
    samples."""
    if isinstance(tensor, BatchedTensor) and tensor._bt_level == level:
        physical = tensor._bt_value
    else:
        physical = tensor.unsqueeze(0).expand((batch_size,) + tuple(tensor.shape))
    rank = physical.dim()
    if not -rank <= out_dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, "
                         f"{rank - 1}], but got {out_dim})")
    return physical.movedim(0, out_dim)
