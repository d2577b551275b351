"""A replayed graph's calls without the ``__torch_function__`` check.

Every torch function and Tensor method goes through the protocol's entry
(``torch._torch_function``): a scan of the arguments for overrides, and a mode check. A call
that :func:`torch._dynamo._replay.fast_lookup` replays has only plain tensors for arguments,
no mode and no global module hook active (its key says so), and the graph's own values are
the results of torch calls on those: no argument of any call in it can have an override. So
the fast path runs the captured graph with each entry's guarded function called directly, as
a compiled graph in PyTorch calls its operators after its guards, which makes a replayed call
of a few small ops cost about what the eager call does.

A call with keyword arguments keeps its entry (the entry also accepts numpy's keyword names),
and so does a call whose values are not all plain tensors at the time (a subclass made inside
the graph keeps its override), or that takes values inside a list.
"""

from __future__ import annotations

from keyword import iskeyword
from typing import Any

from torch import _torch_function as _tf
from torch._core.tensor import Tensor

__all__ = ["direct_graph"]


def _methods_of_operators() -> dict[Any, tuple[str, str | None]]:
    """``operator`` function -> (its Tensor dunder method, the reflected one or None)."""
    from torch._dynamo._graph import OPERATORS

    found: dict[Any, tuple[str, str | None]] = {}
    for dunder, (function, swapped) in OPERATORS.items():
        if not swapped:
            reflected = "__r" + dunder[2:]
            found[function] = (dunder, reflected if OPERATORS.get(reflected) else None)
    return found


_METHOD_OF = _methods_of_operators()


def direct_graph(compiled: Any) -> Any:
    """The graph of ``compiled`` (a GraphModule's bound ``forward``, the ``eager`` backend's
    result) as a function calling each guarded function directly; None when ``compiled`` is
    something else or its graph has a node this does not write (it is then called as is)."""
    gm = getattr(compiled, "__self__", None)
    graph = getattr(gm, "graph", None)
    if graph is None or getattr(compiled, "__name__", None) != "forward" or \
            type(gm).forward is not getattr(compiled, "__func__", None):
        return None
    scope: dict[str, Any] = {"_T": Tensor}
    names: dict[Any, str] = {}

    def constant(value: Any) -> str:
        name = f"c{len(scope)}"
        scope[name] = value
        return name

    def render(value: Any) -> str | None:
        if hasattr(value, "op"):
            return names.get(value)
        if type(value) in (list, tuple):
            parts = [render(v) for v in value]
            if any(p is None for p in parts):
                return None
            inner = ", ".join(parts)
            return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if parts else ''})"
        if value is None or type(value) in (bool, int, str):
            return repr(value)
        if isinstance(value, (tuple, list, dict, slice)):
            return None  # (torch.Size, named tuples, slices and dicts of nodes: as written)
        return constant(value)  # floats (nan, inf), dtypes, devices...

    params: list[str] = []
    body: list[str] = []
    last: dict[Any, Any] = {}  # value -> the node that reads it last (dropped after it)
    for node in graph.nodes:
        for read in node.all_input_nodes:
            last[read] = node
    dropped: dict[Any, list[Any]] = {}
    for value, reader in last.items():
        dropped.setdefault(reader, []).append(value)
    for node in graph.nodes:
        name = names[node] = f"v{len(names)}"
        if node.op == "placeholder":
            if node.args or node.kwargs:
                return None  # a default value: the GraphModule's own code handles it
            params.append(name)
            continue
        args = [render(a) for a in node.args]
        if any(a is None for a in args):
            return None
        if node.op == "output":
            body.append(f"return {args[0]}")
            continue
        keywords = []
        for k, v in node.kwargs.items():
            text = render(v)
            if text is None or not k.isidentifier() or iskeyword(k):
                return None
            keywords.append(f"{k}={text}")
        nested = any(type(a) in (list, tuple) and any(hasattr(x, "op") for x in a)
                     for a in node.args)
        # the direct call runs while every value the call takes is a plain tensor
        plain = " and ".join(f"{names[a]}.__class__ is _T" for a in node.args
                             if hasattr(a, "op")) or "True"
        method_form = _METHOD_OF.get(node.target) if node.op == "call_function" else None
        if method_form is not None and len(node.args) in (1, 2, 3) and not node.kwargs:
            # a Python operator (operator.add(x, 1), operator.mul(2, x)): the Tensor
            # method it reaches on the tensor operand, called directly
            dunder, reflected = method_form
            written = f"{constant(node.target)}({', '.join(args)})"
            method = None
            if hasattr(node.args[0], "op"):
                method, operands = getattr(Tensor, dunder, None), args
            elif reflected is not None and len(args) == 2 and hasattr(node.args[1], "op"):
                method, operands = getattr(Tensor, reflected, None), [args[1], args[0]]
            if method is None:
                body.append(f"{name} = {written}")
            else:
                direct = constant(_tf.originals.get(method, method))
                body.append(f"{name} = {direct}({', '.join(operands)}) if {plain} "
                            f"else {written}")
        elif node.op == "call_function":
            written = f"{constant(node.target)}({', '.join(args + keywords)})"
            guarded = _tf.originals.get(node.target)
            if guarded is None or node.kwargs or nested:
                body.append(f"{name} = {written}")
            else:
                body.append(f"{name} = {constant(guarded)}({', '.join(args)}) if {plain} "
                            f"else {written}")
        elif node.op == "call_method" and isinstance(node.target, str) and args:
            method = getattr(Tensor, node.target, None)
            if not node.target.isidentifier():
                return None
            written = f"{args[0]}.{node.target}({', '.join(args[1:] + keywords)})"
            if method is None or node.kwargs or nested:
                body.append(f"{name} = {written}")
            else:
                direct = constant(_tf.originals.get(method, method))
                body.append(f"{name} = {direct}({', '.join(args)}) if {plain} else {written}")
        else:
            return None  # get_attr, call_module: the GraphModule's own code
        dead = [names[v] for v in dropped.get(node, ())]
        if dead:
            body.append(f"del {', '.join(dead)}")  # freed as early as eager frees them
    source = f"def run({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in body)
    exec(compile(source, "<replayed graph>", "exec"), scope)
    return scope["run"]
