"""The markers libraries put on functions and tensors for graph capture.

``disable`` keeps a function out of graphs (a call of it flushes the graph being captured and
runs eagerly). ``allow_in_graph`` and ``assume_constant_result`` return the function unchanged:
capture by deferred execution already runs a function's Python and records its tensor
operations, so there is nothing to inline or to trust. The dynamic-shape marks are kept on the
tensor (``_dynamo_dynamic_indices``, as PyTorch keeps them); the cache stops guarding a marked
dim's size from the first graph on (see :mod:`torch._dynamo._cache`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["allow_in_graph", "assume_constant_result", "disable", "disallow_in_graph",
           "forbid_in_graph", "graph_break", "is_compiling", "nonstrict_trace",
           "substitute_in_graph",
           "mark_dynamic", "mark_static", "mark_static_address", "maybe_mark_dynamic", "reset"]

_F = TypeVar("_F", bound=Callable[..., Any])


def is_compiling() -> bool:
    """Whether the caller runs inside a compiled function's capture."""
    from torch._dynamo._capture import current

    return current() is not None


def disable(fn: Any = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """Run ``fn`` eagerly, outside any graph (a graph break at each call while capturing).

    :param fn: the function (or module) to keep eager; None gives a decorator.
    :param recursive: whether the functions ``fn`` calls run eagerly too; with False, only
        ``fn``'s own frame is skipped, as in PyTorch: the graph ends before and after the
        call, and what runs inside is captured as a graph of its own.
    :param reason: why, for logs.
    """
    if fn is None:
        return lambda inner: disable(inner, recursive, reason=reason)
    from torch._dynamo.eval_frame import run_disabled, run_skipped

    @functools.wraps(fn)
    def eager(*args: Any, **kwargs: Any) -> Any:
        return (run_disabled if recursive else run_skipped)(fn, *args, **kwargs)

    eager._torchdynamo_disable = True  # type: ignore[attr-defined]
    eager._torchdynamo_orig_callable = fn  # type: ignore[attr-defined]
    return eager


def graph_break(msg: str = "") -> None:
    """End the graph being captured here (a graph break that ``explain`` lists and
    ``fullgraph=True`` refuses); nothing outside a compiled function.

    :param msg: said in the break's reason.
    """
    from torch._dynamo._capture import current

    capture = current()
    if capture is not None:
        capture.flush(f"Call to `torch._dynamo.graph_break()`: user-inserted graph break. "
                      f"Message: {msg or None}")


def disallow_in_graph(fn: Callable[..., Any]) -> Any:
    """Keep ``fn`` out of graphs: each call while capturing is a graph break and runs
    eagerly (:func:`disable`'s wrapper)."""
    return disable(fn)


def forbid_in_graph(fn: Any) -> Any:
    """Mark ``fn`` as never to be called inside a compiled function: such a call raises
    ``AssertionError`` (outside one, ``fn`` runs as usual)."""
    if isinstance(fn, (list, tuple)):
        return [forbid_in_graph(x) for x in fn]
    if not callable(fn):
        raise AssertionError(f"forbid_in_graph applies only to callables, got {fn!r}")

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if is_compiling():
            raise AssertionError(f"Attempt to trace forbidden callable {fn!r}")
        return fn(*args, **kwargs)

    return guarded


def nonstrict_trace(traceable_fn: _F) -> _F:
    """Mark a function for non-strict tracing; returned unchanged (its Python runs and its
    ops are recorded, as for every function)."""
    return traceable_fn


def substitute_in_graph(original_fn: Callable[..., Any], *, can_constant_fold_through: bool = False,
                        skip_signature_check: bool = False, is_embedded_type: bool = False
                        ) -> Callable[[_F], _F]:
    """A decorator registering a traceable stand-in for ``original_fn``; the stand-in is
    returned unchanged (capture runs ``original_fn`` itself)."""
    if not callable(original_fn):
        raise TypeError(f"substitute_in_graph expects a function, got {original_fn!r}")
    return lambda fn: fn


def allow_in_graph(fn: _F) -> _F:
    """Mark ``fn`` to be put in graphs; returned unchanged (see the module docstring)."""
    return fn


def assume_constant_result(fn: _F) -> _F:
    """Mark ``fn``'s result as constant; returned unchanged (see the module docstring)."""
    return fn


def _indices(index: Any) -> list[int]:
    return list(index) if isinstance(index, (list, tuple)) else [index]


def mark_static_address(t: Any, guard: bool = True) -> None:
    """Mark ``t``'s storage as fixed between calls (for CUDA graphs); nothing to change here."""


def mark_dynamic(t: Any, index: Any, *, min: int | None = None, max: int | None = None) -> None:
    """Mark dimension(s) ``index`` of ``t`` as dynamic: graphs it enters do not guard them."""
    t.__dict__.setdefault("_dynamo_dynamic_indices", set()).update(_indices(index))


def maybe_mark_dynamic(t: Any, index: Any) -> None:
    """Hint that dimension(s) ``index`` of ``t`` may vary: unguarded from the first graph, as
    with :func:`mark_dynamic` (which PyTorch makes an error when the dim must specialise;
    nothing here specialises a dim)."""
    t.__dict__.setdefault("_dynamo_weak_dynamic_indices", set()).update(_indices(index))


def mark_static(t: Any, index: Any = None) -> None:
    """Mark dimension(s) ``index`` of ``t`` (all with None) as static: a graph it enters
    guards their sizes whatever the sizes did before (no automatic dynamic for them)."""
    indices = list(range(t.dim())) if index is None else _indices(index)
    for marks in ("_dynamo_dynamic_indices", "_dynamo_weak_dynamic_indices"):
        dynamic = t.__dict__.get(marks)
        if dynamic is not None:
            dynamic.difference_update(indices)
    t.__dict__.setdefault("_dynamo_static_indices", set()).update(indices)


def reset() -> None:
    """Forget every compiled graph (``torch._dynamo.reset``) and the counters."""
    from torch._dynamo import _cache
    from torch._dynamo.eval_frame import reset_all

    reset_all()
    _cache.counters.clear()
