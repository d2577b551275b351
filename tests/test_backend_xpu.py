"""plait-backend-xpu on a real OpenCL device (PoCL's CPU device here): the runtime loaded at
run time, devices, memory and copies, the program cache, and the rendered kernels.

The device tests accept OpenCL devices of every type (``PLAIT_XPU_DEVICE_TYPE=all``, set for
this module only) and skip, saying why, where no OpenCL device exists at all. Expected values
come from numpy formulas written here, never from the code under test.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import torch

XC = pytest.importorskip("plait_backend_xpu._C", reason="plait-backend-xpu is not installed")
from plait_backend_xpu import (  # noqa: E402
    device_module as xpu_module,
    fast as xpu_fast,
    kernels as xpu_kernels,
    pointwise,
    render,
    render_matmul,
    render_reduce,
)

COUNT, REASON = XC.device_count("all")
needs_device = pytest.mark.skipif(COUNT == 0, reason=f"no OpenCL device: {REASON}")

# every test counts PoCL (a CPU OpenCL device) as an xpu device
pytestmark = pytest.mark.usefixtures("xpu_all_devices")


def run_python(code: str, **env: str) -> dict:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def no_fallback():
    """A block in which a CPU fallback warning is an error (core warns once per operator and
    process, so the tests also count the kernels' own calls)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*falls back to the CPU.*")
        yield


# -- the loader ------------------------------------------------------------------------------


def test_a_missing_loader_is_a_reason_not_an_error():
    report = run_python(
        """
        import json, torch
        from plait_backend_xpu import _C
        print(json.dumps({"library": _C.opencl_library(), "available": torch.xpu.is_available(),
                          "reason": torch.xpu.unavailable_reason()}))
        """,
        PLAIT_XPU_OPENCL_LIBRARY="/nonexistent/libOpenCL.so.1", PLAIT_XPU_DEVICE_TYPE="all",
    )
    assert report["library"][0] == ""
    assert report["available"] is False
    assert "OpenCL ICD loader could not be opened" in report["reason"]
    assert "/nonexistent/libOpenCL.so.1" in report["reason"]


@needs_device
def test_loader_opened_by_name():
    name, error = XC.opencl_library()
    assert "OpenCL" in name and error == ""


# -- devices ----------------------------------------------------------------------------------


@needs_device
def test_devices_and_properties():
    assert torch.xpu.is_available() and torch.xpu.device_count() == COUNT
    props = torch.xpu.get_device_properties(0)
    listed = XC.devices("all")[0]
    assert props.name == torch.xpu.get_device_name() == listed["name"]
    assert props.total_memory == listed["global_memory"] > 0
    assert props.max_compute_units >= 1 and props.max_work_group_size >= 1
    assert props.has_fp64 == listed["fp64"] and props.platform_name == listed["platform"]
    assert "_XpuDeviceProperties(name=" in repr(props)
    torch.xpu.set_device(0)
    assert torch.xpu.current_device() == 0
    with pytest.raises(RuntimeError):
        torch.xpu.get_device_properties(COUNT)


# -- memory and copies --------------------------------------------------------------------------


@needs_device
def test_round_trip_and_views():
    x = torch.arange(10.0).to("xpu")
    assert x.device.type == "xpu"
    np.testing.assert_array_equal(x.cpu().numpy(), np.arange(10.0, dtype=np.float32))
    np.testing.assert_array_equal(x[3:7].cpu().numpy(), np.arange(3.0, 7.0, dtype=np.float32))
    np.testing.assert_array_equal(x[::3].cpu().numpy(), np.arange(0.0, 10.0, 3.0))


@needs_device
@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8, torch.int16,
                                   torch.int32, torch.int64, torch.float16, torch.bfloat16,
                                   torch.float32, torch.float64, torch.complex64])
def test_round_trip_every_dtype(dtype):
    values = torch.tensor([0, 1, 2, 3, 125], dtype=torch.float64).to(dtype)
    back = values.to("xpu").cpu()
    assert back.dtype == dtype and torch.equal(back, values)


@needs_device
def test_non_blocking_upload_and_device_copies():
    source = np.arange(100_000, dtype=np.float32)
    x = torch.from_numpy(source).to("xpu", non_blocking=True)
    y = x.clone()  # a device-side copy
    z = torch.empty(100_000, device="xpu")
    z.copy_(y)
    torch.xpu.synchronize()
    np.testing.assert_array_equal(z.cpu().numpy(), source)


@needs_device
def test_caching_allocator_statistics():
    torch.xpu.synchronize()
    before = torch.xpu.memory_allocated()
    x = torch.empty(10, device="xpu")  # 40 bytes: the 512-byte size class
    assert torch.xpu.memory_allocated() == before + 512
    assert torch.xpu.max_memory_allocated() >= before + 512
    reserved = torch.xpu.memory_reserved()
    assert reserved >= torch.xpu.memory_allocated()
    del x
    assert torch.xpu.memory_allocated() == before
    allocations = torch.xpu.memory_stats()["num_device_alloc"]
    y = torch.empty(100, device="xpu")  # 400 bytes: the same class, from the cache
    assert torch.xpu.memory_stats()["num_device_alloc"] == allocations
    del y
    torch.xpu.empty_cache()
    assert torch.xpu.memory_reserved() == torch.xpu.memory_allocated()
    torch.xpu.reset_peak_memory_stats()
    assert torch.xpu.max_memory_allocated() == torch.xpu.memory_allocated()
    stats = torch.xpu.memory_stats()
    assert stats["allocated_bytes.all.current"] == torch.xpu.memory_allocated()


@needs_device
def test_reset_accumulated_memory_stats_zeroes_only_the_counters():
    torch.empty(10, device="xpu")  # (freed at once: a cached block for empty_cache to release)
    torch.xpu.empty_cache()
    x = torch.empty(1000, device="xpu")  # a device allocation: the cache is empty
    stats = torch.xpu.memory_stats()
    assert stats["num_device_alloc"] >= 1
    assert stats["num_device_free"] >= 1  # (empty_cache released blocks)
    torch.xpu.reset_accumulated_memory_stats()
    after = torch.xpu.memory_stats()
    assert (after["num_device_alloc"], after["num_device_free"], after["num_alloc_retries"],
            after["num_ooms"]) == (0, 0, 0, 0)
    for kept in ("allocated_bytes.all.current", "allocated_bytes.all.peak",
                 "reserved_bytes.all.current", "reserved_bytes.all.peak"):
        assert after[kept] == stats[kept]
    del x


