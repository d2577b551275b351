"""``add_graph``'s trace: one forward pass of a module recorded as a TensorBoard ``GraphDef``.

A dispatch mode (``torch.utils._python_dispatch``) sees every aten operator the forward calls
and adds a node per call, wired to the nodes that made its tensor arguments; forward hooks on
every submodule keep the module path the call happens in, so that node names are
``Net/Sequential[features]/Conv2d[0]/convolution`` and TensorBoard's graph plugin folds each
module into a box. Parameters and buffers become ``prim::GetAttr`` nodes inside their module,
the inputs and outputs ``IO Node``s under ``input/`` and ``output/``, and tensors the trace
meets without knowing where they came from (made outside the forward) ``prim::Constant``s.
The ops are the dispatcher's, so a composite such as ``batch_norm`` shows the operators it is
written in, inside its module's box.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Sequence
from typing import Any

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

# The GraphDef producer version TensorBoard's own PyTorch graphs carry.
_PRODUCER_VERSION = 22


def _shapes_attr(tensors: Sequence[torch.Tensor]) -> AttrValue:
    shapes = [TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(n)) for n in t.shape])
              for t in tensors]
    return AttrValue(list=AttrValue.ListValue(shape=shapes))


def _describe(value: Any) -> str:
    """A non-tensor argument as the node's ``attr`` text shows it."""
    if isinstance(value, torch.Tensor):
        return f"tensor(shape={list(value.shape)}, dtype={value.dtype})"
    return repr(value)


class _GraphRecorder(TorchDispatchMode):
    """Collects the ``NodeDef``s of the operator calls made while it is active."""

    def __init__(self, root_scope: str, attribute_nodes: dict[int, tuple[str, str]]) -> None:
        self.scopes = [root_scope]
        self.nodes: list[NodeDef] = []
        # id(tensor) -> how a node's input names it ("node" or "node:k" for output k)
        self._sources: dict[int, str] = {}
        # every tensor seen stays referenced, so that no id is reused during the trace
        self._seen: list[torch.Tensor] = []
        self._taken: dict[str, int] = {}
        # id(parameter or buffer) -> (node name, attribute name), made into a node on first use
        self._attribute_nodes = attribute_nodes

    # --- naming ----------------------------------------------------------------------------
    def unique_name(self, wanted: str) -> str:
        count = self._taken.get(wanted, 0)
        self._taken[wanted] = count + 1
        return wanted if count == 0 else f"{wanted}_{count}"

    def add_node(self, name: str, op: str, inputs: Sequence[str],
                 outputs: Sequence[torch.Tensor], attr: str = "") -> str:
        """Append a node producing ``outputs`` (output k is ``name:k``); returns its name."""
        name = self.unique_name(name)
        node = NodeDef(name=name, op=op, input=list(inputs))
        node.attr["attr"].s = attr.encode("utf-8")
        if outputs:
            node.attr["_output_shapes"].CopyFrom(_shapes_attr(outputs))
        self.nodes.append(node)
        for index, tensor in enumerate(outputs):
            self._sources[id(tensor)] = name if index == 0 else f"{name}:{index}"
            self._seen.append(tensor)
        return name

    def source_of(self, tensor: torch.Tensor) -> str:
        """The input name of ``tensor``, adding a GetAttr or Constant node the first time."""
        source = self._sources.get(id(tensor))
        if source is not None:
            return source
        if id(tensor) in self._attribute_nodes:
            path, attribute = self._attribute_nodes[id(tensor)]
            return self.add_node(path, "prim::GetAttr", (), (tensor,),
                                 f"{{ name : {attribute} }}")
        return self.add_node(f"{self.scopes[-1]}/constant", "prim::Constant", (), (tensor,),
                             f"{{ value : {_describe(tensor)} }}")

    # --- module scopes ---------------------------------------------------------------------
    def enter_module(self, scope: str) -> None:
        self.scopes.append(scope)

    def exit_module(self) -> None:
        self.scopes.pop()

    # --- operator calls --------------------------------------------------------------------
    def __torch_dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        inputs = [self.source_of(leaf) for leaf in tree_flatten((args, kwargs))[0]
                  if isinstance(leaf, torch.Tensor)]
        outputs = [leaf for leaf in tree_flatten(result)[0] if isinstance(leaf, torch.Tensor)]
        base = func.name.partition(".")[0]
        self.add_node(f"{self.scopes[-1]}/{base}", f"{func.namespace}::{base}", inputs,
                      outputs, self._options(func, args, kwargs))
        return result

    @staticmethod
    def _options(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        """The call's non-tensor arguments by name, as ``{ name : value, ... }``."""
        schema = getattr(func, "schema", None)
        names = [a.name for a in schema.arguments] if schema is not None else []
        names += [str(i) for i in range(len(names), len(args))]
        pairs = list(zip(names, args)) + list(kwargs.items())
        shown = [f"{name} : {_describe(value)}" for name, value in pairs
                 if not isinstance(value, torch.Tensor)
                 and not (isinstance(value, (list, tuple)) and value
                          and all(isinstance(v, torch.Tensor) for v in value))]
        return "{" + ", ".join(shown) + "}"


def _module_scopes(model: torch.nn.Module) -> dict[int, str]:
    """id(module) -> its path as node-name scopes: ``Net/Sequential[features]/Conv2d[0]``."""
    by_name = {"": type(model).__name__}
    scopes = {}
    for name, module in model.named_modules():
        if name:
            parent, _, attribute = name.rpartition(".")
            by_name[name] = f"{by_name[parent]}/{type(module).__name__}[{attribute}]"
        scopes[id(module)] = by_name[name]
    return scopes


def _attribute_nodes(model: torch.nn.Module, scopes: dict[int, str]
                     ) -> dict[int, tuple[str, str]]:
    """id(parameter or buffer) -> (its node name inside its module's scope, its name)."""
    modules = dict(model.named_modules())
    found = {}
    for name, tensor in [*model.named_parameters(), *model.named_buffers()]:
        owner, _, attribute = name.rpartition(".")
        found[id(tensor)] = (f"{scopes[id(modules[owner])]}/{attribute}", attribute)
    return found


def _input_names(model: torch.nn.Module, count: int) -> list[str]:
    """The forward's parameter names for ``count`` positional inputs (``input.k`` past them)."""
    try:
        parameters = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError):
        parameters = []
    names = [p.name for p in parameters
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:count]
    return names + [f"input.{k}" for k in range(len(names), count)]


