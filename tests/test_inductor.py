"""torch._inductor: fused kernel groups (C++ and the fused interpreter) against eager results."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest

import torch
import torch.nn.functional as F
from torch._inductor import config, cpp_builder
from torch._inductor.compile_fx import compile_fx, compile_fx_inner
from torch.fx.experimental.proxy_tensor import make_fx
from torch.testing import _opdb as opdb
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


@pytest.fixture(scope="session")
def kernel_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One cache directory for the session: equal kernels are built once."""
    return str(tmp_path_factory.mktemp("inductor-cache"))


@pytest.fixture(autouse=True)
def _settings(kernel_cache: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "cache_dir", kernel_cache)
    monkeypatch.setattr(config, "compile_in_background", False)
    monkeypatch.setattr(config, "cxx", "g++")
    # these tests are about generated kernels: single operators too (by default a lone
    # operator stays a library call, tests/test_inductor_schedule.py)
    monkeypatch.setattr(config, "cpu_single_op_groups", True)


def _compile(fn, *inputs, mode: str = "real"):
    gm = make_fx(fn, tracing_mode=mode)(*inputs)
    return gm, compile_fx(gm, list(inputs))


def _results(out):
    return out if isinstance(out, (tuple, list)) else (out,)


def _check(fn, *inputs, compiled_calls: bool = True, exact: bool = False):
    """Compile ``fn``, run it on ``inputs`` and compare every result with eager's."""
    _, compiled = _compile(fn, *inputs)
    got, expected = _results(compiled(*inputs)), _results(fn(*inputs))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        if exact or not e.dtype.is_floating_point:
            assert torch.equal(g, e), (g, e)
        else:
            torch.testing.assert_close(g, e, equal_nan=True)
    if compiled_calls:
        assert compiled.groups and all(r.calls["compiled"] == 1 for r in compiled.groups)
    return compiled



@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_times_a_value_is_one_kernel(approximate: str) -> None:
    # the backward's gelu_backward and the product after it, in one group
    grad, x, y = torch.randn(2000), torch.linspace(-6, 6, 2000), torch.randn(2000)
    compiled = _check(lambda g, x, y: aten.gelu_backward(g, x, approximate=approximate) * y,
                      grad, x, y)
    assert len(compiled.groups) == 1 and len(compiled.groups[0].group.members) == 2
    # against the derivative written here (math.erf / math.tanh)
    import math

    out = compiled(grad, x, y)
    for i in range(0, 2000, 131):
        a, g = x[i].item(), grad[i].item() * y[i].item()
        if approximate == "tanh":
            k = math.sqrt(2 / math.pi)
            th = math.tanh(k * (a + 0.044715 * a ** 3))
            want = 0.5 * (1 + th) + 0.5 * a * (1 - th * th) * k * (1 + 3 * 0.044715 * a * a)
        else:
            want = 0.5 * (1 + math.erf(a / math.sqrt(2))) + \
                a * math.exp(-a * a / 2) / math.sqrt(2 * math.pi)
        assert abs(out[i].item() - g * want) < 1e-5 * max(1.0, abs(g * want))

def test_gelu_chain_is_one_kernel_matching_the_formula() -> None:
    x, y, z = torch.randn(1000), torch.randn(1000), torch.randn(1000)
    compiled = _check(lambda x, y, z: F.gelu(x) * y + z, x, y, z)
    assert len(compiled.groups) == 1 and len(compiled.groups[0].group.members) == 3
    # Also against the formula, element by element (erf from Python's math).
    import math

    out = compiled(x, y, z)
    for i in range(0, 1000, 97):
        a = x[i].item()
        want = 0.5 * a * (1 + math.erf(a / math.sqrt(2))) * y[i].item() + z[i].item()
        assert abs(out[i].item() - want) < 1e-5


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_floating_chains(dtype: torch.dtype) -> None:
    x = torch.randn(7, 33, dtype=dtype)
    y = torch.rand(7, 33, dtype=dtype) + 0.5

    def f(x, y):
        a = torch.exp(x) * torch.sigmoid(y) - torch.tanh(x) / y
        b = torch.sqrt(y) + torch.log(y) + torch.rsqrt(y) + torch.sin(x) * torch.cos(x)
        return a, torch.maximum(a, b), torch.minimum(a, -b), torch.where(x > 0, a, b), F.silu(b)

    _check(f, x, y)


