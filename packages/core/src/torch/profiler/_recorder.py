"""The event recorder behind ``torch.profiler`` and ``torch.autograd.profiler``.

Operator calls are seen through a dispatch mode (:class:`OpRecorder`), so the dispatcher pays
nothing while no profiler is active: the mode exists only inside an active profiling window.
``record_function`` ranges are recorded by whichever recorder is innermost-active on the thread.
Times are wall-clock nanoseconds from :func:`time.perf_counter_ns`, reported in microseconds,
as PyTorch's tables and chrome traces are.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..utils._python_dispatch import TorchDispatchMode

__all__ = ["Event", "EventRecorder", "OpRecorder", "active_recorder"]

_state = threading.local()
_STEP_PREFIX = "ProfilerStep#"
_STEP_WILDCARD = "ProfilerStep*"


@dataclass
class Event:
    """One timed range: an operator call or a ``record_function`` block."""

    name: str
    start_ns: int
    end_ns: int = 0
    thread: int = 0
    input_shapes: list[list[int]] = field(default_factory=list)
    children_ns: int = 0  # time spent in ranges nested directly inside this one
    is_user_range: bool = False
    trace_name: str = ""  # the name in a chrome trace, where it differs from ``name``

    @property
    def duration_ns(self) -> int:
        """The whole range, children included."""
        return self.end_ns - self.start_ns

    @property
    def self_ns(self) -> int:
        """The range less the ranges recorded inside it."""
        return self.duration_ns - self.children_ns

    # PyTorch's FunctionEvent names, in microseconds
    @property
    def key(self) -> str:
        """The name events are grouped by."""
        return self.name

    @property
    def cpu_time_total(self) -> float:
        """The whole range, in microseconds."""
        return self.duration_ns / 1e3

    cpu_time = cpu_time_total

    @property
    def self_cpu_time_total(self) -> float:
        """The range less its children, in microseconds."""
        return self.self_ns / 1e3


class EventRecorder:
    """Collects :class:`Event` ranges opened and closed on any thread while it is active."""

    def __init__(self, record_shapes: bool = False) -> None:
        self.record_shapes = record_shapes
        self.events: list[Event] = []
        self._open: list[Event] = []
        self._mode: OpRecorder | None = None
        self.pid = os.getpid()

    def begin(self, name: str, args: tuple[Any, ...] = (), user: bool = False) -> Event:
        """Open a range now; close it with :meth:`end`."""
        shapes = _shapes_of(args) if self.record_shapes else []
        # as in PyTorch, tables add the numbered step ranges up under one name; traces keep them
        grouped = _STEP_WILDCARD if name.startswith(_STEP_PREFIX) else name
        event = Event(grouped, time.perf_counter_ns(), thread=threading.get_ident(),
                      input_shapes=shapes, is_user_range=user,
                      trace_name=name if grouped != name else "")
        self._open.append(event)
        return event

    def end(self, event: Event) -> None:
        """Close ``event`` and charge its time to the range it is nested in."""
        event.end_ns = time.perf_counter_ns()
        if self._open and self._open[-1] is event:
            self._open.pop()
        elif event in self._open:
            self._open.remove(event)
        if self._open:
            self._open[-1].children_ns += event.duration_ns
        self.events.append(event)

    def start(self) -> None:
        """Begin seeing operator calls on this thread."""
        stack: list[EventRecorder] = getattr(_state, "recorders", None) or []
        stack.append(self)
        _state.recorders = stack
        self._mode = OpRecorder(self)
        self._mode.__enter__()

    def stop(self) -> None:
        """Stop seeing operator calls; ranges still open are closed now."""
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None
        stack: list[EventRecorder] = getattr(_state, "recorders", [])
        if self in stack:
            stack.remove(self)
        for event in reversed(list(self._open)):
            self.end(event)


def active_recorder() -> EventRecorder | None:
    """The innermost recorder active on this thread, or None."""
    stack = getattr(_state, "recorders", None)
    return stack[-1] if stack else None


def _shapes_of(args: tuple[Any, ...]) -> list[list[int]]:
    # PyTorch records [] for arguments that are not tensors
    return [list(a.shape) if hasattr(a, "shape") and hasattr(a, "dtype") else [] for a in args]


class OpRecorder(TorchDispatchMode):
    """Times every operator call as an ``aten::<name>`` event of its recorder."""

    def __init__(self, recorder: EventRecorder) -> None:
        self.recorder = recorder

    def __torch_dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        # PyTorch names operator events by the packet, without the overload: aten::add
        name = f"{getattr(func, 'namespace', 'aten')}::{str(func.name).split('.')[0]}"
        event = self.recorder.begin(name, args)
        try:
            return func(*args, **(kwargs or {}))
        finally:
            self.recorder.end(event)
