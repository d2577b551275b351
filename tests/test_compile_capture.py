"""torch.compile's graph capture (issue 15, item 2): programs keep their eager behaviour (side
effects, closures, globals, data-dependent branches, generators, exceptions, hooks, in-place
updates, changing shapes) and are captured into the expected number of graphs."""

from __future__ import annotations

import itertools
import warnings

import pytest

import torch
import torch._dynamo
from torch import nn
from torch._dynamo.testing import CompileCounter, EagerAndRecordGraphs, same
from torch.testing import _opdb as opdb


@pytest.fixture(autouse=True)
def _fresh() -> None:
    torch._dynamo.reset()


def _compile(fn, **kwargs):
    counter = CompileCounter()
    return torch.compile(fn, backend=counter, **kwargs), counter


def test_straight_line_function_is_one_graph_and_cached() -> None:
    def f(x, y):
        return torch.relu(x @ y + 1).sum(dim=0)

    compiled, counter = _compile(f)
    x, y = torch.randn(3, 4), torch.randn(4, 5)
    out = compiled(x, y)
    assert type(out) is torch.Tensor
    assert torch.allclose(out, torch.relu(x @ y + 1).sum(dim=0))
    assert counter.frame_count == 1 and counter.op_count == 4
    compiled(torch.randn(3, 4), torch.randn(4, 5))  # same guards: the cached graph runs
    assert counter.frame_count == 1


def test_python_side_effects_run_as_in_eager() -> None:
    log: list[object] = []
    state = {"calls": 0}

    class Holder:
        value = None

    holder = Holder()

    def f(x):
        y = x * 3
        log.append(tuple(y.shape))  # metadata: no break
        state["calls"] += 1
        holder.value = y  # an intermediate the program keeps
        return y + 1

    compiled, counter = _compile(f)
    x = torch.arange(4.0)
    out = compiled(x)
    assert log == [(4,)] and state["calls"] == 1
    assert type(holder.value) is torch.Tensor  # realized, not a deferred tensor
    assert holder.value.tolist() == [0.0, 3.0, 6.0, 9.0] and out.tolist() == [1.0, 4.0, 7.0, 10.0]
    assert counter.frame_count == 1


def test_closure_and_global_reads() -> None:
    scale = torch.tensor([2.0, 3.0])

    def f(x):
        return x * scale + GLOBAL_OFFSET

    compiled, counter = _compile(f)
    x = torch.ones(2)
    assert compiled(x).tolist() == [12.0, 13.0]
    assert counter.frame_count == 1


GLOBAL_OFFSET = torch.tensor(10.0)


def test_data_dependent_branch_breaks_the_graph_and_takes_the_right_branch() -> None:
    def f(x):
        s = x.sum()
        if s > 0:
            return x * 2
        return x - 1

    compiled, _ = _compile(f)
    assert compiled(torch.ones(3)).tolist() == [2.0, 2.0, 2.0]
    assert compiled(-torch.ones(3)).tolist() == [-2.0, -2.0, -2.0]
    explained = torch._dynamo.explain(f)(torch.ones(3))
    assert explained.graph_count == 2 and explained.graph_break_count == 1
    reason = explained.break_reasons[0]
    assert "__bool__" in reason.reason and "if s > 0:" in reason.user_stack
    assert "test_compile_capture.py" in reason.user_stack
    assert "Graph Count: 2" in str(explained)


def test_item_and_print_break_and_see_real_values(capsys: pytest.CaptureFixture[str]) -> None:
    def f(x):
        y = x + 1
        print(y)
        n = int(y.sum().item())
        return y * n

    compiled, counter = _compile(f)
    out = compiled(torch.zeros(2))
    assert capsys.readouterr().out.strip() == "tensor([1., 1.])"
    assert out.tolist() == [2.0, 2.0]
    assert counter.frame_count == 3  # y = x + 1 | print | sum | item() | y * n


def test_generator_and_loop_over_a_tensor() -> None:
    def chunks(x):
        for part in x.chunk(3):
            yield part.sum()

    def f(x):
        total = sum(chunks(x))
        rows = [row * i for i, row in enumerate(x.view(3, 2))]
        return total, torch.stack(rows)

    compiled, counter = _compile(f)
    x = torch.arange(6.0)
    total, stacked = compiled(x)
    assert total.item() == 15.0
    assert stacked.tolist() == [[0.0, 0.0], [2.0, 3.0], [8.0, 10.0]]
    assert counter.frame_count == 1


