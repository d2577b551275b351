"""torch.fx: graphs, symbolic tracing, GraphModule code, interpreters, rewrites, make_fx."""

from __future__ import annotations

import copy
import importlib.util
import math
import operator
import pathlib
import pickle

import pytest

import torch
import torch.fx as fx
import torch.nn.functional as F
from torch import nn
from torch.fx import subgraph_rewriter
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.immutable_collections import immutable_dict, immutable_list
from torch.fx.passes.shape_prop import ShapeProp, TensorMetadata
from torch.fx.proxy import TraceError


def _clamp_positive(x: torch.Tensor) -> torch.Tensor:
    # data-dependent control flow: cannot be traced through, so it is wrapped below
    if bool((x < 0).any()):
        return x.clamp(min=0)
    return x


fx.wrap("_clamp_positive")


# autowrap (below) patches public names only, as in PyTorch: no leading underscore
def sign_flip_helper(v: torch.Tensor) -> torch.Tensor:
    return v if bool(v.sum() > 0) else -v


def uses_sign_flip_helper(x: torch.Tensor) -> torch.Tensor:
    return sign_flip_helper(x) + 1


def _code_reruns(gm: fx.GraphModule, *args: torch.Tensor) -> torch.Tensor:
    """Run ``gm.code`` as a fresh function: the text must be valid, self-sufficient Python
    given the globals the code generator names."""
    python_code = gm.graph.python_code("self")
    assert python_code.src == gm.code
    namespace = dict(python_code.globals)
    exec(compile(gm.code, "<fx-test>", "exec"), namespace)
    return namespace["forward"](gm, *args)


# -- models ---------------------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.fc2 = nn.Linear(16, 3)
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.log_softmax(self.fc2(self.act(self.fc1(x))), dim=-1)


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4),
                                      nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.head(x)