@needs_device
def test_per_process_memory_fraction_limits_the_allocator():
    assert torch.xpu.get_per_process_memory_fraction() == 1.0
    with pytest.raises(TypeError, match="must be `float`"):
        torch.xpu.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match="Allowed range"):
        torch.xpu.set_per_process_memory_fraction(1.5)
    torch.xpu.empty_cache()
    total = torch.xpu.get_device_properties().total_memory
    # room for one more MiB (and a page of rounding) beyond what live tensors hold now
    fraction = (torch.xpu.memory_reserved() + 2**20 + 4096) / total
    ooms = torch.xpu.memory_stats()["num_ooms"]
    try:
        torch.xpu.set_per_process_memory_fraction(fraction)
        assert torch.xpu.get_per_process_memory_fraction() == fraction
        x = torch.empty(2**18, device="xpu")  # 1 MiB: fits
        with pytest.raises(RuntimeError, match="out of memory"):
            torch.empty(2**20, device="xpu")  # 4 MiB more: past the limit
        assert torch.xpu.memory_stats()["num_ooms"] > ooms  # (core may try again first)
        torch.xpu.set_per_process_memory_fraction(0.0)
        torch.xpu.empty_cache()  # (a cached block is reserved already: it would serve)
        with pytest.raises(RuntimeError, match="out of memory"):
            torch.empty(1, device="xpu")  # nothing fits
    finally:
        torch.xpu.set_per_process_memory_fraction(1.0)
    y = torch.empty(2**20, device="xpu")  # no limit again
    assert y.numel() == 2**20 and x.numel() == 2**18


@needs_device
def test_memory_snapshot_lists_active_and_cached_blocks():
    x = torch.empty(1000, device="xpu")  # 4000 bytes: the 4096-byte size class
    address = x.data_ptr()
    mine = [s for s in torch.xpu.memory_snapshot() if s["address"] == address]
    assert len(mine) == 1
    segment = mine[0]
    assert (segment["device"], segment["total_size"], segment["allocated_size"]) == (0, 4096, 4096)
    assert [b["state"] for b in segment["blocks"]] == ["active_allocated"]
    del x  # back to the cache: still held from OpenCL, no longer in use
    mine = [s for s in torch.xpu.memory_snapshot() if s["address"] == address]
    assert [(s["allocated_size"], s["blocks"][0]["state"]) for s in mine] == [(0, "inactive")]
    assert torch.xpu.memory_snapshot(mempool_id=(1, 1)) == []
    used = torch.xpu.device_memory_used()
    free, total = torch.xpu.mem_get_info()
    assert used == total - free == torch.xpu.memory_reserved()


def test_size_classes():
    assert [XC.size_class(n) for n in (0, 1, 512, 513, 2**20)] == [0, 512, 512, 1024, 2**20]
    # above 1 MiB: four classes per power of two
    assert XC.size_class(2**20 + 1) == 2**20 + 2**18
    assert XC.size_class(3 * 2**21 + 5) == 7 * 2**20  # 6 MiB + 5 bytes: 1 MiB steps


@needs_device
def test_allocation_beyond_the_device_is_a_runtime_error():
    too_big = torch.xpu.get_device_properties().max_mem_alloc_size + 1
    with pytest.raises(RuntimeError, match="can't allocate memory"):
        torch.empty(too_big, dtype=torch.uint8, device="xpu")


# -- programs ---------------------------------------------------------------------------------

SCALE = """
__kernel void scale(__global float* x, long n, float factor) {
  long i = get_global_id(0);
  if (i < n) x[i] *= factor;
}
"""


@needs_device
def test_program_build_run_and_memory_cache():
    programs = xpu_module.programs()
    source = SCALE + "// test_program_build_run_and_memory_cache\n"
    kernel = programs.kernel(0, source, "scale", "blf")
    hits = programs.stats["memory_hits"]
    assert programs.program(0, source) is programs.program(0, source)
    assert programs.stats["memory_hits"] == hits + 2
    x = torch.arange(6.0).to("xpu")
    handle, offset = torch.backends.contract.memory(x)
    assert offset == 0
    kernel((6,), None, handle, 6, 2.5)
    np.testing.assert_allclose(x.cpu().numpy(), np.arange(6.0) * 2.5)


@needs_device
def test_build_errors_carry_the_log():
    with pytest.raises(RuntimeError, match="OpenCL program build failed") as info:
        xpu_module.programs().program(0, "__kernel void broken(__global float* x) { x[0] = ; }")
    assert "error" in str(info.value).lower()


@needs_device
def test_disk_cache_serves_a_second_process(tmp_path):
    code = f"""
        import json, torch
        from plait_backend_xpu import device_module as xpu
        programs = xpu.programs()
        programs.program(0, {SCALE!r})
        print(json.dumps(dict(programs.stats)))
    """
    env = {"PLAIT_XPU_CACHE_DIR": str(tmp_path), "PLAIT_XPU_DEVICE_TYPE": "all"}
    first = run_python(code, **env)
    binaries = list(tmp_path.glob("*/*.bin"))
    assert first.get("source_builds") == 1 and len(binaries) == 1
    second = run_python(code, **env)
    assert second.get("binary_loads") == 1 and not second.get("source_builds")
    binaries[0].write_bytes(b"not a binary")  # a damaged entry is rebuilt, not an error
    third = run_python(code, **env)
    assert third.get("source_builds") == 1


# -- kernels ----------------------------------------------------------------------------------


@needs_device
def test_elementwise_kernels_run_on_the_device():
    a_np = np.linspace(0.5, 3.0, 12, dtype=np.float32).reshape(3, 4)
    b_np = np.linspace(-1.5, 2.0, 4, dtype=np.float32)  # no zero: no division by it
    a, b = torch.from_numpy(a_np).to("xpu"), torch.from_numpy(b_np).to("xpu")
    calls = dict(xpu_kernels.CALLS)
    with no_fallback():
        results = {
            "add": (a + b, a_np + b_np),  # b broadcast: stride 0
            "sub": (a.t() - 1, a_np.T - 1),  # transposed: strided
            "mul": (a * a, a_np * a_np),
            "div": (a / b, a_np / b_np),
            "neg": (-a[:, 1:3], -a_np[:, 1:3]),
            "exp": (a.exp(), np.exp(a_np)),
            "log": (a.log(), np.log(a_np)),
            "fill": (torch.full((2, 3), 7.5, device="xpu"), np.full((2, 3), 7.5, np.float32)),
        }
        got = {name: r.cpu().numpy() for name, (r, _) in results.items()}
    for name, (_, expected) in results.items():
        np.testing.assert_allclose(got[name], expected, rtol=2e-6, err_msg=name)
    # every primitive ran on the device (core warns of a fallback only once per process, so
    # the kernels' own counts are what tells)
    for op in ("add", "sub", "mul", "div", "neg", "exp", "log", "fill_"):
        assert xpu_kernels.CALLS[op] > calls.get(op, 0), op


@needs_device
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float16, torch.bfloat16,
                                   torch.float64])
