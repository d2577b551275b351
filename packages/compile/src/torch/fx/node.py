"""``torch.fx.node``: :class:`Node`, one operation of a graph, and the helpers over arguments.

A node is one of six kinds (its ``op``): ``placeholder`` (an input of the graph), ``get_attr``
(a parameter, buffer or other attribute of the module), ``call_function``, ``call_method``,
``call_module`` and ``output`` (what the graph returns). Its ``args`` and ``kwargs`` hold other
nodes and plain values; each node knows the nodes it reads (``all_input_nodes``) and the nodes
that read it (``users``), and both are kept right whenever arguments change.
"""

from __future__ import annotations

import operator
import types
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from torch.fx.immutable_collections import immutable_dict, immutable_list

if TYPE_CHECKING:
    from torch.fx.graph import Graph

__all__ = ["Argument", "Node", "Target", "has_side_effect", "map_aggregate", "map_arg"]

Target = Callable[..., Any] | str
# What a node's arguments may hold (PyTorch's alias; documentation only)
Argument = Any

OPS = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output",
       "root")

_side_effectful_functions: set[Any] = set()


def has_side_effect(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``fn`` as having side effects, so ``Graph.eliminate_dead_code`` keeps its calls
    even when nothing reads their results; returns ``fn`` (usable as a decorator)."""
    _side_effectful_functions.add(fn)
    return fn


def _init_side_effects() -> None:
    import torch

    for name in ("_assert", "_assert_async", "manual_seed"):
        fn = getattr(torch, name, None)
        if fn is not None:
            _side_effectful_functions.add(fn)
    # writes into an argument: removing the call would lose the write
    _side_effectful_functions.update((
        operator.setitem, operator.iadd, operator.isub, operator.imul, operator.itruediv,
        operator.ifloordiv, operator.imod, operator.ipow, operator.ilshift,
        operator.irshift, operator.iand, operator.ior, operator.ixor, operator.imatmul))


_init_side_effects()


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """Apply ``fn`` to every leaf of ``a``, through tuples (named tuples kept), lists, dicts and
    slices; lists and dicts come back immutable, as node arguments are kept."""
    if isinstance(a, tuple):
        items = [map_aggregate(x, fn) for x in a]
        return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
    if isinstance(a, list):
        return immutable_list(map_aggregate(x, fn) for x in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """Apply ``fn`` to every :class:`Node` inside ``a`` (other leaves are kept)."""
    if not callable(fn):
        raise TypeError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _type_repr(obj: Any) -> str:
    """How a type annotation prints in node listings and generated code."""
    if isinstance(obj, type) and not isinstance(obj, types.GenericAlias):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        return f"{obj.__module__}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    if isinstance(obj, types.FunctionType):
        return obj.__name__
    return repr(obj).replace("typing.", "")


def _target_repr(target: Any) -> str:
    """A readable name for a call_function target (``operator.add``, ``torch.relu``)."""
    from torch.fx._naming import qualified_name

    if isinstance(target, str):
        return target
    path = qualified_name(target)
    if path is not None and "." not in path:  # a builtin, listed as PyTorch lists it
        return f"builtins.{path}"
    return path or repr(target)


def _format_arg(arg: Any, max_list_len: float = float("inf")) -> str:
    if isinstance(arg, Node):
        return "%" + arg.name
    if isinstance(arg, tuple) and not hasattr(arg, "_fields"):
        items = ", ".join(_format_arg(a) for a in arg[: int(min(len(arg), max_list_len))])
        more = "" if len(arg) <= max_list_len else ", ..."
        return f"({items}{more}{',' if len(arg) == 1 else ''})"
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for a in arg[: int(min(len(arg), max_list_len))])
        more = "" if len(arg) <= max_list_len else ", ..."
        return f"[{items}{more}]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    return str(arg)


class Node:
    """One operation of a :class:`~torch.fx.Graph`.

    Nodes are made by the graph (``graph.call_function(...)``, ``graph.create_node(...)``),
    never directly. Attributes: ``graph``, ``name`` (unique in the graph; the variable the
    generated code assigns), ``op``, ``target`` (the function, method name, module path or
    attribute path), ``args``, ``kwargs``, ``users`` (nodes that read this one, in order),
    ``type`` (an annotation, or None) and ``meta`` (a free dict passes write into).
    """

    def __init__(self, graph: Graph, name: str, op: str, target: Target,
                 args: tuple[Argument, ...], kwargs: dict[str, Argument],
                 return_type: Any | None = None) -> None:
        if op not in OPS:
            raise ValueError(f"Node op must be one of {OPS[:-1]}, got {op!r}")
        if op in ("call_method", "call_module", "get_attr", "placeholder") and \
                not isinstance(target, str):
            raise ValueError(f"Node target must be a string for op {op!r}, got {target!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a Callable is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict[Node, None] = {}
        self.users: dict[Node, None] = {}
        self.type = return_type
        self._prev: Node = self
        self._next: Node = self
        self._erased = False
        self.meta: dict[str, Any] = {}
        self._args: tuple[Argument, ...] = ()
        self._kwargs: dict[str, Argument] = immutable_dict()
        self._update_args_kwargs(args, kwargs)

    # -- the list the graph keeps ---------------------------------------------------------

    @property
    def next(self) -> Node:
        """The node after this one in the graph (the graph's root sentinel after the last)."""
        return self._next

    @property
    def prev(self) -> Node:
        """The node before this one in the graph."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move ``x`` to just before this node (the two must share a graph)."""
        if self.graph is not x.graph:
            raise ValueError("Attempting to move a Node into a different Graph")
        if self is x:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move ``x`` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # -- arguments --------------------------------------------------------------------------

    @property
    def args(self) -> tuple[Argument, ...]:
        """The positional arguments (nodes and values); assigning updates ``users``."""
        return self._args

    @args.setter
    def args(self, a: tuple[Argument, ...]) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict[str, Argument]:
        """The keyword arguments; assigning updates ``users``."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict[str, Argument]) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list[Node]:
        """Every node this one reads, in the order they appear in args then kwargs."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Argument) -> None:
        """Set positional argument ``idx`` to ``arg``."""
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        """Set keyword argument ``key`` to ``arg``."""
        self.kwargs = {**self._kwargs, key: arg}

    def insert_arg(self, idx: int, arg: Argument) -> None:
        """Insert ``arg`` as positional argument ``idx``."""
        args = list(self._args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def _update_args_kwargs(self, new_args: Sequence[Argument],
                            new_kwargs: Mapping[str, Argument]) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args = map_aggregate(tuple(new_args), lambda x: x)
        self._kwargs = map_aggregate(dict(new_kwargs), lambda x: x)
        self._input_nodes = {}
        map_arg(self._args, self._input_nodes.setdefault)
        map_arg(self._kwargs, self._input_nodes.setdefault)
        for new in self._input_nodes:
            if new.graph is not self.graph:
                raise ValueError(f"node {self.name} reads node {new.name} of another graph")
            new.users.setdefault(self)

    # -- rewiring ---------------------------------------------------------------------------

    def replace_all_uses_with(self, replace_with: Node,
                              delete_user_cb: Callable[[Node], bool] = lambda user: True,
                              *, propagate_meta: bool = False) -> list[Node]:
        """Make every user of this node read ``replace_with`` instead.

        :param delete_user_cb: which users to rewire (all by default).
        :param propagate_meta: copy this node's ``meta`` into ``replace_with`` (which must
            have none of its own).
        :returns: the users that were rewired.
        """
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, "
                                     "propagate_meta=True), but replace_with already has "
                                     ".meta keys")
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input: Node, new_input: Argument) -> None:
        """Read ``new_input`` wherever this node read ``old_input``."""

        def swap(n: Node) -> Argument:
            return new_input if n is old_input else n

        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # -- properties of the operation --------------------------------------------------------

    def is_impure(self) -> bool:
        """Whether removing this node could change what the program does even when nothing
        reads its result: inputs, the output, functions marked with :func:`has_side_effect`,
        operators that write their arguments, and in-place methods (``x.add_(y)``)."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            if self.target in _side_effectful_functions:
                return True
            schema = getattr(self.target, "schema", None) or getattr(self.target, "_schema",
                                                                      None)
            if schema is not None and getattr(schema, "is_mutable", False):
                return True
            name = getattr(self.target, "__name__", "")
            return isinstance(name, str) and _in_place_name(name.partition(".")[0])
        if self.op == "call_method":
            return _in_place_name(str(self.target))
        if self.op == "call_module":
            graph_module = self.graph.owning_module
            if graph_module is not None:
                try:
                    module = graph_module.get_submodule(str(self.target))
                except AttributeError:
                    return False
                return bool(getattr(module, "_is_impure", False))
        return False

    @property
    def stack_trace(self) -> str | None:
        """Where in the traced program this node was made, when the tracer recorded it."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace: str | None) -> None:
        self.meta["stack_trace"] = trace

    # -- printing ---------------------------------------------------------------------------

    def format_node(self, placeholder_names: list[str] | None = None,
                    maybe_return_typename: list[str] | None = None) -> str | None:
        """This node as one line of the graph's listing (``%add : [num_users=1] =
        call_function[target=operator.add](args = (%x, 1), kwargs = {})``)."""
        typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        head = f"%{self.name} : {typename}[num_users={len(self.users)}] = "
        if self.op == "placeholder":
            arg_str = str(self.target)
            if self.args:
                arg_str += f" = {self.args[0]!r}"
            if placeholder_names:  # a non-empty list collects names (PyTorch's behaviour)
                placeholder_names.append(arg_str)
                return None
            default = f"(default={self.args[0]})" if self.args else ""
            return f"{head}{self.op}[target={self.target}]{default}"
        if self.op == "get_attr":
            return f"{head}{self.op}[target={self.target}]"
        if self.op == "output":
            if self.type is not None and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        return (f"{head}{self.op}[target={_target_repr(self.target)}]"
                f"(args = {_format_arg(self._args)}, kwargs = {_format_arg(self._kwargs)})")

    def __repr__(self) -> str:
        return self.name

    # Nodes are keys of dicts everywhere: identity, not value, decides equality.
    __hash__ = object.__hash__


def _in_place_name(name: str) -> bool:
    return name.endswith("_") and not name.endswith("__")
