"""The graph a trace records: values, nodes, and an interpreter that runs them again.

A :class:`Graph` is a list of :class:`Node` in the order they ran. Each node calls a target
(an aten operator such as ``torch.ops.aten.addmm``, or a function recorded as one node, see
:mod:`torch.jit._recording`) on arguments in which every tensor is a :class:`Value`: a graph
input, a module's parameter or buffer (by qualified name), a constant tensor the traced code
captured, or an output of an earlier node. ``str(graph)`` prints it in PyTorch's IR style;
:meth:`Graph.code` writes it as Python; :meth:`Graph.run` runs it on new inputs. The ONNX
exporter (:mod:`torch.onnx`) reads the same graph.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from torch._core.tensor import Tensor

__all__ = ["Graph", "Node", "Value"]

# PyTorch's IR names for tensor element types, as its graphs print them.
_TYPE_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


class Value:
    """One tensor of a graph: its name, where it comes from, and the shape and dtype it had
    when the trace ran.

    ``kind`` is ``"input"`` (an argument of the traced callable), ``"param"`` (a parameter or
    buffer of the traced module, by qualified name), ``"constant"`` (a tensor the traced code
    captured; kept in :attr:`constant`) or ``"node"`` (an output of :attr:`node`).
    """

    __slots__ = ("constant", "device", "dtype", "kind", "name", "node", "requires_grad",
                 "shape", "strides")

    def __init__(self, name: str, kind: str, example: Tensor, node: Node | None = None,
                 constant: Tensor | None = None) -> None:
        self.name = name
        self.kind = kind
        self.node = node
        self.constant = constant
        self.shape = tuple(example.shape)
        self.strides = tuple(example.stride())
        self.dtype = example.dtype
        self.device = example.device
        self.requires_grad = bool(example.requires_grad)

    def type_str(self) -> str:
        """The value's type as PyTorch's graphs print it: ``Float(2, 3, strides=[3, 1], ...)``."""
        elem = _TYPE_NAMES.get(str(self.dtype).rpartition(".")[2], str(self.dtype))
        dims = "".join(f"{d}, " for d in self.shape)
        return (f"{elem}({dims}strides={list(self.strides)}, "
                f"requires_grad={int(self.requires_grad)}, device={self.device})")

    def __repr__(self) -> str:
        return f"%{self.name}"


class Node:
    """One call the trace saw: ``outputs = target(*args, **kwargs)``.

    :ivar kind: the operator's name, ``"aten::addmm"``; ``"aten::max_pool2d"`` for a function
        recorded as one node.
    :ivar target: what runs it again.
    :ivar args: the positional arguments, tensors replaced by :class:`Value` (also inside lists
        and tuples).
    :ivar kwargs: the keyword arguments, likewise.
    :ivar outputs: the tensors it returned, in order.
    :ivar writes_view: an in-place operator wrote into a view (its base changed too, which
        a graph of values, as ONNX's, cannot express).
    :ivar out_spec: how they were returned: ``None`` for one tensor, ``"mutated"`` for an
        in-place operator that returns nothing (its output is its first argument, written),
        else one entry per item of the returned tuple or list: the item's index in
        :attr:`outputs`, or ``None`` for an item that is not a tensor.
    """

    __slots__ = ("args", "kind", "kwargs", "out_spec", "outputs", "scope", "target",
                 "writes_view")

    def __init__(self, kind: str, target: Callable[..., Any], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> None:
        self.kind = kind
        self.target = target
        self.args = args
        self.kwargs = kwargs
        self.outputs: list[Value] = []
        self.out_spec: Any = None
        self.writes_view = False
        self.scope = ""  # the tracer's scope when it ran ("/"-joined pushed names)

    def inputs(self) -> list[Value]:
        """The values among the arguments, in order."""
        return [v for v in _leaves((self.args, self.kwargs)) if isinstance(v, Value)]

    def __repr__(self) -> str:
        return f"<Node {self.kind} -> {self.outputs}>"


def _leaves(obj: Any) -> Iterator[Any]:
    if isinstance(obj, (tuple, list)):
        for item in obj:
            yield from _leaves(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _leaves(item)
    else:
        yield obj


def substitute(obj: Any, env: Mapping[Value, Any]) -> Any:
    """``obj`` with each :class:`Value` replaced by its entry in ``env`` (through tuples,
    lists and dicts)."""
    if isinstance(obj, Value):
        return env[obj]
    if isinstance(obj, tuple):
        return same_tuple(obj, [substitute(x, env) for x in obj])
    if isinstance(obj, list):
        return [substitute(x, env) for x in obj]
    if isinstance(obj, dict):
        return {k: substitute(x, env) for k, x in obj.items()}
    return obj


def same_tuple(like: tuple[Any, ...], items: list[Any]) -> tuple[Any, ...]:
    """``items`` as a tuple of ``like``'s class (a named tuple or a ``torch.return_types``
    structseq stays one: ``max(dim)``'s ``values``/``indices``)."""
    cls = type(like)
    if cls is tuple:
        return tuple(items)
    if hasattr(like, "_make"):  # collections.namedtuple
        return like._make(items)
    return cls(items)  # a structseq, built from one sequence


def _literal(obj: Any) -> str:
    """An argument as the printed graph and code show it."""
    if isinstance(obj, Value):
        return f"%{obj.name}"
    if isinstance(obj, tuple):
        return "[" + ", ".join(_literal(x) for x in obj) + "]"
    if isinstance(obj, list):
        return "[" + ", ".join(_literal(x) for x in obj) + "]"
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{k!r}: {_literal(x)}" for k, x in obj.items()) + "}"
    return repr(obj)


