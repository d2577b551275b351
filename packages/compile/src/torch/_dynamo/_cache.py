"""Guards, the compiled-graph cache and recompiles (packages/compile/README.md, "Cache").

A recorded graph is keyed by its structure (each op's target and constant arguments, which
values are returned) and by its guards: each input tensor's type, dtype, device, sizes,
strides, storage offset and ``requires_grad``, plus the grad mode and default dtype it
started under. A key seen before at the same *place* (compiled function + graph index within
its call) runs the cached compiled callable; a new key at a place already compiled is a
recompile, explained by the first guard that differs from the latest entry there. After
``config.recompile_limit`` graphs at one place, the function runs eagerly from then on with
one warning.
"""

from __future__ import annotations

import collections
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch._core.tensor import Tensor
from torch._dynamo import _log, config
from torch._dynamo.exc import BackendCompilerFailed, RecompileError

__all__ = ["FrameState", "counters", "input_guards", "stance"]

# torch._dynamo.utils.counters: category -> Counter (graph breaks by reason, frames...)
counters: collections.defaultdict[str, collections.Counter[Any]] = collections.defaultdict(
    collections.Counter)

# torch.compiler.set_stance: the active stance (a one-element list so it can be patched)
stance: list[str] = ["default"]

_TENSOR_FIELDS = ("type", "dtype", "device", "size()", "stride()", "storage_offset()",
                  "requires_grad")


def _tensor_guard(t: Tensor) -> tuple[Any, ...]:
    return (type(t), t.dtype, t.device, tuple(t.shape), tuple(t.stride()), t.storage_offset(),
            t.requires_grad)


def input_guards(inputs: list[Tensor], grad_enabled: bool,
                 default_dtype: torch.dtype) -> tuple[Any, ...]:
    """The guards of a graph's inputs and of the global state it started under."""
    return (grad_enabled, default_dtype, tuple(_tensor_guard(t) for t in inputs))


def explain_miss(old: tuple[Any, ...], new: tuple[Any, ...], names: list[str]) -> str:
    """Why ``new`` missed the entry keyed ``old``: the first guard or op that differs."""
    old_struct, old_guards = old
    new_struct, new_guards = new
    if old_guards[0] != new_guards[0]:
        return f"grad mode: expected {old_guards[0]}, got {new_guards[0]}"
    if old_guards[1] != new_guards[1]:
        return f"default dtype: expected {old_guards[1]}, got {new_guards[1]}"
    for i, (a, b) in enumerate(zip(old_guards[2], new_guards[2])):
        if a == b:
            continue
        name = names[i] if i < len(names) else f"input {i}"
        for field_name, x, y in zip(_TENSOR_FIELDS, a, b):
            if x == y:
                continue
            if isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y):
                dim = next(d for d, (p, q) in enumerate(zip(x, y)) if p != q)
                return f"tensor '{name}' {field_name}[{dim}]: expected {x[dim]}, got {y[dim]}"
            return f"tensor '{name}' {field_name}: expected {x}, got {y}"
    if len(old_guards[2]) != len(new_guards[2]):
        return (f"number of graph inputs: expected {len(old_guards[2])}, "
                f"got {len(new_guards[2])}")
    for i, (a, b) in enumerate(zip(old_struct[0], new_struct[0])):
        if a != b:
            return f"graph op {i}: expected {_op_text(a)}, got {_op_text(b)}"
    if len(old_struct[0]) != len(new_struct[0]):
        return f"graph length: expected {len(old_struct[0])} ops, got {len(new_struct[0])}"
    return "the values the program keeps from the graph differ"


def _op_text(op: tuple[Any, ...]) -> str:
    _, target, args, _ = op
    name = target if isinstance(target, str) else getattr(target, "__name__", repr(target))
    return f"{name}{args!r}"[:120]


@dataclass
class Place:
    """One graph position of a compiled function: its compiled entries, newest last."""

    entries: dict[Any, Callable[..., Any]] = field(default_factory=dict)
    keys: list[Any] = field(default_factory=list)


@dataclass
class GraphRecord:
    """What ``torch._dynamo.explain`` reports of one compiled graph."""

    graph_module: Any
    guards: list[str]
    op_count: int


