"""torch.compile on programs written for PyTorch, second round: slice bounds that change,
backends that hand graphs on, torch.fx as libraries use it, training loops from tutorials.
Each test is a small program as users write it, run compiled and compared with the same code
run eagerly or with math done by hand."""

from __future__ import annotations

import logging

import pytest

import torch
import torch._dynamo
from torch import nn

BACKENDS = ["eager", "aot_eager", "inductor"]


class _Collect(logging.Handler):
    """The messages of one logger, whatever stream its TORCH_LOGS handler writes to."""

    def __init__(self, name: str) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []
        self.logger = logging.getLogger(name)

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def __enter__(self) -> _Collect:
        torch._logging.set_logs(recompiles=True)
        self.logger.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.logger.removeHandler(self)
        torch._logging.set_logs()



@pytest.fixture(autouse=True)
def _fresh_caches():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


# -- an int argument used as a slice bound ---------------------------------------------------


def _window(x, n):
    return x[:n] * 2, x[n:].sum(0), x[1:n + 1].exp(), x[:, :n].sin()


@pytest.mark.parametrize("backend", BACKENDS)
def test_slice_bound_becomes_an_input_after_it_changes(backend):
    # PyTorch: static at the first value, symbolic (an int input) after the second: one
    # recompile, not one per value
    from torch._dynamo.testing import CompileCounterWithBackend

    counter = CompileCounterWithBackend(backend)
    compiled = torch.compile(_window, backend=counter)
    torch.manual_seed(0)
    for n in (2, 3, 4, 5, 6):
        x = torch.randn(8, 7, requires_grad=True)
        got = compiled(x, n)
        sum(g.sum() for g in got).backward()
        got_grad, x.grad = x.grad, None
        want = _window(x, n)
        sum(w.sum() for w in want).backward()
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w)
        torch.testing.assert_close(got_grad, x.grad)
    assert counter.frame_count == 2


def test_slice_bound_input_is_named_and_symbolic_for_a_programs_backend():
    seen = []

    def backend(gm, example_inputs):
        seen.append(([n.name for n in gm.graph.nodes if n.op == "placeholder"],
                     [type(e).__name__ for e in example_inputs]))
        return gm.forward

    compiled = torch.compile(lambda x, n: x[:n] + 1, backend=backend)
    for n in (1, 2, 3, 2):
        assert compiled(torch.zeros(5), n).tolist() == [1.0] * n
    # n = 1 is specialised (as PyTorch specialises 0 and 1), 2 too at first, then 3 and
    # back to 2 share the graph taking n
    assert seen == [(["l_x_"], ["Tensor"]), (["l_x_"], ["Tensor"]),
                    (["l_x_", "l_n_"], ["Tensor", "SymInt"])]


def test_slice_bound_that_turns_negative_recompiles_and_stays_right():
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()
    compiled = torch.compile(lambda x, n: x[n:] * 3, backend=counter)
    x = torch.arange(6.0)
    with _Collect("torch._dynamo.recompiles") as log:
        for n in (2, 3, 4, -2, -3, 5):
            torch.testing.assert_close(compiled(x, n), x[n:] * 3)
    assert counter.frame_count == 3  # n = 2; n >= 2 as an input; n < 0 as an input
    text = "\n".join(log.messages)
    assert "expected an int >= 2, got a negative int" in text


def test_lookup_backend_gives_a_callable_to_hand_a_graph_on():
    from torch._dynamo import lookup_backend

    calls = []

    def logging_backend(gm, example_inputs):
        calls.append(len(example_inputs))
        return lookup_backend("aot_eager")(gm, example_inputs)

    w = torch.tensor([1.0, 2.0], requires_grad=True)
    compiled = torch.compile(lambda x: (x * w).sin().sum(), backend=logging_backend)
    loss = compiled(torch.tensor([0.5, 0.25]))
    loss.backward()
    # d/dw sum(sin(x * w)) = x cos(x * w)
    x = torch.tensor([0.5, 0.25])
    torch.testing.assert_close(w.grad, x * torch.cos(x * torch.tensor([1.0, 2.0])))
    assert calls == [2]
    with pytest.raises(torch._dynamo.exc.InvalidBackend):
        lookup_backend("no_such_backend")


# -- symbolic sizes in factories ------------------------------------------------------------


