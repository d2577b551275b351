"""torch.compile's generated OpenCL C for xpu (plait-backend-xpu's ``torch_backend_codegen``):
kernel groups built as OpenCL kernels give eager xpu's results.

Runs on every OpenCL device (``PLAIT_XPU_DEVICE_TYPE=all``: PoCL's CPU device here) and skips,
saying why, where none exists. Expected values are eager xpu's (the library kernels, not the
generator); that the generator ran is read from its counters and the groups' call counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import torch
import torch.nn.functional as F
from torch._inductor import config
from torch._inductor.compile_fx import compile_fx
from torch.fx.experimental.proxy_tensor import make_fx

XC = pytest.importorskip("plait_backend_xpu._C", reason="plait-backend-xpu is not installed")
from plait_backend_xpu import (  # noqa: E402
    codegen,
    device_module as xpu_module,
    render,
    render_group,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
COUNT, REASON = XC.device_count("all")
# PoCL (a CPU OpenCL device) counts as an xpu device here
pytestmark = [pytest.mark.skipif(COUNT == 0, reason=f"no OpenCL device: {REASON}"),
              pytest.mark.usefixtures("xpu_all_devices")]


@pytest.fixture(autouse=True)
def build_before_the_first_call(monkeypatch):
    """Kernels built before compile_group returns, so every call runs generated code (one
    test turns the background build back on)."""
    monkeypatch.setattr(config, "compile_in_background", False)



def xpu(*shape: int, dtype: torch.dtype = torch.float32, low: int = -5, high: int = 5
        ) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn(*shape).to(dtype).to("xpu")
    if dtype == torch.bool:
        return (torch.randn(*shape) > 0).to("xpu")
    return torch.randint(low, high, shape, dtype=dtype).to("xpu")


def compiled_check(fn, *inputs, mode: str = "real", atol: float | None = None,
                   rtol: float | None = None):
    """Compile ``fn`` (make_fx + compile_fx), run it, compare with eager xpu; every kernel
    group must have run as generated code."""
    gm = make_fx(fn, tracing_mode=mode)(*inputs)
    compiled = compile_fx(gm, list(inputs))
    launches = codegen.STATS["launches"]
    got, expected = compiled(*inputs), fn(*inputs)
    got = got if isinstance(got, (tuple, list)) else (got,)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    for g, e in zip(got, expected, strict=True):
        assert g.device.type == "xpu" and g.dtype == e.dtype and g.shape == e.shape
        if e.dtype.is_floating_point:
            torch.testing.assert_close(g.cpu(), e.cpu(), equal_nan=True, atol=atol, rtol=rtol)
        else:
            assert torch.equal(g.cpu(), e.cpu()), (g.cpu(), e.cpu())
    assert compiled.groups
    assert all(r.calls["vendor"] == 1 and r.calls["interpreted"] == 0 for r in compiled.groups)
    assert codegen.STATS["launches"] == launches + len(compiled.groups)
    return compiled


def test_gelu_times_y_plus_z_is_one_generated_kernel():
    x, y, z = xpu(37, 65), xpu(37, 65), xpu(37, 65)
    compiled = compiled_check(lambda x, y, z: F.gelu(x) * y + z, x, y, z)
    assert len(compiled.groups) == 1 and len(compiled.groups[0].group.members) == 3
    # on a CPU device (PoCL) contiguous calls run on float vectors, 2405 = 150 * 16 + 5
    # elements: the last work item's five one by one
    on_cpu = xpu_module.device_info(0)["type"] == "cpu"
    assert compiled.groups[0]._vendor.width == (16 if on_cpu else 1)


def test_selects_and_mixed_dtypes_run_the_one_element_kernel():
    x, i = xpu(40, 7), xpu(40, 7, dtype=torch.int32)
    relu = compiled_check(lambda x: (x * 2).relu() + 1, x)
    mixed = compiled_check(lambda x, i: x.exp() * i, x, i)
    sine = compiled_check(lambda x: torch.sin(x) * 2, x)
    assert relu.groups[0]._vendor.width == mixed.groups[0]._vendor.width == 1
    assert sine.groups[0]._vendor.width == 1  # wide sin is inaccurate on PoCL


def test_torch_compile_on_xpu_uses_the_generator():
    torch._dynamo.reset()
    x, y = xpu(8, 16), xpu(16)
    groups, launches = codegen.STATS["groups"], codegen.STATS["launches"]
    fn = torch.compile(lambda x, y: torch.tanh(x * y) - y.sigmoid())
    torch.testing.assert_close(fn(x, y).cpu(), (torch.tanh(x * y) - y.sigmoid()).cpu())
    # groups of one shape: tanh(x * y) (8, 16), sigmoid(y) (16,), the subtraction (8, 16)
    assert codegen.STATS["groups"] == groups + 3
    assert codegen.STATS["launches"] == launches + 3
    fn(x, y)  # no new build, a launch per group
    assert codegen.STATS["groups"] == groups + 3
    assert codegen.STATS["launches"] == launches + 6


def test_broadcasting_scalars_and_transposed_inputs():
    a, b, c = xpu(4, 1, 6), xpu(3, 1), xpu(6)
    compiled_check(lambda a, b, c: (a * 2.5 + b).clamp(-1.0, 1.0) * c - 0.5, a, b, c)
    x = xpu(7, 5)
    compiled_check(lambda x, y: (x.t() + y).exp() * x.t(), x, xpu(5, 7))
    w = xpu(4, 9)
    compiled_check(lambda w: (w[:, ::2] * 3).relu(), w)  # a strided slice, offset 0
    compiled_check(lambda w: (w[1:, 2:] - 1).abs(), w)  # a view with an offset


def test_integer_and_bool_chains():
    i, j = xpu(5, 6, dtype=torch.int32), xpu(5, 6, dtype=torch.int32)
    compiled_check(lambda i, j: (i * 3 - j).abs() + 7, i, j)
    k = xpu(11, dtype=torch.int64, low=-1000, high=1000)
    compiled_check(lambda k: torch.maximum(k * k, k - 4) + 2**40, k)
    u = xpu(9, dtype=torch.uint8, low=0, high=255)
    compiled_check(lambda u: u * u + u, u)  # wraps as uint8
    x, m = xpu(5, 6), xpu(5, 6, dtype=torch.bool)
    compiled_check(lambda x, m, i: (torch.logical_and(x > 0, m), torch.where(m, x, i * 2.0),
                                    (x < 0.5).logical_not(), i.to(torch.float32) > x),
                   x, m, i)
    compiled_check(lambda x: (x * 4).to(torch.int32) + 1, x)
    compiled_check(lambda x: ((x * 0.3).to(torch.bool), (x + 1).to(torch.bool)), x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_sixteen_bit_floats(dtype):
    # computed in float, rounded once per stored output (eager rounds after each op: the
    # tolerance covers one rounding per op of the chain)
    x, y = xpu(6, 10, dtype=dtype), xpu(10, dtype=dtype)
    tol = 2e-2 if dtype == torch.bfloat16 else 4e-3
    compiled_check(lambda x, y: F.silu(x * y) + y.exp() * 0.5, x, y, atol=tol, rtol=tol)
    compiled_check(lambda x: (x * 3).to(torch.float32) - 1, x, atol=tol, rtol=tol)


def test_float64_where_the_device_has_it():
    if not xpu_module.device_info(0)["fp64"]:
        pytest.skip("the device has no double precision")
    x = xpu(5, 7, dtype=torch.float64)
    compiled_check(lambda x: torch.erf(x) * x.sqrt().nan_to_num() + x.log1p().nan_to_num(), x)
    compiled_check(lambda x: (x * 1e-300).expm1() / 3, x)


def test_reductions_with_prologue_and_epilogue():
    x, b = xpu(6, 300), xpu(300)
    compiled_check(lambda x, b: (x * b + 1).relu().sum(-1), x, b, rtol=1e-5, atol=1e-4)
    compiled_check(lambda x: (x.exp(), x.exp().amax(dim=-1, keepdim=True)), x)
    compiled_check(lambda x: (x - 1).amin(dim=1), x.t().contiguous().t()[:, :5])
    # a reduction over a transposed input's rows, then its epilogue as a second group
    t = xpu(40, 3)
    compiled_check(lambda t: (t.t() * 2).sum(-1).tanh() + 1, t, rtol=1e-5, atol=1e-5)
    # NaN wins max and min
    n = torch.tensor([[1.0, float("nan"), 3.0], [4.0, 5.0, -6.0]]).to("xpu")
    compiled_check(lambda n: ((n + 1).amax(-1), (n * 2).amin(-1)), n)
    compiled_check(lambda v: (v * v).sum(-1), xpu(1000), rtol=1e-5, atol=1e-3)  # one row


def test_reductions_of_many_rows():
    # 100 rows and more: a CPU device reduces a row per work item with 16 lanes (37 = 2 * 16
    # + 5 leftover elements); other devices a work group per row
    x, t = xpu(2, 100, 37), xpu(37, 150)
    compiled = compiled_check(lambda x: ((x * 3).exp(), (x * 3).exp().sum(-1)), x,
                              rtol=1e-5, atol=1e-4)
    compiled_check(lambda t: (t.t() - 0.5).amax(-1, keepdim=True), t)
    n = xpu(80, 40)
    n[7, 3] = float("nan")
    compiled_check(lambda n: ((n * 2).amin(-1), (n + 1).amax(-1)), n)
    on_cpu = xpu_module.device_info(0)["type"] == "cpu"
    assert ((1, True) in compiled.groups[0]._vendor._kernels) == on_cpu


def test_symbolic_sizes_build_one_kernel_for_every_size():
    x, y = xpu(3, 4), xpu(4)
    gm = make_fx(lambda x, y: x * y + y.exp(), tracing_mode="symbolic")(x, y)
    compiled = compile_fx(gm, [x, y])
    cache = xpu_module.programs()
    for shape in ((3, 4), (5, 7), (2, 3, 9), (1000, 33)):
        x, y = xpu(*shape), xpu(shape[-1])
        expected = (x * y + y.exp()).cpu()
        builds = cache.stats["source_builds"] + cache.stats["binary_loads"]
        torch.testing.assert_close(compiled(x, y).cpu(), expected)
        if shape != (3, 4):  # the broadcast (rank 2) kernel serves every later size
            assert cache.stats["source_builds"] + cache.stats["binary_loads"] == builds
    assert compiled.groups[0].calls["vendor"] == 4


def test_a_declined_group_runs_in_the_interpreter(monkeypatch):
    class Declines(render_group.GroupRenderer):
        def __init__(self, *args, **kwargs):
            raise render_group.Unsupported("declined by the test")

    monkeypatch.setattr(codegen, "GroupRenderer", Declines)
    x = xpu(4, 5)
    declined = codegen.STATS["declined"]
    gm = make_fx(lambda x: (x * 2).exp() - x)(x)
    compiled = compile_fx(gm, [x])
    torch.testing.assert_close(compiled(x).cpu(), ((x * 2).exp() - x).cpu())
    assert codegen.STATS["declined"] == declined + 1
    assert compiled.groups[0].calls == {"interpreted": 1, "compiled": 0, "vendor": 0}


def test_inputs_off_the_device_go_to_the_interpreter():
    x = xpu(4, 5)
    compiled = compile_fx(make_fx(lambda x: x * 2 + 1)(x), [x])
    cpu = torch.randn(4, 5)
    launches = codegen.STATS["launches"]
    torch.testing.assert_close(compiled.groups[0]([cpu])[0], cpu * 2 + 1)
    assert codegen.STATS["launches"] == launches


def test_rendered_source_spells_each_dialect():
    x = xpu(3, 4, dtype=torch.float16)
    compiled = compile_fx(make_fx(lambda x: (x.exp() * 2).sum(-1, dtype=None))(x), [x])
    group = compiled.groups[0].group
    opencl = render_group.GroupRenderer(render.OPENCL, group, fp64=False)
    source = opencl.pointwise(0).source if group.reduction is None else None
    if source is None:  # float16 reductions stay library calls: the exp chain is the group
        raise AssertionError("a float16 sum must not fuse")
    assert "vload_half(" in source and "vstore_half_rte(" in source and "exp(" in source
    cuda = render_group.GroupRenderer(render.CUDA, group, fp64=True).pointwise(2).source
    assert "expf(" in cuda and "plait_half_to_float(" in cuda and "__global__" in cuda


def test_disk_cache_across_processes(tmp_path):
    code = """
        import json, torch, torch._inductor
        from plait_backend_xpu import codegen, device_module
        torch._inductor.config.compile_in_background = False
        x = torch.arange(12.0).reshape(3, 4).to("xpu")
        before = dict(device_module.programs().stats)
        out = torch.compile(lambda x: torch.sin(x) * 2 + x)(x)
        after = device_module.programs().stats
        delta = {k: after[k] - before.get(k, 0) for k in after}
        print(json.dumps({"stats": delta, "groups": codegen.STATS["groups"],
                          "out": out.cpu().tolist()}))
    """
    env = {**os.environ, "PLAIT_XPU_DEVICE_TYPE": "all", "PLAIT_XPU_CACHE_DIR": str(tmp_path)}
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                              text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["groups"] == second["groups"] == 1
    assert first["stats"].get("source_builds", 0) >= 1  # the group's kernel, at least
    assert second["stats"].get("source_builds", 0) == 0
    assert second["stats"].get("binary_loads", 0) == first["stats"]["source_builds"]
    expected = torch.sin(torch.arange(12.0).reshape(3, 4)) * 2 + torch.arange(12.0).reshape(3, 4)
    torch.testing.assert_close(torch.tensor(second["out"]), expected)


def test_gpt_example_compiled_on_xpu_matches_eager(tmp_path):
    # the char-level GPT example (tiny) on xpu, eager then --compile, in one interpreter: the
    # compiled step (forward and backward) runs generated kernels and gives eager's losses
    code = f"""
        import json, runpy, sys, contextlib, io, torch._inductor
        from plait_backend_xpu import codegen
        torch._inductor.config.compile_in_background = False
        losses = {{}}
        for flag in ([], ["--compile"]):
            sys.argv = [{str(EXAMPLES / "char_gpt.py")!r}, "--steps", "2", "--print-losses",
                        "--n-layer", "1", "--n-embd", "16", "--n-head", "2", "--block-size",
                        "8", "--batch-size", "4", "--eval-iters", "1", "--sample-chars", "0",
                        "--dropout", "0", "--device", "xpu", *flag]
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
                runpy.run_path(sys.argv[0], run_name="__main__")
            losses[bool(flag)] = [float(line.split()[2]) for line in
                                  out.getvalue().splitlines() if line.startswith("loss ")]
        print(json.dumps({{"losses": [losses[False], losses[True]],
                          "stats": dict(codegen.STATS)}}))
    """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "PLAIT_XPU_DEVICE_TYPE": "all"})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    eager, compiled = result["losses"]
    assert len(eager) == 2
    assert compiled == pytest.approx(eager, rel=1e-5)
    assert result["stats"]["groups"] > 0 and result["stats"]["launches"] > 0


def test_one_layout_with_other_offsets_and_storages():
    # calls of one layout share a prepared plan; offsets and buffers are read per call
    w = xpu(6, 9)
    compiled = compile_fx(make_fx(lambda v: v * 2 - 1)(w[1:, 2:]), [w[1:, 2:]])
    for view in (w[1:, 2:], w[:-1, :-2], xpu(6, 9)[1:, :-2]):
        torch.testing.assert_close(compiled(view).cpu(), (view * 2 - 1).cpu())
    assert compiled.groups[0].calls["vendor"] == 3


def test_a_group_with_parts_the_renderer_does_not_know_is_declined():
    # a newer scheduler's group (one wrapping a matmul, say) must not lose that part
    import dataclasses

    x = xpu(4, 5)
    group = compile_fx(make_fx(lambda x: x * 2 + 1)(x), [x]).groups[0].group
    Wider = dataclasses.make_dataclass("Wider", [("matmul", object, None)],
                                       bases=(type(group),))
    wider = Wider(**{f.name: getattr(group, f.name) for f in dataclasses.fields(group)},
                  matmul=object())
    declined = codegen.STATS["declined"]
    assert codegen.XpuCodegen().compile_group(wider) is None
    assert codegen.STATS["declined"] == declined + 1
    wider.matmul = None
    assert codegen.XpuCodegen().compile_group(wider) is not None


def test_background_build_serves_the_first_calls_by_the_interpreter(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "compile_in_background", True)
    monkeypatch.setenv("PLAIT_XPU_CACHE_DIR", str(tmp_path))  # nothing on disk: a real build
    release = threading.Event()
    real_build = codegen._build

    def held(index, rendered):
        release.wait(60)  # the build waits for the test, so the first call cannot have it
        return real_build(index, rendered)

    monkeypatch.setattr(codegen, "_build", held)
    x = xpu(5, 6)
    compiled = compile_fx(make_fx(lambda x: (x + 0.25).tanh() * 3)(x), [x])
    group = compiled.groups[0]._vendor
    launches = codegen.STATS["launches"]
    torch.testing.assert_close(compiled(x).cpu(), ((x + 0.25).tanh() * 3).cpu())
    assert codegen.STATS["launches"] == launches  # the interpreter ran it
    release.set()
    group._pending.result(timeout=60)
    torch.testing.assert_close(compiled(x).cpu(), ((x + 0.25).tanh() * 3).cpu())
    assert codegen.STATS["launches"] == launches + 1


def test_a_failed_background_build_leaves_the_group_interpreted(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "compile_in_background", True)
    monkeypatch.setenv("PLAIT_XPU_CACHE_DIR", str(tmp_path))

    def fails(index, rendered):
        raise RuntimeError("the driver rejected the program (a test's stand-in)")

    monkeypatch.setattr(codegen, "_build", fails)
    x = xpu(5, 6)
    compiled = compile_fx(make_fx(lambda x: (x - 0.75).exp() * 2)(x), [x])
    group = compiled.groups[0]._vendor
    with pytest.raises(RuntimeError):
        group._pending.result(timeout=60)
    launches = codegen.STATS["launches"]
    for _ in range(2):
        torch.testing.assert_close(compiled(x).cpu(), ((x - 0.75).exp() * 2).cpu())
    assert codegen.STATS["launches"] == launches