def test_exception_in_the_program_propagates_after_earlier_ops_ran() -> None:
    def f(x, target):
        target.add_(1)  # ran before the error in eager: must have run here too
        return x @ torch.ones(5, 5)  # shape error

    compiled, _ = _compile(f)
    target = torch.zeros(2)
    with pytest.raises(RuntimeError):
        compiled(torch.ones(2, 3), target)
    assert target.tolist() == [1.0, 1.0]

    def g(x):
        try:
            raise ValueError("inside")
        except ValueError:
            return x + 1

    assert _compile(g)[0](torch.zeros(1)).item() == 1.0


def test_in_place_updates_of_inputs_and_intermediates() -> None:
    def f(x, acc):
        acc.add_(x)  # an input updated in place
        y = x.clone()
        y[0] = 5.0  # item assignment on an intermediate
        y.mul_(2)
        return y, acc.sum()

    compiled, counter = _compile(f)
    x, acc = torch.ones(3), torch.zeros(3)
    y, total = compiled(x, acc)
    assert y.tolist() == [10.0, 2.0, 2.0] and acc.tolist() == [1.0, 1.0, 1.0]
    assert total.item() == 3.0 and counter.frame_count == 1


def test_module_hooks_run_and_module_output_matches() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    seen: list[tuple[int, ...]] = []
    model[0].register_forward_hook(lambda mod, args, out: seen.append(tuple(out.shape)))
    model.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    compiled = torch.compile(model, backend="eager")
    x = torch.randn(3, 4)
    out = compiled(x)
    expected = model(x)
    assert torch.allclose(out, expected)
    assert seen == [(3, 8), (3, 8)]


def test_grad_mode_switch_inside_the_graph() -> None:
    def f(w, x):
        with torch.no_grad():
            frozen = w * 2
        return (frozen * x).sum() + (w * x).sum()

    compiled, counter = _compile(f)
    w = torch.ones(3, requires_grad=True)
    x = torch.arange(3.0)
    out = compiled(w, x)
    out.backward()
    assert w.grad.tolist() == [0.0, 1.0, 2.0]  # the no_grad branch adds nothing
    assert counter.frame_count == 1


def test_rng_order_and_reseeding_match_eager() -> None:
    def f(x):
        torch.manual_seed(7)
        a = torch.rand(3)
        torch.manual_seed(7)
        b = torch.rand(3)
        return a, b, x + torch.randn(3), nn.functional.dropout(x, 0.5)

    torch.manual_seed(1)
    expected = f(torch.ones(3))
    compiled, _ = _compile(f)
    torch.manual_seed(1)
    got = compiled(torch.ones(3))
    assert all(torch.equal(e, g) for e, g in zip(expected, got))
    assert torch.equal(got[0], got[1])


def test_automatic_dynamic_shapes_reuse_the_graph_after_one_size_change() -> None:
    compiled, counter = _compile(lambda x: (x.sin() * 2).sum(0))
    for n in range(2, 9):
        x = torch.randn(n, 3)
        assert torch.allclose(compiled(x), (x.sin() * 2).sum(0))
    assert counter.frame_count == 2  # static at n=2, then n dynamic from n=3 on
    assert _compile(lambda x: x + 1, dynamic=True)[0](torch.ones(5)).tolist() == [2.0] * 5
    always, always_counter = _compile(lambda x: x * 2, dynamic=True)
    for n in (2, 3, 4):
        always(torch.ones(n))
    assert always_counter.frame_count == 1
    marked, marked_counter = _compile(lambda x: x.sum(0))
    x = torch.ones(4, 2)
    torch._dynamo.mark_dynamic(x, 0)
    marked(x)
    assert marked(torch.ones(6, 2)).tolist() == [6.0, 6.0]
    assert marked_counter.frame_count == 1


def test_changing_shapes_recompile_and_hit_the_limit_with_one_warning() -> None:
    compiled, counter = _compile(lambda x: x.sin() * 2, dynamic=False)
    limit = torch._dynamo.config.recompile_limit
    assert limit == 8 and torch._dynamo.config.cache_size_limit == 8
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, limit + 4):
            x = torch.randn(n)
            assert torch.allclose(compiled(x), x.sin() * 2)
    assert counter.frame_count == limit
    messages = [str(w.message) for w in caught if "recompile_limit" in str(w.message)]
    assert len(messages) == 1
    assert f"tensor 'x' size()[0]: expected {limit}, got {limit + 1}" in messages[0]


