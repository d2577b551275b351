"""``torch.fx.graph``: :class:`Graph`, an ordered list of :class:`~torch.fx.Node` s.

The nodes form a doubly linked list around a sentinel (``graph._root``), so inserting and
removing are constant time and iterating while rewriting is safe. New nodes go at the graph's
insert point: the end, unless a ``with graph.inserting_before(n):`` block says otherwise.
"""

from __future__ import annotations

import inspect
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from torch.fx._codegen import PythonCode
from torch.fx._naming import Namespace, qualified_name, snake_case
from torch.fx.node import Argument, Node, Target, map_arg

if TYPE_CHECKING:
    from torch.fx.graph_module import GraphModule

__all__ = ["Graph", "PythonCode"]


class _NodeList:
    """A live view of a graph's nodes, forwards or backwards (``graph.nodes``)."""

    def __init__(self, graph: Graph, direction: str = "_next") -> None:
        self._graph = graph
        self._direction = direction

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self._graph._root
        direction = self._direction
        node = getattr(root, direction)
        while node is not root:
            following = getattr(node, direction)
            if not node._erased:
                yield node
            node = following

    def __reversed__(self) -> Iterator[Node]:
        return iter(_NodeList(self._graph, "_prev" if self._direction == "_next" else "_next"))

    def __repr__(self) -> str:
        return repr(list(self))


class _InsertPoint:
    """Restores the graph's previous insert point when its block ends."""

    def __init__(self, graph: Graph, new_insert: Callable[[Node], None]) -> None:
        self._graph = graph
        self._previous = graph._insert
        graph._insert = new_insert

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        self._graph._insert = self._previous


