"""``torch.fx.interpreter``: :class:`Interpreter` runs a GraphModule node by node, and
:class:`Transformer` runs one on proxies to build a new graph.

Both dispatch on the node kind to one method each (``placeholder``, ``get_attr``,
``call_function``, ``call_method``, ``call_module``, ``output``), which subclasses override to
observe or change what happens. The Interpreter frees each value after its last use, as the
generated code does.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from torch import nn
from torch.fx.graph import Graph
from torch.fx.graph_module import GraphModule
from torch.fx.node import Argument, Node, Target, map_aggregate, map_arg
from torch.fx.proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs ``module``'s graph one node at a time.

    :param module: the GraphModule to run (its attributes and submodules are what
        ``get_attr`` and ``call_module`` nodes reach).
    :param garbage_collect_values: drop each value after its last use.
    :param graph: run this graph instead of ``module.graph``.
    """

    def __init__(self, module: nn.Module, garbage_collect_values: bool = True,
                 graph: Graph | None = None) -> None:
        self.module = module
        self.submodules = dict(module.named_modules())
        if graph is not None:
            self.graph = graph
        else:
            self.graph = module.graph  # type: ignore[assignment]
        self.env: dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            # node -> the values that are read for the last time by it
            last_use: dict[Node, Node] = {}
            self.user_to_last_uses: dict[Node, list[Node]] = {}
            for node in reversed(self.graph.nodes):
                for n in node._input_nodes:
                    if n not in last_use:
                        last_use[n] = node
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args: Any, initial_env: dict[Node, Any] | None = None,
            enable_io_processing: bool = True) -> Any:
        """Run the graph on ``args`` and return what its output node returns.

        :param initial_env: values already known for some nodes (those are not run).
        """
        self.env = dict(initial_env) if initial_env is not None else {}
        self.args_iter: Iterator[Any] = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    msg = f"While executing {node.format_node()}"
                    if node.stack_trace:
                        msg += f"\nOriginal traceback:\n{node.stack_trace}"
                    if hasattr(e, "add_note"):
                        e.add_note(msg)
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, []):
                    self.env.pop(dead, None)
            if node.op == "output":
                output_val = self.env[node]
                return output_val
        return None

    def boxed_run(self, args_list: list[Any]) -> Any:
        """Run on the inputs in ``args_list``, emptying the list first (so the caller's
        references do not keep the inputs alive)."""
        args_iter = iter(args_list)
        env = {}
        for n in self.graph.nodes:
            if n.op == "placeholder":
                env[n] = next(args_iter)
        args_list.clear()
        return self.run(initial_env=env)

    def run_node(self, n: Node) -> Any:
        """Run one node: fetch its arguments' values, then call the method for its kind."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        assert isinstance(args, tuple)
        assert isinstance(kwargs, dict)
        return getattr(self, n.op)(n.target, args, kwargs)

    # -- one method per node kind --------------------------------------------------------

    def placeholder(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Any:
        """The next input (all remaining ones for ``*args``), or the default value."""
        assert isinstance(target, str)
        if target.startswith("**"):
            raise RuntimeError("an Interpreter cannot fill a **kwargs placeholder from "
                               "positional inputs")
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but "
                               "one was not passed in!") from si

    def get_attr(self, target: Target, args: tuple[Argument, ...],
                 kwargs: dict[str, Any]) -> Any:
        """The module's attribute at path ``target``."""
        assert isinstance(target, str)
        return self.fetch_attr(target)

    def call_function(self, target: Target, args: tuple[Argument, ...],
                      kwargs: dict[str, Any]) -> Any:
        """``target(*args, **kwargs)``."""
        assert not isinstance(target, str)
        return target(*args, **kwargs)

    def call_method(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Any:
        """``args[0].target(*args[1:], **kwargs)``."""
        self_obj, *args_tail = args
        assert isinstance(target, str)
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Any:
        """The submodule at path ``target`` called on the arguments."""
        assert isinstance(target, str)
        submod = self.fetch_attr(target)
        return submod(*args, **kwargs)

    def output(self, target: Target, args: tuple[Argument, ...],
               kwargs: dict[str, Any]) -> Any:
        """What the graph returns."""
        return args[0]

    # -- helpers --------------------------------------------------------------------------

    def fetch_attr(self, target: str) -> Any:
        """The attribute of ``self.module`` at dotted path ``target``."""
        attr_itr: Any = self.module
        for i, atom in enumerate(target.split(".")):
            if not hasattr(attr_itr, atom):
                raise RuntimeError("Node referenced nonexistent target "
                                   f"{'.'.join(target.split('.')[:i + 1])}")
            attr_itr = getattr(attr_itr, atom)
        return attr_itr

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``n``'s args and kwargs with each node replaced by its value."""
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return tuple(args), dict(kwargs)

    def map_nodes_to_values(self, args: Argument, n: Node) -> Argument:
        """``args`` with each node replaced by its value from the environment."""

        def load_arg(n_arg: Node) -> Any:
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run "
                                   "Graph.lint() to diagnose such issues")
            return self.env[n_arg]

        return _plain(map_arg(args, load_arg))


def _plain(a: Any) -> Any:
    """Lists and dicts of node arguments are read-only; the values handed to functions are
    ordinary ones, as the generated code passes."""
    if isinstance(a, list):
        return [_plain(x) for x in a]
    if isinstance(a, dict):
        return {k: _plain(v) for k, v in a.items()}
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        return tuple(_plain(x) for x in a)
    return a


class _TransformerTracer:
    """The tracer a Transformer records into: every module is a leaf."""

    def __new__(cls, graph: Graph, root: nn.Module) -> Any:
        from torch.fx._symbolic_trace import Tracer

        class TransformerTracer(Tracer):
            def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
                return True

        tracer = TransformerTracer()
        tracer.graph = graph
        tracer.root = root
        tracer.tensor_attrs = {}
        tracer._param_names = {id(p): n for n, p in root.named_parameters()}
        tracer.submodule_paths = {m: n for n, m in root.named_modules()}
        return tracer


class Transformer(Interpreter):
    """Builds a new graph by running ``module``'s graph on proxies: override the per-kind
    methods to return other values (``call_function`` calling ``torch.mul`` where the
    target was ``torch.add``...), then ``transform()`` gives the new GraphModule."""

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module, garbage_collect_values=False)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph, module)

    def placeholder(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Proxy:
        assert isinstance(target, str)
        default = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: Target, args: tuple[Argument, ...],
                 kwargs: dict[str, Any]) -> Proxy:
        assert isinstance(target, str)
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Any:
        assert isinstance(target, str)
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target: Target, args: tuple[Argument, ...],
                      kwargs: dict[str, Any]) -> Any:
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Any:
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        # the new node carries the old one's meta (what preserve_node_meta does in PyTorch)
        if isinstance(result, Proxy) and n.op not in ("output",):
            for key, value in n.meta.items():
                result.node.meta.setdefault(key, value)
        return result

    def transform(self) -> GraphModule:
        """Run the transformation and return the new GraphModule."""
        result = super().run(enable_io_processing=False)
        if result is not None:
            def strip_proxy(a: Any) -> Any:
                return a.node if isinstance(a, Proxy) else a

            self.new_graph.output(map_aggregate(result, strip_proxy))
        return GraphModule(self.module, self.new_graph)