def test_arange_of_a_symbolic_size_traces_through_aot_autograd(caplog):
    # a padding mask built from the sequence length (torch.arange(ids.shape[1])): with
    # dynamic shapes AOT autograd traces it symbolically instead of giving up on the graph
    import logging

    from torch._dynamo.testing import CompileCounterWithBackend
    from torch.fx.experimental.proxy_tensor import make_fx

    def masked_mean(h, lengths):
        mask = torch.arange(h.shape[1])[None, :] < lengths[:, None]
        return (h * mask[..., None]).sum(1) / lengths[:, None]

    counter = CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(masked_mean, backend=counter, dynamic=True)
    with caplog.at_level(logging.WARNING, logger="torch._functorch"):
        for steps in (3, 5, 4):
            h = torch.ones(2, steps, 3, requires_grad=True)
            lengths = torch.tensor([steps, 2])
            got = compiled(h, lengths)
            got.sum().backward()
            # row 0 averages every step, row 1 the first 2 of them
            torch.testing.assert_close(got, torch.ones(2, 3))
            want_grad = torch.zeros(2, steps, 3)
            want_grad[0] = 1.0 / steps
            want_grad[1, :2] = 0.5
            torch.testing.assert_close(h.grad, want_grad)
    assert not [r for r in caplog.records if "cannot trace" in r.getMessage()]
    assert counter.frame_count == 1
    gm = make_fx(lambda x: torch.arange(x.shape[0]) * x, tracing_mode="symbolic")(torch.ones(4))
    assert gm(torch.full((6,), 2.0)).tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert torch.arange(3).tolist() == [0, 1, 2] and torch.arange(0.5, 2).tolist() == [0.5, 1.5]


# -- torch._decomp and the stance's error -------------------------------------------------------


def test_get_decompositions_for_make_fx_and_registered_ones():
    from torch._decomp import get_decompositions, register_decomposition
    from torch.fx.experimental.proxy_tensor import make_fx

    aten = torch.ops.aten
    table = get_decompositions([aten.addmm])
    assert aten.addmm.default in table

    def f(bias, x, w):
        return torch.addmm(bias, x, w).relu()

    mine = {}

    @register_decomposition(aten.relu, mine)
    def relu_as_clamp(x):
        return torch.clamp_min(x, 0)

    assert mine[aten.relu.default] is relu_as_clamp
    bias, x, w = torch.tensor([1.0, -9.0]), torch.eye(2), torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    gm = make_fx(f, decomposition_table={**table, **mine})(bias, x, w)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert aten.addmm.default not in targets and aten.relu.default not in targets
    assert aten.mm.default in targets and aten.clamp_min.default in targets
    # bias + x @ w = [[2, -7], [4, -5]], clamped at 0
    assert gm(bias, x, w).tolist() == [[2.0, 0.0], [4.0, 0.0]]


def test_fail_on_recompile_says_what_pytorch_says():
    compiled = torch.compile(lambda x: x + 1, backend="eager")
    compiled(torch.ones(2))
    with torch.compiler.set_stance("fail_on_recompile"):
        with pytest.raises(RuntimeError, match=r"Detected recompile when torch\.compile stance "
                                               r"is 'fail_on_recompile'") as info:
            compiled(torch.ones(3, 3))
    assert "triggered by the following guard failure" in str(info.value)


# -- inference mode inside compiled code; torch._dynamo.optimize as PyTorch's tutorials call it


@pytest.mark.parametrize("backend", BACKENDS)
def test_inference_mode_inside_compiled_code_makes_inference_tensors(backend):
    @torch.inference_mode()
    def infer(x):
        return x * 2

    def block(x):
        with torch.inference_mode():
            y = x * 2
        return y, x * 3

    x = torch.ones(2, requires_grad=True)
    compiled_infer = torch.compile(infer, backend=backend)
    compiled_block = torch.compile(block, backend=backend)
    for _ in range(3):  # the later calls may replay the first one's graph
        assert compiled_infer(x).is_inference()
        inside, after = compiled_block(x)
        # as eager: made in the block, an inference tensor; after it, an ordinary one with grad
        assert inside.is_inference() and not inside.requires_grad
        assert not after.is_inference() and after.requires_grad
        assert inside.tolist() == [2.0, 2.0] and after.tolist() == [3.0, 3.0]


def test_dynamo_optimize_is_a_decorator_factory_taking_the_backend():
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()
    doubled = torch._dynamo.optimize(counter)(lambda x: x * 2)
    assert doubled(torch.ones(2)).tolist() == [2.0, 2.0] and counter.frame_count == 1

    @torch._dynamo.optimize("eager", nopython=True)
    def breaks(x):
        print("a graph break")
        return x

    with pytest.raises(torch._dynamo.exc.Unsupported):
        breaks(torch.ones(1))
    model = torch.nn.Linear(2, 1)
    optimized = torch._dynamo.optimize("eager")(model)
    assert isinstance(optimized, torch._dynamo.OptimizedModule)
    assert optimized._orig_mod is model
    assert torch._dynamo.optimize("eager", disable=True)(model) is model
    with pytest.raises(torch._dynamo.exc.InvalidBackend):
        torch._dynamo.optimize("no_such_backend")


