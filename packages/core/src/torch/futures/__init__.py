"""``torch.futures``: the future ``torch.jit.fork`` returns, as PyTorch's API has it.

Plait runs forked calls at once, so a future here is usually complete when it is made; one made
empty (``Future()``) completes when ``set_result`` or ``set_exception`` is called, and its
callbacks run then, on the calling thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
S = TypeVar("S")


class Future(Generic[T]):
    """A value that may not be there yet: ``wait()`` returns it (or raises its exception)."""

    def __init__(self, *, devices: list[Any] | None = None) -> None:
        self._done = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Future[T]], None]] = []
        self._lock = threading.Lock()

    def done(self) -> bool:
        """Whether a result or an exception has been set."""
        return self._done.is_set()

    def wait(self) -> T:
        """Block until the future completes; its result, or its exception raised."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self) -> T:
        """The result of a completed future (its exception raised)."""
        if not self.done():
            raise RuntimeError("Future.value() called on a future that is not completed")
        return self.wait()

    def set_result(self, result: T) -> None:
        """Complete the future with ``result`` and run its callbacks."""
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete the future with an exception that ``wait`` raises."""
        self._complete(None, result)

    def _complete(self, value: Any, error: BaseException | None) -> None:
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("this Future is already completed")
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        """Run ``callback(self)`` when the future completes (now, if it has)."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A future of ``callback(self)``, run when this one completes."""
        chained: Future[S] = Future()

        def run(fut: Future[T]) -> None:
            try:
                chained.set_result(callback(fut))
            except Exception as error:  # handed to the chained future's waiter
                chained.set_exception(error)

        self.add_done_callback(run)
        return chained


def collect_all(futures: list[Future[Any]]) -> Future[list[Future[Any]]]:
    """A future that completes with the list of ``futures`` once all of them have."""
    result: Future[list[Future[Any]]] = Future()
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        result.set_result([])

    def one_done(_: Future[Any]) -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            result.set_result(list(futures))

    for fut in futures:
        fut.add_done_callback(one_done)
    return result


def wait_all(futures: list[Future[Any]]) -> list[Any]:
    """The results of ``futures``, waiting for each (the first exception raised)."""
    return [fut.wait() for fut in futures]
