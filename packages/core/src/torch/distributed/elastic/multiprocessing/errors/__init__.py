"""What a failed rank leaves behind: :func:`record` writes an uncaught exception's traceback to
the error file ``torchrun`` gives each rank (``TORCHELASTIC_ERROR_FILE``), and ``torchrun``
raises :class:`ChildFailedError` with the first failure's traceback."""

from __future__ import annotations

import functools
import json
import os
import socket
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["ChildFailedError", "ErrorHandler", "ProcessFailure", "record"]

_Function = TypeVar("_Function", bound=Callable[..., Any])


def write_error_file(error: BaseException, path: str | None = None) -> None:
    """Write ``error`` and its traceback as JSON to ``path`` (``TORCHELASTIC_ERROR_FILE``)."""
    path = path or os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path:
        return
    message = {"message": {"message": f"{type(error).__name__}: {error}",
                           "extraInfo": {"py_callstack": traceback.format_exc(),
                                         "timestamp": str(int(time.time()))}}}
    with open(path, "w") as handle:
        json.dump(message, handle)


class ErrorHandler:
    """Records a rank's uncaught exception in its error file."""

    def initialize(self) -> None:
        """Nothing to set up (PyTorch installs a fault handler here)."""

    def record_exception(self, error: BaseException) -> None:
        """Write ``error`` to the rank's error file."""
        write_error_file(error)


def record(fn: _Function | None = None, error_handler: ErrorHandler | None = None) -> Any:
    """Decorate a rank's entry point: an exception escaping it is written to the error file
    (so ``torchrun`` reports it as the root cause), then re-raised."""
    handler = error_handler or ErrorHandler()

    def decorate(function: _Function) -> _Function:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return function(*args, **kwargs)
            except SystemExit as exit_:
                if exit_.code not in (None, 0):
                    handler.record_exception(exit_)
                raise
            except Exception as error:
                handler.record_exception(error)
                raise

        return wrapper  # type: ignore[return-value]

    return decorate(fn) if fn is not None else decorate


@dataclass
class ProcessFailure:
    """One failed rank: its ranks, exit code, and the message/traceback it left."""

    local_rank: int
    pid: int
    exitcode: int
    error_file: str
    rank: int = -1
    message: str = ""
    traceback: str = "<N/A>"
    timestamp: int = field(default_factory=lambda: int(time.time()))
    hostname: str = field(default_factory=socket.gethostname)

    def __post_init__(self) -> None:
        # Read what the rank wrote (nothing if it was killed or exited without a traceback).
        if self.error_file and os.path.isfile(self.error_file):
            try:
                with open(self.error_file) as handle:
                    content = json.load(handle)["message"]
                self.message = content.get("message", "")
                self.traceback = content.get("extraInfo", {}).get("py_callstack", "<N/A>")
                self.timestamp = int(content.get("extraInfo", {}).get("timestamp", 0))
            except (OSError, ValueError, KeyError):
                self.message = f"unreadable error file {self.error_file}"
        if not self.message:
            self.message = (f"exited with code {self.exitcode}" if self.exitcode >= 0
                            else f"killed by signal {-self.exitcode}")


class ChildFailedError(Exception):
    """A job launched by ``torchrun`` failed; ``failures`` maps ranks to what they left, and the
    message shows the first failure's traceback (the root cause)."""

    def __init__(self, name: str, failures: dict[int, ProcessFailure]) -> None:
        self.name = name
        self.failures = failures
        super().__init__(self.format_msg())

    def get_first_failure(self) -> tuple[int, ProcessFailure]:
        """The rank that failed first and its failure."""
        rank = min(self.failures, key=lambda rank: (self.failures[rank].timestamp, rank))
        return rank, self.failures[rank]

    def format_msg(self) -> str:
        """The report: the root cause first, then the other failed ranks."""
        if not self.failures:
            return f"{self.name} FAILED"
        rank, first = self.get_first_failure()
        lines = [f"{self.name} FAILED", "Root Cause (first observed failure):",
                 f"[0]: rank {rank} (local_rank {first.local_rank}) on {first.hostname}, "
                 f"exitcode {first.exitcode}: {first.message}", first.traceback.rstrip()]
        others = [other for other in sorted(self.failures) if other != rank]
        if others:
            lines.append("Other failures:")
            lines += [f"  rank {other}: {self.failures[other].message}" for other in others]
        return "\n".join(lines)
