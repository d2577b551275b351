"""Profiler results: events grouped by name (``key_averages``), their table and chrome trace."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any

from ._recorder import Event

__all__ = ["EventList", "FunctionEventAvg", "format_time"]


def format_time(us: float) -> str:
    """Microseconds as PyTorch's tables show them: us below 1 ms, then ms, then s."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class FunctionEventAvg:
    """The totals of every event sharing one key (name, and input shapes when grouped so)."""

    def __init__(self, key: str, input_shapes: list[list[int]] | None = None) -> None:
        self.key = key
        self.input_shapes = input_shapes or []
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.is_user_annotation = False
        # This profiler times the CPU only; device and memory columns read zero.
        self.device_time_total = self.self_device_time_total = 0.0
        self.cuda_time_total = self.self_cuda_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_memory_usage = self.self_device_memory_usage = 0
        self.flops = 0

    def add(self, event: Event) -> FunctionEventAvg:
        """Count one more event."""
        self.count += 1
        self.cpu_time_total += event.duration_ns / 1e3
        self.self_cpu_time_total += event.self_ns / 1e3
        self.is_user_annotation = event.is_user_range
        return self

    @property
    def cpu_time(self) -> float:
        """The average total time per call, in microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self) -> float:
        """The average device time per call (always 0 here)."""
        return 0.0

    cuda_time = device_time

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} "
                f"self_cpu_time={format_time(self.self_cpu_time_total)} "
                f"cpu_time={format_time(self.cpu_time)} count={self.count}>")


# sort_by names PyTorch accepts -> the attribute they sort on (descending)
_SORT_KEYS: dict[str, str] = {
    "cpu_time": "cpu_time", "cuda_time": "device_time", "device_time": "device_time",
    "xpu_time": "device_time",
    "cpu_time_total": "cpu_time_total", "cuda_time_total": "device_time_total",
    "device_time_total": "device_time_total", "xpu_time_total": "device_time_total",
    "self_cpu_time_total": "self_cpu_time_total",
    "self_cuda_time_total": "self_device_time_total",
    "self_device_time_total": "self_device_time_total",
    "self_xpu_time_total": "self_device_time_total",
    "cpu_memory_usage": "cpu_memory_usage", "self_cpu_memory_usage": "self_cpu_memory_usage",
    "cuda_memory_usage": "device_memory_usage", "device_memory_usage": "device_memory_usage",
    "self_cuda_memory_usage": "self_device_memory_usage",
    "self_device_memory_usage": "self_device_memory_usage",
    "count": "count", "flops": "flops",
}


class EventList(list):  # type: ignore[type-arg]
    """A list of events (or of :class:`FunctionEventAvg`) with PyTorch's reporting methods."""

    def __init__(self, items: Iterable[Any] = (), *, pid: int = 0) -> None:
        super().__init__(items)
        self._pid = pid

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        """One :class:`FunctionEventAvg` per event name (and input shapes if asked), in order of
        first appearance."""
        groups: dict[tuple[str, str], FunctionEventAvg] = {}
        for event in sorted(self, key=lambda e: e.start_ns):
            shapes = event.input_shapes if group_by_input_shape else []
            key = (event.name, str(shapes))
            if key not in groups:
                groups[key] = FunctionEventAvg(event.name, shapes)
            groups[key].add(event)
        return EventList(groups.values(), pid=self._pid)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80,
              header: str | None = None, top_level_events_only: bool = False) -> str:
        """The averages as PyTorch's fixed-width text table, sorted descending by ``sort_by``."""
        averages = list(self if all(isinstance(r, FunctionEventAvg) for r in self)
                        else self.key_averages())
        rows = list(averages)
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'")
            rows.sort(key=lambda r: getattr(r, _SORT_KEYS[sort_by]), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        return _render(rows, averages, max_name_column_width, max_shapes_column_width, header)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a chrome trace (``chrome://tracing``, Perfetto) JSON file."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(chrome_trace(self, self._pid), f)

    def total_average(self) -> FunctionEventAvg:
        """All events together under the key ``Total``."""
        total = FunctionEventAvg("Total")
        for event in self:
            total.add(event)
        return total

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of every event's self time, in microseconds."""
        return sum(e.self_ns for e in self) / 1e3


def chrome_trace(events: Iterable[Event], pid: int) -> dict[str, Any]:
    """The chrome-trace document of ``events``: complete ("X") events, times in microseconds."""
    trace = []
    for event in events:
        args: dict[str, Any] = {}
        if event.input_shapes:
            args["Input Dims"] = event.input_shapes
        trace.append({"ph": "X", "cat": "user_annotation" if event.is_user_range else "cpu_op",
                      "name": event.trace_name or event.name, "pid": pid, "tid": event.thread,
                      "ts": event.start_ns / 1e3, "dur": event.duration_ns / 1e3, "args": args})
    return {"schemaVersion": 1, "traceEvents": trace, "displayTimeUnit": "ms",
            "deviceProperties": [], "traceName": f"plait-{os.getpid()}"}


_COLUMNS: tuple[tuple[str, Callable[[FunctionEventAvg, float], str]], ...] = (
    ("Self CPU %", lambda r, t: f"{100 * r.self_cpu_time_total / t:.2f}%" if t else "0.00%"),
    ("Self CPU", lambda r, t: format_time(r.self_cpu_time_total)),
    ("CPU total %", lambda r, t: f"{100 * r.cpu_time_total / t:.2f}%" if t else "0.00%"),
    ("CPU total", lambda r, t: format_time(r.cpu_time_total)),
    ("CPU time avg", lambda r, t: format_time(r.cpu_time)),
    ("# of Calls", lambda r, t: str(r.count)),
)


def _render(rows: list[FunctionEventAvg], every: list[FunctionEventAvg], name_width: int,
            shapes_width: int, header: str | None) -> str:
    # percentages are of the whole profile's self time, as PyTorch's are
    total = sum(r.self_cpu_time_total for r in every)
    with_shapes = any(r.input_shapes for r in rows)
    name_w = min(max([len("Name")] + [len(r.key) for r in rows]) + 4, name_width)
    widths = [name_w] + [12] * len(_COLUMNS)
    titles = ["Name"] + [title for title, _ in _COLUMNS]
    if with_shapes:
        widths.append(min(max([12] + [len(str(r.input_shapes)) for r in rows]) + 2,
                          shapes_width))
        titles.append("Input Shapes")
    rule = "".join("-" * w + "  " for w in widths)

    def line(cells: list[str]) -> str:
        return "".join(c[: w].rjust(w) + "  " for c, w in zip(cells, widths, strict=True))

    out = [header] if header else []
    out += [rule, line(titles), rule]
    for row in rows:
        cells = [row.key] + [cell(row, total) for _, cell in _COLUMNS]
        if with_shapes:
            cells.append(str(row.input_shapes))
        out.append(line(cells))
    out += [rule, f"Self CPU time total: {format_time(total)}", ""]
    return "\n".join(out)
