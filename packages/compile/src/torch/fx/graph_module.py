"""``torch.fx.graph_module``: :class:`GraphModule`, an ``nn.Module`` whose forward is a graph.

The forward is Python source generated from the graph (``gm.code``) and compiled; each
GraphModule gets a class of its own so that its ``forward`` can be replaced without touching
other instances. The source is registered with ``linecache``, so tracebacks through a
GraphModule show its lines.

Pickling stores the module's state and a description of the graph (its nodes, with operator
overloads by name), not the generated source: loading rebuilds the graph and compiles again.
Node ``meta`` is not pickled (it may hold fake tensors, which have no data to save).
"""

from __future__ import annotations

import builtins
import copy
import importlib
import itertools
import linecache
import os
import pathlib
import sys
import types
from typing import Any

import torch
from torch import nn
from torch.fx._codegen import PythonCode
from torch.fx._naming import qualified_name
from torch.fx.graph import Graph
from torch.fx.node import Node

__all__ = ["GraphModule"]

_file_counter = itertools.count()


def _exec_forward(src: str, globals_: dict[str, Any]) -> Any:
    """Compile ``src`` (one ``def forward``) under a file name of its own, kept in
    ``linecache`` so tracebacks and ``inspect.getsource`` see it."""
    key = f"<eval_with_key>.{next(_file_counter)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    namespace = dict(globals_)
    namespace["__builtins__"] = __builtins__
    exec(compile(src, key, "exec"), namespace)
    return namespace["forward"]


