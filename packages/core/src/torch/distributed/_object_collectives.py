"""Collectives of picklable Python objects, carried as uint8 tensors by the tensor collectives
(so they keep the group's timeout): the sizes go first, then the pickled bytes."""

from __future__ import annotations

import pickle
from typing import Any

import torch

from ._collectives import all_gather, broadcast, gather, scatter
from ._group import GroupMember, ProcessGroup, resolve

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object",
           "scatter_object_list"]


def _to_tensor(obj: Any) -> torch.Tensor:
    return torch.frombuffer(bytearray(pickle.dumps(obj)), dtype=torch.uint8)


def _from_tensor(tensor: torch.Tensor) -> Any:
    return pickle.loads(tensor.numpy().tobytes())


def _size(tensor: torch.Tensor) -> torch.Tensor:
    return torch.tensor([tensor.numel()], dtype=torch.int64)


def _gathered_sizes(payload: torch.Tensor, group: ProcessGroup | None) -> list[int]:
    sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(resolve(group).size())]
    all_gather(sizes, _size(payload), group)
    return [int(size.item()) for size in sizes]


def broadcast_object_list(object_list: list[Any], src: int | None = None,
                          group: ProcessGroup | None = None, device: Any = None,
                          group_src: int | None = None) -> None:
    """Replace ``object_list``'s items on every rank with those of rank ``src``."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    pg = resolve(group)
    root = group_src if group_src is not None else pg.group_rank(0 if src is None else src)
    is_source = pg.rank() == root
    payload = _to_tensor(list(object_list)) if is_source else torch.zeros(0, dtype=torch.uint8)
    size = _size(payload)
    broadcast(size, group=group, group_src=root)
    if not is_source:
        payload = torch.zeros(int(size.item()), dtype=torch.uint8)
    broadcast(payload, group=group, group_src=root)
    if not is_source:
        object_list[:] = _from_tensor(payload)


def all_gather_object(object_list: list[Any], obj: Any,
                      group: ProcessGroup | None = None) -> None:
    """Every rank's ``obj`` into ``object_list[rank]`` on every rank."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    payload = _to_tensor(obj)
    received = [torch.zeros(size, dtype=torch.uint8)
                for size in _gathered_sizes(payload, group)]
    all_gather(received, payload, group)
    object_list[:len(received)] = [_from_tensor(tensor) for tensor in received]


def gather_object(obj: Any, object_gather_list: list[Any] | None = None,
                  dst: int | None = None, group: ProcessGroup | None = None,
                  group_dst: int | None = None) -> None:
    """Every rank's ``obj`` into ``object_gather_list`` on rank ``dst``."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    pg = resolve(group)
    root = group_dst if group_dst is not None else pg.group_rank(0 if dst is None else dst)
    payload = _to_tensor(obj)
    sizes = _gathered_sizes(payload, group)
    received = [torch.zeros(size, dtype=torch.uint8) for size in sizes]
    is_root = pg.rank() == root
    gather(payload, received if is_root else None, group=group, group_dst=root)
    if is_root and object_gather_list is not None:
        object_gather_list[:len(received)] = [_from_tensor(tensor) for tensor in received]


def scatter_object_list(scatter_object_output_list: list[Any],
                        scatter_object_input_list: list[Any] | None = None,
                        src: int | None = None, group: ProcessGroup | None = None,
                        group_src: int | None = None) -> None:
    """``scatter_object_input_list[i]`` of rank ``src`` into rank ``i``'s
    ``scatter_object_output_list[0]``."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    pg = resolve(group)
    root = group_src if group_src is not None else pg.group_rank(0 if src is None else src)
    is_source = pg.rank() == root
    payloads = ([_to_tensor(obj) for obj in scatter_object_input_list or []] if is_source
                else [])
    sizes = torch.tensor([payload.numel() for payload in payloads] or [0] * pg.size(),
                         dtype=torch.int64)
    broadcast(sizes, group=group, group_src=root)
    size = int(sizes[pg.rank()].item())
    received = torch.zeros(size, dtype=torch.uint8)
    scatter(received, payloads if is_source else None, group=group, group_src=root)
    scatter_object_output_list[0] = _from_tensor(received)