def test_arithmetic_and_casts_per_dtype(dtype):
    values = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float64)
    x = torch.from_numpy(values).to(dtype).to("xpu")
    calls = dict(xpu_kernels.CALLS)
    with no_fallback():
        total = (x + x) * x - x
        as_float = total.to(torch.float32)
    np.testing.assert_array_equal(as_float.cpu().numpy(), (values + values) * values - values)
    for op in ("add", "mul", "sub", "copy_"):  # copy_: the cast to float32
        assert xpu_kernels.CALLS[op] > calls.get(op, 0), op


@needs_device
def test_half_rounding_and_bool_cast():
    x = torch.tensor([1.0, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 0.0, -2.5]).to("xpu")
    # round to nearest even at float16's 10-bit mantissa
    np.testing.assert_array_equal(x.half().cpu().float().numpy(),
                                  np.array([1.0, 1.0, 1.0 + 2.0**-9, 0.0, -2.5], np.float32))
    np.testing.assert_array_equal(x.bool().cpu().numpy(), [True, True, True, False, True])
    assert x.bfloat16().cpu().float().tolist() == [1.0, 1.0, 1.0, 0.0, -2.5]


@needs_device
def test_declined_cases_fall_back_to_the_cpu():
    # where with a uint8 condition (core passes bool; the primitive's kernel declines others)
    where = torch.backends.contract.primitive("where")
    condition = torch.tensor([1, 0, 2], dtype=torch.uint8)
    a, b = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([-1.0, -2.0, -3.0])
    out = torch.empty(3, device="xpu")
    calls = xpu_kernels.CALLS["where"]
    with warnings.catch_warnings():
        # core warns once per operator and process: whether this call warns depends on order
        warnings.simplefilter("ignore", UserWarning)
        where(out, condition.to("xpu"), a.to("xpu"), b.to("xpu"))  # the CPU fallback's
    assert out.cpu().tolist() == [1.0, -2.0, 3.0]
    assert xpu_kernels.CALLS["where"] == calls


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vector_elementwise_kernels_on_cpu_devices(dtype):
    # contiguous floats of one dtype run 16 floats (8 doubles) per work item on CPU devices:
    # odd lengths (a partial last run), views at an offset, every vector-safe row
    rng = np.random.default_rng(21)
    dt = getattr(torch, dtype)
    x_np = rng.uniform(0.5, 2.0, 103)
    y_np = rng.uniform(0.5, 2.0, 103)
    x = torch.from_numpy(x_np).to(dt).to("xpu")[3:]
    y = torch.from_numpy(y_np).to(dt).to("xpu")[3:]
    # the expected values from the inputs as the dtype holds them, in double
    xs, ys = x.cpu().numpy().astype(np.float64), y.cpu().numpy().astype(np.float64)
    with no_fallback():
        checks = [(x + y, xs + ys), (x * y, xs * ys), (x / y, xs / ys), (-x, -xs),
                  (torch.exp(x), np.exp(xs)), (torch.log(x), np.log(xs)),
                  (torch.sqrt(x), np.sqrt(xs)), (torch.pow(x, y), xs**ys),
                  (torch.tanh(x), np.tanh(xs)), (torch.rsqrt(x), 1 / np.sqrt(xs))]
    rtol = 2e-6 if dtype == "float32" else 1e-13
    for got, want in checks:
        np.testing.assert_allclose(got.cpu().numpy(), want, rtol=rtol)
    on_cpu = xpu_module.device_info(0)["type"] == "cpu"
    vectors = {key[1] for key in xpu_kernels._KERNELS if key[-1] == "vector" and key[2] == dtype}
    assert ({"add", "mul", "div.None", "exp", "pow"} <= vectors) == on_cpu
    # the renderer: OpenCL vectors, a scalar tail; no CUDA spelling
    source = render.render_elementwise_vector(render.OPENCL, "add", "{a} + {b}", dtype, 2)
    width = render.VECTOR_WIDTHS[dtype]
    assert f"vload{width}" in source.source and f"vstore{width}" in source.source
    assert source.signature == "bbb(" + "l" * 4 + ")"  # count and offsets: one long4
    with pytest.raises(ValueError, match="OpenCL C only"):
        render.render_elementwise_vector(render.CUDA, "add", "{a} + {b}", dtype, 2)


PACKED = """
__kernel void packed(__global float* out, long4 counts, float scale, long extra) {
  const long i = get_global_id(0);
  if (i < counts.s0) out[counts.s1 + i] = (counts.s2 + 10 * counts.s3 + i) * scale + extra;
}
"""


@needs_device
def test_packed_arguments_are_passed_one_by_one():
    # a parenthesised group of the signature is one vector argument of the kernel: the caller
    # passes its values one by one, and arguments after it keep their places
    kernel = xpu_module.programs().kernel(0, PACKED, "packed", "b(lll)fl")
    assert kernel.signature == "blllfl"
    x = torch.zeros(8).to("xpu")
    handle, _ = torch.backends.contract.memory(x)
    kernel((8,), None, handle, 3, 0, 1, 2.0, 100)
    kernel((8,), None, handle, 2, 5, 2, 0.5, 7)  # a launch that changes only some values
    want = np.zeros(8)
    want[0:3] = (1 + np.arange(3)) * 2.0 + 100
    want[5:7] = (2 + np.arange(2)) * 0.5 + 7
    np.testing.assert_allclose(x.cpu().numpy(), want)
    program = xpu_module.programs().program(0, PACKED)
    for bad in ("b(lil)fl", "b(lll", "b()fl", "b((l))", "b(lllllllll)"):
        with pytest.raises(ValueError):
            XC.Kernel(program, "packed", bad)


@needs_device
def test_vector_kernels_take_each_calls_offsets():
    # the same vector kernel on views at other offsets, call after call (the packed count and
    # offsets change between launches), through the generic path and the fast path's plans
    base = np.arange(40, dtype=np.float32)
    x = torch.from_numpy(base.copy()).to("xpu")
    with no_fallback():
        for start in (0, 3, 17, 3):
            got = (x[start:] + x[:40 - start]).cpu().numpy()
            np.testing.assert_array_equal(got, base[start:] + base[:40 - start])
            got = torch.exp(x[start:]).cpu().numpy()
            np.testing.assert_allclose(got, np.exp(base[start:].astype(np.float64)), rtol=2e-6)


@needs_device
@pytest.mark.parametrize("device", ["cpu", "xpu"])
def test_std_mean_rounds_a_16_bit_std_once(device):
    # the root of the float64 variance rounded once to float16, as PyTorch's std_mean (and std)
    # give; rounding the variance to float16 first lands one ulp lower on this sample
    values = np.array([4.921875, 3.0703125, 7.9765625], dtype=np.float16)
    variance = np.var(values.astype(np.float64), ddof=1)
    once = np.float16(np.sqrt(variance))
    assert once != np.float16(np.sqrt(np.float64(np.float16(variance))))  # the sample tells
    t = torch.tensor(values.tolist(), dtype=torch.float16).to(device)
    std, mean = torch.std_mean(t)
    assert std.dtype == torch.float16 and std.item() == float(once)
    assert mean.item() == float(np.float16(values.astype(np.float64).mean()))
    assert torch.std(t).item() == float(once)


