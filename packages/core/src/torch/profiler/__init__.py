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
           "record_function", "schedule", "supported_activities", "tensorboard_trace_handler"]
