"""torch.jit as libraries use it: trace and script of functions and modules, the graph a trace
records, the decorators, fork/wait, and the refusals of save/load."""

from __future__ import annotations

import warnings
from typing import List  # noqa: UP035 (what torch.jit.annotations answers)

import pytest

import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 4 * 4, 5)
        self.seen_tracing: list[bool] = []

    def forward(self, x):
        self.seen_tracing.append(torch.jit.is_tracing())
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return F.log_softmax(self.fc(torch.flatten(x, 1)), dim=1)


def _net() -> Net:
    torch.manual_seed(0)
    return Net().eval()


def test_traced_module_computes_the_same_and_shares_the_parameters() -> None:
    model = _net()
    traced = torch.jit.trace(model, torch.randn(2, 1, 8, 8))
    assert model.seen_tracing == [True] and not torch.jit.is_tracing()
    assert isinstance(traced, torch.jit.ScriptModule) and isinstance(traced, nn.Module)
    assert isinstance(traced, torch.jit.TopLevelTracedModule)
    x = torch.randn(3, 1, 8, 8)  # another batch size than the trace's
    assert torch.allclose(traced(x), model(x), atol=1e-6)
    assert list(traced.state_dict()) == list(model.state_dict())
    assert traced.fc.weight is model.fc.weight
    with torch.no_grad():
        model.fc.bias.add_(1.0)  # the traced graph reads the shared parameter when it runs
    assert torch.allclose(traced(x), model(x), atol=1e-6)


def test_traced_module_follows_load_state_dict_and_gives_gradients() -> None:
    model = _net()
    traced = torch.jit.trace(model, torch.randn(2, 1, 8, 8))
    other = _net()
    with torch.no_grad():
        for p in other.parameters():
            p.mul_(-0.5)
    traced.load_state_dict(other.state_dict())
    x = torch.randn(2, 1, 8, 8)
    assert torch.allclose(traced(x), other(x), atol=1e-6)
    traced(x).sum().backward()
    eager_grad = model.conv.weight.grad.clone()
    model.zero_grad()
    model(x).sum().backward()
    assert torch.allclose(eager_grad, model.conv.weight.grad, atol=1e-6)


def test_graph_and_code_are_readable_aten() -> None:
    traced = torch.jit.trace(_net(), torch.randn(2, 1, 8, 8))
    graph = str(traced.graph)
    assert graph.startswith("graph(%x : Float(2, 1, 8, 8, strides=[64, 64, 8, 1]")
    for kind in ("aten::convolution", "aten::batch_norm", "aten::relu", "aten::max_pool2d",
                 "aten::linear", "aten::_log_softmax"):
        assert f"= {kind}(" in graph
    # pooling is one node, as in PyTorch's trace (not the operators it is written in)
    assert "aten::unfold" not in graph and "aten::amax" not in graph
    code = traced.code
    assert code.startswith("def forward(self, x):")
    assert "torch.ops.aten.convolution(x, self.conv.weight, self.conv.bias" in code
    assert "return _" in code