@needs_device
def test_float64_on_a_device_without_double_precision_is_an_error(monkeypatch, request):
    x = torch.ones(3, dtype=torch.float64).to("xpu")  # moves raw words: every device
    z = torch.ones(3, dtype=torch.complex128).to("xpu")
    monkeypatch.setattr(xpu_kernels, "device_fp64", lambda index: False)
    # kernels found for contiguous operands skip the checks (a device's capabilities never
    # change): start from none, as on such a device, and again after the test
    monkeypatch.setattr(xpu_kernels, "_CONTIGUOUS", {})
    xpu_fast.forget()
    request.addfinalizer(xpu_fast.forget)
    for compute in (lambda: x + x, lambda: x.sum(), lambda: z * z, lambda: x.exp()):
        with pytest.raises(RuntimeError, match="Required aspect fp64 is not supported"):
            compute()
    assert x.cpu().tolist() == [1.0, 1.0, 1.0]  # copies still run
    assert (torch.ones(3).to("xpu") * 2).cpu().tolist() == [2.0, 2.0, 2.0]


@needs_device
def test_held_launches_run_before_every_wait():
    # a CPU device holds kernels behind a gate (64 at a time): reads, blocking writes and
    # synchronize open it, and the in-order queue keeps every result in order
    x = torch.zeros(4, device="xpu")
    for _ in range(150):  # opens by itself twice, then 22 held
        x.add_(1)
    assert x.cpu().tolist() == [150.0] * 4
    y = x * 2  # held
    x.copy_(torch.full((4,), -1.0))  # an upload after it: y keeps the value before
    torch.xpu.synchronize()
    assert y.cpu().tolist() == [300.0] * 4 and x.cpu().tolist() == [-1.0] * 4
    z = torch.ones(3, device="xpu") + 1
    assert torch.equal(z.to("cpu"), torch.full((3,), 2.0))


@needs_device
def test_thirteen_dims_that_do_not_merge_run_on_the_device():
    # one operand's dims reversed: nothing merges (beyond the reductions' 12 dims)
    x = torch.arange(2**13, dtype=torch.float32).reshape((2,) * 13)
    y = x.permute(*reversed(range(13)))
    adds, copies = xpu_kernels.CALLS["add"], xpu_kernels.CALLS["copy_"]
    with no_fallback():
        total = x.to("xpu") + y.to("xpu")
        moved = y.to("xpu").contiguous()
    assert torch.equal(total.cpu(), x + y)
    assert torch.equal(moved.cpu(), y.contiguous())
    assert xpu_kernels.CALLS["add"] == adds + 1 and xpu_kernels.CALLS["copy_"] > copies


@needs_device
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_arithmetic_matches_the_cpu(dtype):
    rng = np.random.default_rng(14)
    a = torch.from_numpy(rng.uniform(-3, 3, (4, 5)) + 1j * rng.uniform(-3, 3, (4, 5))).to(
        getattr(torch, dtype)).t()
    b = torch.from_numpy(rng.uniform(-3, 3, (1, 4)) + 1j * rng.uniform(-3, 3, (1, 4))).to(
        getattr(torch, dtype)).expand(5, 4)
    tolerance = (1.3e-6, 1e-5) if dtype == "complex64" else (1e-7, 1e-7)
    for name, inputs, out_dtype in (("neg", [a], dtype), ("add", [a, b], dtype),
                                    ("sub", [a, b], dtype), ("mul", [a, b], dtype),
                                    ("div", [a, b], dtype), ("eq", [a, a], "bool"),
                                    ("ne", [a, b], "bool")):
        got, want = _run_both(name, out_dtype, inputs, (5, 4))
        torch.testing.assert_close(got, want, rtol=tolerance[0], atol=tolerance[1])
    calls = xpu_kernels.CALLS["fill_"]
    filled = torch.full((3,), 1.5 - 2j, dtype=getattr(torch, dtype), device="xpu")
    assert xpu_kernels.CALLS["fill_"] == calls + 1
    assert filled.cpu().tolist() == [1.5 - 2j] * 3
    for source in (torch.float32, torch.int64, torch.complex64, torch.complex128):
        x = torch.arange(-3, 3).to(source)
        got, want = _run_both("copy_", dtype, [x], (6,))
        assert torch.equal(got, want), source


# -- the primitive table on the device ------------------------------------------------------

# Primitives still served by the CPU fallback on xpu: a kernel added for one of them must take
# it off this list (and one that loses its kernel fails here).
STILL_FALLING_BACK: set[str] = set()


@needs_device
def test_which_primitives_fall_back():
    from torch.testing._conformance import coverage

    rows = {row.name.removeprefix("prims::"): row.status for row in coverage("xpu")
            if row.name.startswith("prims::")}
    falling_back = {name for name, status in rows.items() if status == "cpu fallback"}
    assert falling_back == STILL_FALLING_BACK
    assert all(rows[name] == "native" for name in rows if name not in STILL_FALLING_BACK)
    fused = {row.name for row in coverage("xpu") if row.group == "fused"}
    assert {"aten::_softmax", "aten::_log_softmax", "aten::_softmax_backward_data",
            "aten::_log_softmax_backward_data"} <= fused


