"""``torch.jit._get_trace_graph`` read through PyTorch's IR interface, as analysis tools walk it
(fvcore's flop counter: node kinds, scopes pushed by module hooks, constant arguments, value
sizes); and the quantization base classes such tools test modules against."""

from __future__ import annotations

import pytest

import torch
import torch.nn as nn


class _Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, stride=2)
        self.gn = nn.GroupNorm(2, 8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.gn(self.conv(x)).mean((2, 3))
        return torch.einsum("bi,bj->bij", self.fc(y), self.fc(y))


def _scoped_graph(model: nn.Module, x: torch.Tensor) -> torch._C.Graph:
    """The graph with each module's name pushed around its call, as fvcore records it."""
    handles = []
    for name, mod in model.named_modules():
        def push(module, inputs, name=name):
            state = torch._C._get_tracing_state()
            if state:
                state.push_scope(name)

        def pop(module, inputs, outputs):
            state = torch._C._get_tracing_state()
            if state:
                state.pop_scope()

        handles += [mod.register_forward_pre_hook(push), mod.register_forward_hook(pop)]
    try:
        graph, _ = torch.jit._get_trace_graph(model, (x,))
    finally:
        for h in handles:
            h.remove()
    return graph


def _nodes(graph: torch._C.Graph, kind: str) -> list:
    return [n for n in graph.nodes() if n.kind() == kind]


def test_the_graph_is_read_through_pytorchs_ir_interface() -> None:
    graph = _scoped_graph(_Net().eval(), torch.randn(2, 3, 8, 8))
    assert isinstance(graph, torch._C.Graph)
    kinds = [n.kind() for n in graph.nodes() if not n.kind().startswith("prim::")]
    # PyTorch's tracer: conv2d as _convolution, linear as itself, kinds without overloads
    assert kinds[0] == "aten::_convolution"
    assert "aten::group_norm" in kinds and "aten::linear" in kinds and "aten::einsum" in kinds
    assert all("." not in k for k in kinds)


def test_convolution_has_its_13_arguments_with_constants() -> None:
    graph = _scoped_graph(_Net().eval(), torch.randn(2, 3, 8, 8))
    (conv,) = _nodes(graph, "aten::_convolution")
    inputs = list(conv.inputs())
    assert len(inputs) == 13
    x, w = inputs[0], inputs[1]
    assert x.isCompleteTensor() and x.type().sizes() == [2, 3, 8, 8]
    assert w.type().sizes() == [8, 3, 3, 3]
    stride = inputs[3].node()  # a list of constants
    assert stride.kind() == "prim::ListConstruct"
    assert [v.toIValue() for v in stride.inputs()] == [2, 2]
    assert inputs[6].toIValue() is False  # transposed
    assert inputs[6].node().kind() == "prim::Constant"
    (out,) = list(conv.outputs())
    assert out.type().sizes() == [2, 8, 4, 4] and out.node() is conv


def test_group_norm_reads_as_pytorchs_operator() -> None:
    graph = _scoped_graph(_Net().eval(), torch.randn(2, 3, 8, 8))
    (gn,) = _nodes(graph, "aten::group_norm")
    inputs = list(gn.inputs())
    # group_norm(input, num_groups, weight, bias, eps, cudnn_enabled) -> Tensor
    assert inputs[0].type().sizes() == [2, 8, 4, 4]
    assert inputs[1].toIValue() == 2
    assert inputs[2].type().sizes() == [8]
    assert inputs[4].toIValue() == pytest.approx(1e-5)
    assert len(list(gn.outputs())) == 1


def test_nodes_carry_the_scope_pushed_around_them() -> None:
    graph = _scoped_graph(_Net().eval(), torch.randn(2, 3, 8, 8))
    scopes = {n.kind(): n.scopeName().split("/") for n in graph.nodes()
              if not n.kind().startswith("prim::")}
    assert scopes["aten::_convolution"] == ["", "conv"]
    assert scopes["aten::group_norm"] == ["", "gn"]
    assert scopes["aten::linear"] == ["", "fc"]
    assert scopes["aten::einsum"] == [""]


def test_einsum_operands_are_a_list_construct() -> None:
    graph = _scoped_graph(_Net().eval(), torch.randn(2, 3, 8, 8))
    (node,) = _nodes(graph, "aten::einsum")
    equation, operands = list(node.inputs())[:2]
    assert equation.toIValue() == "bi,bj->bij"
    shapes = [v.type().sizes() for v in operands.node().inputs()]
    assert shapes == [[2, 4], [2, 4]]


def test_outputs_and_the_traced_result() -> None:
    model = _Net().eval()
    x = torch.randn(2, 3, 8, 8)
    graph, result = torch.jit._get_trace_graph(model, (x,))
    assert torch.allclose(result, model(x))
    (out,) = list(graph.outputs())
    assert out.type().sizes() == [2, 4, 4]
    assert torch._C._get_tracing_state() is None  # outside a trace


def test_quantization_base_classes() -> None:
    from torch.ao.quantization import FakeQuantizeBase, ObserverBase

    with pytest.raises(TypeError):
        FakeQuantizeBase()  # abstract

    class Identity(FakeQuantizeBase):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

        def calculate_qparams(self, **kwargs):
            return torch.tensor([1.0]), torch.tensor([0])

    fq = Identity()
    assert set(fq.state_dict()) == {"fake_quant_enabled", "observer_enabled"}
    fq.disable_fake_quant()
    fq.disable_observer()
    assert fq.fake_quant_enabled.item() == 0 and fq.observer_enabled.item() == 0
    fq.enable_observer()
    assert fq.observer_enabled.item() == 1
    assert issubclass(ObserverBase, nn.Module)
    assert torch.quantization.FakeQuantizeBase is FakeQuantizeBase
