"""The generic join context manager: training on uneven inputs across the ranks of a group.

A rank whose data ran out leaves the ``with Join(...)`` block early; the others still run
iterations whose collectives need every rank. The early rank then *shadows* them: each round
it all-reduces a zero (the others' :meth:`Join.notify_join_context` all-reduce a one, so the sum
counts the ranks still training) and, while that count is not zero, runs every joinable's
:meth:`JoinHook.main_hook`, which issues the same collectives one iteration of the others
would. When the count reaches zero every rank runs :meth:`JoinHook.post_hook`, told whether it
was among the last to join.

With ``throw_on_early_termination=True`` the first rank to run out makes every rank raise
instead: the training ranks' notification is followed by a second all-reduce, which the
joined rank answers with a one.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from types import TracebackType
from typing import Any, NamedTuple

import torch

__all__ = ["Join", "JoinHook", "Joinable"]

# Rounds of shadowing after which the joined rank warns that the others may not finish.
_WARN_AFTER_ROUNDS = 1000


class JoinHook:
    """What a joined rank runs for one :class:`Joinable`: ``main_hook`` once per iteration the
    other ranks still run, ``post_hook`` once every rank has joined. Subclass it and override
    either; both do nothing by default."""

    def main_hook(self) -> None:
        """Shadow the collectives of one training iteration (forward, backward and optimizer
        step) of the ranks that have not joined."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Run once every rank has joined; ``is_last_joiner`` is True on the ranks that joined
        last."""


class _JoinConfig(NamedTuple):
    """How a joinable takes part in the join context it is in."""

    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool  # the one whose notification counts the ranks still training

    @staticmethod
    def disabled() -> _JoinConfig:
        """The configuration outside any join context: notifications do nothing."""
        return _JoinConfig(enable=False, throw_on_early_termination=False,
                           is_first_joinable=False)


class Joinable(ABC):
    """A class whose per-iteration collectives a joined rank can shadow: it gives a
    :class:`JoinHook`, the device of the tensors the context all-reduces, and its process
    group, and calls :meth:`Join.notify_join_context` before its own collectives each
    iteration."""

    @abstractmethod
    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.disabled()

    @classmethod
    def __subclasshook__(cls, other: type) -> Any:
        # A class that provides the three members is a Joinable without subclassing (as
        # collections.abc's classes): DistributedDataParallel is one, so that torch.nn need
        # not load torch.distributed to define it.
        if cls is Joinable:
            members = ("join_hook", "join_device", "join_process_group")
            if all(any(name in base.__dict__ for base in other.__mro__) for name in members):
                return True
        return NotImplemented

    @abstractmethod
    def join_hook(self, **kwargs: Any) -> JoinHook:
        """The hook a joined rank runs for this joinable (``kwargs``: those given to
        :class:`Join`)."""

    @property
    @abstractmethod
    def join_device(self) -> torch.device:
        """The device of the tensors the join context all-reduces."""

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        """The process group of the joinable's collectives."""


class Join:
    """``with Join([model, optimizer, ...]):`` around a training loop whose ranks may run
    different numbers of iterations.

    ``joinables`` share one process group (a ValueError otherwise); their hooks run in the
    order given. ``enable=False`` makes the context do nothing. ``throw_on_early_termination``
    makes every rank raise a RuntimeError as soon as one rank runs out. Other keyword
    arguments go to every joinable's ``join_hook``.
    """

    def __init__(self, joinables: list[Any], enable: bool = True,
                 throw_on_early_termination: bool = False, **kwargs: Any) -> None:
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = list(joinables)
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for index, joinable in enumerate(self._joinables):
            joinable._join_config = _JoinConfig(
                enable=enable, throw_on_early_termination=throw_on_early_termination,
                is_first_joinable=index == 0)
        import torch.distributed as dist

        # (None names the default group, as group.WORLD does)
        groups = {id(joinable.join_process_group or dist.group.WORLD)
                  for joinable in self._joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = self._joinables[0].join_process_group
        self._device = self._joinables[0].join_device

    def __enter__(self) -> Join:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        try:
            if not self._enable or kind is not None:
                return  # an exception propagates; the other ranks are not shadowed
            is_last_joiner = True
            rounds = 0
            while self._count_training_ranks() > 0:
                if self._throw_on_early_termination:
                    self._make_ranks_terminate()
                for hook in self._join_hooks:
                    hook.main_hook()
                is_last_joiner = False
                rounds += 1
                if rounds == _WARN_AFTER_ROUNDS:
                    warnings.warn(
                        f"Detected uneven input skew of greater than {_WARN_AFTER_ROUNDS}. "
                        "This means that rank "
                        f"{self._rank()} has at least {_WARN_AFTER_ROUNDS} fewer inputs than "
                        "other currently-active ranks. This level of skew could lead to "
                        "performance degradation during training.", stacklevel=2)
            for hook in self._join_hooks:
                hook.post_hook(is_last_joiner)
        finally:
            for joinable in self._joinables:
                joinable._join_config = _JoinConfig.disabled()

    def _rank(self) -> int:
        import torch.distributed as dist

        return dist.get_rank(self._process_group)

    def _count_training_ranks(self) -> int:
        """The number of ranks still training: each adds a one in its notification, a joined
        rank a zero here."""
        import torch.distributed as dist

        count = torch.zeros(1, device=self._device)
        dist.all_reduce(count, group=self._process_group)
        return int(count.item())

    def _make_ranks_terminate(self) -> None:
        """Answer the training ranks' termination check with a one, then raise here too."""
        import torch.distributed as dist

        dist.all_reduce(torch.ones(1, device=self._device), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank()} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable: Any) -> Any:
        """Called by ``joinable`` at the start of each iteration, before its collectives: tell
        the joined ranks that this one still trains. Returns the asynchronous all-reduce's
        work handle (its result: the number of ranks still training) for the first joinable
        of an enabled context, None otherwise. With ``throw_on_early_termination``, raises a
        RuntimeError once some rank has run out of inputs. ``work.result()[0]`` holds the
        count once the handle is waited on."""
        config = getattr(joinable, "_join_config", None)
        if config is None:
            raise AttributeError(
                f"{type(joinable).__name__} has no join configuration: a Joinable must call "
                "Joinable.__init__() in its constructor")
        if not config.is_first_joinable or not config.enable:
            return None
        import torch.distributed as dist

        device, group = joinable.join_device, joinable.join_process_group
        training = torch.ones(1, device=device)
        work = dist.all_reduce(training, group=group, async_op=True)
        if config.throw_on_early_termination:
            terminate = torch.zeros(1, device=device)
            dist.all_reduce(terminate, group=group)
            if terminate.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work