# -- make_fx of functions taking structured arguments -------------------------------------------


def test_make_fx_graph_takes_a_dict_of_parameters_as_traced():
    import copy
    import pickle

    from torch.fx.experimental.proxy_tensor import make_fx

    def sgd_step(params, x, y):
        loss = ((x @ params["w"] + params["b"] - y) ** 2).sum()
        grads = torch.autograd.grad(loss, list(params.values()))
        return {k: p - 0.5 * g for (k, p), g in zip(params.items(), grads)}

    def leaves(x):
        return {k: v.detach().requires_grad_() for k, v in x.items()}

    params = {"w": torch.tensor([[1.0], [2.0]]), "b": torch.tensor([0.5])}
    x, y = torch.tensor([[1.0, 1.0]]), torch.tensor([[3.0]])
    gm = make_fx(sgd_step)(leaves(params), x, y)
    # residual r = 1 + 2 + 0.5 - 3 = 0.5: dw = 2 r x^T = [[1], [1]], db = 2 r = [1]
    for traced in (gm, pickle.loads(pickle.dumps(gm)), copy.deepcopy(gm)):
        new = traced(leaves(params), x, y)
        torch.testing.assert_close(new["w"], torch.tensor([[0.5], [1.5]]))
        torch.testing.assert_close(new["b"], torch.tensor([0.0]))
    with pytest.raises(TypeError, match="structured"):
        gm([params["w"], params["b"]], x, y)


# -- torch.fx.passes.split_module, as pipeline libraries cut a model ----------------------------


def test_split_module_cuts_a_traced_model_into_stages():
    import torch.fx as fx
    from torch.fx.passes.split_module import split_module

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = nn.Linear(2, 2)
            self.second = nn.Linear(2, 2)
            self.scale = nn.Parameter(torch.tensor([2.0, 3.0]))

        def forward(self, x, y):
            h = self.first(x) * self.scale
            g = torch.relu(h) + y
            return (self.second(g) + h).sum(), g  # h is read by two later stages

    torch.manual_seed(0)
    model = Model()
    stage = {"now": 0}

    def stage_of(node):
        if node.op == "call_module" and node.target == "second":
            stage["now"] = 2
        elif node.target is torch.relu:
            stage["now"] = 1
        return stage["now"]

    names = {}
    split = split_module(fx.symbolic_trace(model), model, stage_of, names)
    assert [name for name, _ in split.named_children()] == ["submod_0", "submod_1", "submod_2"]
    assert names == {"submod_0.first": "first", "submod_2.second": "second"}
    calls = [n.target for n in split.graph.nodes if n.op == "call_module"]
    assert calls == ["submod_0", "submod_1", "submod_2"]
    x, y = torch.tensor([[1.0, -1.0]]), torch.tensor([[0.5, 0.5]])
    got_sum, got_g = split(x, y)
    h = model.first(x) * model.scale
    g = torch.relu(h) + y
    torch.testing.assert_close(got_g, g)
    torch.testing.assert_close(got_sum, (model.second(g) + h).sum())


# -- dynamic-shape marks --------------------------------------------------------------------------


@pytest.mark.parametrize("mark, dynamic, graphs", [
    (None, None, 2),  # static, then automatic dynamic
    ("mark_static", None, 4),  # one graph per size, as PyTorch
    ("mark_static", True, 4),
    ("maybe_mark_dynamic", None, 1),  # dynamic from the first graph
    ("mark_dynamic", None, 1),
])
def test_dynamic_marks_decide_how_often_a_batch_size_compiles(mark, dynamic, graphs):
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()
    compiled = torch.compile(lambda x: (x * 2).sum(0), backend=counter, dynamic=dynamic)
    for rows in (2, 3, 4, 5):
        x = torch.ones(rows, 3)
        if mark is not None:
            getattr(torch._dynamo, mark)(x, 0)
        assert compiled(x).tolist() == [2.0 * rows] * 3
    assert counter.frame_count == graphs


def test_statically_known_true_of_an_expression_compared_with_itself():
    from torch.fx.experimental import symbolic_shapes
    from torch.fx.experimental.proxy_tensor import make_fx

    sizes = []

    def f(x):
        sizes.append(x.shape[0])
        return x * 2

    make_fx(f, tracing_mode="symbolic")(torch.ones(3))
    n = sizes[0]
    assert isinstance(n, torch.SymInt)
    assert symbolic_shapes.statically_known_true(n == n)
    assert symbolic_shapes.statically_known_true(n <= n)
    assert not symbolic_shapes.statically_known_true(n == 3)  # true here, not for every n
    assert symbolic_shapes.definitely_false(n != n) and not symbolic_shapes.definitely_false(n == 3)


