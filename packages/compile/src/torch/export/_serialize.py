"""``save``/``load``: an exported program as a zip of JSON (graph, signature, ranges) and the
tensors through ``torch.save``. No code is pickled: nodes are stored as operator names and
arguments, and loading resolves operators by name (aten operators and a fixed table of
Python functions on sizes)."""

from __future__ import annotations

import io
import json
import math
import operator
import os
import zipfile
from typing import IO, Any

import torch
import torch.nn as nn
import torch.utils._pytree as pytree

from .dynamic_shapes import ValueRanges
from .exported_program import ExportedProgram
from .graph_signature import (
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)

__all__ = ["save", "load"]

_FORMAT = 1

# Python functions a graph may call on symbolic sizes, by stored name
_PY_FUNCTIONS: dict[str, Any] = {
    **{f"operator.{n}": getattr(operator, n) for n in (
        "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "eq", "ne", "lt",
        "le", "gt", "ge", "getitem", "and_", "or_", "not_")},
    **{f"math.{n}": getattr(math, n) for n in ("ceil", "floor", "sqrt")},
    **{f"torch.{n}": getattr(torch, n) for n in ("sym_sum", "sym_int", "sym_float", "sym_max",
                                                 "sym_min", "sym_not", "sym_ite")
       if hasattr(torch, n)},
}
_PY_NAMES = {id(v): k for k, v in _PY_FUNCTIONS.items()}


def _target_name(target: Any) -> str:
    qualname = getattr(target, "qualname", None)
    if isinstance(qualname, str) and "::" in qualname:
        return qualname
    name = _PY_NAMES.get(id(target))
    if name is None:
        raise ValueError(f"torch.export.save: cannot serialize call target {target!r}")
    return name


def _resolve_target(name: str) -> Any:
    if "::" in name:
        namespace, _, rest = name.partition("::")
        packet, _, overload = rest.partition(".")
        return getattr(getattr(getattr(torch.ops, namespace), packet), overload or "default")
    if name not in _PY_FUNCTIONS:
        raise ValueError(f"torch.export.load: unknown call target {name!r}")
    return _PY_FUNCTIONS[name]


def _encode(value: Any) -> Any:
    from torch.fx import Node
    if isinstance(value, Node):
        return {"node": value.name}
    if isinstance(value, (list, tuple)):
        return {"list" if isinstance(value, list) else "tuple": [_encode(v) for v in value]}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if isinstance(value, torch.memory_format):
        return {"memory_format": str(value).removeprefix("torch.")}
    if isinstance(value, torch.layout):
        return {"layout": str(value).removeprefix("torch.")}
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": repr(value)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ValueError(f"torch.export.save: cannot serialize argument {value!r}")


_DECODERS: dict[str, Any] = {
    "dtype": lambda v: getattr(torch, v),
    "device": torch.device,
    "memory_format": lambda v: getattr(torch, v),
    "layout": lambda v: getattr(torch, v),
    "float": float,
}


