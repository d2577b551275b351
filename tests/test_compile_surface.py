"""The user surface of torch.compile (issue 15, items 3 and 7): torch.compiler, torch._dynamo's
public helpers, stances, logs, counters and the examples' --compile."""

from __future__ import annotations

import logging
import operator
import os
import subprocess
import sys
from pathlib import Path

import pytest

import torch
import torch._dynamo
import torch._logging
from torch import nn
from torch._dynamo.testing import CompileCounter, CompileCounterWithBackend, same

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _fresh() -> None:
    torch._dynamo.reset()
    yield
    torch.compiler.set_stance("default")


def test_compile_forms_decorator_call_method_and_module_compile() -> None:
    counter = CompileCounter()

    @torch.compile(backend=counter)
    def double(x):
        return x * 2

    @torch.compile
    def plus(x):
        return x + 1

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(2, 2)

        @torch.compile(backend="eager")
        def forward(self, x):
            return self.fc(x).relu()

    assert double(torch.ones(2)).tolist() == [2.0, 2.0] and counter.frame_count == 1
    assert plus(torch.ones(1)).item() == 2.0
    net = Net()
    x = torch.randn(3, 2)
    assert torch.allclose(net(x), (x @ net.fc.weight.T + net.fc.bias).relu())
    module = nn.Linear(2, 1)
    expected = module(x)
    module.compile(backend=counter)
    assert type(module) is nn.Linear and torch.allclose(module(x), expected)
    assert counter.frame_count == 2
    bound = torch.compile(module.forward, backend="eager")
    assert torch.allclose(bound(x), expected)
    assert torch.compile(disable=True)(double) is double


def test_torch_compiler_questions_and_markers() -> None:
    seen = []

    def f(x):
        seen.append((torch.compiler.is_compiling(), torch.compiler.is_dynamo_compiling(),
                     torch._dynamo.is_compiling()))
        return x + 1

    torch.compile(f, backend="eager")(torch.ones(1))
    assert seen == [(True, True, True)]
    assert torch.compiler.is_compiling() is False
    assert torch.compiler.allow_in_graph(f) is f
    assert torch.compiler.assume_constant_result(f) is f
    assert {"eager", "aot_eager", "inductor"} <= set(torch.compiler.list_backends())
    with pytest.raises(torch._dynamo.exc.InvalidBackend, match="no_such_backend"):
        torch.compile(f, backend="no_such_backend")


def test_core_compiler_answers_without_importing_dynamo() -> None:
    code = ("import sys, torch; assert torch.compiler.is_compiling() is False; "
            "f = torch.compiler.disable(lambda x: x + 1); assert f(1) == 2; "
            "print('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_set_stance_force_eager_and_fail_on_recompile() -> None:
    counter = CompileCounter()
    f = torch.compile(lambda x: x * 3, backend=counter)
    with torch.compiler.set_stance("force_eager"):
        assert f(torch.ones(1)).item() == 3.0
    assert counter.frame_count == 0
    f(torch.ones(1))
    assert counter.frame_count == 1
    torch.compiler.set_stance("fail_on_recompile")
    f(torch.ones(1))  # cached: allowed
    with pytest.raises(torch._dynamo.exc.RecompileError, match=r"size\(\)\[0\]: expected 1, got 2"):
        f(torch.ones(2))
    torch.compiler.set_stance("eager_on_recompile")
    assert f(torch.ones(3)).tolist() == [3.0, 3.0, 3.0] and counter.frame_count == 1
    # PyTorch 2.13 accepts any stance here and refuses it at the next compiled call
    with torch.compiler.set_stance("sometimes"):
        with pytest.raises(RuntimeError, match=r"invalid torch\.compile stance"):
            f(torch.ones(1))
    assert f(torch.ones(1)).tolist() == [3.0]  # the stance before the block is back
    torch.compiler.set_stance("default")


def test_reset_forgets_compiled_graphs() -> None:
    counter = CompileCounter()
    f = torch.compile(lambda x: x - 1, backend=counter)
    f(torch.ones(1))
    torch.compiler.reset()
    f(torch.ones(1))
    assert counter.frame_count == 2


def test_explain_output_fields() -> None:
    def f(x):
        y = x.cos()
        if y.sum() > 0:
            y = y * 2
        return y.relu()

    out = torch._dynamo.explain(f)(torch.zeros(3))
    assert out.graph_count == 2 and out.graph_break_count == 1
    # as PyTorch's explain: function calls and Python operators, not Tensor methods
    assert out.ops_per_graph[0] == [operator.gt]
    assert out.ops_per_graph[1] == [operator.mul]
    assert out.op_count == 2 and len(out.graphs) == 2
    assert any("TENSOR_MATCH: x:" in g and "size=[3]" in g for g in out.out_guards)
    text = str(out)
    assert "Graph Break Count: 1" in text and "if y.sum() > 0:" in text


def test_config_patch_aliases_and_unknown_names() -> None:
    config = torch._dynamo.config
    with config.patch(cache_size_limit=2):
        assert config.recompile_limit == 2
        counter = CompileCounter()
        f = torch.compile(lambda x: x + 2, backend=counter, dynamic=False)
        with pytest.warns(UserWarning, match=r"recompile_limit \(2\)"):
            for n in range(1, 5):
                f(torch.ones(n))
        assert counter.frame_count == 2
    assert config.recompile_limit == 8
    with pytest.raises(AttributeError):
        config.no_such_setting = 1


def test_mark_dynamic_records_the_dims_and_static_sizes_still_compute_right() -> None:
    x = torch.ones(4, 3)
    torch._dynamo.mark_dynamic(x, 0)
    torch._dynamo.maybe_mark_dynamic(x, 1)
    assert x._dynamo_dynamic_indices == {0} and x._dynamo_weak_dynamic_indices == {1}
    torch._dynamo.mark_static(x, 0)
    assert x._dynamo_dynamic_indices == set()
    f = torch.compile(lambda t: t.sum(0), dynamic=True, backend="eager")
    assert f(x).tolist() == [4.0, 4.0, 4.0] and f(torch.ones(5, 3)).tolist() == [5.0] * 3


def test_testing_helpers() -> None:
    counter = CompileCounterWithBackend("aot_eager")
    f = torch.compile(lambda x: (x.exp(), x.sum()), backend=counter)
    out = f(torch.zeros(2))
    assert counter.frame_count == 1 and counter.op_count == 2 and len(counter.graphs) == 1
    assert same(out, (torch.ones(2), torch.tensor(0.0)))
    assert not same(out, (torch.ones(2), torch.tensor(1.0)))
    assert not same([torch.ones(2)], [torch.ones(3)])


def test_counters_and_exceptions() -> None:
    from torch._dynamo.utils import counters

    counters.clear()
    torch.compile(lambda x: x.sum().item(), backend="eager")(torch.ones(2))
    assert sum(counters["graph_break"].values()) == 1
    assert counters["stats"]["unique_graphs"] == 1

    def broken(gm, example_inputs):
        raise ValueError("backend bug")

    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed, match="backend bug"):
        torch.compile(lambda x: x + 1, backend=broken)(torch.ones(1))
    assert issubclass(torch._dynamo.exc.Unsupported, torch._dynamo.exc.TorchDynamoException)


