"""``default_collate`` and ``default_convert``: samples to batches, as PyTorch builds them."""

from __future__ import annotations

import collections.abc
import re
from typing import Any

import numpy as np

import torch
from torch import Tensor

__all__ = ["default_collate", "default_convert"]

_NP_STR = re.compile(r"[SaUO]")
_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def default_convert(data: Any) -> Any:
    """numpy arrays (not of strings/objects) and numpy scalars to tensors, recursively."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) and not _NP_STR.search(data.dtype.str):
        return torch.as_tensor(data)
    if isinstance(data, np.generic) and not _NP_STR.search(data.dtype.str):
        return torch.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])  # type: ignore[call-arg]
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _shared_out(batch: list[Tensor]) -> Tensor | None:
    """In a DataLoader worker, the batch's tensor made in shared memory, which is where it must
    go to reach the main process (stacked there, it saves a copy); None elsewhere, and for
    samples that do not stack (the stack raises its own error)."""
    from .dataloader import get_worker_info

    elem = batch[0]
    if get_worker_info() is None or elem.device.type != "cpu":
        return None
    shape = elem.shape
    if any(sample.shape != shape or sample.dtype != elem.dtype for sample in batch):
        return None
    storage = torch.UntypedStorage._new_shared(len(batch) * elem.numel() * elem.element_size())
    size = (len(batch), *shape)
    stride = [1] * len(size)
    for dim in range(len(size) - 2, -1, -1):
        stride[dim] = stride[dim + 1] * size[dim + 1]
    return torch.empty(0, dtype=elem.dtype).set_(storage, 0, size, stride)


def default_collate(batch: list[Any]) -> Any:
    """Stack a list of samples into a batch: tensors, numpy arrays and numbers into tensors
    with a new first dim; dicts, named tuples, tuples and lists element by element."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return torch.stack(batch, 0, out=_shared_out(batch))
    if isinstance(elem, np.ndarray):
        if _NP_STR.search(elem.dtype.str):
            raise TypeError(_ERR.format(elem.dtype))
        return default_collate([torch.as_tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        return torch.as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return torch.tensor(batch)
    if isinstance(elem, float):
        return torch.tensor(batch, dtype=torch.float64)
    if isinstance(elem, int):
        return torch.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return type(elem)({k: default_collate([d[k] for d in batch]) for k in elem})
        except TypeError:
            return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(list(s)) for s in transposed]
        try:
            return type(elem)([default_collate(list(s)) for s in transposed])
        except TypeError:
            return [default_collate(list(s)) for s in transposed]
    raise TypeError(_ERR.format(type(elem)))
