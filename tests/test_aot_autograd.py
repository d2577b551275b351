"""AOT autograd (torch._functorch.aot_autograd / functorch.compile) against eager autograd."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from functorch.compile import (
    aot_function,
    aot_module,
    default_partition,
    make_boxed_func,
    min_cut_rematerialization_partition,
    nop,
)

import torch
import torch.nn.functional as F
from torch import nn
from torch._dynamo.backends.common import aot_autograd


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


# -- fake tracing, functionalization, min-cut, the default path -------------------------------

def _mutates(node) -> bool:
    """Whether a graph node calls an operator that writes one of its arguments."""
    schema = getattr(node.target, "schema", None)
    name = str(getattr(node.target, "name", ""))
    return node.op == "call_function" and (
        (schema is not None and bool(schema.mutated)) or name.partition(".")[0].endswith("_"))


def _recording_backend(graphs):
    def compiler(gm, example_inputs):
        graphs.append(gm)
        return gm
    return aot_autograd(fw_compiler=compiler, bw_compiler=compiler,
                        partition_fn=min_cut_rematerialization_partition)


def _train_pair(make, backend, steps, inputs, loss=lambda out: out.square().mean()):
    """Train a model eagerly and a copy compiled with ``backend`` from the same seeds; return
    both models and each step's (eager, compiled) outputs."""
    torch.manual_seed(0)
    eager = make()
    compiled_model = make()
    compiled_model.load_state_dict(eager.state_dict())
    compiled = torch.compile(compiled_model, backend=backend)
    outputs = []
    for step in range(steps):
        pair = []
        for model, run in ((eager, eager), (compiled_model, compiled)):
            torch.manual_seed(100 + step)
            out = run(*inputs)
            loss(out).backward()
            pair.append((out.detach(), [p.grad.clone() for p in model.parameters()]))
            with torch.no_grad():
                for p in model.parameters():
                    p -= 0.05 * p.grad
                    p.grad = None
        outputs.append(pair)
    return eager, compiled_model, outputs


def _assert_steps_match(outputs):
    for (out_e, grads_e), (out_c, grads_c) in outputs:
        torch.testing.assert_close(out_c, out_e, rtol=1e-4, atol=1e-5)
        for g_c, g_e in zip(grads_c, grads_e):
            torch.testing.assert_close(g_c, g_e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compiled_dropout_equals_eager_for_a_seed(backend):
    def make():
        return nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.4), nn.ReLU(), nn.Linear(8, 3),
                             nn.Dropout(0.2))

    x = torch.randn(5, 6)
    _, _, outputs = _train_pair(make, backend, 3, (x,))
    _assert_steps_match(outputs)
    # the masks really vary between steps (the seeds differ), so equality is not vacuous
    assert not torch.equal(outputs[0][0][0], outputs[1][0][0])


def test_compiling_draws_no_random_numbers():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    compiled = torch.compile(model, backend="aot_eager")
    x = torch.randn(3, 4)
    torch.manual_seed(7)
    compiled(x).sum().backward()  # compiles (traces) and runs: one set of draws
    after_compiled = torch.randn(4)
    torch.manual_seed(7)
    model(x).sum().backward()
    after_eager = torch.randn(4)
    torch.testing.assert_close(after_compiled, after_eager)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_batchnorm_running_stats_after_compiled_steps_equal_eager(backend):
    def make():
        return nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(),
                             nn.Linear(3 * 4 * 4, 2))

    x = torch.randn(4, 2, 6, 6)
    eager, compiled, outputs = _train_pair(make, backend, 3, (x,))
    _assert_steps_match(outputs)
    bn_e, bn_c = eager[1], compiled[1]
    assert int(bn_c.num_batches_tracked) == int(bn_e.num_batches_tracked) == 3
    torch.testing.assert_close(bn_c.running_mean, bn_e.running_mean)
    torch.testing.assert_close(bn_c.running_var, bn_e.running_var)
    assert not torch.equal(bn_e.running_mean, torch.zeros(3))


