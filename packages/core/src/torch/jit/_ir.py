"""A traced graph read through PyTorch's IR interface (``torch._C.Graph``): what analysis tools
written against TorchScript walk (fvcore's flop and activation counters, graph printers).

:func:`get_trace_graph` (``torch.jit._get_trace_graph``) traces a module or function as
:func:`torch.jit.trace` does and returns an :class:`IRGraph` over the recorded graph, shaped as
PyTorch's tracer leaves it: every argument that is not a tensor is the output of a
``prim::Constant`` node (a list of them, of a ``prim::ListConstruct``), node kinds carry no
overload name, a convolution is ``aten::_convolution`` with its 13 arguments, and each node
knows the scope the tracer was in (``torch._C._get_tracing_state().push_scope``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from torch._core.tensor import Tensor

from . import _graph

__all__ = ["IRGraph", "IRNode", "IRValue", "TensorType", "get_trace_graph"]

# PyTorch's tracer records some calls as another operator: recorded kind -> (the traced kind,
# its arguments from the recorded ones, how many of the recorded outputs it has)
_TRACED_AS: dict[str, tuple[str, Callable[[list[Any]], list[Any]], int | None]] = {
    # conv2d reaches _convolution, with benchmark, deterministic, cudnn_enabled, allow_tf32
    "aten::convolution": ("aten::_convolution", lambda a: [*a, False, False, True, True], None),
    # F.group_norm is group_norm(input, num_groups, weight, bias, eps, cudnn_enabled) there;
    # here it calls native_group_norm(input, weight, bias, N, C, HxW, group, eps) directly
    "aten::native_group_norm": ("aten::group_norm",
                                lambda a: [a[0], a[6], a[1], a[2], a[7], True], 1),
}


class TensorType:
    """The type of a tensor value with the sizes, strides and dtype it had in the trace."""

    def __init__(self, value: _graph.Value) -> None:
        self._value = value

    def kind(self) -> str:
        return "TensorType"

    def sizes(self) -> list[int]:
        return list(self._value.shape)

    def strides(self) -> list[int]:
        return list(self._value.strides)

    def dim(self) -> int:
        return len(self._value.shape)

    def scalarType(self) -> str:
        return _graph._TYPE_NAMES.get(str(self._value.dtype).rpartition(".")[2],
                                      str(self._value.dtype))

    def dtype(self) -> Any:
        return self._value.dtype

    def device(self) -> Any:
        return self._value.device

    def requires_grad(self) -> bool:
        return self._value.requires_grad

    def __str__(self) -> str:
        return self._value.type_str()


# a constant's class -> its IR type's kind (bool before int: True is an int too, and the
# lookup is by exact class)
_CONSTANT_KINDS = {type(None): "NoneType", bool: "BoolType", int: "IntType", float: "FloatType",
                   str: "StringType", list: "ListType", tuple: "ListType"}


class _ConstantType:
    """The type of a constant that is not a tensor (``int``, ``float``, ``int[]``...)."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def kind(self) -> str:
        return _CONSTANT_KINDS.get(type(self._value), "AnyType")

    def __str__(self) -> str:
        return self.kind().removesuffix("Type").lower()


class IRValue:
    """One value of the graph: a tensor (graph input, parameter, constant tensor or node
    output) or a constant that is not a tensor."""

    def __init__(self, node: IRNode | None, name: str, tensor: _graph.Value | None = None,
                 constant: Any = None) -> None:
        self._node = node
        self._name = name
        self._tensor = tensor
        self._constant = constant

    def node(self) -> IRNode | None:
        """The node that makes this value (None for a graph input)."""
        return self._node

    def debugName(self) -> str:
        return self._name

    def unique(self) -> int:
        return id(self)

    def type(self) -> TensorType | _ConstantType:
        if self._tensor is not None:
            return TensorType(self._tensor)
        return _ConstantType(self._constant)

    def isCompleteTensor(self) -> bool:
        return self._tensor is not None

    def toIValue(self) -> Any:
        """The constant's value (None for a tensor that is not a constant)."""
        if self._tensor is not None:
            return self._tensor.constant
        return self._constant

    def __repr__(self) -> str:
        return f"%{self._name}"


class IRNode:
    """One node: ``kind()`` (``aten::addmm``, ``prim::Constant``...), its input and output
    values, and the tracer's scope when it ran."""

    def __init__(self, kind: str, scope: str = "") -> None:
        self._kind = kind
        self._scope = scope
        self._inputs: list[IRValue] = []
        self._outputs: list[IRValue] = []

    def kind(self) -> str:
        return self._kind

    def scopeName(self) -> str:
        return self._scope

    def inputs(self) -> Iterator[IRValue]:
        return iter(self._inputs)

    def outputs(self) -> Iterator[IRValue]:
        return iter(self._outputs)

    def input(self) -> IRValue:
        (value,) = self._inputs
        return value

    def output(self) -> IRValue:
        (value,) = self._outputs
        return value

    def inputsSize(self) -> int:
        return len(self._inputs)

    def outputsSize(self) -> int:
        return len(self._outputs)

    def pyname(self) -> str:
        return self._kind.partition("::")[2]

    def __repr__(self) -> str:
        outs = ", ".join(map(repr, self._outputs))
        ins = ", ".join(map(repr, self._inputs))
        return f"{outs} = {self._kind}({ins})"


