"""``torch.fx``: programs as graphs of Python-level operations (plait-compile).

``symbolic_trace(module)`` runs a module on :class:`Proxy` objects and records what it does as
a :class:`Graph` of :class:`Node` s; a :class:`GraphModule` runs a graph as the ``forward`` it
generates (readable in ``gm.code``). :class:`Interpreter` and :class:`Transformer` run graphs
node by node, ``subgraph_rewriter.replace_pattern`` rewrites them, ``passes.shape_prop``
annotates them with shapes, and ``experimental.proxy_tensor.make_fx`` records aten-level graphs
through the dispatcher. See packages/compile/README.md for the choices made where PyTorch's
documentation is silent.
"""

from __future__ import annotations

from torch.fx import immutable_collections
from torch.fx._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from torch.fx.graph import Graph
from torch.fx.graph_module import GraphModule
from torch.fx.interpreter import Interpreter, Transformer
from torch.fx.node import Node, has_side_effect, map_arg
from torch.fx.proxy import Proxy
from torch.fx.subgraph_rewriter import replace_pattern

__all__ = ["PH", "Graph", "GraphModule", "Interpreter", "Node", "Proxy", "Tracer",
           "Transformer", "has_side_effect", "immutable_collections", "map_arg",
           "replace_pattern", "symbolic_trace", "wrap"]
