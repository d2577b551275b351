"""Functionalization while tracing: graphs without in-place operators.

AOT autograd traces with :func:`functional_trace` (``make_fx``'s tracer with the two classes
below). Every operator call that writes one of its arguments (its schema marks it ``(a!)``:
``copy_``, ``bernoulli_``, ``prims.fill_``...) is recorded as an out-of-place node that
computes the written tensor's new value, and the tracker rebinds the tensor to that node:

* a rule of :data:`_RULES` where an aten out-of-place operator computes the same
  (``copy_`` -> the source itself, expanded or cast when it must be; ``bernoulli_`` ->
  ``bernoulli.p``);
* otherwise the operator's *functional twin*, ``torch.ops.functional.<ns>_<name>``, made on
  first use: it clones the written arguments, runs the in-place operator on the clones and
  returns them.

Aliasing follows storages. Each storage has a *base* (the first traced tensor over it) and a
version, bumped by every write. A write through another tensor over the storage (a view)
makes the base's new value ``functional.as_strided_scatter(base, value, ...)``; a tensor read
after its storage was written is rebuilt as ``functional.as_strided_view(base, ...)``
(:meth:`FunctionalTracker.node_of`). Both place the region by its position in the base's
memory, the base laid out with its traced strides, so a base whose elements overlap or
leave gaps (expanded, sliced with a step) raises ``NotImplementedError``.

Inputs the function wrote are returned after its outputs (their new values), and
:func:`functional_trace` says which: the caller copies them back into the inputs once per
call (AOT autograd's epilogue), so buffers move exactly as in eager.
"""

from __future__ import annotations

import dataclasses
import operator
import threading
from collections.abc import Callable
from typing import Any

import torch
from torch._core import dispatch as _dispatch
from torch._core.schema import Argument, Schema
from torch.fx.experimental import proxy_tensor as _proxy
from torch.fx.graph_module import GraphModule
from torch.fx.node import Node

__all__ = ["FunctionalProxyMode", "FunctionalTracker", "functional_trace", "twin_of"]

_NAMESPACE = "functional"
_lock = threading.Lock()


# -- functional twins ---------------------------------------------------------------------


def _flatten_written(values: list[Any]) -> list[Any]:
    flat: list[Any] = []
    for value in values:
        flat.extend(value if isinstance(value, (list, tuple)) else [value])
    return flat


def twin_of(op: Any) -> Any:
    """The out-of-place twin of the in-place operator ``op`` (defined on first use): same
    arguments, returns the written arguments' new values (one tensor, or a list when ``op``
    writes several) and leaves its arguments alone."""
    base = op.name.partition(".")[0].rstrip("_")
    overload = op.name.partition(".")[2]
    qualname = f"{_NAMESPACE}::{op.namespace}_{base}" + (f".{overload}" if overload else "")
    with _lock:
        known = _dispatch.get(qualname)
        if known is not None:
            return known
        schema: Schema = op.schema
        written = schema.mutated
        several = len(written) > 1 or schema.arguments[written[0]].type.endswith("[]")
        twin_schema = Schema(
            f"{op.namespace}_{base}", overload,
            tuple(dataclasses.replace(a, mutable=False) for a in schema.arguments),
            (Argument("", "Tensor[]" if several else "Tensor"),))
        twin = _dispatch.define(qualname, twin_schema)
        twin.register(_dispatch.COMPOSITE_EXPLICIT, _twin_kernel(op, several))
        return twin


def _twin_kernel(op: Any, several: bool) -> Callable[..., Any]:
    schema: Schema = op.schema

    def kernel(*args: Any, **kwargs: Any) -> Any:
        bound = schema.bind(args, kwargs)
        for i in schema.mutated:
            value = bound[i]
            bound[i] = [t.clone() for t in value] if isinstance(value, (list, tuple)) \
                else value.clone()
        positional = [v for a, v in zip(schema.arguments, bound) if not a.kwarg_only]
        keywords = {a.name: v for a, v in zip(schema.arguments, bound) if a.kwarg_only}
        op(*positional, **keywords)
        written = _flatten_written([bound[i] for i in schema.mutated])
        return written if several else written[0]

    kernel.__name__ = f"{op.name.partition('.')[0].rstrip('_')}_functional"
    return kernel