def test_dtype_and_requires_grad_changes_recompile() -> None:
    compiled, counter = _compile(lambda x: x + 1)
    compiled(torch.ones(2))
    compiled(torch.ones(2, dtype=torch.float64))
    compiled(torch.ones(2, requires_grad=True))
    compiled(torch.ones(2))
    assert counter.frame_count == 3


def test_mlp_training_step_matches_eager_over_several_steps() -> None:
    def make() -> tuple[nn.Module, torch.optim.Optimizer]:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Dropout(0.1), nn.Linear(16, 3))
        return model, torch.optim.Adam(model.parameters(), lr=1e-2)

    def step(model, opt, x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    eager_model, eager_opt = make()
    model, opt = make()
    counter = CompileCounter()
    compiled = torch.compile(step, backend=counter)
    data = torch.Generator().manual_seed(3)
    for i in range(4):
        x = torch.randn(8, 6, generator=data)
        y = torch.randint(0, 3, (8,), generator=data)
        torch.manual_seed(i)
        expected = step(eager_model, eager_opt, x, y)
        torch.manual_seed(i)
        got = compiled(model, opt, x, y)
        assert torch.allclose(got, expected, atol=1e-6)
    for a, b in zip(eager_model.parameters(), model.parameters()):
        assert torch.allclose(a, b, atol=1e-6)
    # forward+loss and the optimizer update, split at backward(); Adam's first step differs
    # from the rest (its state is created), so a few graphs, then all cached
    before = counter.frame_count
    compiled(model, opt, x, y)
    assert counter.frame_count == before


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_builtin_backends_give_eager_results_and_gradients(backend: str) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 5), nn.GELU(), nn.Linear(5, 1))
    x = torch.randn(4, 3)
    model(x).sum().backward()
    expected = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    compiled = torch.compile(model, backend=backend)
    compiled(x).sum().backward()
    assert all(torch.allclose(e, p.grad, atol=1e-6) for e, p in zip(expected, model.parameters()))


def test_custom_backend_gets_a_graph_module_and_fake_example_inputs() -> None:
    recorder = EagerAndRecordGraphs()
    calls: list[int] = []

    def backend(gm, example_inputs):
        calls.append(len(example_inputs))
        assert all(isinstance(t, torch.Tensor) for t in example_inputs)
        return recorder(gm, example_inputs)

    out = torch.compile(lambda a, b: torch.cat([a, b]).relu(), backend=backend)(
        torch.ones(2), -torch.ones(2))
    assert out.tolist() == [1.0, 1.0, 0.0, 0.0] and calls == [2]
    code = recorder.graphs[0].code
    assert "torch.cat" in code and "relu" in code


def test_fullgraph_raises_unsupported_naming_reason_and_line() -> None:
    def f(x):
        return torch.tensor((x * 2).tolist())  # (item() is captured under fullgraph)

    with pytest.raises(torch._dynamo.exc.Unsupported, match=r"tolist\(\)") as info:
        torch.compile(f, fullgraph=True, backend="eager")(torch.ones(2))
    assert "return torch.tensor((x * 2).tolist())" in str(info.value)
    assert torch.compile(lambda x: x + 1, fullgraph=True)(torch.ones(1)).item() == 2.0


def test_disabled_function_breaks_and_runs_eagerly() -> None:
    seen: list[bool] = []

    @torch.compiler.disable
    def helper(y):
        seen.append(torch.compiler.is_compiling())
        return y + 1

    def f(x):
        seen.append(torch.compiler.is_compiling())
        return helper(x * 2) * 3

    compiled, counter = _compile(f)
    assert compiled(torch.ones(1)).item() == 9.0
    assert seen == [True, False] and counter.frame_count == 2
    assert torch.compiler.is_compiling() is False


def test_verify_option_names_the_diverging_node() -> None:
    def wrong_backend(gm, example_inputs):
        def run(*args):
            out = gm(*args)
            return tuple(t + 1 if i == 1 else t for i, t in enumerate(out))
        return run

    f = torch.compile(lambda x: (x * 2).relu().neg(), backend=wrong_backend,
                      options={"verify": True})
    with pytest.raises(RuntimeError, match="diverges from eager at node 'relu'"):
        f(torch.ones(3))