def _decode(value: Any, nodes: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        ((kind, inner),) = value.items()
        if kind == "node":
            return nodes[inner]
        if kind in ("list", "tuple"):
            items = [_decode(v, nodes) for v in inner]
            return items if kind == "list" else tuple(items)
        return _DECODERS[kind](inner)
    return value


class _Leaf:
    """Stands for a leaf while a pytree structure is written or read."""


def _spec_json(spec: Any) -> Any:
    """The structure of ``spec`` as JSON (tuples, lists and dicts with string keys)."""
    skeleton = spec.unflatten([_Leaf() for _ in range(spec.num_leaves)])

    def encode(tree: Any) -> Any:
        if isinstance(tree, _Leaf):
            return "leaf"
        if type(tree) in (tuple, list):
            return {type(tree).__name__: [encode(v) for v in tree]}
        if type(tree) is dict and all(isinstance(k, str) for k in tree):
            return {"dict": [[k, encode(v)] for k, v in tree.items()]}
        raise ValueError(f"torch.export.save: cannot serialize a {type(tree).__name__} "
                         f"in the inputs or outputs")

    return encode(skeleton)


def _spec_from_json(document: Any) -> Any:
    def decode(value: Any) -> Any:
        if value == "leaf":
            return _Leaf()
        ((kind, items),) = value.items()
        if kind == "dict":
            return {k: decode(v) for k, v in items}
        decoded = [decode(v) for v in items]
        return decoded if kind == "list" else tuple(decoded)

    return pytree.tree_flatten(decode(document),
                               is_leaf=lambda x: isinstance(x, _Leaf))[1]


def _graph_json(program: ExportedProgram) -> list[dict[str, Any]]:
    out = []
    for node in program.graph.nodes:
        entry: dict[str, Any] = {"name": node.name, "op": node.op}
        if node.op == "call_function":
            entry["target"] = _target_name(node.target)
        elif node.op not in ("placeholder", "output"):
            raise ValueError(f"torch.export.save: unsupported node kind {node.op}")
        entry["args"] = _encode(tuple(node.args))
        entry["kwargs"] = {k: _encode(v) for k, v in node.kwargs.items()}
        out.append(entry)
    return out


def save(ep: ExportedProgram, f: str | os.PathLike[str] | IO[bytes], *,
         extra_files: dict[str, Any] | None = None, opset_version: Any = None) -> None:
    """Write ``ep`` to ``f`` (a path or binary file) as a zip that :func:`load` reads back."""
    del opset_version
    sig = ep.graph_signature
    document = {
        "format": _FORMAT,
        "graph": _graph_json(ep),
        "inputs": [[s.kind.name, s.arg.name, s.target, s.persistent] for s in sig.input_specs],
        "outputs": [[s.kind.name, s.arg.name, s.target] for s in sig.output_specs],
        "ranges": {k: [v.lower, v.upper] for k, v in ep.range_constraints.items()},
        "input_dims": ep._input_dims,
        "in_spec": _spec_json(ep._in_spec),
        "out_spec": _spec_json(ep._out_spec),
    }
    tensors = io.BytesIO()
    torch.save({"state_dict": {k: v.detach() for k, v in ep.state_dict.items()},
                "constants": dict(ep.constants)}, tensors)
    with zipfile.ZipFile(f, "w") as archive:
        archive.writestr("program.json", json.dumps(document))
        archive.writestr("state_dict.pt", tensors.getvalue())
        for name, content in (extra_files or {}).items():
            archive.writestr(f"extra/{name}", content)


def load(f: str | os.PathLike[str] | IO[bytes], *, extra_files: dict[str, Any] | None = None,
         expected_opset_version: Any = None) -> ExportedProgram:
    """Read a program written by :func:`save` (tensors load with ``weights_only=True``)."""
    from torch.fx import Graph, GraphModule
    del expected_opset_version
    with zipfile.ZipFile(f, "r") as archive:
        document = json.loads(archive.read("program.json"))
        state = torch.load(io.BytesIO(archive.read("state_dict.pt")), weights_only=True)
        for name in list(extra_files or {}):
            extra_files[name] = archive.read(f"extra/{name}").decode()  # type: ignore[index]
    if document.get("format") != _FORMAT:
        raise RuntimeError(f"torch.export.load: unsupported format {document.get('format')}")
    graph = Graph()
    nodes: dict[str, Any] = {}
    for entry in document["graph"]:
        args = _decode(entry["args"], nodes)
        kwargs = {k: _decode(v, nodes) for k, v in entry["kwargs"].items()}
        if entry["op"] == "placeholder":
            nodes[entry["name"]] = graph.placeholder(entry["name"])
        elif entry["op"] == "output":
            graph.output(args[0])
        else:
            nodes[entry["name"]] = graph.create_node(
                "call_function", _resolve_target(entry["target"]), args, kwargs,
                name=entry["name"])
    gm = GraphModule(nn.Module(), graph)
    inputs = [InputSpec(InputKind[k], TensorArgument(n), t, p)
              for k, n, t, p in document["inputs"]]
    outputs = [OutputSpec(OutputKind[k], TensorArgument(n), t) for k, n, t in document["outputs"]]
    params = {s.target for s in inputs if s.kind is InputKind.PARAMETER}
    state_dict = {k: nn.Parameter(v) if k in params else v
                  for k, v in state["state_dict"].items()}
    ranges = {k: ValueRanges(lo, hi) for k, (lo, hi) in document["ranges"].items()}
    return ExportedProgram(gm, ExportGraphSignature(inputs, outputs), state_dict, ranges,
                           _spec_from_json(document["in_spec"]),
                           _spec_from_json(document["out_spec"]), document["input_dims"],
                           constants=state["constants"])
