"""``torch.fx.proxy``: :class:`Proxy`, the stand-in value symbolic tracing runs code on.

Every operation on a Proxy records a node instead of computing: arithmetic and comparison
operators become ``call_function`` nodes on the ``operator`` functions, ``proxy.attr`` a
``getattr`` node (or, when called, a ``call_method`` node), and torch functions reach the
Proxy through ``__torch_function__``. What needs a concrete value -- ``bool(proxy)`` in an
``if``, ``len(proxy)``, iterating -- cannot be recorded and raises :class:`TraceError` (or, for
``len``, ``RuntimeError``), as in PyTorch. Unpacking (``a, b = proxy``) works: the number of
targets is read from the calling bytecode and becomes that many ``getitem`` nodes.
"""

from __future__ import annotations

import bisect
import dis
import inspect
import operator
import traceback
from collections.abc import Callable, Iterator
from typing import Any

# Proxies take part in the __torch_function__ protocol, which core turns on at this import
import torch.overrides
from torch.fx.graph import Graph
from torch.fx.node import Argument, Node, Target, map_aggregate

__all__ = ["Attribute", "GraphAppendingTracer", "ParameterProxy", "Proxy", "TraceError",
           "TracerBase"]


class TraceError(ValueError):
    """A traced program did something symbolic tracing cannot record (control flow on a
    traced value, iterating one)."""


_BASE_TYPES = (str, int, float, bool, complex, type(None), type(Ellipsis))


class TracerBase:
    """What a Proxy needs from the tracer that made it: a graph to record into and the rule
    that turns Python values into node arguments."""

    graph: Graph
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"

    def create_node(self, kind: str, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Argument], name: str | None = None,
                    type_expr: Any | None = None) -> Node:
        """Record one node (hook for subclasses that annotate nodes)."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        if self.record_stack_traces and kind.startswith("call_") and not node.stack_trace:
            frames = [f for f in traceback.extract_stack()
                      if "/torch/fx/" not in f.filename.replace("\\", "/")]
            node.stack_trace = "".join(traceback.format_list(frames[-1:]))
        return node

    def proxy(self, node: Node) -> Proxy:
        """The Proxy standing for ``node``."""
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Target, args: tuple[Any, ...],
                     kwargs: dict[str, Any], name: str | None = None,
                     type_expr: Any | None = None,
                     proxy_factory_fn: Callable[[Node], Proxy] | None = None) -> Proxy:
        """Record a node from Python-level arguments (proxies become their nodes) and return
        its Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        assert isinstance(args_, tuple)
        assert isinstance(kwargs_, dict)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Argument:
        """``a`` as a node argument: proxies become nodes; containers are mapped through;
        plain values stay."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            items = [self.create_arg(x) for x in a]
            return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
        if isinstance(a, list):
            return [self.create_arg(x) for x in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                key = self.create_arg(k)
                if isinstance(key, Node):
                    raise RuntimeError("Keys for dictionaries used as an argument cannot "
                                       f"contain a Node. Got key: {k}")
                out[key] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, (*_BASE_TYPES, Node)) or _is_torch_constant(a) or callable(a):
            return a
        import enum

        if isinstance(a, enum.Enum):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        """Called for ``bool(proxy)``: control flow on a traced value cannot be recorded."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def iter(self, obj: Proxy) -> Iterator[Any]:
        """Called for ``iter(proxy)`` where the length is not known from the bytecode."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function "
                         "argument. See the torch.fx docs on pytorch.org for a more detailed "
                         "explanation of what types of control flow can be traced, and check "
                         "out the Proxy docstring for help troubleshooting Proxy iteration "
                         "errors")

    def keys(self, obj: Proxy) -> Any:
        """Called for ``**proxy``: records ``proxy.keys()``."""
        return Attribute(obj, "keys")()


def _is_torch_constant(a: Any) -> bool:
    import torch

    return isinstance(a, (torch.dtype, torch.device, torch.layout, torch.memory_format,
                          torch.Size, torch.Tensor)) or _is_symbolic(a)


def _is_symbolic(a: Any) -> bool:
    import torch

    return isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool))


class GraphAppendingTracer(TracerBase):
    """A tracer that appends to an existing graph (what ``Proxy(node)`` uses by default)."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.scope = None
        self.module_stack: dict[str, Any] = {}
        self.node_name_to_scope: dict[str, Any] = {}