def test_tracing_a_traced_module_keeps_its_nodes() -> None:
    traced = torch.jit.trace(_net(), torch.randn(2, 1, 8, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = torch.jit.trace(traced, torch.randn(2, 1, 8, 8))
    assert again is traced  # PyTorch returns a ScriptModule as it is
    graph = torch.jit.trace(lambda x: traced(x) * 2, torch.randn(2, 1, 8, 8)).graph
    assert "aten::max_pool2d" in str(graph)


def test_traced_function_structures_and_values() -> None:
    def fn(a, pair):
        b, c = pair
        return (a * b + 1).tanh(), {"sum": a.sum() + c.sum()}

    a, b, c = torch.randn(3), torch.randn(3), torch.randn(2)
    with pytest.raises(RuntimeError, match="strict=False"):
        torch.jit.trace(fn, (a, (b, c)))
    traced = torch.jit.trace(fn, (a, (b, c)), strict=False)
    assert isinstance(traced, torch.jit.ScriptFunction)
    assert traced.code.startswith("def fn(a, pair_0, pair_1):")
    x, y, z = torch.ones(3), torch.full((3,), 2.0), torch.ones(2)
    first, second = traced(x, (y, z))
    assert torch.allclose(first, torch.tanh(x * y + 1))
    assert torch.allclose(second["sum"], torch.tensor(5.0))
    with pytest.raises(RuntimeError, match="structure"):
        traced(x, y)


def test_a_trace_fixes_python_control_flow_and_says_so() -> None:
    def fn(x):
        if x.sum() > 0:  # a tensor turned into a Python bool: fixed in the trace
            return x * 2
        return x - 1

    with pytest.warns(torch.jit.TracerWarning, match="Python bool"):
        traced = torch.jit.trace(fn, torch.ones(2))
    negative = -torch.ones(2)
    assert torch.equal(traced(negative), negative * 2)  # the traced branch, as PyTorch does
    assert torch.equal(fn(negative), negative - 1)


def test_check_trace_warns_on_a_nondeterministic_function() -> None:
    def fn(x):
        return F.dropout(x, 0.5, training=True)

    with pytest.warns(torch.jit.TracerWarning, match="does not match"):
        torch.jit.trace(fn, torch.ones(200))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.jit.trace(fn, torch.ones(200), check_trace=False)


def test_only_tensors_can_be_traced() -> None:
    with pytest.raises(RuntimeError, match="cannot be traced"):
        torch.jit.trace(lambda x, n: x * n, (torch.ones(2), 3))


def test_trace_module_traces_several_methods() -> None:
    class Coder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(x)

        def encode(self, x):
            return torch.relu(self.lin(x)) + 1

    model = Coder()
    x = torch.randn(2, 3)
    traced = torch.jit.trace_module(model, {"forward": x, "encode": x})
    y = torch.randn(4, 3)
    assert torch.allclose(traced(y), model(y))
    assert torch.allclose(traced.encode(y), model.encode(y))
    assert "aten::relu" in str(traced.encode.graph)


def test_script_function_and_module_run_the_python_code() -> None:
    def fn(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    scripted = torch.jit.script(fn)
    assert isinstance(scripted, torch.jit.ScriptFunction)
    assert torch.equal(scripted(torch.ones(2)), torch.full((2,), 2.0))
    assert torch.equal(scripted(-torch.ones(2)), torch.full((2,), -2.0))  # both branches
    assert "if x.sum() > 0:" in scripted.code
    assert not hasattr(scripted, "graph")

    model = _net()
    module = torch.jit.script(model)
    assert isinstance(module, torch.jit.RecursiveScriptModule)
    assert isinstance(module.fc, torch.jit.ScriptModule)
    assert not isinstance(model, torch.jit.ScriptModule)  # the original stays as it was
    assert list(module.state_dict()) == list(model.state_dict())
    assert module.fc.weight is model.fc.weight
    x = torch.randn(2, 1, 8, 8)
    assert torch.allclose(module(x), model(x))
    assert module.original_name == "Net"
    assert "def forward(self, x):" in module.code
    assert torch.jit.script(module) is module


def test_save_and_load_say_when_they_come() -> None:
    traced = torch.jit.trace(nn.Linear(2, 2), torch.ones(1, 2))
    for call in (lambda: torch.jit.save(traced, "m.pt"), lambda: traced.save("m.pt"),
                 lambda: torch.jit.load("m.pt")):
        with pytest.raises(RuntimeError, match="compile issue"):
            call()


def test_freeze_and_optimize_for_inference() -> None:
    with pytest.raises(RuntimeError, match="ScriptModule"):
        torch.jit.freeze(nn.Linear(2, 2))
    scripted = torch.jit.script(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="eval mode"):
        torch.jit.freeze(scripted)
    assert torch.jit.freeze(scripted.eval()) is scripted
    assert torch.jit.optimize_for_inference(scripted) is scripted


def test_fork_and_wait() -> None:
    future = torch.jit.fork(torch.add, torch.ones(2), 2)
    assert future.done()
    assert torch.equal(torch.jit.wait(future), torch.full((2,), 3.0))

    def fails():
        raise ValueError("inside the task")

    failed = torch.jit.fork(fails)
    with pytest.raises(ValueError, match="inside the task"):
        torch.jit.wait(failed)
    chained = future.then(lambda f: f.value() * 2)
    assert torch.equal(chained.wait(), torch.full((2,), 6.0))
    assert torch.futures.wait_all([future, chained])[1].sum().item() == 12.0


def test_decorators_annotations_and_attributes() -> None:
    class Legacy(torch.jit.ScriptModule):
        def __init__(self) -> None:
            super().__init__()
            self.count = torch.jit.Attribute(3, int)

        @torch.jit.script_method
        def forward(self, x):
            return x * self.count

    legacy = Legacy()
    assert legacy.count == 3
    assert torch.equal(legacy(torch.ones(1)), torch.full((1,), 3.0))

    def fn(x):
        return x

    for decorator in (torch.jit.script_if_tracing, torch.jit.interface, torch.jit.unused,
                      torch.jit.export, torch.jit.ignore):
        assert decorator(fn) is fn
    assert torch.jit.ignore(drop=True)(fn) is fn
    assert torch.jit.annotations.BroadcastingList2[int] == List[int]  # noqa: UP006
    assert torch.jit.annotations.Optional is not None
    assert not torch.jit.is_scripting()


def test_in_place_writes_replay_on_new_inputs() -> None:
    def fn(x):
        y = x * 1
        y[:, 0] = -1.0  # a write through a view of y
        y.add_(1)
        return y

    traced = torch.jit.trace(fn, torch.zeros(2, 3))
    x = torch.arange(6.0).reshape(2, 3)
    assert torch.equal(traced(x), fn(x))


def test_named_results_and_a_modules_forward() -> None:
    traced = torch.jit.trace(lambda x: x.max(-1), torch.randn(2, 3))
    x = torch.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    result = traced(x)
    assert torch.equal(result.values, torch.tensor([5.0, 7.0]))
    assert torch.equal(result.indices, torch.tensor([1, 0]))
    linear = nn.Linear(3, 2)
    from_forward = torch.jit.trace(linear.forward, torch.randn(2, 3))
    assert isinstance(from_forward, torch.jit.TracedModule)  # traced as the module
    assert list(from_forward.state_dict()) == ["weight", "bias"]


def test_deepcopy_works_and_pickling_is_refused() -> None:
    import copy
    import io
    import pickle

    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    x = torch.randn(2, 3)
    for made in (torch.jit.trace(model, x), torch.jit.script(model)):
        twin = copy.deepcopy(made)
        assert type(twin) is type(made)
        assert torch.equal(twin(x), made(x))
        with torch.no_grad():
            twin.state_dict()["0.bias"].add_(1.0)  # its own tensors
        assert torch.allclose(twin(x), torch.relu(model[0](x) + 1))
        with pytest.raises(pickle.PicklingError, match="state_dict"):
            torch.save(made, io.BytesIO())


def test_typing_helpers_and_optimisation_switches() -> None:
    from typing import Dict, Optional, Tuple  # noqa: UP035

    assert torch.jit.isinstance([1, 2], List[int])  # noqa: UP006
    assert not torch.jit.isinstance([1, "a"], List[int])  # noqa: UP006
    assert torch.jit.isinstance({"a": torch.ones(1)}, Dict[str, torch.Tensor])  # noqa: UP006
    assert torch.jit.isinstance(None, Optional[torch.Tensor])  # noqa: UP045
    assert torch.jit.isinstance(torch.ones(1), torch.Tensor | None)
    assert not torch.jit.isinstance(1, torch.Tensor | None)
    assert not torch.jit.isinstance((1, 2), Tuple[int, int, int])  # noqa: UP006
    assert torch.jit.annotate(List[int], []) == []  # noqa: UP006
    with pytest.raises(AssertionError, match="null optional"):
        torch.jit._unwrap_optional(None)
    previous = torch.jit.onednn_fusion_enabled()
    torch.jit.enable_onednn_fusion(not previous)
    assert torch.jit.onednn_fusion_enabled() is (not previous)
    torch.jit.enable_onednn_fusion(previous)
    with torch.jit.fuser("fuser1"), torch.jit.optimized_execution(False), \
            torch.jit.strict_fusion():
        pass
    traced = torch.jit.trace(nn.Sequential(nn.Linear(2, 2), nn.ReLU()), torch.ones(1, 2))
    assert torch.jit.export_opnames(traced) == ["aten::linear", "aten::relu"]  # as PyTorch


def test_keyword_example_inputs_and_check_inputs() -> None:
    class Scale(nn.Module):
        def forward(self, x, *, factor):
            return x * factor

    model = Scale()
    traced = torch.jit.trace(model, example_kwarg_inputs={"x": torch.ones(2),
                                                          "factor": torch.full((2,), 3.0)})
    assert torch.equal(traced(factor=torch.full((2,), 2.0), x=torch.ones(2)),
                       torch.full((2,), 2.0))

    def shifted(x):
        return x + x.shape[0]  # the size becomes a constant of the trace

    with pytest.warns(torch.jit.TracerWarning, match="does not match"):
        torch.jit.trace(shifted, torch.zeros(2), check_inputs=[(torch.zeros(3),)])
