"""The graph recorder: run a callable once and keep every aten operator it called.

:func:`record` runs a function under a dispatch mode (:mod:`torch.utils._python_dispatch`)
that sees each operator call below autograd, runs it, and adds it to a :class:`Graph`: tensors
the graph already knows become its values; any other tensor (one the code captured) becomes a
constant. ``torch.jit.trace`` replays the graph; ``torch.onnx.export`` translates it.

Some functions of ``torch.nn.functional`` are written in other operators here but are one aten
operator in PyTorch (``max_pool2d``, ``batch_norm``...). They are marked with
:func:`traced_as` so that a trace shows them as that one node, as PyTorch's trace does, and the
ONNX exporter can write them as one ONNX node; outside a trace the mark costs one attribute
read.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from torch._core.tensor import Tensor
from torch.jit._graph import Graph, Node, Value, same_tuple

__all__ = ["TracerWarning", "current_recorder", "record", "traced_as"]

_F = TypeVar("_F", bound=Callable[..., Any])


class TracerWarning(Warning):
    """A trace saw something it records as a constant (a tensor turned into a Python number or
    bool), so the traced graph may not follow other inputs as the code would."""


class _Active:
    """Process-wide: how many recordings are running on all threads (read by the marked
    functions without touching thread-local state)."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


_active = _Active()
_local = threading.local()
_lock = threading.Lock()


def current_recorder() -> _Recorder | None:
    """The recording running on this thread, or None."""
    if not _active.count:
        return None
    stack = getattr(_local, "recorders", None)
    return stack[-1] if stack else None


def traced_as(kind: str) -> Callable[[_F], _F]:
    """Mark a function written in other operators as one node ``kind`` (PyTorch's aten name,
    ``"aten::max_pool2d"``) for traces; outside a trace it runs as it is.

    :param kind: the node's name in traced graphs, and the ONNX exporter's key for it; it may
        name the function's arguments (``"aten::max_pool{n}d"``).
    :returns: a decorator.
    """

    def mark(fn: _F) -> _F:
        active = _active
        signature = inspect.signature(fn) if "{" in kind else None

        @functools.wraps(fn)
        def marked(*args: Any, **kwargs: Any) -> Any:
            if not active.count:
                return fn(*args, **kwargs)
            recorder = current_recorder()
            if recorder is None:
                return fn(*args, **kwargs)
            name = kind if signature is None else \
                kind.format(**signature.bind(*args, **kwargs).arguments)
            return recorder.call_as_node(name, marked, fn, args, kwargs)

        return marked  # type: ignore[return-value]

    return mark