def _operand(name: str, dtype: str, shape: tuple[int, ...], index: int) -> torch.Tensor:
    """Sample values for input ``index`` of elementwise primitive ``name`` in ``dtype``, from
    the op table's sample domain for it (the conformance suite's makers), on the CPU."""
    from torch._core import op_tables
    from torch.testing._conformance import samples

    domain = op_tables.primitive_domain(name)
    values = samples._maker(domain[index])(samples.Gen(index + 7), shape, samples.dtype(dtype))
    if dtype == "bfloat16":  # the storage holds bfloat16 bits
        return torch.from_numpy(values.astype(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(values))


def _run_both(name: str, out_dtype: str, inputs: list, shape: tuple[int, ...],
              **kwargs) -> tuple[torch.Tensor, torch.Tensor]:
    """Primitive ``name`` on the CPU and on xpu (inputs moved there as views of the same
    layout), the xpu result read back."""
    prim = torch.backends.contract.primitive(name)
    dt = getattr(torch, out_dtype)
    want = torch.empty(shape, dtype=dt)
    prim(want, *inputs, **kwargs)
    got = torch.empty(shape, dtype=dt, device="xpu")
    moved = []
    for t in inputs:  # keep each input's strides: a transposed or broadcast view stays one
        if not isinstance(t, torch.Tensor):
            moved.append(t)
            continue
        base = t.as_strided((t.untyped_storage().nbytes() // t.element_size(),), (1,), 0)
        moved.append(base.to("xpu").as_strided(t.shape, t.stride(), t.storage_offset()))
    before = xpu_kernels.CALLS[name]
    prim(got, *moved, **kwargs)
    assert xpu_kernels.CALLS[name] == before + 1, f"{name} did not run on the device"
    return got.cpu(), want


def _assert_matches(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    tolerance = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5),
                 torch.float32: (1.3e-6, 1e-5), torch.float64: (1e-7, 1e-7)}
    rtol, atol = tolerance.get(want.dtype, (0, 0))
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True, msg=lambda m:
                               f"{what}: {m}")


def _first_dtypes(name: str) -> list[str]:
    """float32 where the primitive takes it, and int32/int8/bool where it takes them: one
    program per dtype kind keeps this test fast (the conformance suite runs every dtype)."""
    from torch._core import op_tables

    dtypes = op_tables.primitive_dtypes(name)
    return [d for d in ("float32", "int32", "bool") if d in dtypes]


ELEMENTWISE = [(kind, name) for kind in ("unary", "binary", "compare")
               for name in __import__("torch._core.op_tables", fromlist=["x"]).primitives(kind)
               if name != "div"]


@needs_device
@pytest.mark.parametrize("kind,name", ELEMENTWISE, ids=[n for _, n in ELEMENTWISE])
def test_elementwise_rows_match_the_cpu(kind, name):
    from torch._core import op_tables

    row = next(r for r in op_tables.POINTWISE if r.prim == name)
    arity = 1 if kind == "unary" else 2
    for dtype in _first_dtypes(name):
        # a transposed first operand and a broadcast row: the strided kernel, stride 0
        a = _operand(name, dtype, (5, 4), 0).t()
        inputs = [a] + [_operand(name, dtype, (1, 5), 1).expand(4, 5) for _ in range(arity - 1)]
        out_dtype = "bool" if kind == "compare" or row.promotion == "to_bool" else dtype
        got, want = _run_both(name, out_dtype, inputs, (4, 5))
        _assert_matches(got, want, f"{name}[{dtype}]")


@needs_device
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int64", "float16", "bfloat16",
                                   "float64"])
def test_elementwise_every_dtype(dtype):
    from torch._core import op_tables

    for name in ("neg", "abs", "sign", "sqrt", "floor", "maximum", "pow", "remainder",
                 "nextafter", "bitwise_right_shift", "lt", "logical_xor"):
        if dtype not in op_tables.primitive_dtypes(name):
            continue
        arity = 1 if name in op_tables.primitives("unary") else 2
        inputs = [_operand(name, dtype, (3, 7), k)[:, ::2] for k in range(arity)]  # strided
        out_dtype = "bool" if name in ("lt", "logical_xor") else dtype
        got, want = _run_both(name, out_dtype, inputs, (3, 4))
        _assert_matches(got, want, f"{name}[{dtype}]")


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "int8"])
def test_div_rounding_modes(dtype):
    a = _operand("div", dtype, (6, 5), 0)
    b = _operand("div", dtype, (6, 5), 1)
    modes = ["trunc", "floor"] + ([None] if "float" in dtype else [])
    for mode in modes:
        got, want = _run_both("div", dtype, [a, b], (6, 5), rounding_mode=mode)
        _assert_matches(got, want, f"div[{dtype}, {mode}]")


@needs_device
def test_integer_division_by_zero_gives_zero_without_a_trap():
    a = torch.tensor([7, -7, -(2**63)], dtype=torch.int64).to("xpu")
    zero = torch.zeros(3, dtype=torch.int64, device="xpu")
    minus_one = torch.full((3,), -1, dtype=torch.int64, device="xpu")
    out = torch.empty(3, dtype=torch.int64, device="xpu")
    prim = torch.backends.contract.primitive
    prim("div")(out, a, zero, rounding_mode="trunc")
    assert out.cpu().tolist() == [0, 0, 0]
    prim("remainder")(out, a, zero)
    assert out.cpu().tolist() == [0, 0, 0]
    prim("div")(out, a, minus_one, rounding_mode="floor")  # the minimum wraps
    assert out.cpu().tolist() == [-7, 7, -(2**63)]


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "int16", "bool", "complex64", "bfloat16"])
def test_where_selects_raw_words(dtype):
    condition = torch.tensor([[True, False, True], [False, False, True]])
    a = torch.arange(6).reshape(2, 3).to(getattr(torch, dtype))
    b = torch.full((1, 3), 1, dtype=getattr(torch, dtype)).expand(2, 3)
    got, want = _run_both("where", dtype, [condition, a, b], (2, 3))
    assert torch.equal(got, want)


@needs_device
@pytest.mark.parametrize("dtype,start,step", [("float32", 0.5, 0.25), ("int64", 5, -3),
                                              ("float16", -3, 0.1), ("int8", 100, 1)])
def test_arange(dtype, start, step):
    got, want = _run_both("arange_", dtype, [], (17,), start=start, step=step)
    _assert_matches(got, want, f"arange_[{dtype}]")


REDUCE_DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int8", "bool"]


@needs_device
@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "any", "all"])
def test_reductions_match_the_cpu(name):
    from torch._core import op_tables

    row = next(r for r in op_tables.REDUCTIONS if r.prim == name)
    low, high = row.domain[0] if isinstance(row.domain[0], tuple) else (-5, 5)
    rng = np.random.default_rng(3)
    for dtype in REDUCE_DTYPES:
        if dtype not in row.dtypes:
            continue
        base = torch.from_numpy(rng.uniform(low, high, (6, 300))).to(getattr(torch, dtype))
        out_dtype = "bool" if name in ("any", "all") else dtype
        for dims, a in (([1], base), ([0], base.t()), ([0, 1], base[:, ::3]), ([1], base[:2])):
            shape = tuple(1 if d in dims else s for d, s in enumerate(a.shape))
            got, want = _run_both(name, out_dtype, [a], shape, dims=dims)
            tolerance = {"float32": (1e-5, 1e-4), "float16": (1e-3, 1e-3),
                         "bfloat16": (1.6e-2, 1e-2)}.get(dtype, (1e-7, 1e-7))
            what = f"{name}[{dtype}] {dims}"
            torch.testing.assert_close(got, want, rtol=tolerance[0], atol=tolerance[1],
                                       equal_nan=True, msg=lambda m, what=what: f"{what}: {m}")


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "bool"])
def test_long_rows_reduce_in_two_passes(dtype):
    # few outputs of long rows: each row is cut into chunks (one work-group each), then the
    # chunks' accumulators are reduced
    rng = np.random.default_rng(13)
    base = torch.from_numpy(rng.uniform(-2, 2, (3, 50_000))).to(getattr(torch, dtype))
    for name in ("sum", "amax", "any", "all"):
        if name == "sum" and dtype == "bool":
            continue
        out_dtype = "bool" if name in ("any", "all") else dtype
        for dims, a in (([0, 1], base), ([1], base), ([1], base[:, ::3])):
            shape = tuple(1 if d in dims else s for d, s in enumerate(a.shape))
            got, want = _run_both(name, out_dtype, [a], shape, dims=dims)
            torch.testing.assert_close(got, want, rtol=2e-3, atol=1e-2)


