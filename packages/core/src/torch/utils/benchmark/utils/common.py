"""``Measurement``: the per-run times of one timed statement and their statistics."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

__all__ = ["Measurement", "TaskSpec", "select_unit", "trim_sigfig"]

# (seconds per unit, unit name), largest first
_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"))


def select_unit(seconds: float) -> tuple[str, float]:
    """The unit to print ``seconds`` in and its size in seconds (``("us", 1e-6)``)."""
    for scale, name in _UNITS:
        if seconds >= scale:
            return name, scale
    return "ns", 1e-9


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures."""
    if x == 0 or not math.isfinite(x):
        return x
    digits = n - 1 - math.floor(math.log10(abs(x)))
    return round(x, digits)


def _quantile(sorted_values: list[float], q: float) -> float:
    """The ``q`` quantile, interpolating linearly between order statistics."""
    if not sorted_values:
        return math.nan
    pos = q * (len(sorted_values) - 1)
    low = math.floor(pos)
    high = min(low + 1, len(sorted_values) - 1)
    frac = pos - low
    return sorted_values[low] * (1 - frac) + sorted_values[high] * frac


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What was timed: the statement, its setup and the labels that place it in a table."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label, else the statement."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        return self.stmt


@dataclasses.dataclass
class Measurement:
    """The result of timing one statement: ``raw_times`` holds the seconds of each run of
    ``number_per_run`` executions; :attr:`times` the seconds per execution."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        # stmt, label, sub_label, description, num_threads... come from the task
        if name != "task_spec" and name in {f.name for f in dataclasses.fields(TaskSpec)}:
            return getattr(self.task_spec, name)
        raise AttributeError(name)

    @property
    def times(self) -> list[float]:
        """Seconds per execution, one per run."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def _sorted(self) -> list[float]:
        return sorted(self.times)

    @property
    def mean(self) -> float:
        """Mean seconds per execution."""
        times = self.times
        return sum(times) / len(times) if times else math.nan

    @property
    def median(self) -> float:
        """Median seconds per execution."""
        return _quantile(self._sorted, 0.5)

    @property
    def iqr(self) -> float:
        """Interquartile range (75th minus 25th percentile) of seconds per execution."""
        values = self._sorted
        return _quantile(values, 0.75) - _quantile(values, 0.25)

    @property
    def title(self) -> str:
        """The task's title (label and sub-label, else the statement)."""
        return self.task_spec.title

    @property
    def has_warnings(self) -> bool:
        """Whether the runs vary so much (IQR over 10% of the median) or are so few that the
        median is unreliable."""
        median = self.median
        return len(self.times) < 4 or (median > 0 and self.iqr / median > 0.1)

    @property
    def significant_figures(self) -> int:
        """How many figures of the median the spread of the runs supports (1 to 4)."""
        median, iqr = self.median, self.iqr
        if not median or not iqr or len(self.times) < 2:
            return 4
        # the standard error of the median, estimated from the IQR of a normal sample
        err = iqr / 1.349 * 1.2533 / math.sqrt(len(self.times))
        return max(1, min(4, math.floor(math.log10(median / err)) + 1))

    @staticmethod
    def merge(measurements: list[Measurement]) -> list[Measurement]:
        """One measurement per task, pooling the runs of equal tasks."""
        grouped: dict[TaskSpec, list[Measurement]] = {}
        for m in measurements:
            grouped.setdefault(m.task_spec, []).append(m)
        merged = []
        for spec, group in grouped.items():
            times = [t for m in group for t in m.times]
            merged.append(Measurement(1, times, spec))
        return merged

    def __repr__(self) -> str:
        unit, scale = select_unit(self.median)
        lines = [f"<{type(self).__module__}.{type(self).__name__} object at {id(self):#x}>"]
        if self.label is not None:
            lines.append(self.title)
        if self.description:
            lines.append(self.description)
        lines.append(self.stmt)
        times = self._sorted
        if len(times) > 1:
            lines.append(f"  Median: {self.median / scale:.2f} {unit}")
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({_quantile(times, 0.25) / scale:.2f} to "
                         f"{_quantile(times, 0.75) / scale:.2f})")
        else:
            lines.append(f"  {self.median / scale:.2f} {unit}")
        threads = "thread" if self.num_threads == 1 else "threads"
        lines.append(f"  {len(times)} measurement{'s' if len(times) != 1 else ''}, "
                     f"{self.number_per_run} runs per measurement, {self.num_threads} {threads}")
        if self.has_warnings and len(times) > 1:
            lines.append("  WARNING: Interquartile range is "
                         f"{100 * self.iqr / self.median:.1f}% of the median measurement.")
        return "\n".join(lines)
