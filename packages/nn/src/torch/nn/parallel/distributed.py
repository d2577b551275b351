"""``DistributedDataParallel``: the same model in every process of a group, each on its own
share of the batch, with gradients averaged over the group during backward.

At construction rank 0's parameters and buffers are broadcast, so every replica starts equal.
Gradients are reduced in buckets: parameters in reverse registration order (roughly the order
backward produces their gradients), a first bucket of 1 MiB so communication starts early, then
buckets of ``bucket_cap_mb`` (25 MiB). A post-accumulate-grad hook copies each gradient into its
bucket; a full bucket starts an asynchronous all-reduce, in bucket order on every rank (MPI needs
collectives started in the same order everywhere). When the last bucket has started, the
reductions are awaited and the averaged gradients written back into ``.grad``, before backward
returns, so ``optimizer.step()`` sees them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch.nn.modules.module import Module

__all__ = ["DistributedDataParallel"]

_MIB = 1024 * 1024
_FIRST_BUCKET_BYTES = 1 * _MIB

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss.")


class _Bucket:
    """Parameters whose gradients are reduced together, and the flat buffer that carries them."""

    def __init__(self, parameters: list[torch.Tensor]) -> None:
        self.parameters = parameters
        sizes = [parameter.numel() for parameter in parameters]
        self.offsets = [sum(sizes[:index]) for index in range(len(sizes))]
        self.buffer = torch.zeros(sum(sizes), dtype=parameters[0].dtype)
        self.pending = len(parameters)

    def slot(self, index: int) -> torch.Tensor:
        """The part of the buffer that holds parameter ``index``'s gradient."""
        start = self.offsets[index]
        return self.buffer[start:start + self.parameters[index].numel()]


def _buckets(parameters: list[torch.Tensor], cap_bytes: int) -> list[_Bucket]:
    """Parameters in reverse order, cut into buckets of one dtype each: the first holds up to
    1 MiB, the others up to ``cap_bytes``."""
    buckets: list[_Bucket] = []
    current: list[torch.Tensor] = []
    size = 0
    for parameter in reversed(parameters):
        limit = _FIRST_BUCKET_BYTES if not buckets else cap_bytes
        nbytes = parameter.numel() * parameter.element_size()
        if current and (size + nbytes > limit or parameter.dtype != current[0].dtype):
            buckets.append(_Bucket(current))
            current, size = [], 0
        current.append(parameter)
        size += nbytes
    if current:
        buckets.append(_Bucket(current))
    return buckets


