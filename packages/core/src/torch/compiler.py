"""``torch.compiler``: the questions and markers libraries put around ``torch.compile``.

Libraries ask ``torch.compiler.is_compiling()`` on ordinary eager paths and decorate functions
with ``torch.compiler.disable`` or ``allow_in_graph`` at import, so these answer without
plait-compile: while ``torch._dynamo`` is not imported nothing can be compiling, and the
questions answer False without importing it; once it is, they ask it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "compile",
    "cudagraph_mark_step_begin",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "keep_tensor_guards_unsafe",
    "list_backends",
    "nested_compile_region",
    "reset",
    "set_enable_guard_collectives",
    "set_stance",
    "skip_guard_on_inbuilt_nn_modules_unsafe",
    "substitute_in_graph",
]

_F = TypeVar("_F", bound=Callable[..., Any])


def compile(*args: Any, **kwargs: Any) -> Any:
    """``torch.compile``, under the name ``torch.compiler.compile``."""
    from ._compile_api import compile as torch_compile

    return torch_compile(*args, **kwargs)


def _loaded_dynamo() -> Any:
    """plait-compile's ``torch._dynamo`` if something imported it, else None."""
    return sys.modules.get("torch._dynamo")


def is_compiling() -> bool:
    """Whether the caller runs inside a compiled function's graph capture."""
    dynamo = _loaded_dynamo()
    return dynamo is not None and dynamo.is_compiling()


def is_dynamo_compiling() -> bool:
    """Whether the caller is being captured by dynamo (:func:`is_compiling` here)."""
    return is_compiling()


def is_exporting() -> bool:
    """Whether the caller is being traced by ``torch.export`` (never, until export exists)."""
    return False


def disable(fn: Any = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """Keep ``fn`` out of compiled graphs: called while a graph is captured, it breaks the
    graph and runs eagerly. Without plait-compile imported, ``fn`` wrapped so that it asks
    when called (nothing is compiled until then); without ``fn``, a decorator.

    :param fn: the function to keep eager, or None for the decorator form.
    :param recursive: whether the functions ``fn`` calls run eagerly too (False: only
        ``fn``'s own frame is skipped, its callees are captured).
    :param reason: why, for logs.
    :returns: the wrapped ``fn``, or a decorator.
    """
    if fn is None:
        return lambda inner: disable(inner, recursive, reason=reason)
    dynamo = _loaded_dynamo()
    if dynamo is not None:
        return dynamo.disable(fn, recursive, reason=reason)
    import functools

    @functools.wraps(fn)
    def eager(*args: Any, **kwargs: Any) -> Any:
        loaded = _loaded_dynamo()
        if loaded is None:
            return fn(*args, **kwargs)
        from torch._dynamo.eval_frame import run_disabled, run_skipped

        return (run_disabled if recursive else run_skipped)(fn, *args, **kwargs)

    eager._torchdynamo_disable = True  # type: ignore[attr-defined]
    return eager


def allow_in_graph(fn: _F) -> _F:
    """Mark ``fn`` to be put in graphs as one call; returned unchanged."""
    return fn


def assume_constant_result(fn: _F) -> _F:
    """Mark ``fn``'s result as a constant for graph capture; returned unchanged."""
    return fn


def substitute_in_graph(original_fn: Callable[..., Any], *, can_constant_fold_through: bool = False,
                        skip_signature_check: bool = False) -> Callable[[_F], _F]:
    """A decorator registering a traceable stand-in for ``original_fn``; the stand-in is
    returned unchanged (no tracer uses it yet)."""
    if not callable(original_fn):
        raise TypeError(f"substitute_in_graph expects a function, got {original_fn!r}")
    return lambda fn: fn


def nested_compile_region(fn: Any = None, **options: Any) -> Any:
    """Mark ``fn`` as a region repeated in a model, to compile once and reuse (a decorator
    too); returned unchanged: graph capture records its ops like any function's."""
    return (lambda inner: inner) if fn is None else fn


def keep_tensor_guards_unsafe(guard_entries: list[Any], keep_parameters: bool = False
                              ) -> list[bool]:
    """A ``guard_filter_fn``: keep only tensor guards (capture here guards tensors only)."""
    return [getattr(e, "guard_type", "TENSOR_MATCH") == "TENSOR_MATCH" for e in guard_entries]


def skip_guard_on_inbuilt_nn_modules_unsafe(guard_entries: list[Any]) -> list[bool]:
    """A ``guard_filter_fn``: drop the guards on torch.nn's own modules' attributes."""
    return [not getattr(e, "is_inbuilt_nn_module", False) for e in guard_entries]


_guard_collectives = [False]


def set_enable_guard_collectives(enabled: bool) -> bool:
    """Synchronise guard evaluation across ranks (one process here); returns the old value."""
    previous, _guard_collectives[0] = _guard_collectives[0], bool(enabled)
    return previous


def cudagraph_mark_step_begin() -> None:
    """Mark the start of a training or inference step for CUDA graphs (none are recorded)."""


def reset() -> None:
    """Clear compiled code caches: plait-compile's, when it is loaded."""
    dynamo = sys.modules.get("torch._dynamo")
    reset_dynamo = getattr(dynamo, "reset", None)
    if reset_dynamo is not None:
        reset_dynamo()


def set_stance(stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
               force_backend: Any = None) -> Any:
    """How compiled functions behave from now on (``"default"``, ``"force_eager"``,
    ``"eager_on_recompile"``, ``"fail_on_recompile"``); a call, context manager or decorator.
    See ``torch._dynamo.set_stance`` (plait-compile)."""
    from ._compile_api import _import_dynamo

    return _import_dynamo().set_stance(stance, skip_guard_eval_unsafe=skip_guard_eval_unsafe,
                                       force_backend=force_backend)


def list_backends(exclude_tags: tuple[str, ...] | None = ("debug", "experimental")) -> list[str]:
    """The names ``torch.compile(backend=...)`` accepts (from plait-compile)."""
    from ._compile_api import _import_dynamo

    return _import_dynamo().list_backends()