def test_one_op_compiled_functions_match_eager_over_the_op_database() -> None:
    """Every op-database row's first two float32 (or first dtype) samples, as a one-op
    compiled function with backends eager and aot_eager, against the same call eagerly."""
    failures = []
    for op in opdb.load():
        dtype = "float32" if "float32" in op.dtypes else op.dtypes[0]
        for sample in itertools.islice(opdb.samples(op, torch, dtype), 2):
            def call(s, op=op):
                return opdb.call(torch, op, s)

            for backend in ("eager", "aot_eager"):
                outcomes = []
                for fn in (call, torch.compile(call, backend=backend)):
                    torch.manual_seed(0)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        try:
                            outcomes.append(("ok", opdb.leaves(fn(sample))))
                        except Exception as exc:  # compared below
                            outcomes.append(("raised", type(exc)))
                (kind_e, eager), (kind_c, got) = outcomes
                if kind_e != kind_c or (kind_e == "raised" and eager is not got):
                    failures.append((op.name, backend, outcomes))
                elif kind_e == "ok" and (
                        any(type(t) is not torch.Tensor for t in got
                            if isinstance(t, torch.Tensor))
                        or not same(eager, got, equal_nan=True)):
                    failures.append((op.name, backend, "values differ"))
    assert not failures, failures[:10]


def test_aten_operators_called_directly() -> None:
    def f(x):
        y = torch.ops.aten.mul.Tensor(x, x)  # on a real tensor: runs at once
        z = y.relu() - 1  # deferred
        return torch.ops.aten.add.Tensor(z, 1)  # on a deferred tensor: recorded

    compiled, counter = _compile(f)
    assert compiled(torch.tensor([-2.0, 3.0])).tolist() == [4.0, 9.0]
    assert counter.frame_count == 1 and counter.op_count == 3


def test_custom_autograd_function_breaks_and_keeps_its_backward() -> None:
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 10 * x  # not the true derivative: proves this backward ran

    def f(x):
        return Square.apply(x + 1).sum()

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    compiled, _ = _compile(f)
    compiled(x).backward()
    assert x.grad.tolist() == [20.0, 30.0]
    assert "apply" not in vars(Square)  # the class is left as it was


def test_rnn_modules_run_eagerly_with_a_graph_break() -> None:
    torch.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True)
    x = torch.randn(2, 5, 3)
    expected, _ = lstm(x)
    got, _ = torch.compile(lstm, backend="eager")(x)
    assert torch.allclose(got, expected)
    explained = torch._dynamo.explain(lstm)(x)
    assert "allow_rnn" in explained.break_reasons[0].reason
    assert "__call__" not in vars(nn.RNNBase)  # restored after the capture


def test_graph_returns_only_the_values_the_program_keeps_and_grad_flags_are_eager() -> None:
    recorder = EagerAndRecordGraphs()
    flags = []

    def f(x, w):
        h = (x * w).sin()
        with torch.no_grad():
            frozen = h * 2
        flags.append((h.requires_grad, h.is_leaf, frozen.requires_grad, h.detach().requires_grad))
        return h.cos().sum()

    torch.compile(f, backend=recorder)(torch.ones(3), torch.ones(3, requires_grad=True))
    assert flags == [(True, False, False, False)]
    graph = recorder.graphs[0].graph
    (output,) = [n for n in graph.nodes if n.op == "output"]
    assert len(output.args[0]) == 1  # h, frozen and the rest died with the call


def test_printing_an_input_written_in_the_graph_shows_its_new_value(
        capsys: pytest.CaptureFixture[str]) -> None:
    def f(x):
        x.add_(1)
        print(x)
        return x * 2

    x = torch.zeros(2)
    out = _compile(f)[0](x)
    assert capsys.readouterr().out.strip() == "tensor([1., 1.])"
    assert out.tolist() == [2.0, 2.0] and x.tolist() == [1.0, 1.0]
    assert "__repr__" in vars(torch.Tensor)  # Tensor's own, put back after the capture


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_no_grad_evaluation_then_training_calls_keep_their_gradients(backend: str) -> None:
    torch.manual_seed(0)
    emb, lin = nn.Embedding(10, 4), nn.Linear(4, 3)

    def f(idx):
        logits = lin(emb(idx))
        return nn.functional.cross_entropy(logits.view(-1, 3), idx.view(-1) % 3)

    compiled = torch.compile(f, backend=backend)
    idx = torch.randint(0, 10, (2, 5))
    with torch.no_grad():
        assert not compiled(idx).requires_grad
    expected = torch.autograd.grad(f(idx), lin.weight)[0]
    for _ in range(3):  # the first call compiles, the others run the cached graphs
        loss = compiled(idx)
        assert loss.requires_grad
        assert torch.allclose(torch.autograd.grad(loss, lin.weight)[0], expected)


