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

Uneven inputs: inside ``with model.join():`` (or ``Join([model, ...])``) a rank whose data ran
out shadows the others' iterations (``_JoinHook``). Each forward of a training rank then runs
three collectives before the module: the join context's count of training ranks, a flag saying
whether this backward reduces gradients (``no_sync``), and, when buffers are broadcast, the
choice of their source (the highest training rank). A joined rank answers each with its own
value, then all-reduces zeros for every bucket (and the unused-parameter mask). Gradients are
divided by the initial world size, or by the count of training ranks with
``divide_by_initial_world_size=False``. When every rank has joined, the parameters and buffers
of the highest last-joining rank are broadcast, so the replicas end equal.
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
        from torch.distributed.algorithms.join import _JoinConfig

        # A Joinable by its members (Joinable.__subclasshook__): subclassing would load
        # torch.distributed with torch.nn.
        self._join_config = _JoinConfig.disabled()
        self._divide_by_initial_world_size = True
        self._training_ranks: Any = None  # this iteration's count of training ranks (a Work)

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

    def _sync_buffers(self, joined: bool = False) -> None:
        """Broadcast the buffers from group rank 0, or inside a join context from the highest
        rank still training (``joined``: this rank has run out of inputs)."""
        import torch.distributed as dist

        buffers = list(self.module.buffers())
        if self._world_size == 1 or not buffers:
            return
        rank = 0
        if self._join_config.enable:
            rank = self._highest_rank(not joined)
        source = dist.get_global_rank(self.process_group, rank) if self.process_group else rank
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
        reduces = self.require_backward_grad_sync
        if self._join_config.enable and torch.is_grad_enabled():
            from torch.distributed.algorithms.join import Join

            self._training_ranks = Join.notify_join_context(self)
            self._any_rank_reduces(reduces)  # (the joined ranks learn whether to shadow)
        if self.broadcast_buffers and self.require_forward_param_sync:
            self._sync_buffers()
        outputs = self.module(*inputs, **kwargs)
        self._armed = torch.is_grad_enabled() and reduces and bool(self._buckets)
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
        divisor = self._world_size
        if not self._divide_by_initial_world_size and self._training_ranks is not None:
            self._training_ranks.wait()
            divisor = int(self._training_ranks.result()[0].item())
        with torch.no_grad():
            for bucket in self._buckets:
                bucket.buffer.div_(divisor)
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

    # -- uneven inputs (torch.distributed.algorithms.Join) ---------------------------------

    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False) -> Any:
        """A join context over this model alone: ``with model.join(): for batch in data: ...``
        where ranks may have different numbers of batches."""
        from torch.distributed.algorithms.join import Join

        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs: Any) -> Any:
        """What a joined rank runs for this model (``divide_by_initial_world_size``: see
        :meth:`join`)."""
        self._divide_by_initial_world_size = kwargs.get("divide_by_initial_world_size", True)
        return _JoinHook(self)

    @property
    def join_device(self) -> torch.device:
        """The device of the join context's counts: the parameters' device."""
        for parameter in self.module.parameters():
            return parameter.device
        return torch.device("cpu")

    @property
    def join_process_group(self) -> Any:
        """The process group the model's gradients are reduced over."""
        import torch.distributed as dist

        return self.process_group if self.process_group is not None else dist.group.WORLD

    def _any_rank_reduces(self, reduces: bool) -> bool:
        """Whether some rank's backward of this iteration reduces gradients."""
        import torch.distributed as dist

        flag = torch.tensor([1 if reduces else 0], dtype=torch.int32)
        dist.all_reduce(flag, group=self.process_group)
        return bool(flag.item())

    def _highest_rank(self, candidate: bool) -> int:
        """The highest group rank among the ranks passing ``candidate=True``."""
        import torch.distributed as dist

        rank = torch.tensor([dist.get_rank(self.process_group) if candidate else -1],
                            dtype=torch.int64)
        dist.all_reduce(rank, op=dist.ReduceOp.MAX, group=self.process_group)
        return int(rank.item())

    def _shadow_iteration(self) -> None:
        """On a joined rank: the collectives of one training iteration of the others, with
        zero gradients and an empty usage mask."""
        import torch.distributed as dist

        reduces = self._any_rank_reduces(False)
        if self.broadcast_buffers and self.require_forward_param_sync:
            self._sync_buffers(joined=True)
        if not reduces or not self._buckets:
            return
        works = []
        for bucket in self._buckets:
            bucket.buffer.zero_()
            works.append(dist.all_reduce(bucket.buffer, group=self.process_group,
                                         async_op=True))
        for work in works:
            work.wait()
        if self.find_unused_parameters:
            mask = torch.zeros(len(self._slots), dtype=torch.int32)
            dist.all_reduce(mask, op=dist.ReduceOp.MAX, group=self.process_group)

    def _sync_final_model(self, is_last_joiner: bool) -> None:
        """Give every rank the parameters and buffers of the highest last-joining rank."""
        import torch.distributed as dist

        rank = self._highest_rank(is_last_joiner)
        source = dist.get_global_rank(self.process_group, rank) if self.process_group else rank
        works = [dist.broadcast(tensor, source, self.process_group, async_op=True)
                 for tensor in [*self.module.parameters(), *self.module.buffers()]]
        for work in works:
            work.wait()

    def _set_static_graph(self) -> None:
        """Declare the graph static (accepted: bucketing does not depend on it here)."""
        self.static_graph = True


class _JoinHook:
    """DistributedDataParallel's join hook: a joined rank shadows each training iteration's
    collectives (``main_hook``), and the final model is synchronised when all have joined
    (``post_hook``). (A JoinHook by duck typing: see ``DistributedDataParallel.__init__``.)"""

    def __init__(self, ddp: DistributedDataParallel) -> None:
        self.ddp = ddp

    def main_hook(self) -> None:
        self.ddp._shadow_iteration()

    def post_hook(self, is_last_joiner: bool) -> None:
        self.ddp._sync_final_model(is_last_joiner)
