"""``Work``: the handle an ``async_op=True`` collective returns. It owns the engine's request and
what must happen once the data has arrived (writing staging buffers back into the caller's
tensors, dividing an average); ``wait`` runs that once, and raises if the collective failed."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from ._engine import wait_request

__all__ = ["Work"]


class Work:
    """A collective in flight: :meth:`wait` for it, or ask :meth:`is_completed`."""

    def __init__(self, requests: list[Any], finish: Callable[[], Any] | None, timeout_s: float,
                 what: str, result: list[Any] | None = None) -> None:
        self._requests = requests
        self._finish = finish
        self._timeout_s = timeout_s
        self._what = what
        self._result = result or []
        self._done = False
        self._error: BaseException | None = None
        self.source_rank: int | None = None

    def _complete(self) -> None:
        if self._done:
            return
        self._done = True
        if self._finish is not None:
            value = self._finish()
            if value is not None:
                self.source_rank = value

    def wait(self, timeout: timedelta | None = None) -> bool:
        """Block until the collective has finished (its results are in the tensors); raise
        :class:`DistBackendError` if it does not within the group's timeout (or ``timeout``)."""
        if self._error is not None:
            raise self._error
        if not self._done:
            seconds = timeout.total_seconds() if timeout is not None else self._timeout_s
            try:
                for request in self._requests:
                    wait_request(request, seconds, self._what)
            except RuntimeError as error:
                self._error = error
                raise
            self._complete()
        return True

    def is_completed(self) -> bool:
        """Whether the collective has finished, without blocking."""
        if not self._done and self._error is None:
            if all(request.Test() for request in self._requests):
                self._complete()
        return self._done

    def is_success(self) -> bool:
        """Whether it finished without error."""
        return self.is_completed() and self._error is None

    def exception(self) -> BaseException | None:
        """The error it failed with, if any."""
        return self._error

    def result(self) -> list[Any]:
        """The output tensors (after waiting)."""
        self.wait()
        return self._result

    def synchronize(self) -> None:
        """The same as :meth:`wait` for CPU tensors."""
        self.wait()

    def _source_rank(self) -> int:
        self.wait()
        return -1 if self.source_rank is None else self.source_rank


def finished(what: str) -> Work:
    """A Work that has nothing to wait for (a collective on a group of one)."""
    return Work([], None, 0.0, what)
