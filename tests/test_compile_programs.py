"""torch.compile on programs written for PyTorch: each test is a small program as users write
it (grad-mode blocks, autocast, generate loops with a growing cache, numpy values...), run
compiled and compared with the same code run eagerly or with math done by hand."""

from __future__ import annotations

import logging
import math
import warnings

import numpy as np
import pytest

import torch
import torch._dynamo
from torch import nn

BACKENDS = ["eager", "aot_eager", "inductor"]


@pytest.fixture(autouse=True)
def _fresh_caches():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


# -- grad mode inside a compiled function ------------------------------------------------------


def _no_grad_block(x, w):
    with torch.no_grad():
        scale = (x * w).sum()
    return x * w * scale, scale


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_grad_block_inside_keeps_each_regions_grad_mode(backend):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y, scale = torch.compile(_no_grad_block, backend=backend)(x, w)
    # as eager: the value made under no_grad has no gradient, the one after it has
    assert not scale.requires_grad and y.requires_grad
    y.sum().backward()
    # scale = 14 is a constant for autograd: d/dx sum(x * w * 14) = 14 w
    torch.testing.assert_close(x.grad, torch.tensor([14.0, 28.0, 42.0]))
    torch.testing.assert_close(w.grad, torch.tensor([14.0, 28.0, 42.0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_enable_grad_block_inside_no_grad_caller(backend):
    def f(x):
        with torch.enable_grad():
            inside = x * 3
        return inside, x * 2

    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        inside, outside = torch.compile(f, backend=backend)(x)
    assert inside.requires_grad and not outside.requires_grad
    inside.sum().backward()
    torch.testing.assert_close(x.grad, torch.full((2,), 3.0))


# -- autocast ------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_autocast_block_ends_inside_compiled_function(backend):
    def f(a, b):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            inside = a @ b
            total = inside.float().sum()
        after = a @ b
        return inside, total, after, after.dtype

    a, b = torch.ones(4, 4), torch.ones(4, 4)
    inside, total, after, after_dtype = torch.compile(f, backend=backend)(a, b)
    # the same matmul signature seen inside and after the block: each keeps its own dtype
    assert inside.dtype == torch.bfloat16
    assert after.dtype == torch.float32 and after_dtype == torch.float32
    assert total.item() == 64.0
    torch.testing.assert_close(after, torch.full((4, 4), 4.0))


# -- a generate loop with a growing key/value cache ------------------------------------------------


class _CachedAttention(nn.Module):
    def __init__(self, width: int = 8, vocab: int = 11) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.qkv = nn.Linear(width, 3 * width)
        self.head = nn.Linear(width, vocab)
        self.width = width

    def forward(self, ids, past=None):
        h = self.embed(ids)
        q, k, v = self.qkv(h).split(self.width, dim=-1)
        if past is not None:  # the cache grows by one position per call
            k = torch.cat([past[0], k], dim=1)
            v = torch.cat([past[1], v], dim=1)
        att = (q @ k.transpose(-1, -2) / math.sqrt(self.width)).softmax(-1)
        return self.head(h + att @ v), (k, v)


def _generate(model, ids, steps):
    past, current = None, ids
    for _ in range(steps):
        logits, past = model(current, past)
        current = logits[:, -1:].argmax(-1)
        ids = torch.cat([ids, current], 1)
    return ids


@pytest.mark.parametrize("backend", BACKENDS)
def test_generate_loop_with_growing_cache(backend):
    # after the first size change the cache's length is symbolic: the aten graph then holds
    # Python arithmetic on sizes (length + 1), which the code generator must take
    torch.manual_seed(0)
    model = _CachedAttention().eval()
    ids = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        expected = _generate(model, ids, 6)
        got = _generate(torch.compile(model, backend=backend), ids, 6)
    torch.testing.assert_close(got, expected)


# -- numpy values back in tensor arithmetic ---------------------------------------------------


def test_numpy_scalars_in_tensor_arithmetic():
    x = torch.arange(3.0)
    # numpy scalars are numbers to torch's operators, on either side, as in PyTorch
    for result, expected in [
        (x * np.float32(3), [0.0, 3.0, 6.0]),
        (np.float32(2) * x, [0.0, 2.0, 4.0]),
        (x - np.int64(1), [-1.0, 0.0, 1.0]),
        (np.float32(1) - x, [1.0, 0.0, -1.0]),
        (x / np.float32(2), [0.0, 0.5, 1.0]),
    ]:
        assert isinstance(result, torch.Tensor) and result.dtype == torch.float32
        assert result.tolist() == expected
    assert (x > np.float32(1)).tolist() == [False, False, True]


def test_disabled_helper_returning_numpy_scalar():
    log = []

    @torch.compiler.disable
    def total(x):
        log.append(torch.compiler.is_compiling())
        return x.numpy().sum()  # a numpy float32

    @torch.compile
    def f(x):
        return x * total(x)

    result = f(torch.arange(3.0))
    assert isinstance(result, torch.Tensor)
    assert result.tolist() == [0.0, 3.0, 6.0]
    assert log == [False]


# -- print, explain and fullgraph --------------------------------------------------------------


def _toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    print("woo")
    if b.sum() < 0:
        b = b * -1
    return x * b


def test_explain_counts_print_and_data_branch_as_breaks(capsys):
    # the example of PyTorch's explain documentation: 3 graphs, 2 breaks
    explained = torch._dynamo.explain(_toy_example)(torch.ones(4), -torch.ones(4))
    assert explained.graph_count == 3
    assert explained.graph_break_count == 2
    assert len(explained.break_reasons) == 2
    assert "print" in explained.break_reasons[0].reason
    assert capsys.readouterr().out.count("woo") == 1


def test_print_output_and_values_follow_eager_order(capsys):
    seen = []

    def f(x):
        y = x * 2
        print("between")
        return y + 1

    model = nn.Identity()
    model.register_forward_hook(lambda *_: seen.append("hook"))
    result = torch.compile(f)(model(torch.ones(2)))
    assert result.tolist() == [3.0, 3.0]
    assert capsys.readouterr().out == "between\n" and seen == ["hook"]


def test_fullgraph_refuses_print_with_its_line():
    @torch.compile(fullgraph=True)
    def f(x):
        print("hello")
        return x * 2

    with pytest.raises(torch._dynamo.exc.Unsupported, match="print"):
        f(torch.ones(2))


# -- backends registered at run time --------------------------------------------------------------


def test_register_backend_by_decorator_and_name():
    from torch._dynamo import register_backend

    graphs = []

    @register_backend(name="h2_counting_backend", tags=("debug",))
    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    try:
        f = torch.compile(lambda x: (x - 1) * 2, backend="h2_counting_backend")
        assert f(torch.ones(2)).tolist() == [0.0, 0.0]
        assert len(graphs) == 1 and isinstance(graphs[0], torch.fx.GraphModule)
        assert "h2_counting_backend" in torch._dynamo.list_backends()
        assert "h2_counting_backend" not in torch._dynamo.list_backends(exclude_tags=("debug",))
        assert "inductor" in torch._dynamo.list_backends(exclude_tags=("debug",))
        with pytest.raises(ValueError, match="duplicate"):
            register_backend(counting, name="h2_counting_backend")
    finally:
        from torch._dynamo.backends import registry

        registry._REGISTERED.pop("h2_counting_backend", None)


# -- structured values -----------------------------------------------------------------------------


def test_namedtuple_in_and_out():
    from collections import namedtuple

    Pair = namedtuple("Pair", ["first", "second"])

    @torch.compile
    def f(pair, scale):
        return Pair(pair.first + pair.second, pair.second * scale), {"k": [pair.first, 3]}

    for _ in range(3):  # the later calls may replay: the class's field getters are state
        result, extra = f(Pair(torch.ones(2), torch.full((2,), 2.0)), 3.0)
        assert type(result) is Pair
        assert result.first.tolist() == [3.0, 3.0] and result.second.tolist() == [6.0, 6.0]
        assert extra["k"][0].tolist() == [1.0, 1.0] and extra["k"][1] == 3


# -- Python numbers that change between calls ----------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_changing_numbers_compile_once_more_not_per_value(backend):
    from torch._dynamo.testing import CompileCounterWithBackend

    counter = CompileCounterWithBackend(backend)

    def f(x, step, scale):
        return (x * step + 1) / scale - step, torch.mul(x, scale)

    compiled = torch.compile(f, backend=counter)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no recompile-limit warning
        for step in range(1, 12):
            scale = 0.1 * step
            for x in (torch.arange(4.0), torch.arange(4), torch.arange(4.0).double() / 3):
                got, want = compiled(x, step, scale), f(x, step, scale)
                for g, w in zip(got, want):
                    assert g.dtype == w.dtype
                    torch.testing.assert_close(g, w, rtol=0, atol=0)
    # per input dtype: one graph for the first numbers, one with the numbers as inputs
    assert counter.frame_count == 6


@pytest.mark.parametrize("backend", BACKENDS)
def test_changing_float_attribute_of_a_module_with_gradients(backend):
    from torch._dynamo.testing import CompileCounterWithBackend

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))
            self.temperature = 1.0

        def forward(self, x):
            return (x * self.weight / self.temperature).sum()

    counter = CompileCounterWithBackend(backend)
    model = Scaled()
    compiled = torch.compile(model, backend=counter)
    x = torch.tensor([1.0, 1.0, 2.0])
    for temperature in (1.0, 2.0, 4.0, 0.5):
        model.temperature = temperature
        model.weight.grad = None
        loss = compiled(x)
        loss.backward()
        # d/dw sum(x * w / t) = x / t
        torch.testing.assert_close(model.weight.grad, x / temperature)
        torch.testing.assert_close(loss, (x * model.weight).sum().detach() / temperature)
    assert counter.frame_count == 2


def test_number_used_as_a_size_still_recompiles_correctly():
    def f(x, n):
        return x.view(n, -1) * n

    compiled = torch.compile(f, backend="eager")
    x = torch.arange(12.0)
    for n in (2, 3, 4, 6):
        torch.testing.assert_close(compiled(x, n), f(x, n))


def test_size_read_as_a_number_and_changing_batch_compile_twice():
    # x.shape[0] changes with the batch: the size and the number it became both generalise
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()

    @torch.compile(backend=counter)
    def f(x):
        return (x * 2).sum(0) + x.shape[0]

    for batch in (2, 3, 4, 5, 6):
        assert f(torch.ones(batch, 3)).tolist() == [3.0 * batch] * 3
    assert counter.frame_count == 2


# -- torch.cond, and names reached from a bare `import torch` -----------------------------------


def test_cond_eager_and_in_a_full_graph_with_gradients():
    def branches(x):
        return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos() * 2, (x,))

    positive = torch.tensor([0.5, 1.0])
    assert torch.cond(True, lambda t: t + 1, lambda t: t - 1, (positive,)).tolist() == [1.5, 2.0]
    torch.testing.assert_close(branches(-positive), positive.cos() * 2)
    compiled = torch.compile(branches, backend="aot_eager", fullgraph=True)
    for x, value, grad in ((positive, positive.sin(), positive.cos()),
                           (-positive, positive.cos() * 2, positive.sin() * 2)):
        x = x.clone().requires_grad_()
        y = compiled(x)
        y.sum().backward()
        torch.testing.assert_close(y, value)
        # d/dx cos(x) * 2 = -2 sin(x), at -p: 2 sin(p)
        torch.testing.assert_close(x.grad, grad)
    with pytest.raises(RuntimeError, match="same metadata"):
        torch.compile(lambda x: torch.cond(x.sum() > 0, lambda t: t, lambda t: t[:1], (x,)),
                      backend="eager")(positive)


