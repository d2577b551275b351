"""The code generator: a graph as the Python source of a ``forward`` method.

Each node becomes one assignment, written as a person would write it: ``x + y`` for
``operator.add``, ``x[0]`` for ``operator.getitem``, ``x.shape`` for ``getattr``,
``torch.relu(x)`` for a function with a public path, ``self.layer1.conv(x)`` for a submodule.
After a value's last use the statement also sets it to None, so that memory is freed as early
as in eager code. Objects the source cannot spell (a local function, a tensor constant) become
globals of the generated code under names of their own.
"""

from __future__ import annotations

import keyword
import math
import operator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from torch.fx._naming import Namespace, qualified_name
from torch.fx.node import Node, _type_repr

if TYPE_CHECKING:
    from torch.fx.graph import Graph

__all__ = ["PythonCode", "generate"]


@dataclass
class PythonCode:
    """What :meth:`Graph.python_code` returns: the source text and the globals it reads."""

    src: str
    globals: dict[str, Any]
    _lineno_map: dict[int, int | None] | None = field(default=None)


# operator function -> (format, precedence); precedence guards the operands with parentheses
_BINARY = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
    operator.lshift: "<<", operator.rshift: ">>", operator.and_: "&", operator.or_: "|",
    operator.xor: "^", operator.eq: "==", operator.ne: "!=", operator.lt: "<",
    operator.le: "<=", operator.gt: ">", operator.ge: ">=",
}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}