def test_integer_and_bool_chains() -> None:
    a = torch.randint(-50, 50, (5, 6))
    b = torch.randint(1, 9, (5, 6), dtype=torch.int32)

    def f(a, b):
        c = a * b + 3 - a.abs()
        return c, torch.maximum(c, a), c > 7, (c == a) | (b < 4), torch.where(a < 0, -a, b)

    _check(f, a, b)
    m, n = torch.rand(4, 5) > 0.5, torch.rand(4, 5) > 0.5
    _check(lambda m, n: (torch.logical_and(m, ~n), torch.logical_or(m, n) == m), m, n)


def test_broadcasting_strided_and_transposed_inputs() -> None:
    x = torch.randn(6, 5).t()  # a transposed graph input
    row, col = torch.randn(6), torch.randn(5, 1)
    _check(lambda x, r, c: torch.relu(x * r + c) - 1, x, row, col)
    base = torch.randn(8, 10)
    strided = base[::2, 1::3]  # non-contiguous slices
    _check(lambda s: (s * s).exp() + s, strided)
    # A view inside the graph is read through its strides (folded into the index math).
    _check(lambda a, b: a.t() * 2 + b, torch.randn(4, 3), torch.randn(3, 4))


def test_python_scalars_and_clamps() -> None:
    x = torch.randn(50) * 3

    def f(x):
        return (x * 2.5 + 1, torch.clamp(x, -0.5, 0.5), torch.clamp(x, min=0.0), x.pow(2),
                F.leaky_relu(x, 0.2), x.to(torch.float64) / 3, (x * 1e30 * 1e30).clamp(max=1.0))

    _check(f, x)


def test_zero_dim_and_empty_tensors() -> None:
    _check(lambda a, b: a * b + 1, torch.tensor(2.0), torch.tensor(-3.0))
    _, compiled = _compile(lambda a: a.exp() + 1, torch.randn(3, 4))
    out = compiled(torch.randn(0, 4))
    assert out.shape == (0, 4)


def test_reductions_with_prologue_and_keepdim() -> None:
    x = torch.randn(6, 7, 8)
    _check(lambda x: (x * x + 1).sum(dim=(0, 2), keepdim=True), x)
    _check(lambda x: ((x - 1).exp().mean(dim=1), x.abs().amax(-1), x.sum()), x)


def test_last_dim_reductions_fused_with_their_prologue() -> None:
    def f(x):
        return ((x * 2).sum(-1), (x + 1).amax(-1, keepdim=True), (x - 1).amin(dim=[-1]))

    x = torch.randn(5, 4, 7)
    x[1, 2, 3] = float("nan")  # a NaN wins max and min, as in eager
    compiled = _check(f, x)
    assert [r.group.reduction.target for r in compiled.groups] == [
        aten.sum.dim_IntList, aten.amax.default, aten.amin.default]
    # A transposed input (strided rows) and empty rows (the identity rules of the library).
    xt = torch.randn(7, 3).t()
    for got, want in zip(compiled(xt), f(xt)):
        torch.testing.assert_close(got, want)
    empty = torch.randn(3, 0)
    with pytest.raises(IndexError, match="non-zero size"):
        compiled(empty)  # amax of an empty row raises, as in eager
    _, sums = _compile(lambda x: (x * 2).sum(-1), torch.randn(2, 5))
    assert sums(empty).tolist() == [0.0, 0.0, 0.0]
    assert torch.isnan(compiled(x)[1][1, 2]).item()


def test_softmax_like_graph_groups() -> None:
    x = torch.randn(16, 32)

    def softmax(x):
        shifted = x - x.amax(dim=-1, keepdim=True)
        e = shifted.exp()
        return e / e.sum(dim=-1, keepdim=True)

    compiled = _check(softmax, x)
    # (sub, exp) is one group that also sums its rows, div another; amax is a library call.
    assert [len(r.group.members) for r in compiled.groups] == [2, 1]
    assert compiled.groups[0].group.reduction.target == aten.sum.dim_IntList
    _check(lambda x: torch.softmax(x * 2, dim=-1) + 1, x)


