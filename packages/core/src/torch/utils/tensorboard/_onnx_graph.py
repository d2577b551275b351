"""``add_onnx_graph``: an ONNX model file shown as a TensorBoard ``GraphDef`` (needs ``onnx``).

Each ONNX node becomes a node named after its first output (ONNX names values, not nodes),
so that another node's input names its producer directly; the graph's inputs and
initializers are ``Variable`` nodes and its outputs ``output/<name>`` nodes. A ``/`` in a
name is a TensorBoard scope, as the PyTorch exporter's ``/fc1/Gemm_output_0`` intends.
"""

from __future__ import annotations

import os
from typing import Any

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

_PRODUCER_VERSION = 22


def _node_name(value: str) -> str:
    # a leading "/" would open an empty scope; ":" separates an output index in GraphDefs
    return value.lstrip("/").replace(":", "_")


def _variable(name: str, elem_type: int, dims: list[int]) -> NodeDef:
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=d) for d in dims])
    return NodeDef(name=_node_name(name), op="Variable",
                   attr={"dtype": AttrValue(type=elem_type), "shape": AttrValue(shape=shape)})


def parse(graph: Any) -> GraphDef:
    """The ``GraphDef`` of an ``onnx.GraphProto``."""
    nodes = []
    # value name -> how an input refers to it ("node" or "node:k" for output k)
    sources: dict[str, str] = {}
    for initializer in graph.initializer:
        nodes.append(_variable(initializer.name, initializer.data_type, list(initializer.dims)))
        sources[initializer.name] = _node_name(initializer.name)
    for value in graph.input:
        if value.name in sources:  # older exporters list initializers as inputs too
            continue
        tensor_type = value.type.tensor_type
        nodes.append(_variable(value.name, tensor_type.elem_type,
                               [d.dim_value for d in tensor_type.shape.dim]))
        sources[value.name] = _node_name(value.name)
    for onnx_node in graph.node:
        name = _node_name(onnx_node.output[0])
        for index, output in enumerate(onnx_node.output):
            sources[output] = name if index == 0 else f"{name}:{index}"
        settings = ", ".join(f"{a.name} = {_attribute_text(a)}" for a in onnx_node.attribute)
        nodes.append(NodeDef(name=name, op=onnx_node.op_type,
                             input=[sources.get(i, _node_name(i)) for i in onnx_node.input if i],
                             attr={"parameters": AttrValue(s=settings.encode("utf-8"))}))
    for value in graph.output:
        nodes.append(NodeDef(name=f"output/{_node_name(value.name)}", op="IO Node",
                             input=[sources.get(value.name, _node_name(value.name))]))
    return GraphDef(node=nodes, versions=VersionDef(producer=_PRODUCER_VERSION))


def _attribute_text(attribute: Any) -> str:
    import onnx

    return repr(onnx.helper.get_attribute_value(attribute))


def load_onnx_graph(path: str | os.PathLike[str]) -> GraphDef:
    """The ``GraphDef`` of the ONNX model file at ``path``."""
    import onnx

    return parse(onnx.load(os.fspath(path)).graph)
