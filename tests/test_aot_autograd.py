"""AOT autograd (torch._functorch.aot_autograd / functorch.compile) against eager autograd."""

from functorch.compile import aot_function, aot_module, default_partition, make_boxed_func, nop

import torch


def _recording(store):
    def compiler(gm, example_inputs):
        store.append(gm)
        return gm
    return compiler


def _mlp(x, w1, w2):
    return torch.tanh(x @ w1) @ w2


def test_mlp_values_and_gradients_match_eager():
    torch.manual_seed(0)
    args = [torch.randn(4, 3), torch.randn(3, 5, requires_grad=True),
            torch.randn(5, 2, requires_grad=True)]
    fw, bw = [], []
    compiled = aot_function(_mlp, _recording(fw), _recording(bw))
    out = compiled(*args)
    assert len(fw) == 1 and bw == []  # backward compiled lazily
    out.sum().backward()
    assert len(bw) == 1
    got = [a.grad.clone() for a in args[1:]]
    for a in args[1:]:
        a.grad = None
    expected = _mlp(*args)
    expected.sum().backward()
    torch.testing.assert_close(out, expected)
    for g, a in zip(got, args[1:]):
        torch.testing.assert_close(g, a.grad)


def test_forward_graph_returns_saved_values_backward_takes_them():
    x = torch.randn(3, 3, requires_grad=True)
    fw, bw = [], []
    aot_function(lambda t: (t.sin() * 2).sum(), _recording(fw), _recording(bw))(x).backward()
    fw_outputs = next(n for n in fw[0].graph.nodes if n.op == "output").args[0]
    bw_inputs = [n for n in bw[0].graph.nodes if n.op == "placeholder"]
    # one output + saved values; backward reads the saved values and one tangent
    assert len(bw_inputs) == len(fw_outputs) - 1 + 1
    assert all("tangent" not in str(n.target) for n in fw[0].graph.nodes)
    torch.testing.assert_close(x.grad, 2 * torch.cos(x.detach()))


def test_multiple_outputs_and_double_use_of_inputs():
    x = torch.randn(4, requires_grad=True)
    compiled = aot_function(lambda t: (t * t, t.exp() + t), nop)
    a, b = compiled(x)
    (a.sum() + 3 * b.sum()).backward()
    expected = 2 * x.detach() + 3 * (x.detach().exp() + 1)
    torch.testing.assert_close(x.grad, expected)


def test_inference_compiles_forward_only():
    fw = []
    with torch.no_grad():
        out = aot_function(_mlp, _recording(fw))(torch.ones(2, 3), torch.ones(3, 4),
                                                 torch.ones(4, 1))
    assert len(fw) == 1
    torch.testing.assert_close(out, torch.full((2, 1), 4 * float(torch.tanh(torch.tensor(3.0)))))


def test_aot_module_linear_matches_eager():
    torch.manual_seed(1)
    mod = torch.nn.Linear(3, 2)
    x = torch.randn(5, 3)
    aot_module(mod, nop)(x).sum().backward()
    got = mod.weight.grad.clone()
    mod.weight.grad = None
    mod(x).sum().backward()
    torch.testing.assert_close(got, mod.weight.grad)


def test_make_boxed_func_takes_one_list():
    boxed = make_boxed_func(lambda a, b: a + b)
    assert boxed([1, 2]) == 3 and boxed._boxed_call is True
    assert callable(default_partition)


def test_rules_that_read_the_output_trace_it_for_every_call():
    """relu/exp/tanh/sigmoid differentiate from their own output: the compiled backward must
    read this call's output, not the values of the call it was traced with."""
    from functorch.compile import aot_function, nop

    compiled = aot_function(lambda x: (x.relu() + x.exp() + x.tanh() + x.sigmoid()).sum(), nop)
    for values in ([1.0, -1.0, 0.5], [-1.0, 1.0, -0.5], [2.0, 0.25, -3.0]):
        x = torch.tensor(values, requires_grad=True)
        compiled(x).backward()
        v = x.detach()
        s = v.sigmoid()
        want = (v > 0).to(v.dtype) + v.exp() + (1 - v.tanh() ** 2) + s * (1 - s)
        torch.testing.assert_close(x.grad, want)
