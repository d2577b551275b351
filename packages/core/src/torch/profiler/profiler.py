"""``torch.profiler.profile``, ``record_function``, ``schedule`` and the trace handlers."""

from __future__ import annotations

import enum
import functools
import gzip
import json
import os
import socket
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, TypeVar

from ._recorder import Event, EventRecorder, active_recorder
from ._results import EventList, chrome_trace

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]

_F = TypeVar("_F", bound=Callable[..., Any])


class ProfilerActivity(enum.Enum):
    """What a profile records; only the CPU is timed here (other activities are accepted)."""

    CPU = 0
    CUDA = 1
    XPU = 2
    MTIA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities() -> set[ProfilerActivity]:
    """The activities this build can record: the CPU."""
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    """What a schedule asks of the profiler at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0,
             skip_first: int = 0, skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """A step -> action function: after ``skip_first`` steps, cycles of ``wait`` idle,
    ``warmup`` warming and ``active`` recording steps (the last one saves), ``repeat`` times
    (0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        import warnings
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        # skip_first_wait drops the first cycle's wait phase
        if skip_first_wait:
            step += wait
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        phase = step % cycle
        if phase < wait:
            return ProfilerAction.NONE
        if phase < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if phase < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


class profile:
    """Records the operator calls and ``record_function`` ranges made inside it.

    ``activities``, ``profile_memory``, ``with_stack``, ``with_flops`` and ``with_modules`` are
    accepted for compatibility; only CPU wall time (and input shapes with ``record_shapes``) is
    recorded. With a ``schedule``, each :meth:`step` advances it and ``on_trace_ready`` is
    called with the profiler at the end of every active window."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[profile], Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False, with_modules: bool = False,
                 experimental_config: Any = None, execution_trace_observer: Any = None,
                 acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback: Callable[[], str] | None = None,
                 post_processing_timeout_s: float | None = None) -> None:
        self.activities = set(activities) if activities is not None else supported_activities()
        self.schedule = schedule or _always_record
        # with a schedule each step is a "ProfilerStep#<n>" range, as in PyTorch (TensorBoard's
        # profiler plugin finds the steps of a trace by these)
        self.record_steps = schedule is not None
        self._step_range: record_function | None = None
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._recorder: EventRecorder | None = None
        self._events = EventList()
        self._accumulated: list[Event] = []

    # --- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def start(self) -> None:
        """Begin the schedule at its current step."""
        self._enter_action(self.current_action)
        self._open_step_range()

    def stop(self) -> None:
        """End profiling; a window that was recording is finished (and handed to
        ``on_trace_ready``)."""
        self._close_step_range()
        if self._recorder is not None:
            self._finish_window()

    def step(self) -> None:
        """Mark the end of a training step: advance the schedule."""
        self._close_step_range()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if self._recorder is not None and previous is ProfilerAction.RECORD_AND_SAVE:
            self._finish_window()
        elif self._recorder is not None and self.current_action in (ProfilerAction.NONE,
                                                                    ProfilerAction.WARMUP):
            self._finish_window()
        self._enter_action(self.current_action)
        self._open_step_range()

    def _open_step_range(self) -> None:
        if self.record_steps:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}")
            self._step_range.__enter__()

    def _close_step_range(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def _enter_action(self, action: ProfilerAction) -> None:
        recording = action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if recording and self._recorder is None:
            self._recorder = EventRecorder(self.record_shapes)
            self._recorder.start()

    def _finish_window(self) -> None:
        recorder = self._recorder
        assert recorder is not None
        recorder.stop()
        self._recorder = None
        events = recorder.events if not self.acc_events else self._accumulated + recorder.events
        self._accumulated = events
        self._events = EventList(events, pid=recorder.pid)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # --- results ---------------------------------------------------------------------------
    def events(self) -> EventList:
        """The events of the last finished window."""
        return self._events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The events grouped by name (and input shapes when asked), with their totals."""
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        """Write the last window's events as chrome-trace JSON (gzipped if ``path`` ends .gz)."""
        document = chrome_trace(self._events, os.getpid())
        if path.endswith(".gz"):
            with gzip.open(path, "wt", encoding="utf-8") as f:
                json.dump(document, f)
        else:
            with open(path, "w", encoding="utf-8") as f:
                json.dump(document, f)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write ``name self-time`` lines (stacks are not recorded, so each is one frame)."""
        with open(path, "w", encoding="utf-8") as f:
            for event in self._events:
                f.write(f"{event.name} {event.self_ns // 1000}\n")


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False,
                              use_python_export: bool = False) -> Callable[[profile], None]:
    """An ``on_trace_ready`` handler writing ``<worker>.<ns>.pt.trace.json[.gz]`` into
    ``dir_name`` (the time in nanoseconds, as PyTorch names them), where TensorBoard's
    profiler plugin finds traces."""

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        suffix = ".pt.trace.json" + (".gz" if use_gzip else "")
        stamp = time.time_ns()
        # two windows ending at the same clock reading must not overwrite each other
        while os.path.exists(os.path.join(dir_name, f"{worker}.{stamp}{suffix}")):
            stamp += 1
        prof.export_chrome_trace(os.path.join(dir_name, f"{worker}.{stamp}{suffix}"))

    return handler


class record_function:
    """Label a block (``with record_function("name"):``) or a function (as a decorator) so the
    active profiler records it as one range; free when no profiler is active."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._event: Event | None = None
        self._recorder: EventRecorder | None = None

    def __enter__(self) -> record_function:
        self._recorder = active_recorder()
        if self._recorder is not None:
            self._event = self._recorder.begin(self.name, user=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._recorder is not None and self._event is not None:
            self._recorder.end(self._event)
        self._recorder = self._event = None

    def __call__(self, fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapped  # type: ignore[return-value]
