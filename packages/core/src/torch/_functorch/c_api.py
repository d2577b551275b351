"""``torch._C._functorch``: the queries on batched tensors that code written against PyTorch
calls through the native module (``is_batchedtensor``, ``get_unwrapped``, ``maybe_get_bdim``,
``maybe_get_level``)."""

from __future__ import annotations

from typing import Any

from torch._core.tensor import Tensor

from .batched import BatchedTensor

__all__ = ["get_unwrapped", "is_batchedtensor", "maybe_get_bdim", "maybe_get_level"]


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