def test_unsupported_ops_fall_back_to_library_calls() -> None:
    a, b = torch.randn(4, 5), torch.randn(5, 3)

    def f(a, b):
        m = torch.relu(a @ b) + 1
        values, _ = torch.sort(m, dim=1)
        return values * 2, torch.cumsum(m, 0)

    compiled = _check(f, a, b)
    library = [s.target for s in compiled.schedule.steps if not hasattr(s, "members")]
    # matmul is written in mm (CompositeImplicitAutograd): the traced graph holds mm, as
    # PyTorch's make_fx graph does
    assert aten.mm.default in library and aten.sort.default in library


def test_interpreter_without_compiler_gives_eager_results(monkeypatch) -> None:
    monkeypatch.setattr(config, "cxx", "/nonexistent/c++")
    monkeypatch.setattr(config, "interpreter_block", 64)  # many blocks, broadcasting inside
    cpp_builder.clear()
    before = cpp_builder.counters["builds"]
    x, row = torch.randn(40, 9), torch.randn(9)
    compiled = _check(lambda x, r: (F.gelu(x) * r + x.exp(), x > r), x, row,
                      compiled_calls=False, exact=True)
    assert compiled.groups[0].calls == {"interpreted": 1, "compiled": 0, "vendor": 0}
    assert cpp_builder.counters["builds"] == before
    cpp_builder.clear()


def test_codegen_off_interprets(monkeypatch) -> None:
    monkeypatch.setattr(config, "cpp_codegen", False)
    compiled = _check(lambda x: x.sin() * 2, torch.randn(10), compiled_calls=False, exact=True)
    assert compiled.groups[0].calls["interpreted"] == 1


def test_background_build_serves_first_calls_by_interpreter(monkeypatch) -> None:
    monkeypatch.setattr(config, "compile_in_background", True)
    release = threading.Event()
    original = cpp_builder.run_compiler

    def held_back(command):
        release.wait(60)
        return original(command)

    monkeypatch.setattr(cpp_builder, "run_compiler", held_back)
    x = torch.randn(100)

    def f(x):
        return (x * 0.123457).cos() + 0.987654  # constants no other test uses: a fresh build

    _, compiled = _compile(f, x)
    runner = compiled.groups[0]
    first = compiled(x)
    assert runner.calls == {"interpreted": 1, "compiled": 0, "vendor": 0}
    release.set()
    runner._kernel.result(timeout=120)
    second = compiled(x)
    assert runner.calls == {"interpreted": 1, "compiled": 1, "vendor": 0}
    torch.testing.assert_close(first, f(x))
    torch.testing.assert_close(second, f(x))


def test_symbolic_sizes_one_kernel_for_all_sizes() -> None:
    _, compiled = _compile(lambda x, y: x * y + y.exp(), torch.randn(3, 4), torch.randn(4),
                           mode="symbolic")
    builds = cpp_builder.counters["builds"]
    for shape in ((3, 4), (5, 7), (2, 1, 6)):
        x, y = torch.randn(*shape), torch.randn(shape[-1])
        torch.testing.assert_close(compiled(x, y), x * y + y.exp())
    assert compiled.groups[0].calls["compiled"] == 3
    assert cpp_builder.counters["builds"] == builds


def test_boxed_inner_empties_its_argument_list() -> None:
    x = torch.randn(5)
    gm = make_fx(lambda x: (x + 1,))(x)
    run = compile_fx_inner(gm, [x])
    args = [x]
    (out,) = run(args)
    assert args == [] and run._boxed_call
    torch.testing.assert_close(out, x + 1)


def test_config_patches_apply_to_one_compilation() -> None:
    gm = make_fx(lambda x: x * 3)(torch.randn(4))
    compiled = compile_fx(gm, [torch.randn(4)], config_patches={"cpp_codegen": False})
    compiled(torch.randn(4))
    assert compiled.groups[0].calls["interpreted"] == 1 and config.cpp_codegen
    with pytest.raises(RuntimeError, match="no option"):
        compile_fx(gm, [torch.randn(4)], config_patches={"no_such_option": 1})