def _is_identifier(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def attribute_path(root: str, path: str) -> str:
    """``self.layer1.conv`` for ``layer1.conv``; parts that are not identifiers are read
    with getattr (``getattr(self.seq, "0")``)."""
    expr = root
    for part in path.split("."):
        expr = f"{expr}.{part}" if _is_identifier(part) else f'getattr({expr}, "{part}")'
    return expr


class _Writer:
    def __init__(self, graph: Graph, root_module: str) -> None:
        self.graph = graph
        self.root_module = root_module
        self.globals: dict[str, Any] = {}
        self.namespace = Namespace(reserved=tuple(n.name for n in graph.nodes)
                                   + (root_module,))
        self.global_names: dict[int, str] = {}

    def add_global(self, hint: str, obj: Any) -> str:
        """The name ``obj`` has among the generated code's globals (added on first use)."""
        known = self.global_names.get(id(obj))
        if known is not None:
            return known
        name = self.namespace.create_name(hint)
        self.globals[name] = obj
        self.global_names[id(obj)] = name
        return name

    def module_name(self, top: str) -> str:
        """The global that holds top-level module ``top`` (``torch``, ``operator``)."""
        import importlib

        module = importlib.import_module(top)
        known = self.global_names.get(id(module))
        if known is not None:
            return known
        if not self.namespace.used(top):
            self.namespace.associate(top, module)
            self.globals[top] = module
            self.global_names[id(module)] = top
            return top
        return self.add_global(top, module)

    def callable_expr(self, target: Any) -> str:
        path = qualified_name(target)
        if path is None:
            hint = getattr(target, "__name__", None) or type(target).__name__
            return self.add_global(str(hint), target)
        head, dot, rest = path.partition(".")
        if not dot:  # a builtin
            return path if not self.namespace.used(path) else self.add_global(path, target)
        return f"{self.module_name(head)}.{rest}"

    def value(self, arg: Any) -> str:
        """Source text for an argument value."""
        if isinstance(arg, Node):
            return arg.name
        if isinstance(arg, tuple):
            items = [self.value(a) for a in arg]
            if hasattr(arg, "_fields"):
                return f"{self.callable_expr(type(arg))}({', '.join(items)})"
            return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        if isinstance(arg, list):
            return f"[{', '.join(self.value(a) for a in arg)}]"
        if isinstance(arg, dict):
            return "{" + ", ".join(f"{self.value(k)}: {self.value(v)}"
                                   for k, v in arg.items()) + "}"
        if isinstance(arg, slice):
            return (f"slice({self.value(arg.start)}, {self.value(arg.stop)}, "
                    f"{self.value(arg.step)})")
        if arg is None or isinstance(arg, (bool, int, str)) or arg is Ellipsis:
            return "..." if arg is Ellipsis else repr(arg)
        if isinstance(arg, float):
            if math.isfinite(arg):
                return repr(arg)
            return f"float({str(arg)!r})"
        if isinstance(arg, complex):
            return f"complex({self.value(arg.real)}, {self.value(arg.imag)})"
        return self.torch_constant(arg)

    def torch_constant(self, arg: Any) -> str:
        import torch

        if isinstance(arg, (torch.dtype, torch.layout, torch.memory_format)):
            name = str(arg).rpartition(".")[2]
            if getattr(torch, name, None) is arg:
                return f"{self.module_name('torch')}.{name}"
        if isinstance(arg, torch.device):
            return f"{self.module_name('torch')}.device({str(arg)!r})"
        if callable(arg) and qualified_name(arg) is not None:
            return self.callable_expr(arg)
        hint = "_tensor_constant" if isinstance(arg, torch.Tensor) else \
            type(arg).__name__.lower()
        return self.add_global(hint, arg)

    def call_args(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        parts = [self.value(a) for a in args]
        parts += [f"{k} = {self.value(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def expression(self, node: Node) -> str:
        """The right-hand side for ``node`` (or the whole statement for output)."""
        op, target, args, kwargs = node.op, node.target, node.args, node.kwargs
        if op == "get_attr":
            return attribute_path(self.root_module, str(target))
        if op == "call_module":
            return f"{attribute_path(self.root_module, str(target))}" \
                   f"({self.call_args(args, kwargs)})"
        if op == "call_method":
            if not args:
                raise RuntimeError(f"call_method node {node.name} has no self argument")
            receiver = self.value(args[0])
            method = str(target)
            if _is_identifier(method):
                return f"{receiver}.{method}({self.call_args(args[1:], kwargs)})"
            return f"getattr({receiver}, {method!r})({self.call_args(args[1:], kwargs)})"
        # call_function
        if not kwargs:
            if target in _BINARY and len(args) == 2:
                return f"{self.value(args[0])} {_BINARY[target]} {self.value(args[1])}"
            if target in _UNARY and len(args) == 1:
                return f"{_UNARY[target]}{self.value(args[0])}"
            if target is operator.getitem and len(args) == 2:
                return f"{self.value(args[0])}[{self.index(args[1])}]"
            if target is getattr and len(args) == 2 and isinstance(args[1], str) and \
                    _is_identifier(args[1]):
                return f"{self.value(args[0])}.{args[1]}"
        return f"{self.callable_expr(target)}({self.call_args(args, kwargs)})"

    def index(self, idx: Any) -> str:
        """Subscript text: slices as ``a:b``, tuples without parentheses."""
        if isinstance(idx, slice):
            def part(v: Any) -> str:
                return "" if v is None else self.value(v)
            text = f"{part(idx.start)}:{part(idx.stop)}"
            return text + (f":{part(idx.step)}" if idx.step is not None else "")
        if isinstance(idx, tuple) and idx and not hasattr(idx, "_fields"):
            return ", ".join(self.index(i) for i in idx) + ("," if len(idx) == 1 else "")
        return self.value(idx)


def _annotation(node: Node, include_stride: bool, include_device: bool) -> str | None:
    """``"f32[3, 4]"`` for a node whose meta holds a tensor value or metadata."""
    value = node.meta.get("val", node.meta.get("tensor_meta"))
    if value is None:  # graph capture's nodes hold their fake value here (as PyTorch's)
        value = node.meta.get("example_value")
    if value is None:
        return None
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is None or dtype is None:
        if isinstance(value, (int, float, bool)) or type(value).__name__.startswith("Sym"):
            return f'"{type(value).__name__}"'
        return None
    text = f"{_dtype_abbrev(dtype)}[{', '.join(str(s) for s in shape)}]"
    stride = getattr(value, "stride", None)
    if include_stride and stride is not None:
        stride = stride() if callable(stride) else stride
        text += f"[{', '.join(str(s) for s in stride)}]"
    device = getattr(value, "device", None)
    if include_device and device is not None:
        text += f"{device}"
    return f'"{text}"'


_ABBREV = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
           "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
           "bool": "b8", "complex64": "c64", "complex128": "c128"}


def _dtype_abbrev(dtype: Any) -> str:
    name = str(dtype).rpartition(".")[2]
    return _ABBREV.get(name, name)


def generate(graph: Graph, root_module: str, *, verbose: bool = False,
             include_stride: bool = False, include_device: bool = False) -> PythonCode:
    """The ``forward`` source of ``graph`` (see the module docstring)."""
    writer = _Writer(graph, root_module)
    nodes = list(graph.nodes)
    # the node after which each value is read for the last time
    last_use: dict[Node, Node] = {}
    for node in reversed(nodes):
        for read in node._input_nodes:
            last_use.setdefault(read, node)
    freed_after: dict[Node, list[str]] = {}
    for value, user in last_use.items():
        if user.op != "output":
            freed_after.setdefault(user, []).append(value.name)

    params: list[str] = []
    body: list[str] = []
    wrap_return = ""
    for node in nodes:
        annotation = _annotation(node, include_stride, include_device) if verbose else None
        if node.op == "placeholder":
            target = str(node.target)
            star = "**" if target.startswith("**") else "*" if target.startswith("*") else ""
            text = f"{star}{node.name}"
            if node.type is not None:
                text += f": {_type_annotation(writer, node.type)}"
            elif annotation is not None:
                text += f": {annotation}"
            if node.args:
                text += f" = {writer.value(node.args[0])}"
            params.append(text)
            continue
        if node.op == "output":
            if node.type is not None:
                wrap_return = f" -> {_type_annotation(writer, node.type)}"
            body.append(f"return {writer.value(node.args[0])}")
            continue
        lhs = node.name
        if node.type is not None:
            lhs += f" : {_type_annotation(writer, node.type)}"
        elif annotation is not None:
            lhs += f": {annotation}"
        statement = f"{lhs} = {writer.expression(node)}"
        freed = list(freed_after.get(node, ()))
        if not node.users:  # nothing reads it (kept for its effect): freed at once
            freed.append(node.name)
        if freed:
            statement += f";  {' = '.join(freed)} = None"
        body.append(statement)
    if not body:
        body.append("pass")
    pytree_in = getattr(graph, "_pytree_in", None)
    if pytree_in is not None:
        # the arguments as the program passes them, flattened into the placeholders
        names, spec = pytree_in
        flatten = writer.add_global("flatten_args", flatten_args)
        spec_name = writer.add_global("in_spec", spec)
        leaves = "".join(f"{p.split(':')[0].split('=')[0].strip()}, " for p in params)
        body.insert(0, f"{leaves}= {flatten}(({''.join(n + ', ' for n in names)}), "
                       f"{spec_name})")
        params = list(names)
    signature = ", ".join([root_module, *params])
    src = f"\n\n\ndef forward({signature}){wrap_return}:\n" + \
        "".join(f"    {line}\n" for line in body)
    return PythonCode(src, writer.globals)


def flatten_args(args: tuple[Any, ...], spec: Any) -> list[Any]:
    """The leaves of ``args``, which must have the structure ``spec`` a graph was traced
    with (the placeholders of a graph taking structured arguments)."""
    from torch.utils import _pytree as pytree

    leaves, found = pytree.tree_flatten(args)
    if found != spec:
        raise TypeError(f"the graph was traced with arguments structured as {spec}; "
                        f"got {found}")
    return leaves


def _type_annotation(writer: _Writer, annotation: Any) -> str:
    """An annotation as source; types that the source cannot name become globals."""
    text = _type_repr(annotation)
    if isinstance(annotation, type) and annotation.__module__ != "builtins":
        return writer.add_global(annotation.__name__, annotation)
    return text if text.isidentifier() else repr(text)