def _copy_attr(from_module: nn.Module, to_module: nn.Module, target: str) -> None:
    """Make ``target`` (a dotted path) of ``from_module`` reachable on ``to_module``: missing
    intermediate modules become empty ``nn.Module`` s, the final object is shared."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return  # the whole submodule is already shared
        if t is None:
            t = nn.Module()
            t.training = getattr(f, "training", True)
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, torch.Tensor) and not isinstance(orig, nn.Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(obj: Any, to_module: nn.Module, target: str) -> None:
    """Set ``target`` of ``to_module`` to ``obj``, making intermediate modules as needed."""
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = nn.Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(obj, torch.Tensor) and not isinstance(obj, nn.Parameter):
        to_module.register_buffer(field, obj)
    else:
        setattr(to_module, field, obj)


# attributes that describe how the module was traced (make_fx's symbolic sizes): a deep copy
# shares them and a pickle leaves them out
_SHARED = ("shape_env",)


class GraphModule(nn.Module):
    """An ``nn.Module`` made from a :class:`Graph`: its ``forward`` runs the graph.

    :param root: where the graph's ``get_attr`` and ``call_module`` targets come from: a
        module (its referenced attributes are shared into this one) or a dict from target
        path to object.
    :param graph: the graph; this module owns it from now on.
    :param class_name: the name the generated class and ``print_readable`` show.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphModule:
        # A class per instance, so that recompile() replaces this instance's forward only.
        for t in cls.__mro__:
            if t.__qualname__ == "GraphModule.__new__.<locals>.GraphModuleImpl":
                cls = t.__bases__[0]
                break

        class GraphModuleImpl(cls):  # type: ignore[valid-type, misc]
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root: nn.Module | dict[str, Any], graph: Graph,
                 class_name: str = "GraphModule") -> None:
        super().__init__()
        # the per-instance class keeps its qualified name (GraphModule.__new__'s lookup and
        # PyTorch's repr of the class read it); its name is what print_readable shows
        self.__class__.__name__ = class_name
        if isinstance(root, nn.Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, str(node.target))
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    _assign_attr(root[node.target], self, str(node.target))
        else:
            raise RuntimeError(f"Unsupported type {root} passed for root!")
        self.meta: dict[str, Any] = {}
        self.graph = graph

    # -- the graph and its code -------------------------------------------------------------

    @property
    def graph(self) -> Graph:
        """The graph this module runs; assigning one recompiles the forward."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise TypeError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of the generated ``forward``."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self) -> PythonCode:
        """Generate the forward again from ``self.graph`` (after editing the graph)."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        self._lineno_map = python_code._lineno_map
        cls = type(self)
        cls.forward = _exec_forward(self._code, python_code.globals)
        return python_code

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False) -> str:
        """The module as a class definition, with the tensor shapes and dtypes the graph's
        meta knows as annotations; printed too unless ``print_output`` is False."""
        src = self._graph.python_code("self", verbose=True, include_stride=include_stride,
                                      include_device=include_device, colored=colored).src
        body = src.lstrip("\n").replace("\n", "\n    ").rstrip()
        text = f"class {type(self).__name__}(torch.nn.Module):\n    {body}\n"
        if print_output:
            sys.stdout.write(text + "\n")  # printing is what this method is for
        return text

    def __str__(self) -> str:
        return "\n".join([super().__str__(), self._code,
                          "# To see more debug info, please use "
                          "`graph_module.print_readable()`"])

    def __repr__(self) -> str:
        return super().__repr__()

    def _get_name(self) -> str:
        return type(self).__name__

    # -- submodules ---------------------------------------------------------------------------

    def add_submodule(self, target: str, m: nn.Module) -> bool:
        """Install ``m`` at dotted path ``target``, making empty intermediate modules; returns
        False where a non-module attribute is in the way."""
        *prefix, field = target.split(".")
        mod: nn.Module = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = nn.Module()
                mod.add_module(item, sub)
            if not isinstance(sub, nn.Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at ``target``; returns whether there was one."""
        *prefix, field = target.split(".")
        mod: Any = self
        for item in prefix:
            mod = getattr(mod, item, None)
            if not isinstance(mod, nn.Module):
                return False
        if not isinstance(getattr(mod, field, None), nn.Module):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove every submodule no ``call_module`` or ``get_attr`` node reaches."""
        used: set[str] = set()
        for node in self._graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = str(node.target).split(".")
                for i in range(1, len(parts) + 1):
                    used.add(".".join(parts[:i]))
                if node.op == "call_module":
                    sub = self.get_submodule(str(node.target))
                    used.update(f"{node.target}.{name}" for name, _ in sub.named_modules()
                                if name)
        for name, _ in sorted(self.named_modules(), key=lambda kv: -kv[0].count(".")):
            if name and name not in used:
                self.delete_submodule(name)

    # -- writing out ---------------------------------------------------------------------------

    def to_folder(self, folder: str | os.PathLike[str], module_name: str = "FxModule") -> None:
        """Write this module as an importable Python package in ``folder``: ``module.py``
        defines class ``module_name`` with the generated forward, ``state_dict.pt`` holds
        the parameters and buffers, and each child module is saved whole as
        ``<name>.pt`` (loaded with ``weights_only=False``: only load folders you trust).

        :raises NotImplementedError: when the code reads a global that cannot be imported
            (a local function).
        """
        path = pathlib.Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        python_code = self._graph.python_code("self")
        imports = ["import torch"]
        for name, obj in python_code.globals.items():
            imports.append(_import_line(name, obj))
        init = ["    def __init__(self):", "        super().__init__()",
                "        here = os.path.dirname(os.path.abspath(__file__))"]
        for name, child in self.named_children():
            torch.save(child, path / f"{name}.pt")
            init.append(f"        self.{name} = torch.load(os.path.join(here, {name + '.pt'!r}),"
                        " weights_only=False)")
        for name, param in self._parameters.items():
            if param is not None:
                init.append(f"        self.{name} = torch.nn.Parameter(torch.empty("
                            f"{tuple(param.shape)}, dtype=torch.{_dtype_name(param)}))")
        for name, buf in self._buffers.items():
            if buf is not None:
                init.append(f"        self.register_buffer({name!r}, torch.empty("
                            f"{tuple(buf.shape)}, dtype=torch.{_dtype_name(buf)}))")
        torch.save({k: v for k, v in self.state_dict().items() if "." not in k},
                   path / "state_dict.pt")
        init.append("        self.load_state_dict(torch.load(os.path.join(here, "
                    "'state_dict.pt')), strict=False)")
        forward = python_code.src.strip("\n").replace("\n", "\n    ")
        text = "\n".join(["import os", *sorted(set(imports)), "", "",
                          f"class {module_name}(torch.nn.Module):", *init, "",
                          f"    {forward}", ""])
        (path / "module.py").write_text(text)
        (path / "__init__.py").write_text(f"from .module import {module_name}\n")

    # -- copies and pickles -------------------------------------------------------------------

    def __deepcopy__(self, memo: dict[int, Any]) -> GraphModule:
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        holder = nn.Module()
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        for name in _SHARED:  # describes the trace, not this module's state: shared
            if name in state:
                memo[id(state[name])] = state[name]
        holder.__dict__ = copy.deepcopy(state, memo)
        # a copy is a plain GraphModule whatever the original's class name, as in PyTorch
        GraphModule.__init__(res, holder, copy.deepcopy(self._graph, memo))
        for k, v in holder.__dict__.items():
            if k not in res.__dict__ or k in ("meta", "training"):
                res.__dict__[k] = v
        return res

    def __copy__(self) -> GraphModule:
        res = GraphModule(self, self._graph)
        res.meta = getattr(self, "meta", {})
        return res

    def __reduce__(self) -> Any:
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("_graph", "_code", "_lineno_map", *_SHARED)}
        if self._graph._pytree_in is not None:
            state["_graph_pytree_in"] = self._graph._pytree_in
        # unpickled as a plain GraphModule whatever the class name, as in PyTorch
        return (_rebuild_graph_module, (state, _graph_to_spec(self._graph), "GraphModule"))