def test_captured_training_graphs_hold_no_in_place_operators():
    graphs = []
    model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(inplace=True),
                          nn.Dropout(0.3))
    compiled = torch.compile(model, backend=_recording_backend(graphs))
    compiled(torch.randn(5, 4)).sum().backward()
    assert len(graphs) == 2  # the forward, then the backward at its first call
    targets = [str(n.target) for g in graphs for n in g.graph.nodes if n.op == "call_function"]
    assert any("bernoulli" in t for t in targets)  # dropout's draw is a node
    assert [str(n.target) for g in graphs for n in g.graph.nodes if _mutates(n)] == []


def test_in_place_updates_of_intermediates_and_their_views():
    def f(x, y):
        h = x * 2
        h.add_(y)
        h[0] = 3.0  # a write through a view of an intermediate
        row = h[1]
        row.mul_(5)  # another view, written
        h.clamp_(-4, 4)
        return h * row.sum()

    fw = []
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    got = aot_function(f, _recording(fw))(x, y)
    torch.testing.assert_close(got, f(x, y))
    assert not any(_mutates(n) for n in fw[0].graph.nodes)


def test_writes_to_inputs_come_back_once_per_call():
    def f(x, buffer):
        buffer.mul_(0.5).add_(x.sum(0))
        view = buffer[:2]
        view.add_(1.0)  # through a view of the input
        return x * buffer

    fw = []
    compiled = aot_function(f, _recording(fw))
    x = torch.randn(3, 4)
    buffer_c, buffer_e = torch.ones(4), torch.ones(4)
    for _ in range(2):
        got = compiled(x, buffer_c)
        want = f(x, buffer_e)
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(buffer_c, buffer_e)
    assert not any(_mutates(n) for n in fw[0].graph.nodes)


def test_writes_through_a_view_of_a_transposed_input():
    def f(x):
        x[0].mul_(2)  # x is a transposed view: its rows are strided in memory
        return x + 1

    fw = []
    compiled = aot_function(f, _recording(fw))
    base_c = torch.randn(3, 4)
    base_e = base_c.clone()
    torch.testing.assert_close(compiled(base_c.t()), f(base_e.t()))
    torch.testing.assert_close(base_c, base_e)
    assert not any(_mutates(n) for n in fw[0].graph.nodes)
    with pytest.raises(NotImplementedError, match="leave gaps"):
        aot_function(f, nop)(torch.randn(4, 6)[:, ::2])  # every other column: gaps


def test_writing_an_input_that_requires_grad_is_refused():
    def f(x, w):
        w.add_(1.0)
        return x * w

    compiled = aot_function(f, nop)
    with pytest.raises(RuntimeError, match="leaf Variable"):  # as eager autograd says
        compiled(torch.randn(3), torch.randn(3, requires_grad=True))
    # a non-leaf: eager records the write in its graph; AOT autograd says it cannot
    with pytest.raises(NotImplementedError, match="writes in place an input"):
        compiled(torch.randn(3), torch.randn(3, requires_grad=True) * 2)


def _saved_count(partition):
    fw, bw = [], []

    def f(x, w):
        y = torch.sin(x) * torch.cos(x) + torch.exp(x) * 0.5
        return torch.tanh(y @ w).sigmoid().sum()

    torch.manual_seed(3)
    x = torch.randn(6, 6, requires_grad=True)
    w = torch.randn(6, 2, requires_grad=True)
    compiled = aot_function(f, _recording(fw), _recording(bw), partition_fn=partition)
    compiled(x, w).backward()
    grads = [x.grad.clone(), w.grad.clone()]
    x.grad = w.grad = None
    f(x, w).backward()
    torch.testing.assert_close(grads[0], x.grad)
    torch.testing.assert_close(grads[1], w.grad)
    tangents = 1
    return len([n for n in bw[0].graph.nodes if n.op == "placeholder"]) - tangents


