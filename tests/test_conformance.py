"""The backend conformance suite of torch.testing: its pytest plugin (``--torch-backend``),
that it catches wrong kernels, stray writes and primitives without samples, its coverage
table, and a run against the third-party ``toy`` device."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import torch
from torch import _refs
from torch._core import dispatch as _dispatch, prims as _prims
from torch.library import Library
from torch.testing import _conformance
from torch.testing._conformance import harness, samples


def run_pytest(tmp_path, *args: str, conftest: str = "", files: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess[str]:
    """pytest in a fresh process, in an empty directory (plus ``conftest``/``files``)."""
    if conftest:
        (tmp_path / "conftest.py").write_text(textwrap.dedent(conftest))
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    env = {k: v for k, v in os.environ.items() if k != "TORCH_DEVICE_BACKEND_AUTOLOAD"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def outcomes(proc: subprocess.CompletedProcess[str]) -> dict[str, int]:
    """The counts of pytest's final summary line ("3 failed, 1 passed, 9 deselected in 1s"),
    so that a test compares every outcome exactly (no "11 passed" matching "1 passed")."""
    summary = [line for line in proc.stdout.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    assert summary, proc.stdout + proc.stderr
    counted = r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)\b"
    return {word: int(n) for n, word in re.findall(counted, summary[-1])}


# -- the plugin -----------------------------------------------------------------------------


def test_plugin_is_registered_and_idle_without_the_option(tmp_path):
    proc = run_pytest(tmp_path, "--help")
    assert "--torch-backend=NAME" in proc.stdout
    proc = run_pytest(tmp_path, "-q", files={"test_mine.py": "def test_mine():\n    pass\n"})
    assert proc.returncode == 0, proc.stdout
    assert outcomes(proc) == {"passed": 1}
    assert "torch backend conformance" not in proc.stdout


def test_the_option_alone_runs_the_suite_and_prints_coverage(tmp_path):
    # no paths: the directory's own tests are not collected, the suite is
    proc = run_pytest(tmp_path, "--torch-backend=cpu", "--torch-backend-gradients=1",
                      "-k", "prims::neg[int8] or prims::sort[float32] or gradients::mul", "-q",
                      files={"test_mine.py": "def test_mine():\n    pass\n"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # neg[int8], sort[float32] and mul's gradient check (mul has smooth float64 samples)
    assert outcomes(proc) == {"passed": 3}
    assert "test_mine" not in proc.stdout
    assert "torch backend conformance: cpu" in proc.stdout
    assert f"of {len(_prims.PRIMITIVES)} primitives" in proc.stdout


def test_the_suite_runs_in_addition_to_given_paths(tmp_path):
    proc = run_pytest(tmp_path, "--torch-backend=cpu", "test_mine.py", "-q", "-k",
                      "test_mine or prims::add[int16]",
                      files={"test_mine.py": "def test_mine():\n    pass\n"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outcomes(proc) == {"passed": 2}


def test_collection_lists_every_primitive_and_dtype(tmp_path):
    proc = run_pytest(tmp_path, "--torch-backend=cpu", "--collect-only", "-q")
    ids = {line for line in proc.stdout.splitlines() if line.startswith("torch-backend[cpu]")}
    for name in _prims.PRIMITIVES:
        for dtype in samples.SAMPLES[name].dtypes:
            assert f"torch-backend[cpu]::prims::{name}[{dtype}]" in ids
    assert any("::gradients::" in i for i in ids)


def test_unknown_device_type_or_dtype_is_a_usage_error(tmp_path):
    proc = run_pytest(tmp_path, "--torch-backend=nosuchdevice", "-q")
    assert proc.returncode == 4  # pytest's usage error
    assert "nosuchdevice" in proc.stderr
    proc = run_pytest(tmp_path, "--torch-backend=cpu", "--torch-backend-skip-dtypes=float65",
                      "-q")
    assert proc.returncode == 4
    assert "unknown dtype(s) float65" in proc.stderr


BROKEN = """
    import numpy as np
    import torch
    from torch import _refs
    from torch.library import Library

    torch.zeros(1)  # the CPU backend registers its kernels first: ours override them
    lib = Library("prims", "IMPL", "CPU")

    def wrong_add(out, a, b):  # subtracts
        _refs.CPU_KERNELS["sub"](out, a, b)

    def spilling_neg(out, a):  # right values, and one byte past the output
        _refs.CPU_KERNELS["neg"](out, a)
        if out.numel() and out.is_contiguous():
            end = (out.storage_offset() + out.numel()) * out.element_size()
            host = out.untyped_storage()._host
            if end < host.size:
                host[end] ^= 0xFF

    lib.impl("add", wrong_add)
    lib.impl("neg", spilling_neg)