def test_torch_func_transforms_inside_a_compiled_function_run_eagerly() -> None:
    from torch.func import grad, jacrev, vmap

    x, w = torch.randn(3, 4), torch.randn(4)
    cases = {
        "vmap": lambda x, w: vmap(lambda row: (row * w).sum())(x * 2),
        "grad": lambda x, w: grad(lambda v: (x @ v).pow(2).sum())(w * 1),
        "jacrev": lambda x, w: jacrev(lambda v: (x @ v).sin())(w + 0),
    }
    for name, fn in cases.items():
        assert torch.allclose(_compile(fn)[0](x, w), fn(x, w), atol=1e-6), name


def test_autocast_block_inside_a_compiled_function() -> None:
    torch.manual_seed(0)
    lin = nn.Linear(4, 4)

    def f(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = lin(x)
        return y, y.float() * 2

    x = torch.randn(2, 4)
    expected = f(x)
    got = _compile(f)[0](x)
    assert got[0].dtype == torch.bfloat16
    assert all(torch.equal(e, g) for e, g in zip(expected, got))
    assert not torch.is_autocast_enabled("cpu")


def test_metadata_plans_give_the_fake_run_s_answers() -> None:
    """A deferred call's results come from a plan of its signature after the first fake run
    (torch._dynamo._plans): views alias their argument, in-place calls return it, dtypes
    follow the default dtype, and a call at new sizes gets its own plan."""
    from torch._dynamo import _plans

    seen = []

    def f(x, n):
        v = x.view(n, -1)
        w = v.t()
        x.mul_(2)  # in place: the argument itself comes back
        seen.append((v._base is not None, w._base is not None, tuple(w.shape), w.stride(),
                     v.is_leaf, w.is_contiguous()))
        return v + 1, w.sum(0), x * 1.5

    compiled = torch.compile(f, backend="eager")
    with torch._dynamo.config.patch(replay=False):  # every call captures
        for n, size, dtype in ((2, 6, torch.float32), (2, 6, torch.float32),
                               (3, 6, torch.float32), (2, 8, torch.float64)):
            x = torch.arange(float(size), dtype=dtype)
            expected = f(x.clone(), n)
            eager_seen = seen.pop()
            got = compiled(x, n)
            assert seen.pop() == eager_seen
            assert all(g.dtype == e.dtype and torch.equal(g, e) for g, e in zip(got, expected))
        assert _plans.PLANS  # the later calls used plans

        def resized(a, b):
            c = torch.empty(0)
            torch.add(a, b, out=c)  # resizes c: never planned
            return c * 2

        compiled_out = torch.compile(resized, backend="eager")
        for _ in range(3):
            assert compiled_out(torch.ones(3), torch.ones(3)).tolist() == [4.0, 4.0, 4.0]
        torch.set_default_dtype(torch.float64)
        try:
            i = torch.arange(4)
            got = torch.compile(lambda t: t + 1.5, backend="eager")(i)
            assert got.dtype == torch.float64  # promotion reads the default dtype
        finally:
            torch.set_default_dtype(torch.float32)


def test_an_operator_reached_below_autograd_keeps_its_gradient() -> None:
    """F.embedding calls its aten operator directly: with a deferred index and a weight that
    requires grad, the operator runs after the graph (a break), under the autograd kernel
    that called it, so the weight gets its gradient as in eager."""
    torch.manual_seed(0)
    emb = nn.Embedding(10, 4)

    def f(i):
        return (emb(i * 1) * 2).sum()

    i = torch.tensor([1, 2, 3, 1])
    f(i).backward()
    expected = emb.weight.grad.clone()
    emb.weight.grad = None
    out = torch.compile(f, backend="eager")(i)
    assert out.requires_grad
    out.backward()
    assert torch.equal(emb.weight.grad, expected)