def graph(model: torch.nn.Module, args: Any = None, verbose: bool = False,
          use_strict_trace: bool = True) -> tuple[GraphDef, RunMetadata]:
    """Run ``model`` once in eval mode on ``args`` (a tensor or a tuple/list of them) and
    return its ``GraphDef`` with the (empty) CPU step statistics PyTorch writes beside it. Each
    module's training mode is restored afterwards.

    ``verbose`` writes the recorded nodes to standard output, as PyTorch prints its trace.
    ``use_strict_trace`` is accepted for compatibility (the trace is not a JIT trace)."""
    if args is None:
        args = ()
    elif not isinstance(args, (tuple, list)):
        args = (args,)
    scopes = _module_scopes(model)
    recorder = _GraphRecorder(scopes[id(model)], _attribute_nodes(model, scopes))
    for name, value in zip(_input_names(model, len(args)), args):
        for tensor in (leaf for leaf in tree_flatten(value)[0]
                       if isinstance(leaf, torch.Tensor)):
            recorder.add_node(f"input/{name}", "IO Node", (), (tensor,))

    def enter(module: torch.nn.Module, _inputs: Any) -> None:
        recorder.enter_module(scopes[id(module)])

    def leave(module: torch.nn.Module, _inputs: Any, _output: Any) -> None:
        recorder.exit_module()

    handles = []
    for module in model.modules():
        if module is not model:  # the model itself is the recorder's root scope
            handles.append(module.register_forward_pre_hook(enter))
            handles.append(module.register_forward_hook(leave))
    # As in PyTorch the trace runs in eval mode: no dropout, no batch-norm statistics updated.
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    try:
        with torch.no_grad(), recorder:
            output = model(*args)
    finally:
        for handle in handles:
            handle.remove()
        for module, training in modes:
            module.training = training

    for index, tensor in enumerate(leaf for leaf in tree_flatten(output)[0]
                                   if isinstance(leaf, torch.Tensor)):
        recorder.add_node(f"output/output.{index}", "IO Node", (recorder.source_of(tensor),),
                          (tensor,))
    if verbose:
        for node in recorder.nodes:
            sys.stdout.write(f"{node.name} = {node.op}({', '.join(node.input)})\n")
    step_stats = RunMetadata(step_stats=StepStats(
        dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return GraphDef(node=recorder.nodes, versions=VersionDef(producer=_PRODUCER_VERSION)), \
        step_stats
