"""``collate``, ``default_collate`` and ``default_convert``: samples to batches, as PyTorch builds
them, with ``default_collate_fn_map`` (per element type) for programs to extend."""

from __future__ import annotations

import collections.abc
import re
from collections.abc import Callable
from typing import Any

import numpy as np

import torch
from torch import Tensor

from .worker import get_worker_info

__all__ = ["collate", "collate_float_fn", "collate_int_fn", "collate_numpy_array_fn",
           "collate_numpy_scalar_fn", "collate_str_fn", "collate_tensor_fn", "default_collate",
           "default_collate_err_msg_format", "default_collate_fn_map", "default_convert"]

# numpy dtypes of strings and objects: never tensors (PyTorch's name, which libraries import)
np_str_obj_array_pattern = re.compile(r"[SaUO]")
_NP_STR = np_str_obj_array_pattern
default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
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


CollateFn = Callable[..., Any]


def collate_tensor_fn(batch: list[Tensor], *,
                      collate_fn_map: dict[Any, CollateFn] | None = None) -> Tensor:
    """Tensors stacked along a new first dim (in a worker, straight into shared memory)."""
    return torch.stack(batch, 0, out=_shared_out(batch))


def collate_numpy_array_fn(batch: list[Any], *,
                           collate_fn_map: dict[Any, CollateFn] | None = None) -> Any:
    """numpy arrays as tensors, then stacked; arrays of strings or objects are refused."""
    if _NP_STR.search(batch[0].dtype.str):
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    return collate([torch.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: list[Any], *,
                            collate_fn_map: dict[Any, CollateFn] | None = None) -> Tensor:
    """numpy scalars as one tensor of their dtype."""
    return torch.as_tensor(np.array(batch))


def collate_float_fn(batch: list[float], *,
                     collate_fn_map: dict[Any, CollateFn] | None = None) -> Tensor:
    """Python floats as a float64 tensor, as PyTorch batches them."""
    return torch.tensor(batch, dtype=torch.float64)


def collate_int_fn(batch: list[int], *,
                   collate_fn_map: dict[Any, CollateFn] | None = None) -> Tensor:
    """Python ints (and bools) as an int64 (bool) tensor."""
    return torch.tensor(batch)


def collate_str_fn(batch: list[Any], *,
                   collate_fn_map: dict[Any, CollateFn] | None = None) -> list[Any]:
    """Strings and bytes stay a list."""
    return batch


# What `default_collate` does per element type: looked up by exact type first, then by
# isinstance in this order. Programs extend a copy of it for their own types and pass it to
# `collate`.
default_collate_fn_map: dict[Any, CollateFn] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    np.bool_: collate_numpy_scalar_fn,
    np.number: collate_numpy_scalar_fn,
    np.object_: collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def collate(batch: list[Any], *, collate_fn_map: dict[Any, CollateFn] | None = None) -> Any:
    """Samples to a batch: each element type through ``collate_fn_map`` (exact type, then
    isinstance); mappings, named tuples, tuples and sequences element by element, recursively
    (tuples and sequences of another type become lists when their type cannot be rebuilt)."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for registered, fn in collate_fn_map.items():
            if isinstance(elem, registered):
                return fn(batch, collate_fn_map=collate_fn_map)

    def again(samples: Any) -> Any:
        return collate(list(samples), collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        try:
            return elem_type({key: again([d[key] for d in batch]) for key in elem})
        except TypeError:
            return {key: again([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple
        return elem_type(*(again(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [again(samples) for samples in transposed]
        try:
            return elem_type([again(samples) for samples in transposed])
        except TypeError:
            return [again(samples) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def default_collate(batch: list[Any]) -> Any:
    """Stack a list of samples into a batch: tensors, numpy arrays and numbers into tensors
    with a new first dim; dicts, named tuples, tuples and lists element by element."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
