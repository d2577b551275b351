"""``torch.fx.experimental.proxy_tensor``: :func:`make_fx`, aten-level graphs through the
dispatcher.

``make_fx(f)(*inputs)`` runs ``f`` once under a dispatch mode that sees every aten operator
call below autograd (as ``torch.jit.trace``'s recorder does) and records each as a
``call_function`` node whose target is the operator overload (``torch.ops.aten.mm.default``).
The values run on are the real inputs (``tracing_mode="real"``), fake tensors
(``"fake"``: metadata only, nothing computed) or fake tensors with symbolic sizes
(``"symbolic"``: sizes of 2 or more become ``SymInt`` s ``s0, s1, ...``). Every node's
``meta["val"]`` holds its value as a fake tensor (or a SymInt).

Tensors are followed by identity: an operator's outputs become its node's values, an in-place
operator's result becomes the tensor's new node, and a tensor the graph did not make (one the
function captured) becomes a constant attribute ``_tensor_constant<N>``. A symbolic size that
reaches an operator is rebuilt in the graph from its expression: each symbol is read from the
input it came from (``torch.ops.aten.sym_size.int(x_1, 0)``) and combined with ``operator``
functions.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import operator
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.fx.graph import Graph
from torch.fx.graph_module import GraphModule
from torch.fx.node import Node
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack

__all__ = ["get_proxy_mode", "make_fx"]

_TRACING_MODES = ("real", "fake", "symbolic")

# symbolic expression op -> the function its node calls
_SYM_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "neg": operator.neg, "abs": operator.abs,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge, "and_": operator.and_, "or_": operator.or_,
    "floor": math.floor, "ceil": math.ceil, "round": round, "trunc": math.trunc,
    "to_float": torch.sym_float, "sym_min": torch.sym_min, "sym_max": torch.sym_max,
    "sym_not": torch.sym_not, "sym_ite": torch.sym_ite,
}
_SYM_TYPES: dict[type, Any] = {int: torch.SymInt, float: torch.SymFloat, bool: torch.SymBool}


class _LazyItem:
    """Element ``index`` of a multi-output node: its ``getitem`` node is made on first use,
    so unused outputs leave no node behind."""

    __slots__ = ("index", "node")

    def __init__(self, node: Node, index: int) -> None:
        self.node = node
        self.index = index


class _Tracker:
    """Maps the values a trace runs on to the nodes that compute them."""

    def __init__(self, graph: Graph, root: nn.Module, fake_mode: Any) -> None:
        self.graph = graph
        self.root = root
        self.fake_mode = fake_mode
        self._meta_mode: Any = None
        # id(tensor) -> (tensor, node or lazy item); the tensor is kept so its id stays its own
        self.tensors: dict[int, tuple[Any, Node | _LazyItem]] = {}
        # id(storage) -> the tracked tensors over it: a tensor object rebuilt over a tracked
        # one's memory and geometry (autograd unpacks a saved output so) is that tensor
        self.by_storage: dict[int, list[Any]] = {}
        # symbol name -> (input, dim), or (input, None) for a symbolic int input
        self.symbols: dict[str, tuple[Node, int | None]] = {}
        self.sym_nodes: dict[int, tuple[Any, Node]] = {}  # id(SymNode) -> (it, its node)
        self.sym_texts: dict[tuple[str, type], Node] = {}  # (expression text, type) -> node
        self.constants: dict[str, int] = {}

    # -- tensors ------------------------------------------------------------------------------

    def bind(self, tensor: Any, where: Node | _LazyItem) -> None:
        self.tensors[id(tensor)] = (tensor, where)
        storage = getattr(tensor, "_storage", None)
        if storage is not None:
            self.by_storage.setdefault(id(storage), []).append(tensor)

    def _alias_of(self, tensor: Any) -> Any:
        """A tracked tensor with ``tensor``'s memory, geometry and dtype (another object for
        the same values), or None."""
        storage = getattr(tensor, "_storage", None)
        for other in self.by_storage.get(id(storage), ()) if storage is not None else ():
            if (other is not tensor and other._storage is storage
                    and other._shape == tensor._shape and other._stride == tensor._stride
                    and other._offset == tensor._offset and other._dtype is tensor._dtype):
                return other
        return None

    def node_of(self, tensor: torch.Tensor) -> Node:
        known = self.tensors.get(id(tensor))
        if known is not None and known[0] is tensor:
            where = known[1]
            if isinstance(where, _LazyItem):
                node = self.graph.call_function(operator.getitem, (where.node, where.index))
                node.meta["val"] = self.fake_of(tensor)
                self.bind(tensor, node)
                return node
            return where
        alias = self._alias_of(tensor)
        if alias is not None:  # e.g. a saved output autograd rebuilt: traced, not a constant
            node = self.node_of(alias)
            self.bind(tensor, node)
            return node
        return self.constant(tensor)

    def constant(self, tensor: torch.Tensor) -> Node:
        """A tensor the function captured: an attribute of the traced module."""
        # named as PyTorch names them: parameters apart from other captured tensors
        kind = "param" if isinstance(tensor, nn.Parameter) else "tensor"
        count = self.constants.get(kind, 0)
        self.constants[kind] = count + 1
        name = f"_{kind}_constant{count}"
        from torch._subclasses.fake_tensor import FakeTensor

        if isinstance(tensor, FakeTensor):
            raise RuntimeError("make_fx: a fake tensor of another trace reached this one")
        setattr(self.root, name, tensor)
        node = self.graph.get_attr(name)
        node.meta["val"] = self.fake_of(tensor)
        self.bind(tensor, node)
        return node

    def fake_of(self, value: Any) -> Any:
        """``value`` as meta['val'] holds it: fake tensors as they are, real ones as fake
        tensors with the same metadata."""
        from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

        if not isinstance(value, torch.Tensor) or isinstance(value, FakeTensor):
            return value
        if self._meta_mode is None:
            self._meta_mode = FakeTensorMode(allow_non_fake_inputs=True)
        return self._meta_mode.from_tensor(value)

    # -- symbolic sizes -------------------------------------------------------------------

    def note_symbols(self, fake: torch.Tensor, placeholder: Node) -> None:
        for dim, size in enumerate(fake.shape):
            if isinstance(size, torch.SymInt) and size.node.op == "symbol":
                self.symbols.setdefault(size.node.name, (placeholder, dim))

    def sym_node(self, sym: Any) -> Any:
        """The node computing symbolic scalar ``sym`` (a constant folds to its value)."""
        expr = sym.node if hasattr(sym, "node") else sym
        known = self.sym_nodes.get(id(expr))
        if known is not None and known[0] is expr:
            return known[1]
        # the same expression built twice (``c // 2`` on each of three lines) is one node
        same = self.sym_texts.get((str(expr), expr.pytype))
        if same is not None:
            return same
        if expr.op == "constant":
            return expr.hint
        if expr.op == "symbol":
            source = self.symbols.get(expr.name)
            if source is None:
                raise RuntimeError(f"make_fx: symbol {expr.name} does not come from an input")
            if source[1] is None:
                return source[0]  # an int input: its placeholder
            node = self.graph.create_node("call_function", torch.ops.aten.sym_size.int,
                                          source, name="sym_size_int")
        elif expr.op == "sym_sum":
            node = self.graph.call_function(torch.sym_sum,
                                            ([self.sym_node(a) for a in expr.args],))
        else:
            fn = _SYM_FUNCTIONS.get(expr.op)
            if fn is None:
                raise NotImplementedError(f"make_fx: symbolic op {expr.op} has no graph form")
            node = self.graph.call_function(fn, tuple(self.sym_node(a) for a in expr.args))
        node.meta["val"] = _SYM_TYPES[expr.pytype](expr)
        self.sym_nodes[id(expr)] = (expr, node)
        self.sym_texts[(str(expr), expr.pytype)] = node
        return node

    # -- whole arguments ------------------------------------------------------------------

    def to_arg(self, value: Any) -> Any:
        """``value`` with tensors and symbolic scalars replaced by their nodes."""
        if isinstance(value, torch.Tensor):
            return self.node_of(value)
        if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return self.sym_node(value)
        if isinstance(value, tuple):
            items = [self.to_arg(v) for v in value]
            return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
        if isinstance(value, list):
            return [self.to_arg(v) for v in value]
        if isinstance(value, dict):
            return {k: self.to_arg(v) for k, v in value.items()}
        return value

    def bind_outputs(self, node: Node, result: Any, args: tuple[Any, ...], func: Any) -> None:
        if isinstance(result, torch.Tensor):
            self.bind(result, node)
            node.meta["val"] = self.fake_of(result)
        elif isinstance(result, (tuple, list)):
            node.meta["val"] = type(result)(self.fake_of(r) for r in result) \
                if not hasattr(result, "_fields") else result
            for i, r in enumerate(result):
                if isinstance(r, torch.Tensor):
                    self.bind(r, _LazyItem(node, i))
        elif isinstance(result, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            self.sym_nodes[id(result.node)] = (result.node, node)
            node.meta["val"] = result
        elif result is None and _writes_first(func) and args and \
                isinstance(args[0], torch.Tensor):
            # an in-place operator that returns nothing: the tensor's new value is its node
            self.bind(args[0], node)
            node.meta["val"] = self.fake_of(args[0])
        else:
            node.meta["val"] = result

    def output_value(self, out: Any, inputs: list[Any]) -> Any:
        """What the graph's output node returns for the traced function's result ``out``
        (``inputs``: the flat values the placeholders stand for). A functionalizing tracer
        appends the new values of the inputs the function mutated."""
        del inputs
        return self.to_arg(out)


def _writes_first(func: Any) -> bool:
    name = str(getattr(func, "name", "")).partition(".")[0]
    return name.endswith("_") and not name.endswith("__")


class _ProxyMode(TorchDispatchMode):
    """Records each aten operator call into the tracker's graph, after running it."""

    def __init__(self, tracker: _Tracker, decompositions: dict[Any, Callable[..., Any]]
                 ) -> None:
        self.tracker = tracker
        self.decompositions = decompositions

    def __torch_dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        decomposition = self.decompositions.get(func)
        if decomposition is not None:
            with self:  # the decomposition's own operator calls are recorded
                result = decomposition(*args, **kwargs)
            if result is not NotImplemented:
                return result
        tracker = self.tracker
        node_args = tracker.to_arg(args)
        node_kwargs = tracker.to_arg(kwargs)
        if tracker.fake_mode is not None:
            args, kwargs = self._fake_constants(args, kwargs)
        result = func(*args, **kwargs)
        node = tracker.graph.call_function(func, node_args, node_kwargs)
        tracker.bind_outputs(node, result, args, func)
        return result

    def _fake_constants(self, args: Any, kwargs: Any) -> tuple[Any, Any]:
        """Captured real tensors enter the fake trace as fakes of themselves (the graph
        already holds them as constants)."""
        from torch._subclasses.fake_tensor import FakeTensor

        tracker = self.tracker

        def swap(x: Any) -> Any:
            if isinstance(x, torch.Tensor) and not isinstance(x, FakeTensor) and \
                    x.device.type != "meta":
                # constants keep their sizes in every mode (a parameter's shape is fixed)
                fake = tracker.fake_mode.from_tensor(x, static_shapes=True)
                tracker.bind(fake, tracker.node_of(x))
                return fake
            return x

        return pytree.tree_map(swap, args), pytree.tree_map(swap, kwargs)