def test_min_cut_saves_fewer_tensors_than_the_default_partition():
    default = _saved_count(default_partition)
    min_cut = _saved_count(min_cut_rematerialization_partition)
    assert min_cut < default
    assert min_cut <= 4  # x, w and the matmul's result (its tanh recomputed) at most


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.qkv = nn.Linear(8, 24)
        self.mlp = nn.Linear(8, 8)

    def forward(self, x):
        q, k, v = self.qkv(self.norm(x)).split(8, dim=-1)
        heads = [t.view(2, 5, 2, 4).transpose(1, 2) for t in (q, k, v)]
        att = F.scaled_dot_product_attention(*heads, is_causal=True)
        x = x + att.transpose(1, 2).reshape(2, 5, 8)
        return x + F.gelu(self.mlp(x))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("case", ["mlp", "conv_bn", "layer_norm_gelu_sdpa"])
def test_training_step_gradients_equal_eager(case, backend):
    makers = {
        "mlp": (lambda: nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 2)),
                (torch.randn(4, 5),)),
        "conv_bn": (lambda: nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2),
                                          nn.ReLU(), nn.MaxPool2d(2)),
                    (torch.randn(2, 1, 4, 4),)),
        "layer_norm_gelu_sdpa": (_Block, (torch.randn(2, 5, 8),)),
    }
    make, inputs = makers[case]
    _, _, outputs = _train_pair(make, backend, 2, inputs)
    _assert_steps_match(outputs)


def test_value_dependent_ops_still_match_eager():
    """take() wraps negative indices by reading them: its graph runs as captured."""
    index = torch.tensor([-1, 0, 2])
    compiled = torch.compile(lambda x: torch.take(x, index) * 2, backend="aot_eager")
    x = torch.randn(2, 3)
    torch.testing.assert_close(compiled(x), torch.take(x, index) * 2)


def test_the_switch_still_turns_aot_autograd_off():
    graphs = []
    torch._dynamo.config.use_aot_autograd = False
    try:
        compiled = torch.compile(lambda x: (x * 3).sum(), backend=_recording_backend(graphs))
        x = torch.randn(3, requires_grad=True)
        compiled(x).backward()
    finally:
        torch._dynamo.config.use_aot_autograd = True
    assert graphs == []
    torch.testing.assert_close(x.grad, torch.full((3,), 3.0))


def test_training_graph_with_a_changing_batch_size_compiles_once_more_symbolically():
    graphs = []
    torch.manual_seed(4)
    model = nn.Sequential(nn.Linear(4, 6), nn.LayerNorm(6), nn.GELU(), nn.Linear(6, 2))
    compiled = torch.compile(model, backend=_recording_backend(graphs))
    for rows in (3, 5, 7, 9):
        x = torch.randn(rows, 4)
        compiled(x).square().sum().backward()
        got = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        model(x).square().sum().backward()
        for g, p in zip(got, model.parameters()):
            torch.testing.assert_close(g, p.grad)
        model.zero_grad()
    # static at 3 rows, then one symbolic compile serves 5, 7 and 9 (forward + backward each)
    assert len(graphs) == 4
    sizes = [s for n in graphs[2].graph.nodes if n.op == "placeholder"
             for s in n.meta["val"].shape]
    assert any(isinstance(s, torch.SymInt) for s in sizes)  # the batch dim is symbolic


def test_compiled_adam_step_and_fresh_tensors_written_in_place():
    def counter(x):
        count = torch.tensor(0.0)
        count.add_(1)  # a tensor made inside the function: fresh at every call
        return x + count

    compiled = torch.compile(counter, backend="aot_eager")
    for _ in range(2):
        torch.testing.assert_close(compiled(torch.zeros(2)), torch.ones(2))

    torch.manual_seed(5)
    models = [nn.Linear(3, 2), nn.Linear(3, 2)]
    models[1].load_state_dict(models[0].state_dict())
    optimizers = [torch.optim.Adam(m.parameters(), lr=0.1) for m in models]
    step = torch.compile(optimizers[1].step, backend="aot_eager")
    for _ in range(3):
        x = torch.randn(5, 3)
        for m in models:
            m(x).sum().backward()
        optimizers[0].step()
        step()
        for opt in optimizers:
            opt.zero_grad()
    for a, b in zip(models[0].parameters(), models[1].parameters()):
        torch.testing.assert_close(a, b)