def _in_layout(base: Any, base_stride: list[Any]) -> Any:
    """``base`` with the strides the trace saw (a copy when it arrives with others), so that
    positions in its storage are the traced ones."""
    if list(base.stride()) == list(base_stride):
        return base
    out = torch.empty_strided(base.shape, base_stride, dtype=base.dtype, device=base.device)
    out.copy_(base)
    return out


def _view_kernel(base: Any, base_stride: list[Any], size: list[Any], stride: list[Any],
                 offset: Any) -> Any:
    laid = _in_layout(base, base_stride)
    return torch.as_strided(laid, size, stride, laid.storage_offset() + offset)


def _scatter_kernel(base: Any, src: Any, base_stride: list[Any], size: list[Any],
                    stride: list[Any], offset: Any) -> Any:
    out = torch.empty_strided(base.shape, base_stride, dtype=base.dtype, device=base.device)
    out.copy_(base)
    torch.as_strided(out, size, stride, out.storage_offset() + offset).copy_(src)
    return out


# a region of a base: the base's strides as traced, then the region's sizes, strides and
# offset in the base's storage (from the base's first element)
_GEOMETRY = "SymInt[] base_stride, SymInt[] size, SymInt[] stride, SymInt offset"
_HELPERS = {
    "as_strided_view": (f"as_strided_view(Tensor base, {_GEOMETRY}) -> Tensor", _view_kernel),
    "as_strided_scatter": (f"as_strided_scatter(Tensor base, Tensor src, {_GEOMETRY}) -> Tensor",
                           _scatter_kernel),
}


def _dense(tensor: Any) -> bool:
    """Whether ``tensor``'s elements fill its memory once each (any order of dims)."""
    expected = 1
    for size, stride in sorted(zip(tensor.shape, tensor.stride()), key=lambda p: p[1]):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def _helper(name: str) -> Any:
    """``functional.as_strided_view`` (a region of a base, by its place in the base's memory
    laid out as traced) and ``functional.as_strided_scatter`` (the base with that region
    replaced)."""
    qualname = f"{_NAMESPACE}::{name}"
    with _lock:
        op = _dispatch.get(qualname)
        if op is None:
            schema, kernel = _HELPERS[name]
            op = _dispatch.define(qualname, schema)
            op.register(_dispatch.COMPOSITE_EXPLICIT, kernel)
        return op


# -- rules: in-place operators with an aten out-of-place form -------------------------------


def _copy_rule(tracker: FunctionalTracker, bound: list[Any], node_args: list[Any]) -> Any:
    """``self.copy_(src)`` of the same layout (shape, strides, offset), dtype and device:
    ``self`` holds ``src``'s value. Anything else goes through the twin, whose result keeps
    ``self``'s layout (``as_strided`` on it later reads the positions the trace saw)."""
    self, src = bound[0], bound[1]
    if not isinstance(src, torch.Tensor) or tuple(src.shape) != tuple(self.shape) or \
            tuple(src.stride()) != tuple(self.stride()) or \
            src.storage_offset() != self.storage_offset() or \
            src.dtype != self.dtype or src.device != self.device:
        return None
    return node_args[1]


def _bernoulli_rule(tracker: FunctionalTracker, bound: list[Any], node_args: list[Any]) -> Any:
    return tracker.call(torch.ops.aten.bernoulli.p, (node_args[0], node_args[1]), None,
                        {"generator": node_args[2]})


# in-place operator qualname -> rule(tracker, bound args, their nodes) -> the written
# tensor's new value node (None: use the twin)
_RULES: dict[str, Callable[..., Any]] = {
    "aten::copy_": _copy_rule,
    "aten::bernoulli_.float": _bernoulli_rule,
}


# -- the tracer -----------------------------------------------------------------------------


