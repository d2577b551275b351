"""``optimize``: what ``torch.compile`` hands a model to (docs/architecture.md).

Graph capture (tracing through the dispatcher's Python key with fake tensors and symbolic
sizes), guards, recompilation and the backends themselves arrive with the compile issue. Until
then :func:`optimize` checks the backend and returns a wrapper that runs the original callable
eagerly: results are those of the uncompiled model, and no backend is ever called.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sized
from typing import Any

from torch import nn
from torch._dynamo.backends.registry import lookup_backend

__all__ = ["OptimizedModule", "optimize"]

log = logging.getLogger(__name__)


class OptimizedModule(nn.Module):
    """What ``torch.compile`` returns for an ``nn.Module``: an ``nn.Module`` that holds the
    original as its one submodule, ``_orig_mod``, as in PyTorch.

    So ``state_dict()`` and ``named_parameters()`` keys carry the ``_orig_mod.`` prefix, and
    ``load_state_dict`` expects it. Attribute reads that the wrapper does not answer itself
    go to the original module (``compiled.weight``), writes go there too, and ``training`` is
    the original's. Calling the wrapper calls the module (its hooks included) eagerly until
    graph capture arrives with the compile issue.
    """

    # Names the wrapper keeps for itself; any other attribute write goes to the original.
    _opt_mod_attributes = frozenset({"_orig_mod", "forward", "_torchdynamo_orig_callable"})

    def __init__(self, mod: nn.Module) -> None:
        """:param mod: the module to wrap."""
        super().__init__()
        self._orig_mod = mod  # registered as the submodule "_orig_mod" by nn.Module
        # The instance's forward is the original's bound method, as PyTorch sets it.
        self.forward = mod.forward
        self._torchdynamo_orig_callable = mod.forward

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._orig_mod(*args, **kwargs)

    @property  # type: ignore[override]
    def training(self) -> bool:
        """The original module's training flag."""
        orig = self.__dict__.get("_modules", {}).get("_orig_mod")
        return True if orig is None else orig.training

    @training.setter
    def training(self, mode: bool) -> None:
        orig = self.__dict__.get("_modules", {}).get("_orig_mod")
        if orig is not None:  # nn.Module.__init__ sets it before the original is attached
            orig.training = mode

    def __getattr__(self, name: str) -> Any:
        if name == "_orig_mod":
            modules = self.__dict__.get("_modules")
            if modules is None or "_orig_mod" not in modules:  # copy, unpickling: no recursion
                raise AttributeError(name)
            return modules["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(type(self), name) or name in self._opt_mod_attributes:
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if hasattr(type(self), name) or name in self._opt_mod_attributes:
            super().__delattr__(name)
        else:
            delattr(self._orig_mod, name)

    def __len__(self) -> int:
        # A compiled Sequential or ModuleList has the original's length; as in PyTorch, any
        # other module has none (so bool() of it raises too).
        if isinstance(self._orig_mod, Sized):
            return len(self._orig_mod)
        raise TypeError(f"{type(self._orig_mod).__name__} does not support len()")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(dir(self._orig_mod)))

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as "wrap this module again", so unpickling rebuilds the same wrapper.
        return (type(self), (self._orig_mod,))


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

    :param model_or_fn: an ``nn.Module``, or any other callable (a function, a callable object).
    :param backend: a name from :func:`~torch._dynamo.backends.registry.list_backends` or a
        backend callable.
    :param fullgraph: require one graph for the whole model.
    :param dynamic: symbolic sizes from the start (``True``), never (``False``) or after a
        size change (``None``).
    :param mode: a ``torch.compile`` mode.
    :param options: backend options.
    :returns: an :class:`OptimizedModule` for an ``nn.Module``, otherwise a function wrapper
        made with :func:`functools.wraps` that calls ``model_or_fn``; its
        ``_torchdynamo_orig_callable`` is the original, as in PyTorch.
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
    if isinstance(model_or_fn, nn.Module):
        return OptimizedModule(model_or_fn)

    fn = model_or_fn

    @functools.wraps(fn)
    def compiled(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    compiled._torchdynamo_orig_callable = fn  # type: ignore[attr-defined]
    return compiled