class _Recorder:
    """Builds a :class:`Graph` from the calls the dispatch mode hands it."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        # id(tensor) -> (tensor, value); the tensor is kept so that its id stays its own
        self.values: dict[int, tuple[Tensor, Value]] = {}
        self.inside_node = 0  # > 0 while a function recorded as one node runs
        self.scopes: list[str] = []  # what code pushed (push_scope): each node's scopeName

    # PyTorch's tracing state (torch._C._get_tracing_state()), as analysis tools use it: a
    # forward pre-hook pushes a module's name, its forward hook pops it
    def push_scope(self, name: str) -> None:
        """Enter scope ``name``: the nodes recorded until :meth:`pop_scope` carry it."""
        self.scopes.append(str(name))

    def pop_scope(self) -> None:
        """Leave the innermost scope."""
        if self.scopes:
            self.scopes.pop()

    def bind(self, tensor: Tensor, value: Value) -> None:
        self.values[id(tensor)] = (tensor, value)

    def value_of(self, tensor: Tensor) -> Value:
        """The graph's value for ``tensor``; a new constant for a tensor it has not seen."""
        known = self.values.get(id(tensor))
        if known is not None and known[0] is tensor:
            return known[1]
        value = Value(f"c{len(self.graph.constants)}", "constant", tensor, constant=tensor)
        self.graph.constants.append(value)
        self.bind(tensor, value)
        return value

    def to_graph(self, obj: Any) -> Any:
        """``obj`` with each tensor replaced by its value (through tuples, lists and dicts)."""
        if isinstance(obj, Tensor):
            return self.value_of(obj)
        if isinstance(obj, tuple):
            return same_tuple(obj, [self.to_graph(x) for x in obj])
        if isinstance(obj, list):
            return [self.to_graph(x) for x in obj]
        if isinstance(obj, dict):
            return {k: self.to_graph(x) for k, x in obj.items()}
        return obj

    def add(self, kind: str, target: Callable[..., Any], args: tuple[Any, ...],
            kwargs: dict[str, Any], result: Any) -> None:
        """Record ``result = target(*args, **kwargs)`` (already run)."""
        if isinstance(result, Tensor):
            node = Node(kind, target, self.to_graph(args), self.to_graph(kwargs))
            self._output(node, result)
        elif isinstance(result, (tuple, list)) and any(isinstance(r, Tensor) for r in result):
            node = Node(kind, target, self.to_graph(args), self.to_graph(kwargs))
            spec = [self._output(node, r) if isinstance(r, Tensor) else None for r in result]
            node.out_spec = tuple(spec) if isinstance(result, tuple) else spec
        elif result is None and _in_place(kind) and args and isinstance(args[0], Tensor):
            # an in-place operator that returns nothing (prims::fill_): its output is the new
            # value of the tensor it wrote
            node = Node(kind, target, self.to_graph(args), self.to_graph(kwargs))
            node.out_spec = "mutated"
            self._output(node, args[0])
        else:
            if isinstance(result, (bool, int, float, complex)):
                warnings.warn(
                    f"{kind} turned a tensor into a Python {type(result).__name__} during "
                    "the trace; the traced graph keeps the value it had and will not "
                    "follow other inputs (as PyTorch's trace does)", TracerWarning,
                    stacklevel=4)
            return
        if _in_place(kind) and args and isinstance(args[0], Tensor):
            node.writes_view = args[0]._base is not None
        node.scope = "/".join(self.scopes)
        self.graph.nodes.append(node)

    def _output(self, node: Node, tensor: Tensor) -> int:
        value = Value(self.graph.fresh_name(), "node", tensor, node=node)
        node.outputs.append(value)
        self.bind(tensor, value)
        return len(node.outputs) - 1

    def call_as_node(self, kind: str, target: Callable[..., Any], fn: Callable[..., Any],
                     args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run a marked function ``fn`` with the operators inside it unrecorded; record it as
        one node that runs ``target`` (the marked function, so that a trace of the replay
        sees it as one node again)."""
        if self.inside_node:
            return fn(*args, **kwargs)
        self.inside_node += 1
        try:
            result = fn(*args, **kwargs)
        finally:
            self.inside_node -= 1
        self.add(kind, target, args, kwargs, result)
        return result


def _in_place(kind: str) -> bool:
    """Whether ``kind`` names an in-place operator (``aten::add_.Tensor``, ``prims::fill_``)."""
    name = kind.partition("::")[2].partition(".")[0]
    return name.endswith("_") and not name.endswith("__")


def _dispatch_mode_class() -> type:
    from torch.utils._python_dispatch import TorchDispatchMode

    class RecordingMode(TorchDispatchMode):
        """Hands each operator call to the recorder after running it."""

        # PyTorch's tracer sits at a dispatch key of its own, above the decompositions that a
        # Python dispatch mode sees: its graphs (and ONNX's) hold aten::linear, not view +
        # t + addmm with the trace's batch size written into the views
        takes_fused_operators = True

        def __init__(self, recorder: _Recorder) -> None:
            self.recorder = recorder

        def __torch_dispatch__(self, func: Any, types: tuple[type, ...],
                               args: tuple[Any, ...] = (),
                               kwargs: dict[str, Any] | None = None) -> Any:
            kwargs = kwargs or {}
            result = func(*args, **kwargs)
            if not self.recorder.inside_node:
                self.recorder.add(func.qualname, func, args, kwargs, result)
            return result

    return RecordingMode


@contextmanager
def _recording(recorder: _Recorder) -> Iterator[None]:
    stack = getattr(_local, "recorders", None)
    if stack is None:
        stack = _local.recorders = []
    stack.append(recorder)
    with _lock:
        _active.count += 1
    try:
        with _dispatch_mode_class()(recorder):
            yield
    finally:
        with _lock:
            _active.count -= 1
        stack.pop()


def record(call: Callable[[list[Tensor]], Any], inputs: list[Tensor],
           params: Mapping[str, Tensor], input_names: list[str] | None = None
           ) -> tuple[Graph, Any]:
    """Run ``call(inputs)`` once, recording the operators it reaches.

    :param call: runs the traced callable on the inputs (rebuilding their structure).
    :param inputs: the flat list of input tensors; each becomes a graph input.
    :param params: the parameters and buffers of the traced module by qualified name; each
        becomes a named graph value (a tensor under two names is recorded under the first).
    :param input_names: names for the graph inputs.
    :returns: the graph and what the call returned.
    """
    graph = Graph()
    recorder = _Recorder(graph)
    for i, tensor in enumerate(inputs):
        name = input_names[i] if input_names and i < len(input_names) else f"input_{i}"
        value = Value(name, "input", tensor)
        graph.inputs.append(value)
        recorder.bind(tensor, value)
    for name, tensor in params.items():
        if id(tensor) in recorder.values:
            continue
        value = Value(name, "param", tensor)
        graph.params[name] = value
        recorder.bind(tensor, value)
    # Recorded with gradients off, so that each operator is seen as itself (with gradients on,
    # an operator written in others is taken apart above the dispatch mode, as autograd needs);
    # running the graph records gradients as the operators do.
    from torch._core.grad_mode import no_grad

    with no_grad(), _recording(recorder):
        result = call(inputs)
    graph.output = recorder.to_graph(result)
    return graph, result