def _py(obj: Any, names: Mapping[Value, str]) -> str:
    """An argument as Python source."""
    if isinstance(obj, Value):
        return names[obj]
    if isinstance(obj, tuple):
        items = [_py(x, names) for x in obj]
        return f"({items[0]},)" if len(items) == 1 else "(" + ", ".join(items) + ")"
    if isinstance(obj, list):
        return "[" + ", ".join(_py(x, names) for x in obj) + "]"
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{k!r}: {_py(x, names)}" for k, x in obj.items()) + "}"
    return repr(obj)


class Graph:
    """What a trace recorded: inputs, parameters, constants, nodes in order, and the output
    structure (tensors as :class:`Value`, anything else as it was)."""

    def __init__(self) -> None:
        self.inputs: list[Value] = []
        self.params: dict[str, Value] = {}  # qualified name -> value
        self.constants: list[Value] = []
        self.nodes: list[Node] = []
        self.output: Any = None
        self._count = 0

    def fresh_name(self) -> str:
        """The next unnamed value's name (``"1"``, ``"2"``...), as PyTorch numbers them."""
        self._count += 1
        return str(self._count)

    # -- running ---------------------------------------------------------------------------

    def run(self, inputs: list[Any], params: Mapping[str, Any],
            env: dict[Value, Any] | None = None) -> Any:
        """Run the graph: each node's target on the tensors of this call.

        :param inputs: one tensor per graph input, in order.
        :param params: the current tensor of each parameter and buffer, by qualified name.
        :param env: a dict to fill with every value's tensor (the ONNX exporter reads it).
        :returns: the output, in the structure the traced callable returned it.
        """
        if len(inputs) != len(self.inputs):
            raise RuntimeError(f"the traced graph expects {len(self.inputs)} tensor inputs, "
                               f"got {len(inputs)}")
        env = {} if env is None else env
        env.update(zip(self.inputs, inputs))
        for name, value in self.params.items():
            env[value] = params[name]
        for value in self.constants:
            env[value] = value.constant
        for node in self.nodes:
            result = node.target(*substitute(node.args, env), **substitute(node.kwargs, env))
            if node.out_spec is None:
                env[node.outputs[0]] = result
            elif node.out_spec == "mutated":
                env[node.outputs[0]] = env[node.inputs()[0]]
            else:
                for index, item in zip(node.out_spec, result):
                    if index is not None:
                        env[node.outputs[index]] = item
        return substitute(self.output, env)

    # -- reading ---------------------------------------------------------------------------

    def output_values(self) -> list[Value]:
        """The tensors among the outputs, in order."""
        return [v for v in _leaves(self.output) if isinstance(v, Value)]

    def __str__(self) -> str:
        heads = [f"%{v.name} : {v.type_str()}" for v in (*self.inputs, *self.params.values())]
        lines = ["graph(" + ",\n      ".join(heads) + "):"]
        for value in self.constants:
            lines.append(f"  %{value.name} : {value.type_str()} = prim::Constant()")
        for node in self.nodes:
            outs = ", ".join(f"%{v.name} : {v.type_str()}" for v in node.outputs)
            args = [_literal(a) for a in node.args]
            args += [f"{k}={_literal(a)}" for k, a in node.kwargs.items()]
            lines.append(f"  {outs} = {node.kind}({', '.join(args)})")
        lines.append(f"  return ({', '.join(_literal(v) for v in self.output_values())})")
        return "\n".join(lines) + "\n"

    def code(self, arg_names: list[str] | None = None, method: str = "forward",
             bound: bool = True) -> str:
        """The graph as a Python function of its inputs (and of ``self``, the module, for a
        method: ``bound``): one line per node, each a call of ``torch.ops`` (or of the
        recorded function)."""
        names: dict[Value, str] = {}
        args = list(arg_names or [])
        for i, value in enumerate(self.inputs):
            if i >= len(args):
                args.append(f"input_{i}")
            names[value] = args[i]
        for qualname, value in self.params.items():
            names[value] = f"self.{qualname}"
        for i, value in enumerate(self.constants):
            names[value] = f"CONSTANTS.c{i}"
        params = (["self"] if bound else []) + args[: len(self.inputs)]
        lines = [f"def {method}({', '.join(params)}):"]
        for node in self.nodes:
            for value in node.outputs:
                names[value] = f"_{value.name}"
            call_args = [_py(a, names) for a in node.args]
            call_args += [f"{k}={_py(a, names)}" for k, a in node.kwargs.items()]
            target = _target_source(node)
            if node.out_spec == "mutated":  # returns nothing: the written tensor is the value
                lines.append(f"    {target}({', '.join(call_args)})")
                names[node.outputs[0]] = call_args[0]
                continue
            if node.out_spec is None:
                lhs = names[node.outputs[0]]
            else:
                slots = ["_" if index is None else names[node.outputs[index]]
                         for index in node.out_spec]
                lhs = ", ".join(slots) + ("," if len(slots) == 1 else "")
            lines.append(f"    {lhs} = {target}({', '.join(call_args)})")
        lines.append(f"    return {_py(self.output, names)}")
        return "\n".join(lines) + "\n"


def _target_source(node: Node) -> str:
    """How :meth:`Graph.code` names a node's target: ``torch.ops.aten.addmm`` for an operator,
    the function's module path for a function recorded as one node."""
    namespace, _, rest = node.kind.partition("::")
    if getattr(node.target, "qualname", None) == node.kind:
        name, _, overload = rest.partition(".")
        return f"torch.ops.{namespace}.{name}" + (f".{overload}" if overload else "")
    module = getattr(node.target, "__module__", None) or "torch"
    return f"{module}.{getattr(node.target, '__name__', rest)}"
