"""``ZeroRedundancyOptimizer``: each rank keeps the optimizer state of its share of the
parameters only (ZeRO stage 1), steps that share, then sends it to the other ranks.

Parameters are shared out per group, largest first, each to the rank with the fewest elements
so far, as PyTorch does. Every rank still holds every parameter and every (all-reduced, e.g. by
DistributedDataParallel) gradient; after its local step, each rank broadcasts the parameters it
owns. ``param_groups`` lists every parameter, as a single optimizer would; learning-rate
schedulers change it and each step carries the change to the local optimizer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.join import Join, JoinHook, _JoinConfig
from torch.optim import Optimizer

__all__ = ["ZeroRedundancyOptimizer"]

_NOT_CONSOLIDATED = ("Optimizer state has not been consolidated on this rank. Please call "
                     "`consolidate_state_dict(to={})` on all ranks beforehand and make sure "
                     "that `state_dict()` is called on rank {}")


class _ZeROJoinHook(JoinHook):
    """A joined rank still takes part in the parameter broadcasts of the ranks training."""

    def __init__(self, zero: ZeroRedundancyOptimizer) -> None:
        self.zero = zero

    def main_hook(self) -> None:
        self.zero._broadcast_params()


class ZeroRedundancyOptimizer(Optimizer):
    """``ZeroRedundancyOptimizer(params, optimizer_class, process_group=None, **defaults)``:
    ``optimizer_class(**defaults)`` over this rank's share of ``params``. A Joinable (for
    :class:`~torch.distributed.algorithms.Join`)."""

    def __init__(self, params: Iterable[Any], optimizer_class: type[Optimizer],
                 process_group: Any = None, parameters_as_bucket_view: bool = False,
                 overlap_with_ddp: bool = False, **defaults: Any) -> None:
        if overlap_with_ddp:
            raise NotImplementedError(
                "ZeroRedundancyOptimizer(overlap_with_ddp=True) needs DDP communication "
                "hooks, which Plait's DistributedDataParallel does not have")
        self._local: Optimizer | None = None
        super().__init__(params, defaults)
        self._join_config = _JoinConfig.disabled()
        self.process_group = process_group
        self.world_size = dist.get_world_size(process_group)
        self.rank = dist.get_rank(process_group)
        self.global_rank = (self.rank if process_group is None
                            else dist.get_global_rank(process_group, self.rank))
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._optim_constructor = optimizer_class
        self._optim_defaults = defaults
        self._consolidated: dict[str, Any] | None = None
        self._consolidated_to = -1
        self._local = optimizer_class(self._partition()[self.rank], **defaults)

    # -- the partition ---------------------------------------------------------------------

    def _partition(self) -> list[list[dict[str, Any]]]:
        """Per rank, one group per group of ``param_groups`` (possibly without parameters)
        with the group's options and that rank's share of its parameters."""
        shares: list[list[dict[str, Any]]] = [[] for _ in range(self.world_size)]
        for group in self.param_groups:
            owned: list[list[Any]] = [[] for _ in range(self.world_size)]
            sizes = [0] * self.world_size
            for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                rank = sizes.index(min(sizes))
                owned[rank].append(p)
                sizes[rank] += p.numel()
            for rank in range(self.world_size):
                # in the group's own order, so that the local state follows it
                mine = {id(p) for p in owned[rank]}
                share = {k: v for k, v in group.items() if k not in ("params", "param_names")}
                share["params"] = [p for p in group["params"] if id(p) in mine]
                shares[rank].append(share)
        return shares

    def _owners(self) -> list[tuple[int, list[Any]]]:
        """(global rank, its parameters) for every rank."""
        shares = self._partition()
        return [(rank if self.process_group is None
                 else dist.get_global_rank(self.process_group, rank),
                 [p for share in shares[rank] for p in share["params"]])
                for rank in range(self.world_size)]

    @property
    def optim(self) -> Optimizer:
        """The local optimizer over this rank's share (PyTorch's attribute)."""
        assert self._local is not None
        return self._local

    # -- stepping --------------------------------------------------------------------------

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group, shared out like the others (the local optimizer gets this rank's
        part)."""
        super().add_param_group(param_group)
        if self._local is not None:
            self._local.add_param_group(self._partition()[self.rank][-1])

    def _sync_options(self, source: list[dict[str, Any]], target: list[dict[str, Any]]) -> None:
        for src, dst in zip(source, target):
            for key, value in src.items():
                if key not in ("params", "param_names"):
                    dst[key] = value

    def _broadcast_params(self) -> None:
        if self.world_size == 1:
            return
        with torch.no_grad():
            for owner, params in self._owners():
                for p in params:
                    dist.broadcast(p.data, src=owner, group=self.process_group)

    def step(self, closure: Callable[[], Any] | None = None, **kwargs: Any) -> Any:
        """The local optimizer's step over this rank's share, then every share sent from
        its owner to the other ranks. Returns the closure's loss, if any."""
        Join.notify_join_context(self)
        self._sync_options(self.param_groups, self.optim.param_groups)
        loss = self.optim.step(closure, **kwargs) if closure is not None else \
            self.optim.step(**kwargs)
        self._sync_options(self.optim.param_groups, self.param_groups)
        self._broadcast_params()
        return loss

    # -- state -----------------------------------------------------------------------------

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Collect every rank's optimizer state on rank ``to`` (every rank must call it);
        :meth:`state_dict` on that rank then returns the whole optimizer's state."""
        self._sync_options(self.param_groups, self.optim.param_groups)
        local = self.optim.state_dict()
        if self.world_size == 1:
            gathered = [local]
        else:
            gathered = [None] * self.world_size if self.rank == to else None
            dist.gather_object(local, gathered, dst=to if self.process_group is None else
                               dist.get_global_rank(self.process_group, to),
                               group=self.process_group)
        self._consolidated_to = to
        if self.rank != to:
            self._consolidated = None
            return
        ids: dict[int, int] = {}
        for group in self.param_groups:
            for p in group["params"]:
                ids.setdefault(id(p), len(ids))
        state: dict[int, Any] = {}
        shares = self._partition()
        for rank, rank_state in enumerate(gathered):
            local_params = [p for share in shares[rank] for p in share["params"]]
            for local_id, value in rank_state["state"].items():
                state[ids[id(local_params[local_id])]] = value
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [ids[id(p)] for p in group["params"]]
            groups.append(packed)
        self._consolidated = {"state": state, "param_groups": groups}

    def state_dict(self) -> dict[str, Any]:
        """The whole optimizer's state, in a single optimizer's layout; only on the rank that
        :meth:`consolidate_state_dict` collected it on."""
        if self._consolidated is None:
            to = max(self._consolidated_to, 0)
            raise RuntimeError(_NOT_CONSOLIDATED.format(to, to))
        return self._consolidated

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a whole optimizer's state (from :meth:`state_dict`, on any rank): each rank
        keeps its share."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        global_ids = {id(p): saved_id for group, saved in zip(self.param_groups, saved_groups)
                      for p, saved_id in zip(group["params"], saved["params"])}
        for group, saved in zip(self.param_groups, saved_groups):
            group.update({k: v for k, v in saved.items() if k != "params"})
        local_groups = self.optim.param_groups
        local_state = {}
        packed_groups = []
        local_id = 0
        for group in local_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = list(range(local_id, local_id + len(group["params"])))
            for p in group["params"]:
                value = state_dict["state"].get(global_ids[id(p)])
                if value is not None:
                    local_state[local_id] = value
                local_id += 1
            packed_groups.append(packed)
        self._sync_options(self.param_groups, packed_groups)
        self.optim.load_state_dict({"state": local_state, "param_groups": packed_groups})

    # -- Joinable ----------------------------------------------------------------------------

    def join_hook(self, **kwargs: Any) -> JoinHook:
        """The hook a joined rank runs: it takes part in the parameter broadcasts."""
        return _ZeROJoinHook(self)

    @property
    def join_device(self) -> torch.device:
        """The device of the first parameter."""
        return self.param_groups[0]["params"][0].device

    @property
    def join_process_group(self) -> Any:
        """The optimizer's process group."""
        return self.process_group
