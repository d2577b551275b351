"""``torch.jit.fork`` and ``wait``: asynchronous calls in TorchScript, run at once here (as
PyTorch runs them outside TorchScript), their result or exception kept in a future."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.futures import Future

__all__ = ["fork", "wait"]


def fork(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Future[Any]:
    """Call ``func(*args, **kwargs)`` and return a completed future of its result (an
    exception it raised is raised again by ``wait``)."""
    future: Future[Any] = Future()
    try:
        future.set_result(func(*args, **kwargs))
    except Exception as error:  # kept for wait(), as an asynchronous task's error would be
        future.set_exception(error)
    return future


def wait(future: Future[Any]) -> Any:
    """The result of a future from :func:`fork`."""
    return future.wait()