def _same_geometry(a: Any, b: Any) -> bool:
    return (a._shape == b._shape and a._stride == b._stride and a._offset == b._offset
            and a._dtype is b._dtype)


class FunctionalTracker(_proxy._Tracker):
    """make_fx's tracker with storage versions: a tensor read after its storage was written
    is rebuilt from the storage's base (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.versions: dict[int, int] = {}  # id(storage) -> writes so far
        self.seen: dict[int, int] = {}  # id(tensor) -> its storage's version when bound
        self.bases: dict[int, Any] = {}  # id(storage) -> the first tensor traced over it
        self.base_values: dict[int, Node] = {}  # id(storage) -> its base's value, once written
        self.inputs: list[Any] = []
        self.constant_storages: set[int] = set()  # storages of captured tensors

    def bind(self, tensor: Any, where: Any) -> None:
        super().bind(tensor, where)
        storage = getattr(tensor, "_storage", None)
        if storage is not None:
            self.seen[id(tensor)] = self.versions.get(id(storage), 0)
            self.bases.setdefault(id(storage), tensor)
            if isinstance(where, Node) and where.op == "get_attr":
                self.constant_storages.add(id(storage))

    def node_of(self, tensor: Any) -> Node:
        known = self.tensors.get(id(tensor))
        storage = getattr(tensor, "_storage", None)
        if known is not None and known[0] is tensor and storage is not None:
            version = self.versions.get(id(storage), 0)
            if self.seen.get(id(tensor), 0) != version:
                node = self._rebuild(tensor)
                self.tensors[id(tensor)] = (tensor, node)
                self.seen[id(tensor)] = version
                return node
        return super().node_of(tensor)

    def call(self, target: Any, args: tuple[Any, ...], example: Any,
             kwargs: dict[str, Any] | None = None) -> Node:
        """A node calling ``target``; its ``meta["val"]`` is ``example`` (a fake of the
        written tensor; filled in by :meth:`write` when None)."""
        node = self.graph.call_function(target, args, kwargs or {})
        if example is not None:
            node.meta["val"] = self.fake_of(example)
        return node

    def _base(self, tensor: Any) -> tuple[Any, Node]:
        storage_id = id(tensor._storage)
        base = self.bases[storage_id]
        value = self.base_values.get(storage_id)
        if value is None:
            value = super().node_of(base)  # not written yet: its own node
        return base, value

    def _region(self, tensor: Any, base: Any) -> tuple[Any, ...]:
        if not _dense(base):
            raise NotImplementedError(
                "AOT autograd: a mutation through a view of a tensor whose elements overlap "
                "or leave gaps in memory (an expanded or strided tensor), or a read of such a "
                "view after one, is not supported; make the tensor contiguous first")
        return (self.to_arg(list(base.stride())), self.to_arg(list(tensor.shape)),
                self.to_arg(list(tensor.stride())), self.to_arg(tensor._offset - base._offset))

    def _rebuild(self, tensor: Any) -> Node:
        base, value = self._base(tensor)
        if _same_geometry(tensor, base):
            return value
        node = self.call(_helper("as_strided_view"), (value, *self._region(tensor, base)),
                         tensor)
        return node

    def write(self, tensor: Any, value: Node) -> None:
        """``tensor`` now holds ``value``: its storage's base is updated, other tensors over
        the storage go stale."""
        if "val" not in value.meta:
            value.meta["val"] = self.fake_of(tensor)
        storage_id = id(tensor._storage)
        self.bases.setdefault(storage_id, tensor)
        base, old = self._base(tensor)
        if _same_geometry(tensor, base):
            new_base = value
        else:
            new_base = self.call(_helper("as_strided_scatter"),
                                 (old, value, *self._region(tensor, base)), base)
        version = self.versions.get(storage_id, 0) + 1
        self.versions[storage_id] = version
        self.base_values[storage_id] = new_base
        self.tensors[id(tensor)] = (tensor, value)
        self.seen[id(tensor)] = version

    def written_inputs(self, inputs: list[Any]) -> list[int]:
        """Positions of the flat inputs whose storage was written."""
        return [i for i, value in enumerate(inputs) if isinstance(value, torch.Tensor)
                and self.versions.get(id(getattr(value, "_storage", None)), 0)]

    def output_value(self, out: Any, inputs: list[Any]) -> Any:
        result = self.to_arg(out)
        written = self.written_inputs(inputs)
        self.inputs = inputs
        for storage_id in self.constant_storages:
            if self.versions.get(storage_id, 0):
                raise NotImplementedError(
                    "AOT autograd: the function writes a tensor it captured (not an input); "
                    "pass it as an argument")
        mutated = tuple(self.node_of(inputs[i]) for i in written)
        return (result, mutated)


class FunctionalProxyMode(_proxy._ProxyMode):
    """make_fx's recording mode, recording each writing operator as its out-of-place form."""

    tracker: FunctionalTracker

    def __torch_dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        schema = getattr(func, "schema", None)
        if schema is None or not schema.mutated or func in self.decompositions:
            result = super().__torch_dispatch__(func, types, args, kwargs)
            if str(getattr(func, "name", "")).startswith("lift_fresh") and \
                    isinstance(result, torch.Tensor):
                # torch.tensor(...) made inside the function: a fresh tensor per call in
                # eager, so writes to it stay inside the graph
                self.tracker.constant_storages.discard(id(result._storage))
            return result
        tracker = self.tracker
        node_bound = schema.bind(tracker.to_arg(args), tracker.to_arg(kwargs))
        if tracker.fake_mode is not None:
            args, kwargs = self._fake_constants(args, kwargs)
        bound = schema.bind(args, kwargs)
        written = _flatten_written([bound[i] for i in schema.mutated])
        rule = _RULES.get(func.qualname)
        value = rule(tracker, bound, node_bound) if rule is not None else None
        result = func(*args, **kwargs)  # on fake tensors: the written tensors' metadata
        if value is not None:
            tracker.write(written[0], value)
            return result
        twin = twin_of(func)
        positional = [v for a, v in zip(schema.arguments, node_bound) if not a.kwarg_only]
        keywords = {a.name: v for a, v in zip(schema.arguments, node_bound) if a.kwarg_only}
        node = tracker.call(twin, tuple(positional), None, keywords)
        if len(written) == 1 and not twin.schema.returns[0].type.endswith("[]"):
            tracker.write(written[0], node)
        else:
            node.meta["val"] = [tracker.fake_of(t) for t in written]
            for index, tensor in enumerate(written):
                item = tracker.call(operator.getitem, (node, index), tensor)
                tracker.write(tensor, item)
        if isinstance(result, torch.Tensor) and not any(result is t for t in written):
            raise NotImplementedError(f"AOT autograd: {func} returns a tensor it did not write")
        return result


def functional_trace(f: Callable[..., Any], args: tuple[Any, ...], tracing_mode: str = "fake",
                     decompositions: dict[Any, Callable[..., Any]] | None = None
                     ) -> tuple[GraphModule, list[int]]:
    """Trace ``f(*args)`` into a graph without in-place operators.

    :returns: the GraphModule, whose output is ``(f's result, (new values of the written
        inputs))``, and the positions of those inputs among ``args``' flat leaves.
    """
    holder: dict[str, FunctionalTracker] = {}

    class _Tracker(FunctionalTracker):
        def __init__(self, *a: Any, **k: Any) -> None:
            super().__init__(*a, **k)
            holder["tracker"] = self

    from torch._aten.normalization import functional_batch_norm

    # native_batch_norm writes the running statistics its schema does not mark as written
    # (as in PyTorch): its functional form, with a copy_ into each, is traced instead
    table = {torch.ops.aten.native_batch_norm.default: functional_batch_norm,
             **(decompositions or {})}
    gm = _proxy._trace(f, args, tracing_mode, table,
                       tracker_cls=_Tracker, mode_cls=FunctionalProxyMode)
    tracker = holder["tracker"]
    return gm, tracker.written_inputs(tracker.inputs)
