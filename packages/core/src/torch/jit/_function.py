"""``torch.jit.ScriptFunction``: what ``script`` and ``trace`` return for a function.

A traced function runs its recorded graph (``.graph``, ``.code``); a scripted one runs the
Python function itself (Plait does not compile TorchScript; running the function keeps every
semantics scripting would), and ``.code`` shows its source.
"""

from __future__ import annotations

import functools
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

from torch.jit._graph import Graph
from torch.jit._serialization import refuse_save

__all__ = ["ScriptFunction", "no_graph_error", "source_of"]


def source_of(fn: Callable[..., Any]) -> str:
    """The dedented source of ``fn``, or a comment saying it is not available."""
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return f"# the source of {getattr(fn, '__qualname__', fn)!s} is not available\n"


class _NoGraphError(RuntimeError, AttributeError):
    """Scripted code has no graph (an AttributeError too, so ``hasattr`` answers False)."""


def no_graph_error(what: str) -> RuntimeError:
    """The error for asking a scripted function or module for its graph."""
    return _NoGraphError(
        f"{what} was scripted, and scripted code runs as Python in Plait, so it has no "
        "TorchScript graph; torch.jit.trace records the aten graph of a run")


class ScriptFunction:
    """A scripted or traced function: call it as the original.

    :ivar graph: the aten graph (traced functions).
    :ivar code: the graph as Python (traced), or the function's source (scripted).
    """

    def __init__(self, fn: Callable[..., Any], traced: Any = None) -> None:
        self._fn = fn
        self._traced = traced
        self.name = getattr(fn, "__name__", "fn")
        self.qualified_name = f"__torch__.{getattr(fn, '__qualname__', self.name)}"
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._traced is None:
            return self._fn(*args, **kwargs)
        return self._traced(args, kwargs, {})

    @property
    def graph(self) -> Graph:
        if self._traced is None:
            raise no_graph_error(f"function '{self.name}'")
        return self._traced.graph

    @property
    def inlined_graph(self) -> Graph:
        return self.graph

    @property
    def code(self) -> str:
        if self._traced is None:
            return source_of(self._fn)
        return self._traced.graph.code(self._traced.arg_names, self.name, bound=False)

    def save(self, f: Any, _extra_files: Any = None) -> None:
        """Refused until traced graphs have a file format (see :func:`torch.jit.save`)."""
        refuse_save()

    def __repr__(self) -> str:
        return f"<torch.jit.ScriptFunction object {self.name}>"