def test_double_backward_and_writes_to_captured_tensors_are_refused():
    compiled = torch.compile(lambda x: (x.sin() * x).sum(), backend="aot_eager")
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="double backward"):
        torch.autograd.grad(compiled(x), x, create_graph=True)
    (grad,) = torch.autograd.grad(compiled(x), x)  # a plain backward still works
    torch.testing.assert_close(grad, x.detach().cos() * x.detach() + x.detach().sin())

    captured = torch.zeros(3)

    def writes_global(t):
        captured.add_(t)
        return t * 2

    with pytest.raises(NotImplementedError, match="captured"):
        aot_function(writes_global, nop)(torch.ones(3))
    assert torch.equal(captured, torch.zeros(3))  # nothing ran for real while tracing


def test_aot_module_moves_batchnorm_buffers_as_eager():
    torch.manual_seed(6)
    eager = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    traced = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    traced.load_state_dict(eager.state_dict())
    compiled = aot_module(traced, nop)
    for _ in range(2):
        x = torch.randn(5, 3)
        eager(x).sum().backward()
        compiled(x).sum().backward()
    assert int(traced[1].num_batches_tracked) == 2
    torch.testing.assert_close(traced[1].running_mean, eager[1].running_mean)
    torch.testing.assert_close(traced[1].running_var, eager[1].running_var)
    torch.testing.assert_close(traced[0].weight.grad, eager[0].weight.grad)


def test_nanogpt_train_step_compiled_with_inductor_gives_eager_losses():
    """benchmarks/workloads.py's nanoGPT-shaped model (quick sizes), three Adam steps."""
    import importlib.util
    import pathlib
    import sys

    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "workloads.py"
    spec = importlib.util.spec_from_file_location("plait_bench_workloads_aot", path)
    workloads = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = workloads  # its dataclasses look their module up
    spec.loader.exec_module(workloads)
    losses = {}
    for mode in ("eager", "inductor"):
        model = workloads._GPT(1, 16, 2, 8, 65, 16)
        model.pos = torch.arange(8)
        idx, targets = workloads._gpt_data(2, 8, 65, 17)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        loss_fn = model.loss if mode == "eager" else torch.compile(model.loss, backend=mode)
        losses[mode] = []
        for _ in range(3):
            loss = loss_fn(idx, targets)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            losses[mode].append(loss.item())
    assert losses["inductor"] == pytest.approx(losses["eager"], rel=1e-5)
    assert losses["eager"][2] < losses["eager"][0]  # it trains: the comparison has content


_CACHED_PROCESS = textwrap.dedent("""
    import json
    import torch
    from torch._functorch import _aot_cache
    from torch._inductor import config
    config.cpp_codegen = False  # the fused interpreter: the restored meta values still schedule

    def loss(x, w, b):
        return (torch.nn.functional.gelu(x @ w + b) * 2.0).sum()

    x = torch.arange(12.0).reshape(4, 3) / 10
    w = (torch.arange(6.0).reshape(3, 2) / 5 - 0.5).requires_grad_()
    b = torch.tensor([0.25, -0.5], requires_grad=True)
    out = torch.compile(loss, backend="inductor")(x, w, b)
    out.backward()
    print(json.dumps({"counters": _aot_cache.counters, "loss": out.item(),
                      "w": w.grad.tolist(), "b": b.grad.tolist()}))
""")


