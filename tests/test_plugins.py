"""The backend plugin system: autoload, its switch, two-phase loading, failure isolation, the
device registry, device modules and diagnostics, through the third-party "toy" plugin (installed
like a vendor wheel) and the "broken" plugin (fails on import)."""

from __future__ import annotations

import os
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest
from conftest import run_json, run_python

import torch
from torch._core import entry_points as _entry_points, registry as _registry

STATUS = """
import json, sys, torch
from torch._core import registry as _registry
print(json.dumps({
    "status": {n: p.status for n, p in _registry.installed().items()},
    "modules": sorted(m for m in sys.modules if m.startswith(("plait_", "pluggy"))),
}))
"""


@pytest.mark.parametrize("value", ["1", "true", "yes", "on", "ON", ""])
def test_autoload_on_values(value):
    out = run_json(STATUS, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": value})
    assert out["status"]["toy"] == "loaded"
    assert "plait_toy_device.plugin" in out["modules"]


@pytest.mark.parametrize("value", ["0", "false", "no", "off", "False", " OFF "])
def test_autoload_off_values_load_nothing(value):
    out = run_json(STATUS, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": value})
    assert all(s == "installed" for s in out["status"].values()), out
    assert not [m for m in out["modules"] if m.startswith("plait_")]
    assert "pluggy" not in out["modules"]  # not even the plugin manager is built


def test_autoload_list_loads_only_those():
    out = run_json(STATUS, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "cpu"})
    assert out["status"]["toy"] == "skipped"
    if "cpu" in out["status"]:
        assert out["status"]["cpu"] == "loaded"
    assert "plait_toy_device.plugin" not in out["modules"]
    out = run_json(STATUS, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "toy, cpu"})
    assert out["status"]["toy"] == "loaded"


def test_parse_autoload_table():
    assert _registry.parse_autoload(None) is True
    assert _registry.parse_autoload("Yes") is True
    assert _registry.parse_autoload("off") is False
    assert _registry.parse_autoload("cpu, cuda,,") == frozenset({"cpu", "cuda"})


def test_skipped_plugin_device_parses_but_says_how_to_enable():
    proc = run_python("""
        import torch
        d = torch.device("toy:1")
        try:
            torch.empty(2, device=d)
        except RuntimeError as e:
            print("ERR", e)
    """, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "cpu"})
    assert "ERR" in proc.stdout
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD" in proc.stdout and "'toy'" in proc.stdout


def test_native_part_loads_on_first_use_only():
    out = run_json("""
        import json, sys, torch
        before = "plait_toy_device._runtime" in sys.modules
        avail = torch.toy.is_available()     # the device module is light: still not loaded
        middle = "plait_toy_device._runtime" in sys.modules
        t = torch.ones(3, device="toy")
        after = "plait_toy_device._runtime" in sys.modules
        print(json.dumps([before, avail, middle, after, "numpy" in sys.modules]))
    """)
    assert out == [False, True, False, True, True]


def test_import_torch_stays_light():
    out = run_json("""
        import json, sys, torch
        print(json.dumps(sorted(m for m in ("numpy", "torch._functions", "torch._core.dispatch",
                                            "importlib.metadata", "torch._dynamo", "torch.nn")
                                if m in sys.modules)))
    """)
    assert out == []


def test_toy_tensors_round_trip_and_use_toy_kernels():
    from plait_toy_device import _runtime

    before = _runtime.CALLS["add"]
    a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device="toy")
    b = torch.tensor([10.0, 20.0, 30.0], device="toy")
    assert a.device == torch.device("toy:0") and a.device.type == "toy"
    c = a + b
    assert _runtime.CALLS["add"] == before + 1
    assert c.device.type == "toy"
    np.testing.assert_array_equal(c.cpu().numpy(), np.array([[11, 22, 33], [14, 25, 36]]))
    assert c.to("cpu").tolist() == [[11.0, 22.0, 33.0], [14.0, 25.0, 36.0]]
    back = torch.tensor([1, 2, 3], dtype=torch.int32).to("toy").to("cpu")
    assert back.dtype == torch.int32 and back.tolist() == [1, 2, 3]


def test_toy_missing_kernels_fall_back_to_cpu_with_one_warning():
    from torch._core import dispatch as _dispatch

    _dispatch.get("prims::mul")._fallback_warned = False
    a = torch.tensor([1.0, 2.0, 3.0], device="toy")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = a * a
        m2 = a * 3
    fallback = [w for w in caught if "falls back to the CPU" in str(w.message)]
    assert len(fallback) == 1 and "prims::mul" in str(fallback[0].message)
    assert m.device.type == "toy" and m.tolist() == [1.0, 4.0, 9.0]
    assert m2.tolist() == [3.0, 6.0, 9.0]
    s = a.sum()
    assert s.device.type == "toy" and s.item() == 6.0


def test_cpu_fallback_can_be_made_an_error(monkeypatch):
    monkeypatch.setenv("TORCH_DEVICE_CPU_FALLBACK", "0")
    a = torch.tensor([1.0, 2.0], device="toy")
    with pytest.raises(NotImplementedError, match=r"prims::mul.*TORCH_DEVICE_CPU_FALLBACK=0"):
        a * a