@needs_device
def test_contiguous_rows_reduce_through_lanes_with_nan_anywhere():
    # On a CPU device contiguous rows run with several accumulators per work item and the
    # leftover elements after them: a NaN in either part, or a row of -inf, must come out
    # as on the CPU; 37 = two blocks of 16 lanes and 5 left over.
    a = torch.arange(8 * 37, dtype=torch.float32).reshape(8, 37).remainder(11.0) - 5.0
    a[1, 3] = float("nan")  # in the lanes
    a[2, 35] = float("nan")  # in the leftovers
    a[3] = float("-inf")
    a[4, 0] = float("inf")
    for name in ("amax", "amin", "sum"):
        got, want = _run_both(name, "float32", [a], (8, 1), dims=[1])
        torch.testing.assert_close(got, want, equal_nan=True)
        assert got[1, 0].isnan() and got[2, 0].isnan(), name


@needs_device
@pytest.mark.parametrize("name", ["argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin"])
def test_index_reductions_and_scans_match_the_cpu(name):
    rng = np.random.default_rng(4)
    for dtype in ("float32", "int64", "float16"):
        base = torch.from_numpy(rng.integers(-3, 4, (5, 40)).astype(np.float64))
        base = base.to(getattr(torch, dtype))  # small integers: ties occur
        if dtype != "int64":
            base[1, 3] = float("nan")
        for dim, a in ((1, base), (0, base.t()), (1, base[:, ::2])):
            if name.startswith("arg"):
                shape = tuple(1 if d == dim else s for d, s in enumerate(a.shape))
                got, want = _run_both(name, "int64", [a], shape, dim=dim)
                assert torch.equal(got, want), f"{name}[{dtype}]"
            elif name in ("cummax", "cummin"):
                prim = torch.backends.contract.primitive(name)
                values, indices = torch.empty_like(a), torch.empty(a.shape, dtype=torch.int64)
                prim(values, indices, a, dim)
                x = a.to("xpu")
                gv, gi = torch.empty_like(x), torch.empty(a.shape, dtype=torch.int64,
                                                          device="xpu")
                prim(gv, gi, x, dim)
                assert torch.equal(gi.cpu(), indices), f"{name}[{dtype}]"
                torch.testing.assert_close(gv.cpu(), values, equal_nan=True)
            else:
                got, want = _run_both(name, dtype, [a], tuple(a.shape), dim=dim)
                torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3, equal_nan=True)


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "bool"])
def test_tiled_matmul_matches_the_cpu(dtype):
    rng = np.random.default_rng(5)
    dt = getattr(torch, dtype)

    def values(*shape):
        return torch.from_numpy(rng.integers(-3, 4, shape).astype(np.float64)).to(dt)

    cases = [
        ((37, 19), values(37, 50), values(50, 19)),  # edges of 16 x 16 tiles
        ((2, 3, 17, 5), values(2, 3, 17, 33), values(5, 33).t().expand(2, 3, 33, 5)),
        ((4, 9, 6), values(4, 6, 9).transpose(1, 2), values(4, 6, 6)[:, :, :6]),
    ]
    for shape, a, b in cases:
        got, want = _run_both("matmul", dtype, [a, b], shape)
        tolerance = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2)}.get(dtype, (0, 0))
        torch.testing.assert_close(got, want, rtol=tolerance[0], atol=tolerance[1])


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_register_blocked_matmul_matches_the_cpu(dtype):
    # Shapes whose last block hangs over the edge (moved back inside), a transposed a, a
    # broadcast batch (stride 0) and an empty k; integers, so the sums are exact.
    from plait_backend_xpu import linalg

    rng = np.random.default_rng(8)
    dt = getattr(torch, dtype)

    def values(*shape):
        return torch.from_numpy(rng.integers(-3, 4, shape).astype(np.float64)).to(dt)

    cases = [
        ((5, 9), values(5, 21), values(21, 9)),
        ((3, 7, 19), values(3, 11, 7).transpose(1, 2), values(11, 19).expand(3, 11, 19)),
        ((4, 8), values(4, 0), values(0, 8)),
        # wider than a vector row (16 floats, 8 doubles): the vector-blocked kernel, the last
        # column block and row block moved back inside
        ((6, 37), values(6, 13), values(13, 37)),
        ((2, 5, 40), values(2, 5, 9), values(2, 40, 9).transpose(1, 2)[:, :, :]),
    ]
    for shape, a, b in cases:
        got, want = _run_both("matmul", dtype, [a, b], shape)
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    # PoCL's CPU device takes the blocked kernels (a GPU keeps the tiled one): the vector one
    # from a vector's width (8 doubles, so float64 never takes the 8-column scalar block)
    on_cpu = xpu_module.device_info(0)["type"] == "cpu"
    kinds = ("matmul_blocked", "matmul_vector") if dtype == "float32" else ("matmul_vector",)
    for kind in kinds:
        ran = {key[2] for key in xpu_kernels._KERNELS if key[0] == kind}
        assert (dtype in ran) == on_cpu, kind
    assert linalg._blocked(0, dtype, torch.empty(4, 8), torch.empty(3, 8).t()) is False


@needs_device
def test_register_blocked_matmul_renders_for_cuda_too():
    source = render_matmul.render_matmul_blocked(render.CUDA, "float32", 1, 4, 8).source
    assert "__global__" in source and "bsize0" in source
    # the vector-blocked kernel is OpenCL C only (CPU devices under OpenCL)
    vector = render_matmul.render_matmul_vector(render.OPENCL, "float64", 1, 4).source
    assert "double8" in vector and "vload8" in vector and "vstore8" in vector
    with pytest.raises(ValueError, match="OpenCL C only"):
        render_matmul.render_matmul_vector(render.CUDA, "float32", 1, 4)


@needs_device
def test_matmul_through_the_public_api():
    a = torch.arange(12.0).reshape(3, 4)
    b = torch.arange(8.0).reshape(4, 2)
    calls = xpu_kernels.CALLS["matmul"]
    with no_fallback():
        got = (a.to("xpu") @ b.to("xpu")).cpu()
    assert xpu_kernels.CALLS["matmul"] == calls + 1
    np.testing.assert_array_equal(got.numpy(), a.numpy() @ b.numpy())


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "int16", "bfloat16", "complex128", "bool"])
def test_gather_matches_the_cpu(dtype):
    rng = np.random.default_rng(6)
    a = torch.from_numpy(rng.integers(-50, 50, (5, 7)).astype(np.float64)).to(getattr(torch, dtype))
    for dim, a_view, index_shape in ((0, a, (3, 7)), (1, a.t(), (4, 5)), (1, a[:, ::2], (5, 2))):
        index = torch.from_numpy(rng.integers(0, a_view.shape[dim], index_shape))
        got, want = _run_both("gather", dtype, [a_view, dim, index], index_shape)
        assert torch.equal(got, want), (dtype, dim)