def test_inductor_config_and_logging_reachable_from_import_torch():
    import subprocess
    import sys

    code = ("import torch\n"
            "torch._inductor.config.cpp_codegen = True\n"
            "torch._logging.set_logs(recompiles=True)\n"
            "print(torch.cond.__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "cond"


def test_backward_twice_through_a_compiled_graph_says_why():
    compiled = torch.compile(lambda x: (x * x).sum(), backend="aot_eager")
    x = torch.ones(2, requires_grad=True)
    loss = compiled(x)
    loss.backward(retain_graph=True)
    torch.testing.assert_close(x.grad, torch.full((2,), 2.0))
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


# -- settings programs write -------------------------------------------------------------------


def test_fullgraph_allows_item_and_nonzero_as_pytorch_captures_them():
    # PyTorch 2.13 captures .item(), int(), numpy() and ops of data-dependent output size
    # under fullgraph=True whatever config.capture_scalar_outputs says; tolist() of floats
    # and a branch on a tensor stay errors
    def scaled(x):
        return x * x.sum().item() + int(x.max())

    def masked(x):
        return torch.nonzero(x), x[x > 0] * 2

    x = torch.tensor([0.0, 1.0, 2.0])
    for fn in (scaled, masked):
        for setting in (False, True):
            torch._dynamo.reset()
            with torch._dynamo.config.patch("capture_scalar_outputs", setting):
                got = torch.compile(fn, fullgraph=True, backend="eager")(x)
            want = fn(x)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                torch.testing.assert_close(g, w)
    for refused in (lambda t: torch.tensor((t * 2).tolist()),
                    lambda t: t * 2 if t.sum() > 0 else t):
        torch._dynamo.reset()
        with pytest.raises(torch._dynamo.exc.Unsupported):
            torch.compile(refused, fullgraph=True, backend="eager")(x)


def test_inductor_settings_that_programs_write():
    import torch._inductor.config as inductor_config

    inductor_config.coordinate_descent_tuning = True
    inductor_config.triton.unique_kernel_names = True
    inductor_config.fx_graph_cache = True
    try:
        with inductor_config.patch({"triton.cudagraphs": True, "max_autotune": True}):
            assert inductor_config.triton.cudagraphs and inductor_config.max_autotune
            got = torch.compile(lambda x: x.relu() + 1)(torch.tensor([-1.0, 2.0]))
        assert not inductor_config.triton.cudagraphs and not inductor_config.max_autotune
        assert got.tolist() == [1.0, 3.0]
        with pytest.raises(AttributeError, match="no option"):
            inductor_config.patch(no_such_setting=1).__enter__()
    finally:
        inductor_config.coordinate_descent_tuning = False
        inductor_config.triton.unique_kernel_names = False


def test_program_backend_gets_real_example_inputs_and_may_run_them():
    seen = []

    def benchmarking_backend(gm, example_inputs):
        # as PyTorch gives them: the real inputs, which a backend may run the graph on
        seen.append([type(t) for t in example_inputs])
        reference = gm(*example_inputs)
        seen.append([r.tolist() for r in reference])
        return gm.forward

    weight = nn.Parameter(torch.tensor([1.0, -1.0]))

    @torch.compile(backend=benchmarking_backend)
    def f(x):
        return (x * weight).relu()

    assert f(torch.tensor([2.0, 3.0])).tolist() == [2.0, 0.0]
    assert seen[0] == [torch.Tensor, nn.Parameter] and seen[1] == [[2.0, 0.0]]


def test_backend_forwarding_to_a_builtin_keeps_dynamic_sizes_right():
    from torch._dynamo.testing import CompileCounterWithBackend

    counter = CompileCounterWithBackend("aot_eager")

    def f(x, w):
        return (x @ w).relu().softmax(0) + x.mean(0, keepdim=True).expand_as(x)

    compiled = torch.compile(f, backend=counter)
    w = torch.ones(3, 3, requires_grad=True)
    for rows in (3, 4, 5, 6):
        x = torch.arange(rows * 3.0).reshape(rows, 3) / 10
        torch.testing.assert_close(compiled(x, w), f(x, w))
    assert counter.frame_count == 2  # static, then symbolic rows


def test_recompile_limit_is_logged_as_well_as_warned(caplog):
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()

    @torch.compile(backend=counter, dynamic=False)
    def f(x):
        return x.sin() * 2

    with torch._dynamo.config.patch(recompile_limit=3), caplog.at_level(logging.WARNING):
        with pytest.warns(UserWarning, match=r"recompile_limit \(3\)"):
            for size in range(1, 8):
                torch.testing.assert_close(f(torch.ones(size)), torch.ones(size).sin() * 2)
    assert counter.frame_count == 3
    records = [r for r in caplog.records if "recompile_limit" in r.getMessage()]
    assert len(records) == 1 and records[0].name.startswith("torch._dynamo")
    assert "size()[0]" in records[0].getMessage()


def test_explain_op_count_of_pytorchs_example(capsys):
    explained = torch._dynamo.explain(_toy_example)(torch.ones(4), -torch.ones(4))
    # abs, + and / | < | * and * (sum() is a Tensor method, not counted, as in PyTorch)
    assert [len(ops) for ops in explained.ops_per_graph] == [3, 1, 2]
    assert explained.op_count == 6


def test_marked_dynamic_size_used_as_a_number_compiles_once():
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()

    @torch.compile(backend=counter)
    def f(x):
        return x.relu() * x.size(0)

    for rows in (4, 5, 6, 7):
        x = torch.arange(rows * 3.0).reshape(rows, 3) - 4
        torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(f(x), x.relu() * rows)
    assert counter.frame_count == 1


# -- sizes that flow into size arguments --------------------------------------------------------


class _FlattenNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.head = nn.Linear(2 * 4 * 4, 3)

    def forward(self, x):
        return self.head(self.conv(x).relu().view(x.size(0), -1))


class _CausalAttention(nn.Module):
    def __init__(self, width: int = 12, heads: int = 3):
        super().__init__()
        self.qkv = nn.Linear(width, 3 * width)
        self.heads = heads
        self.register_buffer("causal", torch.tril(torch.ones(32, 32)).view(1, 1, 32, 32))

    def forward(self, x):
        batch, steps, width = x.size()
        q, k, v = self.qkv(x).split(width, dim=2)
        q, k, v = (t.view(batch, steps, self.heads, width // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(width // self.heads)
        att = att.masked_fill(self.causal[:, :, :steps, :steps] == 0, float("-inf"))
        return (att.softmax(-1) @ v).transpose(1, 2).contiguous().view(batch, steps, width)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("model_type, shapes", [
    (_FlattenNet, [(2, 1, 6, 6), (3, 1, 6, 6), (5, 1, 6, 6), (7, 1, 6, 6)]),
    (_CausalAttention, [(2, 5, 12), (2, 7, 12), (2, 9, 12), (2, 6, 12)]),
])
def test_view_and_slice_sizes_follow_a_changing_dim(backend, model_type, shapes):
    # x.view(x.size(0), -1), view(batch, steps, ...) and mask[:steps, :steps]: the size
    # arguments are the input's sizes in the graph, not one graph per size
    from torch._dynamo.testing import CompileCounterWithBackend

    torch.manual_seed(0)
    model = model_type()
    counter = CompileCounterWithBackend(backend)
    compiled = torch.compile(model, backend=counter)
    for shape in shapes:
        x = torch.randn(*shape, requires_grad=True)
        got = compiled(x)
        got.sum().backward()
        got_grads = [x.grad] + [p.grad for p in model.parameters()]
        x.grad = None
        model.zero_grad()
        want = model(x)
        want.sum().backward()
        torch.testing.assert_close(got, want)
        for g, w in zip(got_grads, [x.grad] + [p.grad for p in model.parameters()]):
            torch.testing.assert_close(g, w)
        x.grad = None
        model.zero_grad()
    assert counter.frame_count == 2  # static, then the changing dim symbolic