_TWO_PROCESSES = textwrap.dedent("""
    import json, sys
    import torch
    from torch._inductor import config, cpp_builder
    from torch._inductor.compile_fx import compile_fx
    from torch.fx.experimental.proxy_tensor import make_fx
    config.compile_in_background = False
    x = torch.arange(6.0)
    gm = make_fx(lambda x: (x * 0.25 + 0.75).tanh())(x)
    compiled = compile_fx(gm, [x])
    out = compiled(x)
    print(json.dumps({"counters": cpp_builder.counters, "calls": compiled.groups[0].calls,
                      "out": out.tolist()}))
""")


def test_disk_cache_across_processes(tmp_path) -> None:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(tmp_path), CXX="g++")
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", _TWO_PROCESSES], env=env,
                              capture_output=True, text=True, timeout=120, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["counters"]["builds"] == 1 and first["calls"]["compiled"] == 1
    assert second["counters"]["builds"] == 0 and second["counters"]["disk_hits"] == 1
    assert second["calls"]["compiled"] == 1
    import math

    want = [math.tanh(v * 0.25 + 0.75) for v in range(6)]
    for got in (first["out"], second["out"]):
        assert all(abs(g - w) < 1e-6 for g, w in zip(got, want))
    # One finished library, no temporary files left behind.
    files = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs]
    assert len(files) == 1 and files[0].endswith(".so")


_OPDB_NAMES = ("add", "sub", "mul", "div", "neg", "abs", "exp", "expm1", "log", "log1p", "sqrt",
               "rsqrt", "sin", "cos", "tanh", "sigmoid", "erf", "reciprocal", "maximum",
               "minimum", "where", "eq", "lt", "ge", "clamp", "square", "sum", "mean", "amax",
               "amin", "softmax", "nn.functional.relu", "nn.functional.gelu",
               "nn.functional.silu")


def test_op_database_samples_through_make_fx_and_compile_fx() -> None:
    rows = [op for op in opdb.load() if op.name in _OPDB_NAMES]
    assert len(rows) >= 25
    failures = []
    kernel_calls = 0
    for op in rows:
        dtype = "float32" if "float32" in op.dtypes else op.dtypes[0]
        for sample in itertools.islice(opdb.samples(op, torch, dtype), 2):
            flat: list = []
            opdb.map_sample(torch, sample, flat.append)

            def call(*tensors, op=op, sample=sample):
                it = iter(tensors)
                return opdb.call(torch, op, opdb.map_sample(torch, sample, lambda t: next(it)))

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    expected = call(*flat)
                except Exception:  # the op rejects this sample in eager too: nothing to compile
                    continue
                gm = make_fx(call)(*flat)
                compiled = compile_fx(gm, flat)
                got = compiled(*flat)
            kernel_calls += sum(r.calls["compiled"] for r in compiled.groups)
            for g, e in zip(opdb.leaves(got), opdb.leaves(expected)):
                if not isinstance(e, torch.Tensor):
                    continue
                try:
                    torch.testing.assert_close(g, e, equal_nan=True, atol=1e-5, rtol=1e-5)
                except AssertionError as error:
                    failures.append((op.name, sample.name, str(error)[:200]))
    assert not failures, failures
    assert kernel_calls >= 40  # the samples ran generated kernels, not only library calls


def test_torch_compile_default_backend_uses_the_generator() -> None:
    torch._dynamo.reset()
    before = sum(cpp_builder.counters.values())

    def f(x, y):
        return F.gelu(x) * y - 0.3125

    compiled = torch.compile(f)
    x, y = torch.randn(9), torch.randn(9)
    torch.testing.assert_close(compiled(x, y), f(x, y))
    assert sum(cpp_builder.counters.values()) > before  # a kernel was built or loaded
    # Gradients need autograd: the captured graph keeps eager autograd (or AOT autograd).
    x.requires_grad_()
    compiled(x, y).sum().backward()
    expected = x.detach().clone().requires_grad_()
    f(expected, y).sum().backward()
    torch.testing.assert_close(x.grad, expected.grad)
    torch._dynamo.reset()


