"""torch.nn.Module, Parameter, containers and the first layers, against PyTorch's semantics
(the expected strings and messages are the ones PyTorch 2.13 prints)."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.Identity(), nn.Linear(8, 2, bias=False))
        self.heads = nn.ModuleList([nn.Linear(2, 1), nn.Flatten()])
        self.table = nn.ModuleDict({"a": nn.Linear(1, 1)})
        self.p = nn.ParameterList([nn.Parameter(torch.ones(2, 3))])

    def forward(self, x):
        return self.heads[0](self.body(x))


NET_REPR = """Net(
  (body): Sequential(
    (0): Linear(in_features=4, out_features=8, bias=True)
    (1): Identity()
    (2): Linear(in_features=8, out_features=2, bias=False)
  )
  (heads): ModuleList(
    (0): Linear(in_features=2, out_features=1, bias=True)
    (1): Flatten(start_dim=1, end_dim=-1)
  )
  (table): ModuleDict(
    (a): Linear(in_features=1, out_features=1, bias=True)
  )
  (p): ParameterList(  (0): Parameter containing: [torch.float32 of size 2x3])
)"""


def test_repr_tree_matches_pytorch():
    assert repr(Net()) == NET_REPR
    lin = nn.Linear(2, 2)
    assert repr(nn.ModuleList([lin, lin, nn.Linear(2, 3)])) == (
        "ModuleList(\n  (0-1): 2 x Linear(in_features=2, out_features=2, bias=True)\n"
        "  (2): Linear(in_features=2, out_features=3, bias=True)\n)")
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert repr(nn.Sequential()) == "Sequential()"
    assert repr(nn.Unflatten(1, (2, 2))) == "Unflatten(dim=1, unflattened_size=(2, 2))"
    assert repr(nn.ParameterList([nn.Parameter(torch.ones(2, 3)), nn.Parameter(torch.ones(1))])
                ) == ("ParameterList(\n    (0): Parameter containing: [torch.float32 of size "
                      "2x3]\n    (1): Parameter containing: [torch.float32 of size 1]\n)")
    assert repr(nn.ParameterDict({"a": nn.Parameter(torch.ones(2))})) == (
        "ParameterDict(  (a): Parameter containing: [torch.FloatTensor of size 2])")


def test_registration_and_names():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["body.0.weight", "body.0.bias", "body.2.weight", "heads.0.weight",
                     "heads.0.bias", "table.a.weight", "table.a.bias", "p.0"]
    assert [n for n, _ in net.named_modules()][:4] == ["", "body", "body.0", "body.1"]
    assert [n for n, _ in net.named_children()] == ["body", "heads", "table", "p"]
    assert len(list(net.parameters(recurse=False))) == 0
    assert net.get_submodule("body.2") is net.body[2]
    assert net.get_parameter("table.a.bias") is net.table["a"].bias
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        net.get_submodule("body.nope")


def test_shared_parameters_and_modules_are_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.modules())) == 2
    assert len(list(seq.named_modules(remove_duplicate=False))) == 3
    assert [n for n, _ in seq.named_parameters(remove_duplicate=False)] == [
        "0.weight", "0.bias", "1.weight", "1.bias"]


def test_attribute_assignment_rules():
    m = nn.Module()
    m.w = nn.Parameter(torch.ones(2))
    assert "w" in m._parameters
    m.register_buffer("running", torch.zeros(3))
    m.register_buffer("scratch", torch.zeros(1), persistent=False)
    assert list(m.state_dict()) == ["w", "running"]
    m.running = torch.ones(3)  # stays a buffer
    assert m._buffers["running"].tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match=r"cannot assign 'torch\.FloatTensor' as parameter 'w'"):
        m.w = torch.ones(2)
    m.w = None
    assert m._parameters["w"] is None and m.w is None
    with pytest.raises(KeyError, match="attribute 'running' already exists"):
        m.register_parameter("running", nn.Parameter(torch.ones(1)))
    with pytest.raises(KeyError, match="buffer name can"):
        m.register_buffer("a.b", torch.ones(1))
    with pytest.raises(TypeError, match="parameter name should be a string"):
        m.register_parameter(1, None)
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'missing'"):
        _ = m.missing
    del m.running
    assert "running" not in m._buffers
    with pytest.raises(TypeError, match=r"torch\.nn\.Parameter or None required"):
        m.register_parameter("x", nn.Parameter(torch.ones(1)) * 2)  # not a Parameter
    with pytest.raises(AttributeError, match=r"before Module\.__init__"):
        class Bad(nn.Module):
            def __init__(self):
                self.w = nn.Parameter(torch.ones(1))

        Bad()


def test_parameter_semantics():
    t = torch.arange(3.0)
    p = nn.Parameter(t)
    assert isinstance(p, torch.Tensor) and p.requires_grad and p.is_leaf
    assert p.data_ptr() == t.data_ptr()
    assert repr(p) == "Parameter containing:\ntensor([0., 1., 2.], requires_grad=True)"
    assert type(p * 2) is torch.Tensor
    assert not nn.Parameter(torch.ones(1), requires_grad=False).requires_grad
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.data_ptr() != p.data_ptr()
    r = pickle.loads(pickle.dumps(p))
    assert isinstance(r, nn.Parameter) and r.tolist() == [0.0, 1.0, 2.0]


def test_state_dict_round_trip_and_strict_errors():
    m = nn.Linear(3, 2)
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict) and list(sd) == ["weight", "bias"]
    assert not sd["weight"].requires_grad and sd["weight"].data_ptr() == m.weight.data_ptr()
    assert sd._metadata[""] == {"version": 1}
    other = nn.Linear(3, 2)
    assert repr(other.load_state_dict(sd)) == "<All keys matched successfully>"
    assert other.weight.tolist() == m.weight.tolist()
    assert other.weight.data_ptr() != m.weight.data_ptr()
    with pytest.raises(RuntimeError) as err:
        m.load_state_dict({"weight": torch.ones(2, 2), "extra": torch.ones(1)})
    assert str(err.value) == (
        'Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "bias". '
        '\n\tUnexpected key(s) in state_dict: "extra". \n\tsize mismatch for weight: copying a '
        "param with shape torch.Size([2, 2]) from checkpoint, the shape in current model is "
        "torch.Size([2, 3]).")
    result = m.load_state_dict({"weight": torch.ones(2, 3)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == []
    assert m.weight.tolist() == [[1.0] * 3] * 2


def test_load_state_dict_assign_takes_the_tensors():
    m = nn.Linear(2, 2)
    w = torch.full((2, 2), 3.0)
    m.load_state_dict({"weight": w, "bias": torch.zeros(2)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.data_ptr() == w.data_ptr()


def test_load_from_state_dict_override_sees_prefixes():
    class Old(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(()))

        def _load_from_state_dict(self, state_dict, prefix, metadata, strict, missing,
                                  unexpected, errors):
            state_dict.setdefault(prefix + "count", torch.tensor(7.0))  # an older format
            super()._load_from_state_dict(state_dict, prefix, metadata, strict, missing,
                                          unexpected, errors)

    outer = nn.Sequential(Old())
    outer.load_state_dict({})
    assert outer[0].count.item() == 7.0


def test_train_eval_zero_grad_requires_grad():
    net = Net()
    assert net.training and net.body[0].training
    net.eval()
    assert not net.training and not net.body[0].training
    net.train()
    out = net(torch.ones(3, 4)).sum()
    out.backward()
    assert net.body[0].weight.grad is not None
    net.zero_grad()
    assert net.body[0].weight.grad is None
    net(torch.ones(3, 4)).sum().backward()
    net.zero_grad(set_to_none=False)
    assert net.body[0].weight.grad.abs().sum().item() == 0.0
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_to_and_dtype_conversions_keep_parameter_objects():
    m = nn.Linear(2, 2)
    w = m.weight
    m.register_buffer("steps", torch.zeros((), dtype=torch.int64))
    m(torch.ones(1, 2)).sum().backward()
    m.double()
    assert m.weight is w and w.dtype is torch.float64 and w.grad.dtype is torch.float64
    assert m.steps.dtype is torch.int64  # integer buffers keep their dtype
    m.to(torch.float32)
    assert w.dtype is torch.float32
    m.half().float()
    assert w.dtype is torch.float32
    with pytest.raises(TypeError, match="floating point or complex dtypes"):
        m.to(torch.int32)
    assert m.to("cpu") is m


def test_forward_hooks_order_kwargs_and_replacement():
    calls = []
    m = nn.Linear(2, 2)
    m.register_forward_pre_hook(lambda mod, args: calls.append("pre"))
    m.register_forward_pre_hook(lambda mod, args: calls.append("pre-first"), prepend=True)
    h = m.register_forward_hook(lambda mod, args, out: out * 0)
    m.register_forward_hook(lambda mod, args, kwargs, out: calls.append(("post", kwargs)),
                            with_kwargs=True)
    out = m(torch.ones(1, 2))
    assert calls == ["pre-first", "pre", ("post", {})]
    assert out.tolist() == [[0.0, 0.0]]
    h.remove()
    assert m(torch.ones(1, 2)).abs().sum().item() > 0
    m2 = nn.Identity()
    m2.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    assert m2(torch.zeros(1)).tolist() == [1.0]


def test_forward_hook_always_called_on_error():
    seen = []

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    b = Boom()
    b.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        b(torch.ones(1))
    assert seen == [None]


def test_full_backward_hooks():
    seen = {}
    m = nn.Linear(3, 2)

    def pre(mod, grad_output):
        seen["pre"] = grad_output[0].clone()

    def post(mod, grad_input, grad_output):
        seen["in"] = grad_input[0].clone()
        seen["out"] = grad_output[0].clone()
        return (grad_input[0] * 2,)

    m.register_full_backward_pre_hook(pre)
    m.register_full_backward_hook(post)
    x = torch.ones(4, 3, requires_grad=True)
    m(x).sum().backward()
    assert seen["pre"].tolist() == [[1.0, 1.0]] * 4 == seen["out"].tolist()
    expected = m.weight.sum(0).detach()
    np.testing.assert_allclose(seen["in"].numpy(), np.tile(expected.numpy(), (4, 1)), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.tile(expected.numpy(), (4, 1)), rtol=1e-6)


def test_missing_forward():
    with pytest.raises(NotImplementedError,
                       match=r'Module \[Module\] is missing the required "forward" function'):
        nn.Module()(1)


def test_apply_and_pickle_and_deepcopy_of_modules():
    net = Net()
    visited = []
    net.apply(lambda mod: visited.append(type(mod).__name__))
    assert visited[-1] == "Net" and visited[0] == "Linear"
    clone = copy.deepcopy(net)
    assert clone.body[0].weight.data_ptr() != net.body[0].weight.data_ptr()
    assert clone.body[0].weight.tolist() == net.body[0].weight.tolist()
    again = pickle.loads(pickle.dumps(nn.Sequential(nn.Linear(2, 2))))
    assert isinstance(again[0].weight, nn.Parameter)


def test_sequential_operations():
    a, b, c = nn.Linear(1, 1), nn.Identity(), nn.Flatten()
    seq = nn.Sequential(a, b, c)
    assert seq[0] is a and seq[-1] is c and len(seq) == 3
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == [b, c]
    seq.append(nn.Identity())
    seq.insert(0, nn.Identity())
    assert len(seq) == 5 and seq[1] is a
    del seq[0]
    assert seq[0] is a and list(seq._modules) == ["0", "1", "2", "3"]
    assert seq.pop(0) is a and len(seq) == 3
    assert len(seq + nn.Sequential(a)) == 4
    with pytest.raises(IndexError, match="index 10 is out of range"):
        seq[10]
    named = nn.Sequential(OrderedDict([("first", a), ("second", b)]))
    assert named.first is a
    assert nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))(torch.ones(5, 2)).shape == (5, 1)


def test_module_list_dict_and_parameter_containers():
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.Identity())
    ml.extend([nn.Flatten()])
    assert len(ml) == 3 and isinstance(ml[-1], nn.Flatten)
    with pytest.raises(TypeError, match="extend should be called with an iterable"):
        ml.extend(nn.Linear(1, 1).weight)
    md = nn.ModuleDict({"x": nn.Identity()})
    md["y"] = nn.Flatten()
    assert list(md.keys()) == ["x", "y"] and "x" in md and len(md) == 2
    assert md.pop("x") is not None and list(md) == ["y"]
    pl = nn.ParameterList([torch.ones(2)])
    assert isinstance(pl[0], nn.Parameter)
    pd = nn.ParameterDict({"w": torch.zeros(1)})
    assert isinstance(pd["w"], nn.Parameter) and list(pd.keys()) == ["w"]
    holder = nn.Module()
    holder.pl = pl
    holder.pd = pd
    assert [n for n, _ in holder.named_parameters()] == ["pl.0", "pd.w"]


def test_linear_bilinear_and_lazy():
    torch.manual_seed(0)
    lin = nn.Linear(5, 3)
    bound = 1 / 5**0.5
    assert lin.weight.abs().max().item() <= bound and lin.bias.abs().max().item() <= bound
    x = torch.randn(4, 5)
    want = x.numpy() @ lin.weight.detach().numpy().T + lin.bias.detach().numpy()
    np.testing.assert_allclose(lin(x).detach().numpy(), want, rtol=1e-5, atol=1e-6)
    bil = nn.Bilinear(2, 3, 4)
    x1, x2 = torch.randn(5, 2), torch.randn(5, 3)
    want = np.einsum("bi,oij,bj->bo", x1.numpy(), bil.weight.detach().numpy(), x2.numpy())
    np.testing.assert_allclose(bil(x1, x2).detach().numpy(),
                               want + bil.bias.detach().numpy(), rtol=1e-5, atol=1e-6)
    lazy = nn.LazyLinear(3)
    assert isinstance(lazy.weight, nn.UninitializedParameter)
    assert lazy(torch.ones(2, 7)).shape == (2, 3)
    assert type(lazy) is nn.Linear and lazy.weight.shape == (3, 7) and lazy.in_features == 7
    assert isinstance(lazy.weight, nn.Parameter)
    assert nn.Identity(54, unused="x")(x) is x