def _tensors_in(value: Any) -> Iterator[torch.Tensor]:
    """The tensors inside a forward output (nested tuples, lists, dicts)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors_in(item)


def _reached_leaves(outputs: Any) -> set[int]:
    """The ids of the leaf tensors the outputs' graph reaches (the parameters used)."""
    reached: set[int] = set()
    seen: set[int] = set()
    stack = [tensor.grad_fn for tensor in _tensors_in(outputs) if tensor.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            reached.add(id(variable))
        stack.extend(next_node for next_node, _ in node.next_functions)
    return reached


class DistributedDataParallel(Module):
    """Data parallelism over the processes of ``process_group`` (the default group)."""

    def __init__(self, module: Module, device_ids: list[Any] | None = None,
                 output_device: Any = None, dim: int = 0, broadcast_buffers: bool = True,
                 process_group: Any = None, bucket_cap_mb: float | None = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params: Any = None, param_to_hook_all_reduce: Any = None,
                 mixed_precision: Any = None, device_mesh: Any = None) -> None:
        import torch.distributed as dist

        super().__init__()
        if not dist.is_initialized():
            raise ValueError("DistributedDataParallel needs the default process group: call "
                             "torch.distributed.init_process_group() first")
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.process_group = process_group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._world_size = dist.get_world_size(process_group)
        parameters = list(dict.fromkeys(parameter for parameter in module.parameters()
                                        if parameter.requires_grad))
        self._sync_module_states()
        cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * _MIB)
        self._buckets = _buckets(parameters, cap)
        # Where each parameter's gradient goes: (bucket, index in the bucket).
        self._slots = {id(parameter): (bucket, index) for bucket in self._buckets
                       for index, parameter in enumerate(bucket.parameters)}
        self._armed = False          # this iteration's backward reduces gradients
        self._backward_started = False  # a gradient of this iteration has arrived
        self._next_bucket = 0        # the next bucket to start (buckets start in order)
        self._works: list[Any] = []
        self._ready: set[int] = set()
        self._used: set[int] = set()
        for parameter in parameters:
            parameter.register_post_accumulate_grad_hook(self._gradient_ready)

    def _sync_module_states(self) -> None:
        """Give every rank rank 0's parameters and buffers."""
        import torch.distributed as dist

        if self._world_size == 1:
            return
        source = dist.get_global_rank(self.process_group, 0) if self.process_group else 0
        works = [dist.broadcast(tensor, source, self.process_group, async_op=True)
                 for tensor in [*self.module.parameters(), *self.module.buffers()]]
        for work in works:
            work.wait()

    def _sync_buffers(self) -> None:
        import torch.distributed as dist

        buffers = list(self.module.buffers())
        if self._world_size == 1 or not buffers:
            return
        source = dist.get_global_rank(self.process_group, 0) if self.process_group else 0
        works = [dist.broadcast(buffer, source, self.process_group, async_op=True)
                 for buffer in buffers]
        for work in works:
            work.wait()

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside it, backward accumulates gradients locally without reducing them; the first
        backward after it reduces what was accumulated."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._armed and self._backward_started:
            raise RuntimeError(_UNFINISHED)
        if self.broadcast_buffers and self.require_forward_param_sync:
            self._sync_buffers()
        outputs = self.module(*inputs, **kwargs)
        self._armed = (torch.is_grad_enabled() and self.require_backward_grad_sync
                       and bool(self._buckets))
        if self._armed:
            self._start_iteration(outputs)
        return outputs

    def _start_iteration(self, outputs: Any) -> None:
        self._next_bucket = 0
        self._backward_started = False
        self._works = []
        self._ready = set()
        self._used = set()
        for bucket in self._buckets:
            bucket.pending = len(bucket.parameters)
        if self.find_unused_parameters:
            reached = _reached_leaves(outputs)
            for key, (bucket, index) in self._slots.items():
                if key not in reached:  # no gradient will come: contributes zeros
                    bucket.slot(index).zero_()
                    self._mark_ready(key, bucket)

    def _gradient_ready(self, parameter: torch.Tensor) -> None:
        """The post-accumulate-grad hook: copy the gradient into its bucket."""
        if not self._armed or id(parameter) in self._ready:
            return
        self._backward_started = True
        for work in self._works:  # MPI moves data only inside its calls: let it progress
            work.is_completed()
        bucket, index = self._slots[id(parameter)]
        bucket.slot(index).copy_(parameter.grad.detach().reshape(-1))
        self._used.add(id(parameter))
        self._mark_ready(id(parameter), bucket)

    def _mark_ready(self, key: int, bucket: _Bucket) -> None:
        import torch.distributed as dist

        self._ready.add(key)
        bucket.pending -= 1
        # Start every full bucket in order; a full bucket waits for the ones before it.
        while (self._next_bucket < len(self._buckets)
               and self._buckets[self._next_bucket].pending == 0):
            buffer = self._buckets[self._next_bucket].buffer
            self._works.append(dist.all_reduce(buffer, group=self.process_group,
                                               async_op=True))
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finish_iteration()

    def _finish_iteration(self) -> None:
        """Wait for the reductions and write the averaged gradients into ``.grad``."""
        for work in self._works:
            work.wait()
        used_anywhere = self._used_anywhere()
        with torch.no_grad():
            for bucket in self._buckets:
                bucket.buffer.div_(self._world_size)
                for index, parameter in enumerate(bucket.parameters):
                    if not used_anywhere(parameter):
                        continue  # no rank produced a gradient: .grad stays as it was
                    averaged = bucket.slot(index).view(parameter.shape)
                    if parameter.grad is None:
                        parameter.grad = averaged.clone()
                    else:
                        parameter.grad.copy_(averaged)
        self._armed = self._backward_started = False

    def _used_anywhere(self) -> Any:
        """Which parameters some rank produced a gradient for (all of them unless
        ``find_unused_parameters``: then one more all-reduce of a usage mask)."""
        if not self.find_unused_parameters:
            return lambda parameter: True
        import torch.distributed as dist

        keys = list(self._slots)
        mask = torch.tensor([key in self._used for key in keys], dtype=torch.int32)
        dist.all_reduce(mask, op=dist.ReduceOp.MAX, group=self.process_group)
        used = {key for key, flag in zip(keys, mask.tolist()) if flag}
        return lambda parameter: id(parameter) in used

    def _set_static_graph(self) -> None:
        """Declare the graph static (accepted: bucketing does not depend on it here)."""
        self.static_graph = True