class Proxy:
    """Stands for the value of ``node`` while a program is traced; operations on it record
    nodes into its tracer's graph."""

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        if k.startswith("__") and k.endswith("__"):
            # protocol look-ups (copy, pickle, numpy) must not become graph nodes
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__ = state

    def __deepcopy__(self, memo: dict[int, Any]) -> Proxy:
        # a copy of a proxy stands for the same value: the node is copied into the graph
        new_node = self.tracer.graph.node_copy(self.node)
        return Proxy(new_node, self.tracer)

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __iter__(self) -> Iterator[Proxy]:
        frame = inspect.currentframe()
        calling = frame.f_back if frame is not None else None
        if calling is not None:
            instructions = list(dis.get_instructions(calling.f_code))
            offsets = [inst.offset for inst in instructions]
            i = bisect.bisect_left(offsets, calling.f_lasti)
            if i < len(instructions) and instructions[i].opname == "UNPACK_SEQUENCE":
                count = instructions[i].argval
                return (self[j] for j in range(count))
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self) -> int:
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you "
                           "want this call to be recorded, please call torch.fx.wrap('len') "
                           "at module scope")

    def keys(self) -> Any:
        return self.tracer.keys(self)

    __hash__ = object.__hash__

    @classmethod
    def __torch_function__(cls, orig_method: Callable[..., Any], types: tuple[type, ...],
                           args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
                           ) -> Any:
        kwargs = kwargs or {}
        tracers: dict[TracerBase, None] = {}

        def find_tracer(a: Any) -> None:
            if isinstance(a, Proxy):
                tracers[a.tracer] = None

        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers)} while "
                               f"trying to trace operations {orig_method}")
        tracer = next(iter(tracers))
        if torch.overrides.is_tensor_method_or_property(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs)


class Attribute(Proxy):
    """``proxy.attr``: a ``call_method`` node when called, otherwise a ``getattr`` node (made
    on first use, so a method call records no stray attribute read)."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


class ParameterProxy(Proxy):
    """A parameter's proxy whose shape queries answer with the parameter's real shape (what
    ``Tracer(param_shapes_constant=True)`` gives), so code that branches on a weight's size
    traces."""

    def __init__(self, tracer: TracerBase, node: Node, name: str, param: Any) -> None:
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self) -> Any:
        return self.param.shape

    def size(self, dim: int | None = None) -> Any:
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self) -> int:
        return self.param.dim()

    @property
    def ndim(self) -> int:
        return self.param.ndim

    def numel(self) -> int:
        return self.param.numel()

    def nelement(self) -> int:
        return self.param.nelement()


def _magic(name: str, fn: Callable[..., Any]) -> Callable[..., Proxy]:
    def method(self: Proxy, *rest: Any) -> Proxy:
        return self.tracer.create_proxy("call_function", fn, (self, *rest), {})

    method.__name__ = f"__{name}__"
    return method


def _reflected(name: str, fn: Callable[..., Any]) -> Callable[..., Proxy]:
    def method(self: Proxy, other: Any) -> Proxy:
        return self.tracer.create_proxy("call_function", fn, (other, self), {})

    method.__name__ = f"__r{name}__"
    return method


# the protocol methods a Proxy records: name -> the operator function of the node
_MAGIC = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "lshift": operator.lshift, "rshift": operator.rshift,
    "and": operator.and_, "or": operator.or_, "xor": operator.xor,
    "matmul": operator.matmul,
}
_UNARY_OR_OTHER = {
    "neg": operator.neg, "pos": operator.pos, "invert": operator.invert,
    "abs": operator.abs, "getitem": operator.getitem,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "gt": operator.gt,
    "le": operator.le, "ge": operator.ge,
}
# augmented assignment: ``x += y`` on a tensor writes x, so it is recorded as operator.iadd
# (not as an add that rebinds the name)
_IN_PLACE = {
    "iadd": operator.iadd, "isub": operator.isub, "imul": operator.imul,
    "itruediv": operator.itruediv, "ifloordiv": operator.ifloordiv, "imod": operator.imod,
    "ipow": operator.ipow, "ilshift": operator.ilshift, "irshift": operator.irshift,
    "iand": operator.iand, "ior": operator.ior, "ixor": operator.ixor,
    "imatmul": operator.imatmul, "setitem": operator.setitem,
}
for _name, _fn in {**_MAGIC, **_UNARY_OR_OTHER, **_IN_PLACE}.items():
    setattr(Proxy, f"__{_name}__", _magic(_name, _fn))
for _name, _fn in _MAGIC.items():
    setattr(Proxy, f"__r{_name}__", _reflected(_name, _fn))
# after __eq__ was set (which would otherwise make proxies unhashable)
Proxy.__hash__ = object.__hash__  # type: ignore[method-assign]
