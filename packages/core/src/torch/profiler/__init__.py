"""``torch.profiler``: time the operator calls and labelled ranges of a program (CPU only)."""

from __future__ import annotations

from ._results import EventList, FunctionEventAvg
from .profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = ["EventList", "FunctionEventAvg", "ProfilerAction", "ProfilerActivity", "profile",
           "kineto_available", "record_function", "schedule", "supported_activities",
           "tensorboard_trace_handler"]


def kineto_available() -> bool:
    """Whether the activity-based profiler API (``torch.profiler.profile`` with activities,
    schedules and trace handlers) is available: it is, served by Plait's own recorder."""
    return True
