"""``optimize``: what ``torch.compile`` hands a model to (docs/architecture.md).

Graph capture (tracing through the dispatcher's Python key with fake tensors and symbolic
sizes), guards, recompilation and the backends themselves arrive with the compile issue. Until
then :func:`optimize` checks the backend and returns a wrapper that runs the original callable
eagerly: results are those of the uncompiled model, and no backend is ever called.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from torch._dynamo.backends.registry import lookup_backend

__all__ = ["OptimizedModule", "optimize"]

log = logging.getLogger(__name__)


def _is_module_like(obj: object) -> bool:
    """An ``nn.Module`` or anything shaped like one: a callable instance with a ``forward``."""
    return not isinstance(obj, type) and callable(obj) and callable(getattr(obj, "forward", None))


class OptimizedModule:
    """What ``torch.compile`` returns for a module: calls it, and exposes it as ``_orig_mod``.

    Attribute reads that the wrapper does not answer itself go to the original module, so
    ``compiled.weight`` and ``compiled.training`` read through. Calling the wrapper calls the
    module (hooks included) eagerly. It becomes an ``nn.Module`` subclass, as in PyTorch, when
    graph capture arrives with the compile issue.
    """

    def __init__(self, mod: Callable[..., Any]) -> None:
        """:param mod: the module to wrap."""
        self._orig_mod = mod

    @property
    def forward(self) -> Callable[..., Any]:
        """The original module's ``forward``."""
        return self._orig_mod.forward  # type: ignore[attr-defined]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name == "_orig_mod":  # not set yet (copy, unpickling): do not recurse
            raise AttributeError(name)
        return getattr(self._orig_mod, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(_orig_mod={self._orig_mod!r})"


def optimize(
    model_or_fn: Callable[..., Any],
    *,
    backend: str | Callable[..., Any] = "inductor",
    fullgraph: bool = False,
    dynamic: bool | None = None,
    mode: str | None = None,
    options: dict[str, Any] | None = None,
) -> Callable[..., Any]:
    """Wrap a function or module for compilation; for now it runs eagerly.

    ``torch.compile`` validates ``mode``, ``options`` and the Python version before it calls
    this. ``fullgraph``, ``dynamic``, ``mode`` and ``options`` are accepted and do nothing yet:
    there is no graph to capture, break, specialize or tune until the compile issue lands.

    :param model_or_fn: a function, or an ``nn.Module``-like object (callable, with ``forward``).
    :param backend: a name from :func:`~torch._dynamo.backends.registry.list_backends` or a
        backend callable.
    :param fullgraph: require one graph for the whole model.
    :param dynamic: symbolic sizes from the start (``True``), never (``False``) or after a
        size change (``None``).
    :param mode: a ``torch.compile`` mode.
    :param options: backend options.
    :returns: a :class:`OptimizedModule` for a module, otherwise a function wrapper made with
        :func:`functools.wraps` that calls ``model_or_fn``; its ``_torchdynamo_orig_callable``
        is the original, as in PyTorch.
    :raises InvalidBackend: ``backend`` is a string that names no backend.
    :raises TypeError: ``model_or_fn`` is not callable, or ``backend`` is neither a name nor
        callable.
    """
    lookup_backend(backend)
    if not callable(model_or_fn):
        raise TypeError(
            f"torch.compile expects a function or an nn.Module, got {type(model_or_fn).__name__}"
        )
    log.debug(
        "graph capture is not implemented yet: %r runs eagerly (backend=%r)", model_or_fn, backend
    )
    if _is_module_like(model_or_fn):
        return OptimizedModule(model_or_fn)

    fn = model_or_fn

    @functools.wraps(fn)
    def compiled(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    compiled._torchdynamo_orig_callable = fn  # type: ignore[attr-defined]
    return compiled