@pytest.mark.filterwarnings("ignore:The operator .* falls back to the CPU")  # the toy's few ops
def test_device_backend_code_generator_hook(monkeypatch) -> None:
    import plait_toy_device.plugin as toy_plugin

    from torch._inductor.interpreter import run_group

    x = torch.randn(4, 3, dtype=torch.float64, device="toy")

    def f(x):
        return (x * 2).exp() - x

    # Without a generator the group runs in the fused interpreter on the device.
    _, compiled = _compile(f, x)
    torch.testing.assert_close(compiled(x).cpu(), f(x).cpu())
    assert compiled.groups[0].calls == {"interpreted": 1, "compiled": 0, "vendor": 0}

    asked, generated = [], []

    class Generator:
        def compile_group(self, group):
            generated.append([node.target for node in group.members])
            return lambda inputs: run_group(group, inputs)

    def codegen(device_type, target):
        asked.append((device_type, target))
        return Generator() if device_type == "toy" else None

    monkeypatch.setattr(toy_plugin, "torch_backend_codegen", codegen, raising=False)
    _, compiled = _compile(f, x)
    torch.testing.assert_close(compiled(x).cpu(), f(x).cpu())
    assert asked == [("toy", "pointwise")]
    assert generated == [[aten.mul.Tensor, aten.exp.default, aten.sub.Tensor]]
    assert compiled.groups[0].calls["vendor"] == 1


def test_integer_overflow_wraps_as_in_eager() -> None:
    a = torch.tensor([2**62, -(2**63), 7], dtype=torch.int64)
    b = torch.tensor([2**31 - 1, -5, 3], dtype=torch.int32)
    compiled = _check(lambda a, b: (a * 4 + 1, b + b, -a), a, b)
    # int64: 2**62 * 4 wraps to 0; int32: (2**31 - 1) * 2 wraps to -2.
    out = compiled(a, b)
    assert out[0].tolist() == [1, 1, 29] and out[1].tolist() == [-2, -10, 6]
    assert out[2].tolist() == [-(2**62), -(2**63), -7]


def _qkv_gradient(dq, dk, dv):
    # an attention backward's (B, heads, T, D) gradients into the (B, T, 3C) gradient of a
    # fused qkv projection: each transposed, reshaped (a copy) and concatenated
    parts = [aten.reshape(aten.transpose.int(g, 1, 2), [2, 5, 12]) for g in (dq, dk, dv)]
    return aten.cat(parts, 2) * 2.0


@pytest.mark.parametrize("mode", ["real", "fake"])
def test_a_cat_of_reshaped_transposes_reads_them_once(mode: str) -> None:
    from torch._inductor.passes import merge_cat_of_reshapes

    grads = [torch.randn(2, 3, 5, 4) for _ in range(3)]
    expected = torch.cat([g.transpose(1, 2).reshape(2, 5, 12) for g in grads], 2) * 2.0
    gm = make_fx(_qkv_gradient, tracing_mode=mode)(*grads)
    assert merge_cat_of_reshapes(gm) == 1
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert aten.reshape.default not in targets  # no copy before the cat
    assert targets.count(aten.unsqueeze.default) == 3 and aten.view.default in targets
    view = next(n for n in gm.graph.nodes if n.target is aten.view.default)
    assert tuple(view.meta["val"].shape) == (2, 5, 36)
    assert torch.equal(_results(compile_fx(gm, grads)(*grads))[0], expected)


def test_a_cat_of_reshapes_that_are_views_or_split_dims_is_left_alone() -> None:
    from torch._inductor.passes import merge_cat_of_reshapes

    def contiguous_parts(a, b):  # each reshape is a view already
        return aten.cat([aten.reshape(a, [2, 6]), aten.reshape(b, [2, 6])], 1)

    def other_dim(a, b):  # the merged dims land in dim 1, the cat is along dim 0
        return aten.cat([aten.reshape(aten.transpose.int(a, 1, 2), [2, 6]),
                         aten.reshape(aten.transpose.int(b, 1, 2), [2, 6])], 0)

    a, b = torch.randn(2, 3, 2), torch.randn(2, 3, 2)
    for fn in (contiguous_parts, other_dim):
        gm = make_fx(fn)(a, b)
        assert merge_cat_of_reshapes(gm) == 0
        assert torch.equal(gm(a, b), fn(a, b))