def test_traced_graphs_cached_on_disk_across_processes(tmp_path):
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(tmp_path))

    def run() -> dict:
        done = subprocess.run([sys.executable, "-c", _CACHED_PROCESS], env=env,
                              capture_output=True, text=True, timeout=120, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])

    x = torch.arange(12.0).reshape(4, 3) / 10
    w = (torch.arange(6.0).reshape(3, 2) / 5 - 0.5).requires_grad_()
    b = torch.tensor([0.25, -0.5], requires_grad=True)
    expected = (F.gelu(x @ w + b) * 2.0).sum()
    expected.backward()

    first = run()
    assert first["counters"] == {"hits": 0, "stores": 1, "misses": 1}
    entries = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path / "aot") for f in fs]
    assert len(entries) == 1 and entries[0].endswith(".pkl")  # no temporary file left
    second = run()
    assert second["counters"] == {"hits": 1, "stores": 0, "misses": 0}
    # a damaged entry is traced (and stored) again
    with open(entries[0], "wb") as handle:
        handle.write(b"not a pickle")
    third = run()
    assert third["counters"] == {"hits": 0, "stores": 1, "misses": 1}
    for got in (first, second, third):
        assert abs(got["loss"] - expected.item()) < 1e-5
        torch.testing.assert_close(torch.tensor(got["w"]), w.grad)
        torch.testing.assert_close(torch.tensor(got["b"]), b.grad)


@torch.fx.wrap
def _users_own(x):
    return x + 1


def test_cache_key_follows_inputs_and_refuses_constants():
    from torch._functorch import _aot_cache

    def f(x, w):
        return (x * w).sum()

    gm = torch.fx.symbolic_trace(f)
    x, w = torch.randn(3), torch.randn(3, requires_grad=True)
    key = _aot_cache.cache_key(gm, (x, w), min_cut_rematerialization_partition, None)
    assert key is not None
    assert key == _aot_cache.cache_key(gm, (x, w), min_cut_rematerialization_partition, None)
    others = [((torch.randn(4), torch.randn(4, requires_grad=True)), None),
              ((x, w.detach()), None),
              ((x.double(), w), None),
              ((x, w), {torch.ops.aten.gelu.default: None})]
    for args, decompositions in others:
        assert _aot_cache.cache_key(gm, args, min_cut_rematerialization_partition,
                                    decompositions) != key
    assert _aot_cache.cache_key(gm, (x, w), default_partition, None) != key
    with torch.autocast("cpu"):  # the trace records autocast's casts
        assert _aot_cache.cache_key(gm, (x, w), min_cut_rematerialization_partition,
                                    None) != key
    # a function of the program's (its body may change between runs) is not cached
    user = torch.fx.symbolic_trace(lambda x, w: _users_own(x) * w)
    assert _aot_cache.cache_key(user, (x, w), min_cut_rematerialization_partition, None) is None
    gm.constant = torch.ones(3)
    gm.graph.get_attr("constant")
    gm.recompile()
    assert _aot_cache.cache_key(gm, (x, w), min_cut_rematerialization_partition, None) is None


def test_min_cut_saves_a_copy_a_backward_matmul_reads_instead_of_copying_again():
    # attention's y.transpose(1, 2).contiguous() feeds the projection's weight gradient: a
    # copy recomputed in the backward would be written to memory all the same, so the forward
    # saves it (the tensor it copies, read by another backward formula, is saved too).
    fw, bw = [], []

    def f(x, w1, w2):
        h = x @ w1
        y = h.view(3, 2, 4).transpose(0, 1).contiguous().view(6, 4)
        return (y @ w2).sum() + (h * h).sum()

    torch.manual_seed(5)
    x = torch.randn(3, 8, requires_grad=True)
    w1 = torch.randn(8, 8, requires_grad=True)
    w2 = torch.randn(4, 5, requires_grad=True)
    compiled = aot_function(f, _recording(fw), _recording(bw),
                            partition_fn=min_cut_rematerialization_partition)
    compiled(x, w1, w2).backward()
    grads = [t.grad.clone() for t in (x, w1, w2)]
    assert not [n for n in bw[0].graph.nodes if n.op == "call_function"
                and getattr(n.target, "__name__", "").startswith("clone")]
    x.grad = w1.grad = w2.grad = None
    f(x, w1, w2).backward()
    for got, t in zip(grads, (x, w1, w2)):
        torch.testing.assert_close(got, t.grad)