"""


def test_a_wrong_kernel_or_a_stray_write_fails_the_suite(tmp_path):
    proc = run_pytest(tmp_path, "--torch-backend=cpu", "-k", "prims::add[float32] or "
                      "prims::add[int64] or prims::mul[float32] or prims::neg[float32]",
                      conftest=BROKEN)
    assert proc.returncode == 1, proc.stdout
    assert outcomes(proc) == {"failed": 3, "passed": 1}
    assert "FAILED torch-backend[cpu]::prims::add[float32]" in proc.stdout
    assert "Mismatched elements" in proc.stdout
    assert "wrote outside output 0" in proc.stdout
    # the summary names the backend's kernels as native and lists the failures
    summary = proc.stdout.split("torch backend conformance")[-1]
    assert "native:" in summary
    assert "failed (3): " in summary and "prims::neg[float32]" in summary


def test_a_primitive_without_samples_fails(tmp_path):
    conftest = """
        from torch._core import prims as _prims
        _prims.PRIMITIVES["frobnicate"] = ("unary", "frobnicate(Tensor(a!) out, Tensor a) -> ()")
    """
    proc = run_pytest(tmp_path, "--torch-backend=cpu", "-k", "frobnicate or prims::abs[int8]",
                      conftest=conftest)
    assert proc.returncode == 1, proc.stdout
    assert outcomes(proc) == {"failed": 1, "passed": 1}
    assert "prims::frobnicate has no conformance samples" in proc.stdout


def test_missing_samples_lists_new_rows(monkeypatch):
    assert _conformance.missing_samples() == []
    monkeypatch.setitem(_prims.PRIMITIVES, "frobnicate", ("unary", "x"))
    assert _conformance.missing_samples() == ["frobnicate"]


# -- the harness, in process ----------------------------------------------------------------


@pytest.fixture
def cpu_lib():
    torch.zeros(1)  # the CPU backend registers its kernels first: ours override them
    lib = Library("prims", "IMPL", "CPU")
    yield lib
    lib._destroy()


def test_check_primitive_passes_the_backend_kernels():
    for name, dtype in (("add", "float32"), ("where", "bfloat16"), ("sum", "int8"),
                        ("copy_", "float16"), ("random_bits_", "int64")):
        assert _conformance.check_primitive(name, dtype) == [], (name, dtype)


def test_check_primitive_reports_each_failing_case(cpu_lib):
    def wrong_last_element(out, a):
        _refs.CPU_KERNELS["exp"](out, a)
        if out.ndim and out.numel() > 1:
            _refs.np_view(out)[(-1,) * out.ndim] = 7.0

    cpu_lib.impl("exp", wrong_last_element)
    failures = _conformance.check_primitive("exp", "float64")
    labels = {f.split("]")[0].lstrip("[") for f in failures}
    assert {"contiguous", "large", "1-d odd length"} <= labels
    assert "0-d" not in labels and "zero-size" not in labels


def test_in_place_cases_pass_the_output_as_the_first_input(cpu_lib):
    def clears_out_first(out, a, b):  # right unless out is a
        _refs.np_view(out)[...] = 0
        _refs.CPU_KERNELS["mul"](out, a, b)

    cpu_lib.impl("mul", clears_out_first)
    failures = _conformance.check_primitive("mul", "int32")
    assert [f.split("]")[0] for f in failures] == [
        "[in place, contiguous", "[in place, transposed", "[in place, strided"]


def test_unstable_sort_needs_consistent_indices_only(cpu_lib):
    sort = _refs.CPU_KERNELS["sort"]

    def sort_reversing_ties(values, indices, a, dim, descending=False, stable=True):
        if stable or a.ndim == 0:
            return sort(values, indices, a, dim, descending, stable)
        # equal values in reverse order: a valid unstable sort, unlike the reference
        sort(values, indices, a.flip(dim).contiguous(), dim, descending, True)
        view = _refs.np_view(indices)
        view[...] = a.shape[dim] - 1 - view

    cpu_lib.impl("sort", sort_reversing_ties)
    assert _conformance.check_primitive("sort", "int32") == []

    def unstable_sort_with_bad_indices(values, indices, a, dim, descending=False, stable=True):
        sort(values, indices, a, dim, descending, stable)
        if not stable:
            _refs.np_view(indices)[...] = 0

    cpu_lib.impl("sort", unstable_sort_with_bad_indices)
    failures = _conformance.check_primitive("sort", "int32")
    assert failures and all("stable=False" in f for f in failures)


def test_layouts_are_what_they_say():
    values = np.arange(20, dtype=np.float32).reshape(4, 5)
    f32 = torch.float32
    cpu = torch.device("cpu")
    t = harness.upload(harness.place((4, 5), f32, "transposed", values), f32, cpu)
    assert t.stride() == (1, 4) and t.tolist() == values.tolist()
    t = harness.upload(harness.place((4, 5), f32, "strided", values), f32, cpu)
    assert t.stride() == (10, 2) and t.tolist() == values.tolist()
    t = harness.upload(harness.place((4, 5), f32, "broadcast", values[:1]), f32, cpu)
    assert t.stride() == (0, 1) and t.tolist() == [values[0].tolist()] * 4
    placed = harness.place((2, 3), f32, "contiguous", None)
    assert placed.covered.sum() == 6 and placed.covered.size == 6 + 2 * harness.GUARD


# -- coverage -------------------------------------------------------------------------------


def test_coverage_is_one_row_per_primitive_in_table_order():
    rows = _conformance.coverage("cpu")
    prims = [r for r in rows if r.group != "fused"]
    assert [r.name for r in prims] == [f"prims::{n}" for n in _prims.PRIMITIVES]
    for r in prims:
        kernel = _dispatch.get(r.name).kernels["CPU"]
        expected = "reference" if kernel is _refs.CPU_KERNELS[r.name[7:]] else "native"
        assert r.status == expected, r


def test_coverage_tells_native_from_reference(cpu_lib):
    before = {r.name: r.status for r in _conformance.coverage("cpu")}
    cpu_lib.impl("nextafter", _refs.CPU_KERNELS["nextafter"])  # the reference itself
    cpu_lib.impl("hypot", lambda out, a, b: _refs.CPU_KERNELS["hypot"](out, a, b))
    after = {r.name: r.status for r in _conformance.coverage("cpu")}
    assert after["prims::nextafter"] == "reference"
    assert after["prims::hypot"] == "native"
    assert {k: v for k, v in after.items() if k not in ("prims::nextafter", "prims::hypot")} \
        == {k: v for k, v in before.items() if k not in ("prims::nextafter", "prims::hypot")}


@pytest.fixture
def toy():
    pytest.importorskip("plait_toy_device", reason="the toy device type is not installed")
    return "toy"


def test_coverage_of_the_toy_device(toy):
    rows = {r.name: r.status for r in _conformance.coverage(toy)}
    assert {n for n, s in rows.items() if s == "native"} == {
        "prims::add", "prims::copy_", "prims::fill_"}
    assert rows["prims::matmul"] == "cpu fallback"
    lib = Library("prims", "IMPL", "TOY")
    fused = Library("aten", "IMPL", "TOY")
    try:
        lib.impl("mul", _refs.CPU_KERNELS["mul"])  # a reference kernel, registered natively
        fused.impl("_softmax", lambda *a: None)
        rows = {r.name: r.status for r in _conformance.coverage(toy)}
        lines = "\n".join(_conformance.format_coverage(toy))
    finally:
        lib._destroy()
        fused._destroy()
    assert rows["prims::mul"] == "reference"
    assert rows["aten::_softmax"] == "native"
    assert "fused aten kernels: _softmax" in lines
    assert "cpu fallback:" in lines


# -- a third-party device -------------------------------------------------------------------


def test_the_suite_passes_on_the_toy_device(toy, tmp_path):
    # the toy device's own kernels, primitives reaching it through the CPU fallback, and
    # gradients computed on it
    proc = run_pytest(tmp_path, "--torch-backend=toy", "--torch-backend-skip-dtypes=bfloat16",
                      "-q", "-k", "prims::add or prims::copy_ or prims::fill_ or "
                      "prims::sum[float32] or prims::matmul[float64] or prims::scatter_[int32] "
                      "or prims::nonzero[bool] or gradients::mul or gradients::sum")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "failed" not in proc.stdout
    assert "torch backend conformance: toy" in proc.stdout
    assert "native:" in proc.stdout and "cpu fallback:" in proc.stdout


def test_the_toy_devices_declined_bfloat16_is_served_by_the_fallback_else_caught(
        toy, tmp_path, monkeypatch):
    # The toy's add declines bfloat16 (contract.Decline): the CPU fallback serves the case...
    proc = run_pytest(tmp_path, "--torch-backend=toy", "-q", "-k", "prims::add[bfloat16]")
    assert proc.returncode == 0 and "1 passed" in proc.stdout
    # ...and with the fallback turned off, the suite reports the case the device lacks.
    monkeypatch.setenv("TORCH_DEVICE_CPU_FALLBACK", "0")
    proc = run_pytest(tmp_path, "--torch-backend=toy", "-q", "-k", "prims::add[bfloat16]")
    assert proc.returncode == 1
    assert "prims::add" in proc.stdout and "TORCH_DEVICE_CPU_FALLBACK=0" in proc.stdout