def test_cache_key_names_the_cpu_native_means(monkeypatch):
    # A cache directory shared between machines (a home directory on two hosts) must not hand
    # a library built with -march=native on one CPU to another whose CPU lacks its
    # instructions: the key holds what -march=native expands to.
    from torch._inductor import config, cpp_builder

    if cpp_builder.cache_key("int x;") is None:
        pytest.skip("no C++ compiler")
    assert "-march=native" in config.cxx_flags
    here = cpp_builder.cache_key("int x;")
    monkeypatch.setitem(cpp_builder._native_targets, config.cxx, "-march=some-other-cpu -mavx512f")
    elsewhere = cpp_builder.cache_key("int x;")
    assert here != elsewhere
    monkeypatch.setattr(config, "cxx_flags", tuple(f for f in config.cxx_flags
                                                   if f != "-march=native"))
    # without -march=native the CPU does not matter
    assert cpp_builder.cache_key("int x;") == cpp_builder.cache_key("int x;")


class _AtenCalls(TorchDispatchMode):
    """Records the aten operators called under it (in ``calls``)."""

    def __init__(self, calls: list) -> None:
        super().__init__()
        self.calls = calls

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append(func)
        return func(*args, **(kwargs or {}))


def _detach_then_mm(x, w):
    return aten.mm(aten.detach.default(x), w) * 2


@pytest.mark.parametrize("cpp_codegen", [True, False])
def test_a_detach_is_skipped_without_grad_mode_and_kept_with_it(cpp_codegen, monkeypatch) -> None:
    # AOT graphs detach every input; while grad mode is off the generated code hands on the
    # input itself. With grad mode on the detach still runs: the product must not require
    # grad (x does), as in eager. The same with or without a C++ compiler.
    monkeypatch.setattr(config, "cpp_codegen", cpp_codegen)
    x, w = torch.randn(3, 4, requires_grad=True), torch.randn(4, 2)
    gm = make_fx(_detach_then_mm)(x, w)
    assert any(n.target is aten.detach.default for n in gm.graph.nodes)
    compiled = compile_fx(gm, [x, w])
    assert "if _grad else" in compiled.source
    expected = (x.detach().numpy() @ w.numpy()) * 2
    with torch.no_grad():
        got = compiled(x, w)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
    assert not got.requires_grad
    calls = []
    with torch.enable_grad():
        eager = _detach_then_mm(x, w)
        with _AtenCalls(calls):
            got = compiled(x, w)
    assert got.requires_grad is eager.requires_grad is False
    assert aten.detach.default in calls  # the detach ran: grad mode was on
    np.testing.assert_allclose(got.detach().numpy(), expected, rtol=1e-6)
    calls.clear()
    with torch.no_grad(), _AtenCalls(calls):
        compiled(x, w)
    assert aten.detach.default not in calls and aten.mm.default in calls


def test_a_returned_detach_is_kept() -> None:
    # The graph's result is a new tensor (not the input object), cut from autograd.
    x = torch.randn(3, requires_grad=True)
    gm = make_fx(lambda t: aten.detach.default(t))(x)
    compiled = compile_fx(gm, [x])
    with torch.no_grad():
        got = compiled(x)
    assert got is not x and not got.requires_grad
    assert torch.equal(got, x.detach())


def test_the_flat_loop_is_vectorised_whatever_the_threading() -> None:
    # The thread threshold decides only whether the pool splits the loop; an OpenMP if clause
    # on "parallel for simd" once switched vectorisation off too for loops under it.
    x, y = torch.randn(1000), torch.randn(1000)
    compiled = compile_fx(make_fx(lambda a, b: a + b)(x, y), [x, y])
    lines = compiled.groups[0].source.splitlines()
    pragmas = [line.strip() for line in lines if line.strip().startswith("#pragma omp")]
    assert "#pragma omp simd" in pragmas and not any("if(" in p or "parallel" in p
                                                     for p in pragmas)
    assert torch.equal(compiled(x, y), torch.from_numpy(x.numpy() + y.numpy()))