class FrameState:
    """The cache and bookkeeping of one compiled function (``torch.compile``'s frame)."""

    def __init__(self, name: str, backend: Callable[..., Any], options: dict[str, Any]) -> None:
        self.name = name
        self.backend = backend
        self.options = options
        self.places: dict[int, Place] = {}
        self.eager = False  # past the recompile limit: the function runs eagerly
        self.warned = False
        self.breaks: list[tuple[str, str]] = []  # (reason, source line)
        self.graphs: list[GraphRecord] = []  # every graph compiled, for explain

    def reset(self) -> None:
        """Forget every compiled graph (``torch._dynamo.reset``)."""
        self.places.clear()
        self.eager = False
        self.warned = False
        self.breaks.clear()
        self.graphs.clear()

    def record_break(self, reason: str, where: str) -> None:
        self.breaks.append((reason, where))

    def run_graph(self, capture: Any, recording: Any, outputs: list[Any]) -> list[Tensor]:
        """Run ``recording`` (compiled, or found in the cache) on its real inputs and return
        the real values of ``outputs``."""
        key = ((tuple(recording.structure), tuple(lz.ref.key() for lz in outputs)),
               recording.guards())
        place = self.places.setdefault(capture.graph_index, Place())
        compiled = place.entries.get(key)
        if compiled is None:
            compiled = self._compile_missing(capture, recording, outputs, place, key)
        grad_now = torch.is_grad_enabled()
        torch.set_grad_enabled(recording.start_grad)
        try:
            if capture.verify:
                from torch._dynamo._verify import verify_graph

                verify_graph(self.backend, self.build(capture, recording, outputs),
                             recording.inputs, recording.input_fakes)
            result = compiled(*recording.inputs)
        finally:
            torch.set_grad_enabled(grad_now)
        return list(result)

    def _compile_missing(self, capture: Any, recording: Any, outputs: list[Any], place: Place,
                         key: Any) -> Callable[..., Any]:
        names = [capture.arg_names.get(id(t), f"input {i}")
                 for i, t in enumerate(recording.inputs)]
        gm = self.build(capture, recording, outputs)
        if place.keys:
            reason = explain_miss(place.keys[-1], key, names)
            mode = stance[0]
            if mode == "fail_on_recompile":
                raise RecompileError(f"Recompiling {self.name} (graph {capture.graph_index}), "
                                     f"which stance 'fail_on_recompile' forbids: {reason}")
            limit = config.recompile_limit
            if mode == "eager_on_recompile" or len(place.keys) >= limit:
                if mode != "eager_on_recompile":
                    self.eager = True
                    if not self.warned:
                        self.warned = True
                        warnings.warn(
                            f"torch._dynamo hit config.recompile_limit ({limit}) at "
                            f"{self.name} (graph {capture.graph_index}): last reason: {reason}. "
                            "It runs eagerly from now on; to diagnose recompilation issues, "
                            "set TORCH_LOGS=recompiles.", stacklevel=2)
                return gm.forward  # this one graph: eagerly, no backend
            counters["stats"]["recompiles"] += 1
            _log.recompiles.info("Recompiling function %s (graph %d)\n    triggered by the "
                                 "following guard failure(s):\n    - %s", self.name,
                                 capture.graph_index, reason)
        _log.graph_code.debug("TRACED GRAPH\n %s", gm.code)
        guards = describe_guards(key[1], names)
        _log.guards.debug("GUARDS:\n%s", "\n".join(guards))
        try:
            compiled = self.backend(gm, list(recording.input_fakes))
        except Exception as exc:
            name = getattr(self.backend, "__name__", repr(self.backend))
            raise BackendCompilerFailed(name, exc) from exc
        counters["stats"]["unique_graphs"] += 1
        self.graphs.append(GraphRecord(gm, guards, sum(
            1 for op in recording.ops if op[1] is not _set_grad_target())))
        place.entries[key] = compiled
        place.keys.append(key)
        return compiled

    def build(self, capture: Any, recording: Any, outputs: list[Any]) -> Any:
        """The recording as a ``torch.fx.GraphModule`` returning ``outputs`` as a tuple."""
        from torch._dynamo._graph import build_graph_module

        return build_graph_module(capture, recording, outputs)


def _set_grad_target() -> Any:
    from torch._dynamo._capture import set_grad_enabled_node

    return set_grad_enabled_node


def describe_guards(guards: tuple[Any, ...], names: list[str]) -> list[str]:
    """The guards of a key as readable lines (explain's ``out_guards``, ``TORCH_LOGS=guards``)."""
    lines = [f"GLOBAL_STATE: grad_enabled == {guards[0]}",
             f"GLOBAL_STATE: default_dtype == {guards[1]}"]
    for i, g in enumerate(guards[2]):
        name = names[i] if i < len(names) else f"input {i}"
        lines.append(f"TENSOR_MATCH: {name}: {g[0].__name__}, {g[1]}, device={g[2]}, "
                     f"size={list(g[3])}, stride={list(g[4])}, requires_grad={g[6]}")
    return lines