def _dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).rpartition(".")[2]


def _import_line(name: str, obj: Any) -> str:
    """The import that binds global ``name`` of generated code to ``obj``."""
    if isinstance(obj, types.ModuleType):
        return f"import {obj.__name__}" if obj.__name__ == name else \
            f"import {obj.__name__} as {name}"
    path = qualified_name(obj)
    if path is not None and "." in path:
        module, _, attr = path.rpartition(".")
        if "." not in attr and module in sys.modules:
            return f"from {module} import {attr} as {name}"
    raise NotImplementedError(f"to_folder: the generated code reads {name} ({obj!r}), which "
                              "cannot be imported")


# -- pickling a graph --------------------------------------------------------------------------


class _NodeRef:
    """A node named inside a pickled graph description."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __reduce__(self) -> Any:
        return (_NodeRef, (self.index,))


class _OperatorRef:
    """An operator overload by qualified name (``aten::add.Tensor``)."""

    __slots__ = ("qualname",)

    def __init__(self, qualname: str) -> None:
        self.qualname = qualname

    def __reduce__(self) -> Any:
        return (_OperatorRef, (self.qualname,))

    def resolve(self) -> Any:
        namespace, _, name = self.qualname.partition("::")
        base, _, overload = name.partition(".")
        return getattr(getattr(getattr(torch.ops, namespace), base), overload or "default")


class _PathRef:
    """A function by the public path that names it (``torch.cat``): many torch functions
    are wrappers that pickle cannot find under their own ``__module__``."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (_PathRef, (self.path,))

    def resolve(self) -> Any:
        parts = self.path.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for part in parts[cut:]:
                obj = getattr(obj, part)
            return obj
        return getattr(builtins, self.path)


def _is_operator(obj: Any) -> bool:
    return isinstance(getattr(obj, "qualname", None), str) and "::" in obj.qualname and \
        hasattr(obj, "overloadpacket")


def _to_ref(obj: Any) -> Any:
    if _is_operator(obj):
        return _OperatorRef(obj.qualname)
    if callable(obj) and not isinstance(obj, type):
        path = qualified_name(obj)
        if path is not None:
            return _PathRef(path)
    return obj


def _graph_to_spec(graph: Graph) -> list[tuple[Any, ...]]:
    index = {node: i for i, node in enumerate(graph.nodes)}

    def encode(arg: Any) -> Any:
        if isinstance(arg, Node):
            return _NodeRef(index[arg])
        if isinstance(arg, (tuple, list)):
            items = [encode(a) for a in arg]
            return type(arg)(*items) if hasattr(arg, "_fields") else \
                (tuple(items) if isinstance(arg, tuple) else items)
        if isinstance(arg, dict):
            return {k: encode(v) for k, v in arg.items()}
        if isinstance(arg, slice):
            return slice(encode(arg.start), encode(arg.stop), encode(arg.step))
        return _to_ref(arg)

    return [(n.op, n.name, _to_ref(n.target), encode(n.args), encode(n.kwargs), n.type)
            for n in graph.nodes]


def _graph_from_spec(spec: list[tuple[Any, ...]]) -> Graph:
    graph = Graph()
    made: list[Node] = []

    def decode(arg: Any) -> Any:
        if isinstance(arg, _NodeRef):
            return made[arg.index]
        if isinstance(arg, (_OperatorRef, _PathRef)):
            return arg.resolve()
        if isinstance(arg, (tuple, list)):
            items = [decode(a) for a in arg]
            return type(arg)(*items) if hasattr(arg, "_fields") else \
                (tuple(items) if isinstance(arg, tuple) else items)
        if isinstance(arg, dict):
            return {k: decode(v) for k, v in arg.items()}
        if isinstance(arg, slice):
            return slice(decode(arg.start), decode(arg.stop), decode(arg.step))
        return arg

    for op, name, target, args, kwargs, type_expr in spec:
        made.append(graph.create_node(op, decode(target), decode(args), decode(kwargs), name,
                                      type_expr))
    return graph


def _rebuild_graph_module(state: dict[str, Any], spec: list[tuple[Any, ...]],
                          class_name: str) -> GraphModule:
    holder = nn.Module()
    graph = _graph_from_spec(spec)
    graph._pytree_in = state.pop("_graph_pytree_in", None)
    holder.__dict__.update(state)
    gm = GraphModule(holder, graph, class_name)
    for k, v in state.items():
        if k not in gm.__dict__ or k in ("meta", "training"):
            gm.__dict__[k] = v
    return gm