@needs_device
@pytest.mark.parametrize("reduce", ["none", "sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "float16"])
def test_scatter_matches_the_cpu(reduce, dtype):
    rng = np.random.default_rng(7)
    dt = getattr(torch, dtype)
    prim = torch.backends.contract.primitive("scatter_")
    for dim, include_self in ((0, True), (1, False)):
        init = torch.from_numpy(rng.integers(-4, 5, (4, 6)).astype(np.float64)).to(dt)
        src = torch.from_numpy(rng.integers(-4, 5, (6, 6)).astype(np.float64)).to(dt)
        # unique targets along dim for "none" (repeats would leave the winner unspecified)
        if reduce == "none":
            index = torch.from_numpy(np.argsort(rng.random((4, 6)), axis=dim)[:3, :5]
                                     if dim == 0 else np.argsort(rng.random((3, 6)),
                                                                 axis=1)[:, :5])
        else:
            index = torch.from_numpy(rng.integers(0, init.shape[dim], (3, 5)))
        want = init.clone()
        prim(want, dim, index, src, reduce=reduce, include_self=include_self)
        got = init.to("xpu")
        before = xpu_kernels.CALLS["scatter_"]
        prim(got, dim, index.to("xpu"), src.to("xpu"), reduce=reduce, include_self=include_self)
        assert xpu_kernels.CALLS["scatter_"] == before + 1
        torch.testing.assert_close(got.cpu(), want, rtol=1e-3, atol=1e-3)


@needs_device
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_matches_the_cpu(right):
    seq = torch.tensor([[0.0, 1.0, 1.0, 2.5, float("nan")], [-3.0, -1.0, 0.0, 0.0, 4.0]])
    values = torch.tensor([[1.0, -5.0, 2.5, float("nan")], [0.0, 5.0, -1.0, -2.0]])
    got, want = _run_both("searchsorted", "int64", [seq, values], (2, 4), right=right)
    assert torch.equal(got, want)
    one_row = torch.tensor([0, 2, 4, 4, 9], dtype=torch.int32)
    many = torch.tensor([[4, 0, 10], [3, 9, -1]], dtype=torch.int32)
    got, want = _run_both("searchsorted", "int64", [one_row, many], (2, 3), right=right)
    assert torch.equal(got, want)


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "int8", "bool", "bfloat16"])
def test_nonzero_matches_the_cpu(dtype):
    rng = np.random.default_rng(8)
    prim = torch.backends.contract.primitive("nonzero")
    a = torch.from_numpy(rng.integers(-1, 2, (6, 5000)).astype(np.float64)).to(getattr(torch,
                                                                                      dtype))
    for view in (a, a.t(), a[:, ::7], a[2:3, 10:20], torch.zeros(3, 0), a[0, 0]):
        want = prim(view)
        got = prim(view.to("xpu"))
        assert got.shape == want.shape and got.stride() == want.stride()
        assert torch.equal(got.cpu(), want)


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "bool"])
def test_sort_and_topk_match_the_cpu(dtype):
    rng = np.random.default_rng(9)
    dt = getattr(torch, dtype)
    a = torch.from_numpy(rng.integers(-3, 4, (5, 70)).astype(np.float64)).to(dt)  # ties
    if dtype.startswith("float"):
        a[1, ::9] = float("nan")
    sort, topk = (torch.backends.contract.primitive(n) for n in ("sort", "topk"))
    for dim, view in ((1, a), (0, a.t()), (1, a[:, ::3])):
        for descending in (False, True):
            want = torch.empty_like(view), torch.empty(view.shape, dtype=torch.int64)
            sort(*want, view, dim, descending)
            x = view.to("xpu")
            got = torch.empty_like(x), torch.empty(x.shape, dtype=torch.int64, device="xpu")
            sort(*got, x, dim, descending)
            assert torch.equal(got[1].cpu(), want[1]), (dim, descending)  # stable: the same
            torch.testing.assert_close(got[0].cpu(), want[0], equal_nan=True)
            shape = tuple(4 if d == dim else s for d, s in enumerate(view.shape))
            want = torch.empty(shape, dtype=dt), torch.empty(shape, dtype=torch.int64)
            topk(*want, view, 4, dim, descending)
            got = (torch.empty(shape, dtype=dt, device="xpu"),
                   torch.empty(shape, dtype=torch.int64, device="xpu"))
            topk(*got, x, 4, dim, descending)
            assert torch.equal(got[1].cpu(), want[1]), (dim, descending)
            torch.testing.assert_close(got[0].cpu(), want[0], equal_nan=True)


CONVOLUTIONS = [  # (input shape, weight shape, stride, padding, dilation, transposed, groups)
    ((2, 3, 9), (4, 3, 3), [2], [1], [2], False, 1),
    ((2, 4, 7, 8), (6, 2, 3, 2), [2, 1], [1, 2], [1, 2], False, 2),
    ((1, 2, 4, 5, 3), (2, 2, 2, 2, 2), [1, 2, 1], [1, 0, 1], [1, 1, 1], False, 1),
    ((2, 3, 5), (3, 2, 3), [2], [1], [1], True, 1),
    ((1, 4, 4, 3), (4, 3, 3, 2), [2, 2], [1, 0], [1, 2], True, 2),
]


def _conv_out(size, kernel, stride, padding, dilation, transposed):
    if transposed:
        return [(s - 1) * st - 2 * p + d * (k - 1) + 1
                for s, k, st, p, d in zip(size, kernel, stride, padding, dilation)]
    return [(s + 2 * p - d * (k - 1) - 1) // st + 1
            for s, k, st, p, d in zip(size, kernel, stride, padding, dilation)]


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_convolution_matches_the_cpu(dtype):
    rng = np.random.default_rng(10)
    dt = getattr(torch, dtype)
    for in_shape, w_shape, stride, padding, dilation, transposed, groups in CONVOLUTIONS:
        x = torch.from_numpy(rng.integers(-3, 4, in_shape).astype(np.float64)).to(dt)
        w = torch.from_numpy(rng.integers(-3, 4, w_shape).astype(np.float64)).to(dt)
        spatial = _conv_out(in_shape[2:], w_shape[2:], stride, padding, dilation, transposed)
        channels = w_shape[1] * groups if transposed else w_shape[0]
        shape = (in_shape[0], channels, *spatial)
        if len(in_shape) == 4:
            x = x.transpose(2, 3).contiguous().transpose(2, 3)  # a strided input
        got, want = _run_both("convolution", dtype, [x, w, stride, padding, dilation,
                                                     transposed, groups], shape)
        torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3)