class IRGraph:
    """The recorded graph as PyTorch's IR presents it (``nodes()``, ``inputs()``,
    ``outputs()``); ``str()`` prints the recorded graph."""

    def __init__(self, graph: _graph.Graph) -> None:
        self._graph = graph
        self._nodes: list[IRNode] = []
        self._values: dict[int, IRValue] = {}  # id(recorded Value) -> its IRValue
        self._inputs = [self._tensor_value(v) for v in (*graph.inputs, *graph.params.values())]
        for node in graph.nodes:
            self._add(node)
        self._outputs = [self._tensor_value(v) for v in _graph._leaves(graph.output)
                         if isinstance(v, _graph.Value)]

    def _tensor_value(self, value: _graph.Value, node: IRNode | None = None) -> IRValue:
        known = self._values.get(id(value))
        if known is None:
            known = self._values[id(value)] = IRValue(node, value.name, value)
        return known

    def _constant(self, value: Any, scope: str) -> IRValue:
        """The value of a non-tensor argument, made by its own ``prim::Constant`` (a list or
        tuple: a ``prim::ListConstruct`` of its items), as PyTorch's tracer records them."""
        if isinstance(value, _graph.Value):
            return self._tensor_value(value)
        if isinstance(value, (list, tuple)):
            node = IRNode("prim::ListConstruct", scope)
            node._inputs = [self._constant(item, scope) for item in value]
            # (not a constant itself: toIValue() is None, as in PyTorch; its items are)
            out = IRValue(node, f"list{len(self._nodes)}", constant=None)
        else:
            node = IRNode("prim::Constant", scope)
            out = IRValue(node, f"const{len(self._nodes)}", constant=value)
        node._outputs = [out]
        self._nodes.append(node)
        return out

    def _add(self, recorded: _graph.Node) -> None:
        scope = getattr(recorded, "scope", "")
        arguments = [*recorded.args, *recorded.kwargs.values()]
        kind, outputs = recorded.kind, recorded.outputs
        traced = _TRACED_AS.get(kind)
        if traced is not None:
            kind, rearrange, count = traced
            arguments = rearrange(arguments)
            outputs = outputs[:count]
        node = IRNode(kind.partition(".")[0], scope)  # (kinds carry no overload name)
        node._inputs = [self._constant(a, scope) for a in arguments]
        node._outputs = [self._tensor_value(v, node) for v in outputs]
        for value in node._outputs:
            value._node = node
        self._nodes.append(node)

    def nodes(self) -> Iterator[IRNode]:
        return iter(self._nodes)

    def inputs(self) -> Iterator[IRValue]:
        return iter(self._inputs)

    def outputs(self) -> Iterator[IRValue]:
        return iter(self._outputs)

    def __str__(self) -> str:
        return str(self._graph)


def get_trace_graph(fn: Callable[..., Any], args: Any = (), kwargs: dict[str, Any] | None = None,
                    strict: bool = True, _force_outplace: bool = False,
                    return_inputs: bool = False, _return_inputs_states: bool = False
                    ) -> tuple[IRGraph, Any]:
    """Trace ``fn(*args, **kwargs)`` (a module or a function) and return its graph, read
    through PyTorch's IR interface, with what the call returned (``torch.jit._get_trace_graph``).
    """
    from torch.jit._modules import is_module

    from ._recording import record
    from ._tracing import flatten, unflatten

    if isinstance(args, Tensor):
        args = (args,)
    tensors: list[Tensor] = []
    names: list[str] = []
    args_spec = tuple(flatten(a, tensors, names, f"input_{i}") for i, a in enumerate(args))
    kwargs_spec = {k: flatten(v, tensors, names, k) for k, v in (kwargs or {}).items()}
    params: dict[str, Tensor] = {}
    if is_module(fn):
        params.update(fn.named_parameters(remove_duplicate=False))
        params.update(fn.named_buffers(remove_duplicate=False))

    def call(inputs: list[Tensor]) -> Any:
        # the module itself is called (not its forward), so its hooks run, as in PyTorch
        return fn(*unflatten(args_spec, inputs), **unflatten(kwargs_spec, inputs))

    graph, result = record(call, tensors, params, names)
    return IRGraph(graph), result
