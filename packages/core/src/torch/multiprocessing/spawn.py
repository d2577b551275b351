"""``torch.multiprocessing.spawn``: run ``fn(i, *args)`` in ``nprocs`` processes and surface the
first failure in the parent, with the failing process's traceback."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import traceback
from collections.abc import Callable
from typing import Any

__all__ = ["ProcessContext", "ProcessExitedException", "ProcessRaisedException", "spawn",
           "start_processes"]


class ProcessException(Exception):
    """A process started by :func:`start_processes` failed."""

    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A process raised an exception; the message carries its traceback."""


class ProcessExitedException(ProcessException):
    """A process exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                             self.signal_name))


def _wrap(fn: Callable[..., Any], i: int, args: tuple[Any, ...], error_queue: Any) -> None:
    """A child's body: run ``fn(i, *args)``; on an exception send its traceback home."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is stopping the job
    except Exception:
        error_queue.put(traceback.format_exc())
        raise SystemExit(1) from None


class ProcessContext:
    """The processes of one :func:`start_processes` call; :meth:`join` waits for them."""

    def __init__(self, processes: list[Any], error_queues: list[Any]) -> None:
        self.processes = processes
        self.error_queues = error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait (up to ``timeout`` seconds) for the processes. True when all have finished
        successfully; False when some still run. When one fails, the others are terminated and
        its error is raised here (:class:`ProcessRaisedException` with its traceback, or
        :class:`ProcessExitedException`)."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0 and failed is None:
                failed = index
        if failed is None:
            return not self.sentinels
        for process in self.processes:  # stop the rest of the job
            if process.is_alive():
                process.terminate()
            process.join()
        self.sentinels.clear()
        process = self.processes[failed]
        queue = self.error_queues[failed]
        if not queue.empty():
            raise ProcessRaisedException(
                f"\n\n-- Process {failed} terminated with the following error:\n{queue.get()}",
                failed, process.pid)
        code = process.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(f"process {failed} terminated with signal {name}",
                                         failed, process.pid, code, name)
        raise ProcessExitedException(f"process {failed} terminated with exit code {code}",
                                     failed, process.pid, code)


def start_processes(fn: Callable[..., Any], args: tuple[Any, ...] = (), nprocs: int = 1,
                    join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> ProcessContext | None:
    """Start ``nprocs`` processes (with ``start_method``) each running ``fn(i, *args)``. With
    ``join`` wait for all and raise the first failure; otherwise return the
    :class:`ProcessContext`."""
    context = multiprocessing.get_context(start_method)
    processes, error_queues = [], []
    for i in range(nprocs):
        error_queue = context.SimpleQueue()
        process = context.Process(target=_wrap, args=(fn, i, args, error_queue), daemon=daemon)
        process.start()
        processes.append(process)
        error_queues.append(error_queue)
    ctx = ProcessContext(processes, error_queues)
    if not join:
        return ctx
    while not ctx.join():
        pass
    return None


def spawn(fn: Callable[..., Any], args: tuple[Any, ...] = (), nprocs: int = 1,
          join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:
    """:func:`start_processes` with the ``spawn`` start method (PyTorch warns for others)."""
    if start_method != "spawn":
        import warnings

        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t "
                      "torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