@needs_device
@pytest.mark.parametrize("dims", [[1], [0, 1], [1, 0]])
def test_spectral_transforms_match_the_cpu(dims):
    rng = np.random.default_rng(11)
    signal = torch.from_numpy(rng.standard_normal((4, 7)))
    spectrum = torch.from_numpy(rng.standard_normal((4, 7)) + 1j * rng.standard_normal((4, 7)))
    for normalization in (0, 1, 2):
        for forward in (True, False):
            got, want = _run_both("fft_c2c", "complex128", [spectrum, dims, normalization,
                                                            forward], (4, 7))
            torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9)
        onesided = [4, 7]
        onesided[dims[-1]] = onesided[dims[-1]] // 2 + 1
        got, want = _run_both("fft_r2c", "complex128", [signal, dims, normalization, True],
                              tuple(onesided))
        torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9)
        for n in (6, 7):  # even and odd signal lengths: (n // 2 + 1) terms either way
            shape = [4, 7]
            shape[dims[-1]] = n
            half = list(shape)
            half[dims[-1]] = n // 2 + 1
            got, want = _run_both("fft_c2r", "float64",
                                  [spectrum[: half[0], : half[1]], dims, normalization],
                                  tuple(shape))
            torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9)


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_fused_softmax_matches_the_cpu(dtype):
    rng = np.random.default_rng(12)
    dt = getattr(torch, dtype)
    x = torch.from_numpy(rng.standard_normal((3, 5, 4))).to(dt)
    x[0, 1, 2] = float("nan")  # its row turns NaN
    tolerance = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5)}.get(dtype, (1.3e-6, 1e-5))
    for name, fn in (("_softmax", torch.softmax), ("_log_softmax", torch.log_softmax)):
        for dim in (0, 1, -1):
            calls = xpu_kernels.CALLS[name]
            got = fn(x.to("xpu"), dim).cpu()
            assert xpu_kernels.CALLS[name] == calls + 1
            torch.testing.assert_close(got, fn(x, dim), rtol=tolerance[0], atol=tolerance[1],
                                       equal_nan=True)
        if dtype in ("float32", "float64"):
            on_cpu = x.nan_to_num().requires_grad_()
            on_xpu = x.nan_to_num().to("xpu").requires_grad_()
            g = torch.from_numpy(rng.standard_normal((3, 5, 4))).to(dt)
            fn(on_cpu, 1).backward(g)
            fn(on_xpu, 1).backward(g.to("xpu"))
            torch.testing.assert_close(on_xpu.grad.cpu(), on_cpu.grad)


@needs_device
def test_random_bits_are_the_cpus():
    torch.manual_seed(3)
    on_cpu = torch.rand(50)  # (also loads the random operators: primitive() finds them then)
    torch.manual_seed(3)
    assert torch.equal(torch.rand(50, device="xpu").cpu(), on_cpu)
    prim = torch.backends.contract.primitive("random_bits_")
    for seed, offset, n in ((0, 0, 9), (2**64 - 1, 2**64 - 2, 12), (12345, 77, 1001)):
        want = torch.empty(n, dtype=torch.int64)
        prim(want, seed, offset)
        got = torch.empty(n, dtype=torch.int64, device="xpu")
        prim(got, seed, offset)
        assert torch.equal(got.cpu(), want), (seed, offset)
    want = torch.empty(6, 4, dtype=torch.int64).t()  # element order is row-major, not memory
    prim(want, 9, 3)
    got = torch.empty(6, 4, dtype=torch.int64, device="xpu").t()
    prim(got, 9, 3)
    assert torch.equal(got.cpu(), want)


@needs_device
def test_cnn_example_trains_on_xpu_along_the_cpus_loss_curve(tmp_path):
    import re

    example = os.path.join(os.path.dirname(__file__), os.pardir, "examples", "cnn_batchnorm.py")
    losses = {}
    for device in ("cpu", "xpu"):
        # no dropout: its masks come from each device's own generator stream
        done = subprocess.run(
            [sys.executable, example, "--steps", "4", "--train-size", "128", "--test-size", "64",
             "--batch-size", "32", "--dropout", "0", "--device", device, "--out", str(tmp_path)],
            capture_output=True, text=True, timeout=300,
            env={**os.environ, "PLAIT_XPU_DEVICE_TYPE": "all"})
        assert done.returncode == 0, done.stderr
        losses[device] = [float(v) for v in re.findall(r"loss (\d+\.\d+)", done.stdout)]
    assert len(losses["cpu"]) >= 3
    np.testing.assert_allclose(losses["xpu"], losses["cpu"], rtol=1e-3)


def test_renderer_emits_opencl_and_cuda_from_one_table():
    opencl = render.render_elementwise(render.OPENCL, "add", "{a} + {b}", "float16",
                                       ("float16", "float16"), rank=2)
    cuda = render.render_elementwise(render.CUDA, "add", "{a} + {b}", "float16",
                                     ("float16", "float16"), rank=2)
    assert "__kernel void plait_add_float16_float16_float16_r2" in opencl.source
    assert "vload_half" in opencl.source and "vstore_half_rte" in opencl.source
    assert 'extern "C" __global__ void plait_add_float16_float16_float16_r2' in cuda.source
    assert "plait_half_to_float" in cuda.source and "blockIdx.x" in cuda.source
    assert "__global" not in cuda.source.replace("__global__", "")
    # three buffers; n, three offsets, two sizes, 2 x 3 strides
    assert opencl.signature == cuda.signature == "bbb" + "l" * 12
    assert pointwise.supports("div", "float32") and not pointwise.supports("div", "int32")
    # every row renders in both dialects (helpers included), and so do reductions and matmul
    for name, row in pointwise.ROWS.items():
        for dialect in (render.OPENCL, render.CUDA):
            for dtype in ("float32", "float64", "int64", "uint8", "bool", "bfloat16",
                          "complex64"):
                expression, raw = row.expression(dtype)
                if expression is None:
                    continue
                rendered = render.render_elementwise(
                    dialect, name, expression, "bool" if row.writes_bool else dtype,
                    (dtype,) * (1 if name in pointwise.UNARY else 2), rank=1, raw=raw,
                    helpers=pointwise.helpers_source(dialect, row, dtype))
                assert f"plait_{name}_" in rendered.source
    cuda_sum = render_reduce.render_reduction(render.CUDA, "sum", "float32", "float32", 1, 1, 64)
    assert "__shared__ float sh[64]" in cuda_sum.source and "__syncthreads()" in cuda_sum.source
    cuda_mm = render_matmul.render_matmul(render.CUDA, "float16", 1, 16)
    assert "blockIdx.z" in cuda_mm.source and "__shared__ float ta[272]" in cuda_mm.source