class Residual(nn.Module):
    """A user module: traced through (not a leaf)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.lin = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.lin(F.relu(self.norm(x))) * 0.5


class ResNetish(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Residual(8), Residual(8))
        self.scale = nn.Parameter(torch.tensor(2.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x) * self.scale


class Block(nn.Module):
    """A transformer block with nn.MultiheadAttention (a leaf returning a tuple)."""

    def __init__(self, width: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, need_weights=False)
        x = x + attended
        return x + self.mlp(self.ln2(x))


class SDPABlock(nn.Module):
    """Attention written with F.scaled_dot_product_attention and tensor methods."""

    def __init__(self, width: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


# -- tracing real models --------------------------------------------------------------------


def test_mlp_traces_runs_and_code_reruns() -> None:
    torch.manual_seed(0)
    model = MLP()
    gm = fx.symbolic_trace(model)
    x = torch.randn(4, 6)
    torch.testing.assert_close(gm(x), model(x))
    torch.testing.assert_close(_code_reruns(gm, x), model(x))
    ops = [(n.op, n.target) for n in gm.graph.nodes]
    assert ops == [("placeholder", "x"), ("call_module", "fc1"), ("call_module", "act"),
                   ("call_module", "fc2"), ("call_function", F.log_softmax),
                   ("output", "output")]
    assert "torch.nn.functional.log_softmax(fc2, dim = -1)" in gm.code
    # the submodules are the root's own objects, shared
    assert gm.fc1 is model.fc1


@pytest.mark.parametrize("training", [True, False])
def test_cnn_with_batchnorm(training: bool) -> None:
    torch.manual_seed(0)
    model = SmallCNN().train(training)
    gm = fx.symbolic_trace(model)
    assert gm.training == training
    assert [n.target for n in gm.graph.nodes if n.op == "call_module"] == [
        "features.0", "features.1", "features.2", "features.3", "head"]
    x = torch.randn(2, 3, 8, 8)
    expected = copy.deepcopy(model)(x)
    torch.testing.assert_close(gm(x), expected)
    if training:  # the BatchNorm the graph calls is the model's: its statistics moved
        assert not torch.equal(model.features[1].running_mean, torch.zeros(4))


def test_residual_blocks_are_traced_through() -> None:
    torch.manual_seed(0)
    model = ResNetish()
    gm = fx.symbolic_trace(model)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_module"]
    assert targets == ["blocks.0.norm", "blocks.0.lin", "blocks.1.norm", "blocks.1.lin"]
    assert [n.target for n in gm.graph.nodes if n.op == "get_attr"] == ["scale"]
    x = torch.randn(3, 8)
    torch.testing.assert_close(gm(x), model(x))
    torch.testing.assert_close(_code_reruns(gm, x), model(x))


def test_transformer_block_with_multihead_attention() -> None:
    torch.manual_seed(0)
    model = Block().eval()
    gm = fx.symbolic_trace(model)
    attn = [n for n in gm.graph.nodes if n.op == "call_module" and n.target == "attn"]
    assert len(attn) == 1
    # `attended, _ = ...` unpacks the leaf's tuple through getitem nodes
    getitems = [u for u in attn[0].users if u.target is operator.getitem]
    assert sorted(u.args[1] for u in getitems) == [0, 1]
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(gm(x), model(x))


def test_sdpa_block_with_shape_arithmetic() -> None:
    torch.manual_seed(0)
    model = SDPABlock()
    gm = fx.symbolic_trace(model)
    assert any(n.target is F.scaled_dot_product_attention for n in gm.graph.nodes)
    assert "x.shape" in gm.code
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(gm(x), model(x))
    # the shapes are read at run time, not baked in
    x2 = torch.randn(3, 7, 8)
    torch.testing.assert_close(gm(x2), model(x2))


# -- Node and Graph -------------------------------------------------------------------------


def _add_relu_graph() -> tuple[fx.Graph, list[fx.Node]]:
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    add = g.call_function(operator.add, (x, y))
    relu = g.call_method("relu", (add,))
    out = g.output(relu)
    return g, [x, y, add, relu, out]


def test_node_bookkeeping() -> None:
    g, (x, y, add, relu, out) = _add_relu_graph()
    assert list(g.nodes) == [x, y, add, relu, out]
    assert add.all_input_nodes == [x, y]
    assert list(x.users) == [add] and list(add.users) == [relu]
    assert add.prev is y and add.next is relu
    assert add.format_node() == ("%add : [num_users=1] = call_function[target=operator.add]"
                                 "(args = (%x, %y), kwargs = {})")
    assert str(g) == ("graph():\n    %x : [num_users=1] = placeholder[target=x]\n"
                      "    %y : [num_users=1] = placeholder[target=y]\n"
                      "    %add : [num_users=1] = call_function[target="
                      "operator.add](args = (%x, %y), kwargs = {})\n    %relu : "
                      "[num_users=1] = call_method[target=relu](args = (%add,), kwargs = {})"
                      "\n    return relu")
    # arguments are immutable; assigning keeps users right
    with pytest.raises(NotImplementedError, match="does not support mutation"):
        add.kwargs["alpha"] = 2  # type: ignore[index]
    add.update_arg(1, x)
    assert add.args == (x, x) and not y.users and list(x.users) == [add]
    add.update_kwarg("alpha", 3)
    assert add.kwargs == {"alpha": 3}
    relu.replace_input_with(add, y)
    assert relu.args == (y,) and not add.users


def test_replace_all_uses_and_erase() -> None:
    g, (x, y, add, relu, _out) = _add_relu_graph()
    with g.inserting_after(add):
        mul = g.call_function(operator.mul, (x, y))
    assert mul.prev is add and mul.next is relu
    changed = add.replace_all_uses_with(mul)
    assert changed == [relu] and relu.args == (mul,)
    g.erase_node(add)
    assert add not in list(g.nodes)
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(mul)
    g.lint()
    gm = fx.GraphModule(nn.Module(), g)
    a, b = torch.randn(3), torch.randn(3)
    torch.testing.assert_close(gm(a, b), (a * b).relu())


def test_inserting_before_keeps_order_and_node_copy() -> None:
    g, (x, y, add, _relu, _out) = _add_relu_graph()
    with g.inserting_before(add):
        n1 = g.call_function(torch.neg, (x,))
        n2 = g.call_function(torch.abs, (n1,))
    assert list(g.nodes)[2:4] == [n1, n2]
    g2 = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    result = g2.graph_copy(g, env)
    g2.output(result)
    assert [n.name for n in g2.nodes] == [n.name for n in g.nodes]
    assert all(env[n] is not n for n in env)
    copied = g2.node_copy(add, lambda n: env[n])
    assert copied.name == "add_1" and copied.args == (env[x], env[y])


def test_eliminate_dead_code_respects_side_effects() -> None:
    calls = []

    def log(v: torch.Tensor) -> None:
        calls.append(v)

    fx.has_side_effect(log)
    g, (x, y, _add, _relu, out) = _add_relu_graph()
    with g.inserting_before(out):
        g.call_function(torch.sin, (x,))  # unused and pure: removed
        g.call_function(log, (x,))  # unused but marked: kept
        g.call_method("add_", (y, 1))  # in-place: kept
    assert g.eliminate_dead_code()
    assert [n.target for n in g.nodes if n.op != "placeholder"] == [
        operator.add, "relu", log, "add_", "output"]
    assert not g.eliminate_dead_code()


def test_lint_finds_broken_graphs() -> None:
    g, (x, _y, _add, relu, _out) = _add_relu_graph()
    g.lint()
    relu._remove_from_list()
    x.prepend(relu)  # relu now comes before the add it reads
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()
    g2 = fx.Graph(owning_module=nn.Module())
    with pytest.warns(UserWarning, match="no underlying reference"):
        g2.get_attr("missing")
    with pytest.raises(RuntimeError, match="nonexistent attribute"):
        g2.lint()


def test_find_nodes_and_print_tabular(capsys: pytest.CaptureFixture[str]) -> None:
    g, (x, y, add, _relu, _out) = _add_relu_graph()
    assert g.find_nodes(op="placeholder") == [x, y]
    assert g.find_nodes(op="call_function", target=operator.add) == [add]
    assert g.find_nodes(op="call_module") == []
    g.print_tabular()
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert printed[5].split()[:3] == ["call_method", "relu", "relu"]


def test_names_are_unique_identifiers() -> None:
    g = fx.Graph()
    a = g.placeholder("input")  # a builtin's name is not used as a variable
    b = g.placeholder("x")
    s1 = g.call_function(torch.sum, (a,))
    s2 = g.call_function(torch.sum, (b,))
    g.output((s1, s2))
    assert (a.name, s1.name, s2.name) == ("input_1", "sum_1", "sum_2")
    gm = fx.GraphModule(nn.Module(), g)
    r = gm(torch.ones(2), torch.ones(3))
    assert [float(v) for v in r] == [2.0, 3.0]


# -- GraphModule ----------------------------------------------------------------------------


def test_graph_setter_recompiles_and_print_readable() -> None:
    torch.manual_seed(0)
    model = MLP()
    gm = fx.symbolic_trace(model)
    for node in gm.graph.nodes:
        if node.target is F.log_softmax:
            node.target = F.softmax
    gm.recompile()
    x = torch.randn(2, 6)
    torch.testing.assert_close(gm(x), F.softmax(model.fc2(model.act(model.fc1(x))), dim=-1))
    new_graph = copy.deepcopy(gm.graph)
    out = next(n for n in new_graph.nodes if n.op == "output")
    out.args = (out.args[0].args[0],)  # return fc2's output
    assert new_graph.eliminate_dead_code()  # the softmax nothing reads
    gm.graph = new_graph
    assert "softmax" not in gm.code
    torch.testing.assert_close(gm(x), model.fc2(model.act(model.fc1(x))))
    ShapeProp(gm).propagate(x)
    text = gm.print_readable(print_output=False)
    assert text.startswith("class MLP(torch.nn.Module):")
    assert 'fc2: "f32[2, 3]" = self.fc2(act)' in text


def test_pickle_and_deepcopy_round_trip() -> None:
    torch.manual_seed(0)
    model = ResNetish()
    gm = fx.symbolic_trace(model)
    x = torch.randn(2, 8)
    expected = model(x)
    loaded = pickle.loads(pickle.dumps(gm))
    assert type(loaded).__name__ == "GraphModule"  # PyTorch's name for an unpickled one
    assert loaded.code == gm.code
    torch.testing.assert_close(loaded(x), expected)
    dup = copy.deepcopy(gm)
    torch.testing.assert_close(dup(x), expected)
    assert dup.get_submodule("blocks.0.lin").weight is not \
        gm.get_submodule("blocks.0.lin").weight
    with torch.no_grad():
        dup.scale.fill_(0.0)  # a deep copy does not share parameters
    torch.testing.assert_close(gm(x), expected)
    # make_fx graphs hold operator overloads: those pickle by name
    fgm = make_fx(lambda a: torch.mm(a, a).sin())(torch.randn(3, 3))
    a = torch.randn(3, 3)
    torch.testing.assert_close(pickle.loads(pickle.dumps(fgm))(a), torch.mm(a, a).sin())


def test_to_folder_writes_an_importable_module(tmp_path: pathlib.Path) -> None:
    torch.manual_seed(0)
    model = ResNetish()
    gm = fx.symbolic_trace(model)
    gm.to_folder(tmp_path / "saved", "Saved")
    assert sorted(p.name for p in (tmp_path / "saved").iterdir()) == [
        "__init__.py", "blocks.pt", "module.py", "state_dict.pt"]
    spec = importlib.util.spec_from_file_location("saved_fx_module",
                                                  tmp_path / "saved" / "module.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    restored = module.Saved()
    x = torch.randn(2, 8)
    torch.testing.assert_close(restored(x), model(x))
    assert float(restored.scale) == float(model.scale)


def test_graph_module_from_dict_and_submodule_edits() -> None:
    g = fx.Graph()
    x = g.placeholder("x")
    w = g.get_attr("layer.weight")
    lin = g.call_module("lin", (x,))
    g.output(g.call_function(torch.matmul, (lin, w)))
    weight, lin_mod = torch.randn(4, 4), nn.Linear(3, 4)
    gm = fx.GraphModule({"layer.weight": weight, "lin": lin_mod}, g)
    assert gm.layer.weight is weight and gm.lin is lin_mod
    a = torch.randn(2, 3)
    torch.testing.assert_close(gm(a), lin_mod(a) @ weight)
    assert gm.add_submodule("extra.deep", nn.ReLU())
    assert isinstance(gm.get_submodule("extra.deep"), nn.ReLU)
    gm.delete_all_unused_submodules()
    assert not hasattr(gm, "extra") and gm.lin is lin_mod
    with pytest.raises(RuntimeError, match="not provided"):
        fx.GraphModule({}, g)


# -- Proxy and Tracer -----------------------------------------------------------------------


def test_proxy_protocol_records_operators() -> None:
    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = (x + y) * 2 - y / 3
        z = -z @ y.t() ** 2
        return z[0, 1:] + x.shape[0] + (1 - x).sum(dim=0).abs()[0]

    gm = fx.symbolic_trace(f)
    targets = {n.target for n in gm.graph.nodes if n.op == "call_function"}
    assert {operator.add, operator.mul, operator.sub, operator.truediv, operator.neg,
            operator.matmul, operator.pow, operator.getitem, getattr} <= targets
    assert "z[(0, slice(1, None, None))]" not in gm.code and "[0, 1:]" in gm.code
    x, y = torch.randn(3, 3), torch.randn(3, 3)
    torch.testing.assert_close(gm(x, y), f(x, y))


def test_augmented_assignment_and_setitem_write_in_place() -> None:
    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x += y
        z = x.clone()
        z[0] = 5.0
        return z

    gm = fx.symbolic_trace(f)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == [operator.iadd, operator.setitem]
    assert not gm.graph.eliminate_dead_code()  # both writes are kept
    a, b = torch.zeros(3), torch.ones(3)
    torch.testing.assert_close(gm(a, b), torch.tensor([5.0, 1.0, 1.0]))
    torch.testing.assert_close(a, torch.ones(3))  # the input was written, as in eager


def test_control_flow_and_iteration_raise() -> None:
    def branch(x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x
        return -x

    def loop(x: torch.Tensor) -> torch.Tensor:
        return sum(v for v in x)

    def length(x: torch.Tensor) -> int:
        return len(x)

    with pytest.raises(TraceError, match="cannot be used as inputs to control flow"):
        fx.symbolic_trace(branch)
    with pytest.raises(TraceError, match="Proxy object cannot be iterated"):
        fx.symbolic_trace(loop)
    with pytest.raises(RuntimeError, match="'len' is not supported"):
        fx.symbolic_trace(length)
    # the patches are undone after a failed trace
    assert nn.Module.__call__ is nn.Module._call_impl


def test_concrete_args_specialise() -> None:
    def f(x: torch.Tensor, flag: bool = False) -> torch.Tensor:
        return x + 1 if flag else x - 1

    gm = fx.symbolic_trace(f, concrete_args={"flag": True})
    # the input stays (renamed, with its default) and the graph checks the traced value
    assert "def forward(self, x, flag_1 = False):" in gm.code
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [
        operator.eq, torch._assert, operator.add]
    torch.testing.assert_close(gm(torch.zeros(2), True), torch.ones(2))
    with pytest.raises(AssertionError, match="flag has been specialized to have value True"):
        gm(torch.zeros(2), False)

    def g(x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return x if mask is None else x * mask

    gm_none = fx.symbolic_trace(g, concrete_args={"mask": None})
    torch.testing.assert_close(gm_none(torch.ones(2)), torch.ones(2))
    with pytest.raises(AssertionError, match="mask has been specialized to have value None"):
        gm_none(torch.ones(2), torch.ones(2))
    with pytest.raises(ValueError, match="does not have"):
        fx.symbolic_trace(f, concrete_args={"nope": 1})


def test_leaf_modules_wrap_and_autowrap() -> None:
    class Scaled(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 3

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scaled = Scaled()
            self.lin = nn.Linear(4, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = _clamp_positive(self.scaled(self.lin(x)))
            return h / math.sqrt(x.size(-1))

    class LeafScaled(fx.Tracer):
        def is_leaf_module(self, m: nn.Module, qualname: str) -> bool:
            return isinstance(m, Scaled) or super().is_leaf_module(m, qualname)

    net = Net()
    default = fx.symbolic_trace(net)
    assert [n.target for n in default.graph.nodes if n.op == "call_module"] == ["lin"]
    graph = LeafScaled().trace(net)
    assert [n.target for n in graph.nodes if n.op == "call_module"] == ["lin", "scaled"]
    functions = {n.target for n in graph.nodes if n.op == "call_function"}
    assert _clamp_positive in functions and math.sqrt in functions
    gm = fx.GraphModule(net, graph)
    x = torch.randn(3, 4)
    torch.testing.assert_close(gm(x), net(x))
    assert _clamp_positive.__name__ == "_clamp_positive"  # the global was restored

    with pytest.raises(TraceError):
        fx.symbolic_trace(uses_sign_flip_helper)
    helper_graph = fx.Tracer(autowrap_functions=(sign_flip_helper,)).trace(uses_sign_flip_helper)
    assert any(n.target is sign_flip_helper for n in helper_graph.nodes)
    helper_gm = fx.GraphModule(nn.Module(), helper_graph)
    torch.testing.assert_close(helper_gm(-torch.ones(2)), torch.full((2,), 2.0))


def test_param_shapes_constant() -> None:
    class WeightSized(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(torch.ones(4, 2))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if self.w.shape[1] == 2:  # a branch on a parameter's size
                return x @ self.w
            return x

    with pytest.raises(TraceError):
        fx.symbolic_trace(WeightSized())
    tracer = fx.Tracer(param_shapes_constant=True)
    graph = tracer.trace(WeightSized())
    gm = fx.GraphModule(tracer.root, graph)
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [operator.matmul]
    torch.testing.assert_close(gm(torch.ones(1, 4)), torch.full((1, 2), 4.0))


def test_varargs_and_parameters() -> None:
    def f(x: torch.Tensor, *args: torch.Tensor, **kwargs: torch.Tensor) -> torch.Tensor:
        return x + args[0] * kwargs["scale"]

    gm = fx.symbolic_trace(f)
    assert "def forward(self, x, *args, **kwargs):" in gm.code
    a, b, c = torch.randn(2), torch.randn(2), torch.randn(2)
    torch.testing.assert_close(gm(a, b, scale=c), a + b * c)

    class Const(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(torch.ones(2))
            self.table = torch.tensor([1.0, 2.0])  # a plain tensor attribute

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * self.w + self.table + torch.tensor([10.0, 20.0])

    mod = Const()
    cgm = fx.symbolic_trace(mod)
    attrs = [n.target for n in cgm.graph.nodes if n.op == "get_attr"]
    assert attrs == ["w", "table", "_tensor_constant0"]
    torch.testing.assert_close(cgm(torch.ones(2)), torch.tensor([12.0, 23.0]))


# -- Interpreter and Transformer --------------------------------------------------------------


def test_interpreter_runs_and_can_be_overridden() -> None:
    torch.manual_seed(0)
    model = MLP()
    gm = fx.symbolic_trace(model)
    x = torch.randn(2, 6)
    torch.testing.assert_close(fx.Interpreter(gm).run(x), model(x))

    class NegateSigmoid(fx.Interpreter):
        seen: list[str] = []

        def call_module(self, target, args, kwargs):  # type: ignore[no-untyped-def]
            self.seen.append(target)
            out = super().call_module(target, args, kwargs)
            return -out if target == "fc2" else out

    interp = NegateSigmoid(gm)
    result = interp.run(x)
    assert interp.seen == ["fc1", "act", "fc2"]
    torch.testing.assert_close(result, F.log_softmax(-model.fc2(model.act(model.fc1(x))), -1))
    args = [x]
    torch.testing.assert_close(fx.Interpreter(gm).boxed_run(args), model(x))
    assert args == []
    with pytest.raises(RuntimeError, match="Expected positional argument"):
        fx.Interpreter(gm).run()


def test_transformer_swaps_add_for_mul() -> None:
    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.add(x, y).relu() + torch.add(y, 2)

    class AddToMul(fx.Transformer):
        def call_function(self, target, args, kwargs):  # type: ignore[no-untyped-def]
            if target is torch.add:
                target = torch.mul
            return super().call_function(target, args, kwargs)

    gm = fx.symbolic_trace(f)
    ShapeProp(gm).propagate(torch.randn(3), torch.randn(3))
    new = AddToMul(gm).transform()
    assert [n.target for n in new.graph.nodes if n.op == "call_function"] == [
        torch.mul, torch.mul, operator.add]
    assert "torch.add" not in new.code
    x, y = torch.randn(3), torch.randn(3)
    torch.testing.assert_close(new(x, y), torch.mul(x, y).relu() + torch.mul(y, 2))
    torch.testing.assert_close(gm(x, y), f(x, y))  # the original is unchanged
    relu = next(n for n in new.graph.nodes if n.target == "relu")
    assert tuple(relu.meta["tensor_meta"].shape) == (3,)  # meta carried over


# -- subgraph rewriting ---------------------------------------------------------------------


def test_replace_pattern() -> None:
    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        a = torch.add(x, y).relu()
        b = torch.add(a, x).relu()
        return b + torch.add(y, 1)

    def pattern(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.add(a, b).relu()

    def replacement(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.sub(a, b).sigmoid()

    gm = fx.symbolic_trace(f)
    matches = subgraph_rewriter.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2
    assert all(m.anchor.op == "call_method" for m in matches)
    gm.graph.lint()
    x, y = torch.randn(4), torch.randn(4)
    a = torch.sub(x, y).sigmoid()
    torch.testing.assert_close(gm(x, y), torch.sub(a, x).sigmoid() + torch.add(y, 1))
    assert "relu" not in gm.code


def test_replace_pattern_keeps_values_used_outside() -> None:
    def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s = torch.sin(x)
        return torch.cos(s), s  # sin's value is read outside the pattern

    def pattern(a: torch.Tensor) -> torch.Tensor:
        return torch.cos(torch.sin(a))

    def replacement(a: torch.Tensor) -> torch.Tensor:
        return torch.tanh(a)

    gm = fx.symbolic_trace(f)
    assert subgraph_rewriter.replace_pattern(gm, pattern, replacement) == []

    def f2(x: torch.Tensor) -> torch.Tensor:
        return torch.cos(torch.sin(x)) * torch.cos(torch.sin(x + 1))

    gm2 = fx.symbolic_trace(f2)
    replaced = subgraph_rewriter.replace_pattern_with_filters(
        gm2, pattern, replacement,
        match_filters=[lambda m, g, p: m.placeholder_nodes[0].op == "placeholder"])
    assert len(replaced) == 1 and replaced[0].replacements[0].target is torch.tanh
    x = torch.randn(3)
    torch.testing.assert_close(gm2(x), torch.tanh(x) * torch.cos(torch.sin(x + 1)))


# -- ShapeProp ------------------------------------------------------------------------------


def test_shape_prop_real_and_fake() -> None:
    torch.manual_seed(0)
    model = SmallCNN().eval()
    gm = fx.symbolic_trace(model)
    x = torch.randn(2, 3, 8, 8)
    out = ShapeProp(gm).propagate(x)
    torch.testing.assert_close(out, model(x))
    shapes = {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes
              if n.op != "output"}
    assert shapes == {"x": (2, 3, 8, 8), "features_0": (2, 4, 8, 8),
                      "features_1": (2, 4, 8, 8), "features_2": (2, 4, 8, 8),
                      "features_3": (2, 4, 4, 4), "flatten": (2, 64), "head": (2, 5)}
    meta = next(iter(gm.graph.nodes)).meta["tensor_meta"]
    assert isinstance(meta, TensorMetadata)
    assert meta.dtype is torch.float32 and meta.stride == (192, 64, 8, 1)
    assert meta.memory_format is torch.contiguous_format and not meta.requires_grad

    from torch._subclasses.fake_tensor import FakeTensorMode

    res = fx.symbolic_trace(ResNetish())
    ShapeProp(res, fake_mode=FakeTensorMode(allow_non_fake_inputs=True)).propagate(
        torch.randn(5, 8))
    mul = next(n for n in res.graph.nodes if n.name == "mul_2")
    assert tuple(mul.meta["tensor_meta"].shape) == (5, 8)


# -- make_fx --------------------------------------------------------------------------------


def _f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.mm(x, y).relu()
    return z.view(z.shape[0] * 2, -1).sum(0) + 1


@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
def test_make_fx_modes(mode: str) -> None:
    x, y = torch.randn(4, 3), torch.randn(3, 6)
    gm = make_fx(_f, tracing_mode=mode)(x, y)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    aten = [n.target for n in calls if n.target is not operator.mul]
    expected = [torch.ops.aten.mm.default, torch.ops.aten.relu.default,
                torch.ops.aten.view.default, torch.ops.aten.sum.dim_IntList,
                torch.ops.aten.add.Tensor]
    if mode == "symbolic":
        expected.insert(2, torch.ops.aten.sym_size.int)
    assert aten == expected
    assert "torch.ops.aten.mm.default(x_1, y_1)" in gm.code
    torch.testing.assert_close(gm(x, y), _f(x, y))
    from torch._subclasses.fake_tensor import FakeTensor

    vals = {n.name: n.meta["val"] for n in gm.graph.nodes if n.op != "output"}
    assert isinstance(vals["mm"], FakeTensor)
    if mode == "symbolic":
        sizes = vals["x_1"].shape
        assert all(isinstance(s, torch.SymInt) for s in sizes)
        assert str(vals["mm"].shape[0]) == str(sizes[0])  # mm keeps x's first size symbol
        assert "sym_size_int = torch.ops.aten.sym_size.int(x_1, 0)" in gm.code
        assert "mul = sym_size_int * 2" in gm.code
        # the graph follows the sizes: other shapes give the right answer
        x2, y2 = torch.randn(6, 5), torch.randn(5, 4)
        torch.testing.assert_close(gm(x2, y2), _f(x2, y2))
        # copies share the trace's shape environment; a pickle leaves it out
        assert copy.deepcopy(gm).shape_env is gm.shape_env
        loaded = pickle.loads(pickle.dumps(gm))
        assert not hasattr(loaded, "shape_env")
        torch.testing.assert_close(loaded(x2, y2), _f(x2, y2))
    else:
        assert tuple(vals["view"].shape) == (8, 3)
        assert "[8, -1]" in gm.code  # an int[] argument is a list, as in PyTorch's graph


def test_make_fx_multi_output_in_place_and_constants() -> None:
    captured = torch.tensor([1.0, 2.0, 3.0])

    def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = torch.max(x, dim=1)
        y = values.clone()
        y.add_(captured)
        return y * 2, indices

    x = torch.randn(3, 4)
    gm = make_fx(f)(x)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert torch.ops.aten.max.dim in targets and operator.getitem in targets
    # the in-place write is PyTorch's in-place operator, as its make_fx graph shows it
    assert torch.ops.aten.add_.Tensor in targets
    assert [n.target for n in gm.graph.nodes if n.op == "get_attr"] == ["_tensor_constant0"]
    mul = next(n for n in gm.graph.nodes if n.target is torch.ops.aten.mul.Tensor)
    assert mul.args[0].target is torch.ops.aten.add_.Tensor  # reads the written tensor
    got = gm(x)
    want = f(x)
    torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(got[1], want[1])


def test_make_fx_symbolic_attention_follows_new_shapes() -> None:
    torch.manual_seed(0)
    model = SDPABlock()
    gm = make_fx(model, tracing_mode="symbolic")(torch.randn(2, 5, 8))
    # parameters keep static sizes; the input's sizes are read from it
    weight = next(n for n in gm.graph.nodes if n.target == "_param_constant0")
    assert tuple(weight.meta["val"].shape) == (24, 8)
    sym_sizes = [n for n in gm.graph.nodes if n.target is torch.ops.aten.sym_size.int]
    assert sorted(n.args[1] for n in sym_sizes) == [0, 1, 2]
    # `c // self.heads`, written three times, is one node
    assert sum(1 for n in gm.graph.nodes
               if n.target is operator.floordiv and n.args[1] == 2) == 1
    for shape in ((2, 5, 8), (3, 7, 8)):
        x = torch.randn(*shape)
        torch.testing.assert_close(gm(x), model(x))


def test_symbolic_shapes_helpers_read_without_guarding() -> None:
    from torch.fx.experimental import symbolic_shapes as ss

    gm = make_fx(lambda x: x * 2, tracing_mode="symbolic")(torch.randn(3, 1, 4))
    val = next(iter(gm.graph.nodes)).meta["val"]
    assert ss.free_symbols(val) == {str(val.shape[0]), str(val.shape[2])}
    assert ss.has_free_symbols(val) and not ss.has_free_symbols(torch.ones(2))
    assert ss.hint_int(val.shape[0]) == 3 and ss.hint_int(5) == 5
    assert ss.is_concrete_int(val.shape[1]) and not ss.is_concrete_int(val.shape[0])
    assert ss.definitely_false(val.shape[1] == 2) and not ss.definitely_true(val.shape[0] > 1)
    assert isinstance(gm.shape_env, ss.ShapeEnv)


def test_make_fx_module_parameters_become_constants() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    x = torch.randn(2, 4)
    gm = make_fx(model, tracing_mode="fake")(x)
    assert [n.target for n in gm.graph.nodes if n.op == "placeholder"] == ["input_1"]
    consts = [n.target for n in gm.graph.nodes if n.op == "get_attr"]
    assert consts == ["_param_constant0", "_param_constant1"]
    assert gm._param_constant0 is model[0].weight
    torch.testing.assert_close(gm(x), model(x))


def test_make_fx_decomposition_table_and_bad_mode() -> None:
    def relu_as_clamp(x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, min=0)

    gm = make_fx(lambda x: torch.relu(x) + 1,
                 decomposition_table={torch.ops.aten.relu.default: relu_as_clamp})(
        torch.randn(5))
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert torch.ops.aten.relu.default not in targets
    assert targets[-1] is torch.ops.aten.add.Tensor
    x = torch.randn(5)
    torch.testing.assert_close(gm(x), x.clamp(min=0) + 1)
    with pytest.raises(AssertionError, match="Unexpected tracing type"):
        make_fx(torch.sin, tracing_mode="guess")


# -- helpers --------------------------------------------------------------------------------


def test_immutable_collections_and_map_arg() -> None:
    lst = immutable_list([1, 2])
    with pytest.raises(NotImplementedError):
        lst.append(3)
    d = immutable_dict(a=1)
    with pytest.raises(NotImplementedError):
        d["b"] = 2
    assert hash(lst) == hash((1, 2)) and pickle.loads(pickle.dumps(d)) == {"a": 1}
    _g, (x, y, add, _relu, _out) = _add_relu_graph()
    mapped = fx.map_arg((x, [y, 3], {"k": add}), lambda n: n.name)
    assert mapped == ("x", ["y", 3], {"k": "add"})
    assert isinstance(mapped[1], immutable_list)