def test_set_logs_reports_graph_breaks_and_recompiles(caplog: pytest.LogCaptureFixture) -> None:
    torch._logging.set_logs(graph_breaks=True, recompiles=True)
    # the records propagate to the "torch" logger, which (as PyTorch's) stops there: a
    # handler on it, or on "torch._dynamo", sees them
    logging.getLogger("torch._dynamo").addHandler(caplog.handler)
    try:
        f = torch.compile(lambda x: x * int(x.sum()), backend="eager")
        with caplog.at_level(logging.DEBUG):
            f(torch.ones(2))
            f(torch.ones(3))
        text = caplog.text
        assert "Graph break" in text and "__int__" in text
        assert "Recompiling" in text and "size()[0]: expected 2, got 3" in text
    finally:
        logging.getLogger("torch._dynamo").removeHandler(caplog.handler)
        torch._logging.set_logs(graph_breaks=False, recompiles=False)
    with pytest.raises(ValueError, match="Unknown log setting"):
        torch._logging.set_logs(no_such_log=True)


def test_torch_logs_environment_variable() -> None:
    code = ("import torch\n"
            "f = torch.compile(lambda x: x.sum().item(), backend='eager')\n"
            "f(torch.ones(2))\n")
    env = {**os.environ, "TORCH_LOGS": "graph_breaks,graph_code"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, env=env)
    assert "Graph break: Tensor.item()" in out.stderr
    assert "TRACED GRAPH" in out.stderr and "def forward" in out.stderr


@pytest.mark.parametrize("example, extra", [
    ("char_gpt.py", ["--n-layer", "1", "--n-embd", "16", "--n-head", "2", "--block-size", "8",
                     "--batch-size", "4", "--eval-iters", "1", "--sample-chars", "0"]),
    ("cnn_batchnorm.py", ["--batch-size", "8", "--train-size", "32", "--test-size", "16"]),
])
def test_examples_compile_flag_matches_eager_losses(example: str, extra: list[str],
                                                    tmp_path: Path) -> None:
    losses = {}
    for flag in ([], ["--compile"]):
        out = subprocess.run(
            [sys.executable, str(ROOT / "examples" / example), "--steps", "3",
             "--print-losses", *extra, *flag],
            capture_output=True, text=True, check=True, cwd=tmp_path)
        losses[bool(flag)] = [float(line.split()[2]) for line in out.stdout.splitlines()
                              if line.startswith("loss ")]
    assert len(losses[False]) == 3
    assert losses[True] == pytest.approx(losses[False], rel=1e-5)


def test_config_suppress_errors_and_error_on_recompile() -> None:
    def broken(gm, example_inputs):
        raise ValueError("backend bug")

    with torch._dynamo.config.patch(suppress_errors=True):
        assert torch.compile(lambda x: x * 5, backend=broken)(torch.ones(1)).item() == 5.0
    f = torch.compile(lambda x: x + 1, backend="eager", dynamic=False)
    f(torch.ones(1))
    with torch._dynamo.config.patch(error_on_recompile=True), \
            pytest.raises(torch._dynamo.exc.RecompileError):
        f(torch.ones(2))


def test_entry_point_backend_is_listed_and_used(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    (tmp_path / "plugin_backend.py").write_text(
        "CALLS = []\n"
        "def backend(gm, example_inputs):\n"
        "    CALLS.append(len(example_inputs))\n"
        "    return gm.forward\n")
    info = tmp_path / "plugin_backend-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugin-backend\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[torch_dynamo_backends]\nplugin_backend = plugin_backend:backend\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    assert "plugin_backend" in torch._dynamo.list_backends()
    f = torch.compile(lambda x: x * 4, backend="plugin_backend")
    assert f(torch.ones(1)).item() == 4.0
    assert importlib.import_module("plugin_backend").CALLS == [1]