def test_recompile_reason_names_the_constant_that_changed():
    # cache[:, pos] = value with a new pos each step: one graph per position, as in
    # PyTorch (an index is not made symbolic); the log says which constant changed
    from torch._dynamo.testing import CompileCounter

    def write(cache, value, pos):
        cache[:, pos] = value
        return cache.sum(1)

    counter = CompileCounter()
    compiled = torch.compile(write, backend=counter)
    with _Collect("torch._dynamo.recompiles") as log:
        for pos in range(3):
            got = compiled(torch.zeros(2, 4), torch.ones(2), pos)
            assert got.tolist() == [1.0, 1.0]
    assert counter.frame_count == 3
    assert any("constant argument of graph op 0 (__setitem__): expected 1, got 2" in m
               for m in log.messages)


# -- Python operators in captured graphs ---------------------------------------------------------


def test_python_operators_are_operator_functions_in_the_graph_a_backend_sees():
    import operator

    seen = []

    def mul_to_add(gm, example_inputs):
        # a transform as tutorials write one: it matches PyTorch's operator.mul targets
        seen.append([n.target for n in gm.graph.nodes if n.op == "call_function"])
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target is operator.mul:
                node.target = operator.add
        gm.recompile()
        return gm.forward

    def f(x, y):
        return (x * y - 1, 2 * x, -x[1:], x @ y)

    compiled = torch.compile(f, backend=mul_to_add)
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    for _ in range(3):  # later calls replay the transformed graph
        product, twice, negated, dot = compiled(x, y)
        assert product.tolist() == [3.0, 5.0]  # (x + y) - 1
        assert twice.tolist() == [3.0, 4.0]  # 2 + x
        assert negated.tolist() == [-2.0] and dot.item() == 11.0
    assert seen == [[operator.mul, operator.sub, operator.mul, operator.getitem,
                     operator.neg, operator.matmul]]
    explained = torch._dynamo.explain(f)(x, y)
    assert explained.ops_per_graph == seen


def test_a_backend_reading_the_graph_sees_names_and_shapes():
    seen = []

    def readable_backend(gm, example_inputs):
        seen.append(gm.print_readable(print_output=False))
        return gm.forward

    model = nn.Linear(3, 2)
    offset = torch.ones(2)

    def f(x):
        return model(x).relu() + offset

    torch.compile(f, backend=readable_backend)(torch.ones(4, 3))
    text = seen[0]
    # placeholders named after the globals read (model's parameters, offset), every value
    # annotated with its dtype and shape, as PyTorch prints a captured graph
    assert 'l_x_: "f32[4, 3]"' in text and 'l_model_weight_: "f32[2, 3]"' in text
    assert 'l_offset_: "f32[2]"' in text
    assert 'relu: "f32[4, 2]"' in text and 'add: "f32[4, 2]"' in text


def test_mode_lite_of_pytorch_2_13_is_accepted():
    compiled = torch.compile(lambda x: x.relu() * 2, mode="lite")
    assert compiled(torch.tensor([-1.0, 3.0])).tolist() == [0.0, 6.0]
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        torch.compile(lambda x: x, mode="no-such-mode")


def test_explain_break_reasons_are_graph_compile_reasons():
    def f(x):
        y = x.sin()
        print("a break")
        return y * 2

    explained = torch._dynamo.explain(f)(torch.zeros(2))
    (reason,) = explained.break_reasons
    assert type(reason).__name__ == "GraphCompileReason" and reason.graph_break
    assert "print" in reason.reason and 'print("a break")' in reason.user_stack


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_size_arguments_become_inputs_after_they_change(backend):
    # x.view(n, -1), torch.zeros(n), x.narrow(0, 0, n), t.repeat(n, 1) with a new n each
    # call: PyTorch makes n symbolic after its second value, one recompile
    from torch._dynamo.testing import CompileCounterWithBackend

    def f(x, n):
        return (x.view(n, -1).sum(1) * 2, torch.zeros(n) + 1, x.narrow(0, 0, n).exp(),
                x[:n].repeat(n, 1).sum(0))

    counter = CompileCounterWithBackend(backend)
    compiled = torch.compile(f, backend=counter)
    x = torch.arange(12.0, requires_grad=True)
    for n in (2, 3, 4, 6, 2):
        got = compiled(x, n)
        sum(g.sum() for g in got).backward()
        got_grad, x.grad = x.grad, None
        want = f(x, n)
        sum(w.sum() for w in want).backward()
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w)
        torch.testing.assert_close(got_grad, x.grad)
        x.grad = None
    assert counter.frame_count == 2