class Graph:
    """A graph of operations: the intermediate representation of ``torch.fx``.

    :param owning_module: the GraphModule this graph belongs to (set by the module).
    :param tracer_cls: the tracer that made it (kept for PyTorch compatibility).
    :param tracer_extras: what the tracer was given (kept, unused here).
    """

    def __init__(self, owning_module: GraphModule | None = None,
                 tracer_cls: type | None = None,
                 tracer_extras: dict[str, Any] | None = None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._insert: Callable[[Node], None] = self._root.prepend
        self._len = 0
        self._graph_namespace = Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        # (argument names, TreeSpec of the arguments) when the placeholders are the leaves
        # of structured arguments (make_fx of f(params_dict, x)): forward takes the
        # arguments and flattens them (PyTorch's pytree codegen)
        self._pytree_in: tuple[tuple[str, ...], Any] | None = None

    # -- ownership ----------------------------------------------------------------------

    @property
    def owning_module(self) -> GraphModule | None:
        """The GraphModule whose forward this graph is, if any."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod: GraphModule | None) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _NodeList:
        """The nodes in order (a live view; erasing the current node while iterating is
        safe)."""
        return _NodeList(self)

    def find_nodes(self, *, op: str, target: Target | None = None,
                   sort: bool = True) -> list[Node]:
        """The nodes of kind ``op`` (and ``target``, when given), in graph order."""
        del sort  # always in graph order: the scan follows the list
        return [n for n in self.nodes
                if n.op == op and (target is None or n.target == target)]

    # -- making nodes ---------------------------------------------------------------------

    def create_node(self, op: str, target: Target, args: tuple[Argument, ...] | None = None,
                    kwargs: dict[str, Argument] | None = None, name: str | None = None,
                    type_expr: Any | None = None) -> Node:
        """Insert a new node at the insert point and return it; ``name`` defaults to one
        derived from ``target``, made unique."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise TypeError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise TypeError("kwargs must be a dict")
        candidate = name if name is not None else self._target_to_str(target)
        unique = self._graph_namespace.create_name(candidate)
        node = Node(self, unique, op, target, args, kwargs, type_expr)
        self._insert(node)
        self._len += 1
        return node

    @staticmethod
    def _target_to_str(target: Target) -> str:
        if isinstance(target, str):
            target = target.lstrip("*")
            if len(target) > 4 and target.startswith("__") and target.endswith("__"):
                target = target[2:-2]  # a magic method (``__call__``): by its operation
            return target.replace(".", "_")
        op_path = getattr(target, "qualname", None)
        if isinstance(op_path, str) and "::" in op_path:  # an aten operator: its base name
            return op_path.partition("::")[2].partition(".")[0]
        name = getattr(target, "__name__", None) or type(target).__name__
        if len(name) > 4 and name.startswith("__") and name.endswith("__"):
            name = name[2:-2]  # a magic method: named by its operation
        return snake_case(name)

    def placeholder(self, name: str, type_expr: Any | None = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        """An input of the graph called ``name`` (with a default value, when given)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any | None = None) -> Node:
        """Read attribute ``qualified_name`` (``"layer1.weight"``) of the owning module."""
        module = self.owning_module
        if module is not None and not _has_path(module, qualified_name):
            warnings.warn(f"Attempted to insert a get_attr Node with no underlying reference "
                          f"in the owning GraphModule! Call GraphModule.add_submodule to add "
                          f"the necessary submodule, GraphModule.add_parameter to add the "
                          f"necessary Parameter, or nn.Module.register_buffer to add the "
                          f"necessary buffer (target: {qualified_name})", stacklevel=2)
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple[Argument, ...] | None = None,
                    kwargs: dict[str, Argument] | None = None,
                    type_expr: Any | None = None) -> Node:
        """Call the submodule at path ``module_name``."""
        module = self.owning_module
        if module is not None and not _has_path(module, module_name):
            warnings.warn(f"Attempted to insert a call_module Node with no underlying "
                          f"reference in the owning GraphModule! Call "
                          f"GraphModule.add_submodule to add the necessary submodule "
                          f"(target: {module_name})", stacklevel=2)
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple[Argument, ...] | None = None,
                    kwargs: dict[str, Argument] | None = None,
                    type_expr: Any | None = None) -> Node:
        """Call method ``method_name`` of ``args[0]``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable[..., Any],
                      args: tuple[Argument, ...] | None = None,
                      kwargs: dict[str, Argument] | None = None,
                      type_expr: Any | None = None) -> Node:
        """Call ``the_function``."""
        return self.create_node("call_function", the_function, args, kwargs,
                                type_expr=type_expr)

    def output(self, result: Argument, type_expr: Any | None = None) -> Node:
        """Return ``result`` from the graph (one output node per graph)."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    # -- editing ----------------------------------------------------------------------------

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """A block in which new nodes go just before ``n`` (the start of the graph when
        ``n`` is None)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise ValueError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """A block in which new nodes go just after ``n`` (each after the previous one; the
        end of the graph when ``n`` is None)."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise ValueError("Node to insert after is not in graph.")
        return _InsertPoint(self, _After(n))

    def erase_node(self, to_erase: Node) -> None:
        """Remove ``to_erase``, which no node may read any more."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node", stacklevel=2)
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        self._graph_namespace.release(to_erase.name)
        # drop it from its inputs' users
        to_erase._update_args_kwargs((), {})

    def node_copy(self, node: Node,
                  arg_transform: Callable[[Node], Argument] = lambda x: x) -> Node:
        """A copy of ``node`` (from any graph) at the insert point, its node arguments passed
        through ``arg_transform``; the name is kept when it is free and meta is copied."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = dict(node.meta)
        return result

    def graph_copy(self, g: Graph, val_map: dict[Node, Node],
                   return_output_node: bool = False) -> Any:
        """Copy every node of ``g`` except its output into this graph; ``val_map`` maps
        ``g``'s nodes to their copies (filled in; entries already there are used as they
        are). Returns what ``g``'s output returns, in this graph's nodes."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                value = map_arg(node.args[0], lambda n: val_map[n])
                return (value, node) if return_output_node else value
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Graph:
        """A copy with new nodes (same targets, meta shallow-copied)."""
        memo = memo if memo is not None else {}
        g = Graph(tracer_cls=self._tracer_cls)
        g._pytree_in = self._pytree_in
        output_vals = g.graph_copy(self, val_map={}, return_output_node=True)
        memo[id(self)] = g
        if output_vals is not None:
            value, old_output = output_vals
            new_output = g.output(value, type_expr=old_output.type)
            new_output.meta = dict(old_output.meta)
        return g

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None
                            ) -> bool:
        """Remove every node nothing reads and that has no side effect (see
        ``Node.is_impure``), last first; returns whether anything was removed."""
        impure = is_impure_node or (lambda n: n.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Check the graph is well formed: every node is of this graph and reads only nodes
        before it, names are unique, targets fit their kinds, there is at most one output and
        it is last, and (with an owning module) get_attr and call_module targets exist.

        :raises RuntimeError: naming the first problem found.
        """
        seen: set[Node] = set()
        names: set[str] = set()
        outputs = 0
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Arg {arg} of Node '{node}' does not belong to this "
                                       "Graph!")
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before "
                                       "it has been defined! Please check that Nodes in the "
                                       "graph are topologically ordered")
                if node not in arg.users:
                    raise RuntimeError(f"Node '{node}' reads '{arg}' but is not among its "
                                       "users")
            for user in node.users:
                if node not in user._input_nodes:
                    raise RuntimeError(f"Node '{user}' is a user of '{node}' but does not "
                                       "read it")
            if node.op == "output":
                outputs += 1
                if outputs > 1:
                    raise RuntimeError("A Graph may have only one output node")
            elif outputs:
                raise RuntimeError(f"Node '{node}' comes after the graph's output")
            if node.op == "call_function" and not callable(node.target):
                raise RuntimeError(f"Node {node} target {node.target} is not callable")
            if node.op in ("get_attr", "call_module", "call_method", "placeholder") and \
                    not isinstance(node.target, str):
                raise RuntimeError(f"Node {node} target {node.target} has type "
                                   f"{type(node.target)} but a str is expected")
            seen.add(node)
        module = self.owning_module
        if module is None:
            return
        for node in self.nodes:
            if node.op in ("get_attr", "call_module") and \
                    not _has_path(module, str(node.target)):
                kind = "module" if node.op == "call_module" else "attribute"
                raise RuntimeError(f"Node {node} target {node.target} references nonexistent "
                                   f"{kind} of the owning module")

    # -- code -----------------------------------------------------------------------------

    def python_code(self, root_module: str, *, verbose: bool = False,
                    include_stride: bool = False, include_device: bool = False,
                    colored: bool = False) -> PythonCode:
        """The Python source of a ``forward`` that runs this graph (``root_module`` is the
        name its attribute reads start from, ``"self"``) and the globals it needs."""
        from torch.fx._codegen import generate

        del colored  # plain text only
        return generate(self, root_module, verbose=verbose, include_stride=include_stride,
                        include_device=include_device)

    def on_generate_code(self, make_transformer: Callable[..., Any]) -> Any:
        """Not supported: the code generator has no hooks in Plait."""
        raise NotImplementedError("Graph.on_generate_code is not supported in Plait")

    def __str__(self) -> str:
        placeholder_names: list[str] = []
        return_type = [""]
        lines = []
        for node in self.nodes:
            text = node.format_node(placeholder_names, return_type)
            if text is not None:
                lines.append("    " + text)
        head = f"graph({', '.join(placeholder_names)}){return_type[0]}:"
        return "\n".join([head, *lines])

    def print_tabular(self) -> None:
        """Print the nodes as a table (opcode, name, target, args, kwargs)."""
        rows = [("opcode", "name", "target", "args", "kwargs")]
        for n in self.nodes:
            target = n.target if isinstance(n.target, str) else \
                (qualified_name(n.target) or repr(n.target))
            rows.append((n.op, n.name, str(target), str(n.args), str(n.kwargs)))
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
                 for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        sys.stdout.write("\n".join(lines) + "\n")  # printing is what this method is for


class _After:
    """An insert point after ``node`` that moves along, so nodes inserted in one block keep
    their order."""

    def __init__(self, node: Node) -> None:
        self._node = node

    def __call__(self, new: Node) -> None:
        self._node.append(new)
        self._node = new


def _has_path(module: Any, path: str) -> bool:
    obj = module
    for part in path.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True