def test_toy_device_module_and_synchronize():
    from plait_toy_device import _runtime

    assert torch.get_device_module("toy") is torch.toy
    assert torch.toy.device_count() == 2
    n = len(_runtime.SYNCS)
    torch.toy.synchronize()
    assert _runtime.SYNCS[n:] == [0]
    with pytest.raises(RuntimeError, match="already been registered"):
        torch._register_device_module("toy", types.ModuleType("other"))


def test_toy_second_index_allocates_there():
    from plait_toy_device import _runtime

    t = torch.zeros(4, device="toy:1")
    assert t.device == torch.device("toy", 1)
    assert _runtime.ALLOCATIONS[-1] == (16, 1)


def test_unknown_device_type_lists_known_types_and_plugins():
    with pytest.raises(RuntimeError) as info:
        torch.device("nonesuch:0")
    msg = str(info.value)
    assert "nonesuch" in msg and "cpu" in msg and "cuda" in msg
    assert "toy (plait-toy-device)" in msg


def test_broken_plugin_is_contained(broken_plugin_site):
    proc = run_python("""
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import torch
        runtime = [w for w in caught if issubclass(w.category, RuntimeWarning)]
        print("WARNINGS", len(runtime))
        print("MSG", runtime[0].message)
        print("SUM", (torch.ones(3) + 1).sum().item())
        try:
            torch.empty(2, device="broken")
        except RuntimeError as e:
            print("ERR", e)
            print("CAUSE", type(e.__cause__).__name__, e.__cause__)
    """, extra_path=broken_plugin_site)
    out = proc.stdout
    assert "WARNINGS 1" in out
    msg = out.split("MSG ", 1)[1].splitlines()[0]
    assert "'broken'" in msg and "plait-broken-device" in msg
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in msg
    assert "SUM 6.0" in out
    err = out.split("ERR ", 1)[1].splitlines()[0]
    assert "'broken'" in err and "plait-broken-device" in err
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in err
    assert "CAUSE ImportError libbroken.so.1" in out


def test_broken_plugin_skipped_by_allowlist(broken_plugin_site):
    proc = run_python("""
        import warnings
        warnings.simplefilter("error")
        import torch
        print((torch.ones(2, device="toy") + 1).tolist())
    """, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "cpu,toy"}, extra_path=broken_plugin_site)
    assert "[2.0, 2.0]" in proc.stdout
    assert "RuntimeWarning" not in proc.stderr


def test_diagnostics_command(broken_plugin_site):
    env = {k: v for k, v in os.environ.items() if k != "TORCH_DEVICE_BACKEND_AUTOLOAD"}
    env["PYTHONPATH"] = broken_plugin_site
    proc = subprocess.run([sys.executable, "-m", "torch.backends"], capture_output=True,
                          text=True, env=env, timeout=60, check=True)
    out = proc.stdout
    assert "import torch:" in out and "ms" in out
    assert "deterministic algorithms: False" in out
    assert "default device: cpu" in out
    toy_line = next(line for line in out.splitlines() if line.strip().startswith("toy"))
    assert "loaded" in toy_line and "plait-toy-device" in toy_line and "load" in toy_line
    broken_line = next(line for line in out.splitlines() if line.strip().startswith("broken"))
    assert "failed" in broken_line
    assert "ImportError: libbroken.so.1" in out
    assert "failed 1" in out


def test_placeholder_device_modules():
    assert torch.mps.is_available() is False
    assert torch.xpu.is_available() is False
    assert torch.backends.mps.is_available() is False
    assert torch.backends.cudnn.is_available() is False
    torch.mps.manual_seed_all(3)  # accepted silently, as in PyTorch
    import torch.xpu as xpu_mod

    assert xpu_mod is sys.modules["torch.xpu"]
    assert torch.get_device_module("cpu") is torch.cpu and torch.cpu.is_available()


def test_placeholder_without_backend_names_the_distribution():
    out = run_json("""
        import json, torch
        res = {}
        try:
            torch.mps.synchronize()
        except RuntimeError as e:
            res["sync"] = str(e)
        try:
            torch.empty(2, device="xpu")
        except RuntimeError as e:
            res["empty"] = str(e)
        print(json.dumps(res))
    """, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "toy"})
    assert "plait-backend-mps" in out["sync"]
    assert "plait-backend-xpu" in out["empty"]


def test_entry_point_reader(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for root, target in ((first, "first.mod"), (second, "second.mod")):
        info = root / "acme_npu-1.2.dist-info"
        info.mkdir(parents=True)
        (info / "entry_points.txt").write_text(
            f"[console_scripts]\nx = y:z\n\n[torch.backends]\nnpu = {target}\n")
    found = _entry_points.find("torch.backends", [str(first), str(second)])
    assert [(e.name, e.value, e.distribution, e.version) for e in found] == [
        ("npu", "first.mod", "acme-npu", "1.2")]
    assert _entry_points.find("torch.nothing", [str(first)]) == []


def test_cuda_without_its_distribution_names_it(tmp_path):
    from test_namespace import hermetic_site, with_requirements

    site = hermetic_site(tmp_path, with_requirements("plait-core"))
    out = site.run_json("""
import json, torch
res = {"available": torch.cuda.is_available(), "parsed": str(torch.device("cuda"))}
try:
    torch.empty(2, device="cuda")
except RuntimeError as e:
    res["error"] = str(e)
print(json.dumps(res))
""")
    assert out["available"] is False and out["parsed"] == "cuda"
    assert "plait-backend-cuda" in out["error"] and "pip install plait-backend-cuda" in out["error"]