def _placeholder_names(f: Callable[..., Any], args: tuple[Any, ...]) -> list[str]:
    """``x_1`` for argument ``x`` (``xs_1, xs_2`` for the leaves of a structured one)."""
    try:
        # a module is named by its forward's parameters (its __call__ takes *args)
        target = f.forward if isinstance(f, nn.Module) else f
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        params = []
    names: list[str] = []
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), "arg")
    for i, arg in enumerate(args):
        base = positional[i].name if i < len(positional) else variadic
        count = len(pytree.tree_leaves(arg))
        names += [f"{base}_{k + 1}" for k in range(count)]
    return names


def _argument_names(f: Callable[..., Any], count: int) -> tuple[str, ...]:
    """Names for ``count`` positional arguments of ``f``: its own, else ``arg<i>``."""
    try:
        target = f.forward if isinstance(f, nn.Module) else f
        params = [p.name for p in inspect.signature(target).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [params[i] if i < len(params) else f"arg{i}" for i in range(count)]
    return tuple(n if n not in names[:i] else f"{n}_{i}" for i, n in enumerate(names))


def _hint(size: Any) -> int:
    return int(size.node.hint) if isinstance(size, torch.SymInt) else int(size)


def _input_fake(fake_mode: Any, leaf: torch.Tensor) -> Any:
    """The fake a placeholder traces on. A fake tensor of another mode (graph capture's
    example inputs) is replaced by its metadata: symbolic where its sizes are, static
    otherwise."""
    from torch._subclasses.fake_tensor import FakeTensor

    if not isinstance(leaf, FakeTensor) or leaf.fake_mode is fake_mode:
        return fake_mode.from_tensor(leaf)
    symbolic = any(isinstance(s, torch.SymInt) for s in leaf.shape)
    # a meta tensor of the same layout (no memory), faked, then placed on leaf's device
    stand_in = torch.empty_strided([_hint(s) for s in leaf.shape],
                                   [_hint(s) for s in leaf.stride()], dtype=leaf.dtype,
                                   device="meta")
    fake = fake_mode.from_tensor(stand_in, static_shapes=not symbolic)
    fake._device = leaf.device
    if leaf.requires_grad:
        fake.requires_grad_(True)
    return fake


def _trace(f: Callable[..., Any], args: tuple[Any, ...], tracing_mode: str,
           decompositions: dict[Any, Callable[..., Any]], *,
           tracker_cls: type[_Tracker] = _Tracker,
           mode_cls: type[_ProxyMode] = _ProxyMode) -> GraphModule:
    """Trace ``f`` on ``args``; AOT autograd passes its functionalizing tracker and mode."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    fake_mode = None
    if tracing_mode != "real":
        fake_mode = FakeTensorMode(allow_non_fake_inputs=True,
                                   static_shapes=tracing_mode == "fake")
    root = nn.Module()
    graph = Graph()
    tracker = tracker_cls(graph, root, fake_mode)
    flat, spec = pytree.tree_flatten(args)
    names = _placeholder_names(f, args)
    values = []
    for name, leaf in zip(names, flat):
        node = graph.placeholder(name)
        value = _input_fake(fake_mode, leaf) if fake_mode is not None and \
            isinstance(leaf, torch.Tensor) else leaf
        if isinstance(leaf, torch.SymInt):
            # a symbolic int input (graph capture's slice bounds): a symbol of this trace
            # read from its placeholder; traced with its value otherwise
            hint = _hint(leaf)
            if tracing_mode == "symbolic":
                value = fake_mode.shape_env.create_symbol(hint)
                tracker.symbols[value.node.name] = (node, None)
            else:
                value = hint
        if isinstance(value, torch.Tensor):
            tracker.bind(value, node)
            if tracing_mode == "symbolic":
                tracker.note_symbols(value, node)
        node.meta["val"] = tracker.fake_of(value)
        values.append(value)
    inputs = pytree.tree_unflatten(values, spec)
    shape_env = fake_mode.shape_env if fake_mode is not None else None
    with contextlib.ExitStack() as stack:
        if fake_mode is not None:
            stack.enter_context(fake_mode)
        if shape_env is not None:
            stack.enter_context(shape_env)
        stack.enter_context(mode_cls(tracker, decompositions))
        out = f(*inputs)
        result = tracker.output_value(out, values)
    graph.output(result)
    if any(not isinstance(a, torch.Tensor) and pytree.tree_leaves(a) != [a] for a in args):
        # structured arguments (a dict of parameters): forward takes them as the function
        # did and flattens them into the placeholders, as PyTorch's make_fx graphs do
        graph._pytree_in = (_argument_names(f, len(args)), spec)
    gm = GraphModule(root, graph)
    if shape_env is not None:
        gm.shape_env = shape_env
    return gm


def get_proxy_mode() -> TorchDispatchMode | None:
    """The innermost :func:`make_fx` tracing mode active on this thread, or None when no trace
    is being recorded (libraries test it to take a traceable path)."""
    for mode in reversed(_get_current_dispatch_mode_stack()):
        if isinstance(mode, _ProxyMode):
            return mode
    return None


def make_fx(f: Callable[..., Any],
            decomposition_table: dict[Any, Callable[..., Any]] | None = None,
            tracing_mode: str = "real", _allow_non_fake_inputs: bool = False, *,
            pre_dispatch: bool = False, record_module_stack: bool = False,
            _allow_fake_constant: bool = False, _error_on_data_dependent_ops: bool = True,
            record_stack_traces: bool = False) -> Callable[..., GraphModule]:
    """Return a function that traces ``f`` on its arguments into a GraphModule of aten
    operator calls (see the module docstring).

    :param decomposition_table: operator overload -> a Python function run in its place
        (its operator calls are recorded instead).
    :param tracing_mode: ``"real"``, ``"fake"`` or ``"symbolic"``.
    """
    if tracing_mode not in _TRACING_MODES:
        raise AssertionError(f"Unexpected tracing type: {tracing_mode}")
    decompositions = dict(decomposition_table or {})
    del pre_dispatch, record_module_stack, _allow_fake_constant, record_stack_traces
    del _allow_non_fake_inputs, _error_on_data_dependent_ops

    @functools.wraps(f)
    def wrapped(*args: Any) -> GraphModule:
        return _trace(f, args, tracing_mode, decompositions)

    return wrapped
