"""``Timer``: time a Python statement the way :mod:`timeit` does, with PyTorch's
conveniences (thread count, labels for :class:`~torch.utils.benchmark.Compare`, automatic
choice of how many executions make one run)."""

from __future__ import annotations

import enum
import timeit
from collections.abc import Callable
from typing import Any

from torch.utils.benchmark.utils.common import Measurement, TaskSpec

__all__ = ["Language", "Timer", "timer"]

timer: Callable[[], float] = timeit.default_timer


class Language(enum.Enum):
    """The language of the timed statement (only Python is supported in Plait)."""

    PYTHON = 0
    CPP = 1


class Timer:
    """``Timer(stmt="pass", setup="pass", globals=None, label=None, sub_label=None,
    description=None, num_threads=1)``: time ``stmt`` after ``setup``, with ``globals`` as
    the names both see."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict[str, Any] | None = None,
                 label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None,
                 num_threads: int = 1, language: Language | str = Language.PYTHON) -> None:
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError("Plait's torch.utils.benchmark.Timer times Python statements only")
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                   label=label, sub_label=sub_label, description=description,
                                   env=env, num_threads=num_threads)
        # timeit's namespace is a copy, so the statement cannot rebind the caller's names
        namespace = {"torch": __import__("torch"), **(globals or {})}
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=namespace)

    def _run(self, number: int) -> float:
        """Seconds that ``number`` executions take, on the task's thread count."""
        import torch

        previous = torch.get_num_threads()
        torch.set_num_threads(self._task_spec.num_threads)
        try:
            return self._timer.timeit(number)
        finally:
            torch.set_num_threads(previous)

    def _measurement(self, number: int, raw: list[float]) -> Measurement:
        return Measurement(number_per_run=number, raw_times=raw, task_spec=self._task_spec)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One run of ``number`` executions (after one warm-up execution)."""
        self._run(1)
        return self._measurement(number, [self._run(number)])

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        """Not provided, as in PyTorch."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], None] | None = None) -> None:
        """Not provided, as in PyTorch."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        """Executions per run: grown tenfold until one run takes a hundredth of
        ``min_run_time`` (so that timer resolution does not matter)."""
        number = 1
        while self._run(number) < min_run_time / 100 and number < 10**9:
            number *= 10
        return number

    def _blocks(self, number: int, stop: Callable[[list[float], float], bool],
                callback: Callable[[int, float], None] | None) -> list[float]:
        times: list[float] = []
        total = 0.0
        while not stop(times, total):
            elapsed = self._run(number)
            total += elapsed
            times.append(elapsed)
            if callback is not None:
                callback(number, elapsed)
        return times

    def blocked_autorange(self, callback: Callable[[int, float], None] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Runs of an automatically chosen number of executions, until ``min_run_time``
        seconds have been spent (at least one run). ``callback(number, seconds)`` sees each
        run."""
        number = self._block_size(min_run_time)
        times = self._blocks(number, lambda t, total: bool(t) and total >= min_run_time,
                             callback)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], None] | None = None
                           ) -> Measurement:
        """Runs until the IQR is under ``threshold`` of the median (after at least
        ``min_run_time`` seconds and three runs) or ``max_run_time`` seconds have passed."""
        number = self._block_size(min_run_time)

        def stop(times: list[float], total: float) -> bool:
            if total >= max_run_time and times:
                return True
            if total < min_run_time or len(times) < 3:
                return False
            m = self._measurement(number, times)
            return m.iqr / m.median < threshold if m.median > 0 else True

        return self._measurement(number, self._blocks(number, stop, callback))
