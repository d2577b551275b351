"""plait-backend-xpu and plait-backend-mps where their devices are missing.

Both import and report ``is_available() == False`` with a reason, never an exception: xpu
because no OpenCL device (or no OpenCL at build time) is here, mps because this is not macOS.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

XC = pytest.importorskip("plait_backend_xpu._C", reason="plait-backend-xpu is not installed")
MC = pytest.importorskip("plait_backend_mps._C", reason="plait-backend-mps is not installed")

XPU_COUNT, XPU_REASON = XC.device_count("gpu")
needs_no_xpu = pytest.mark.skipif(XPU_COUNT > 0, reason="an OpenCL GPU is present")
needs_no_mps = pytest.mark.skipif(MC.probe()["available"], reason="a Metal device is present")


def run_python(code: str, **env: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("package", ["plait_backend_xpu", "plait_backend_mps"])
def test_plugin_and_device_module_are_light(package):
    # The plugin: neither torch nor native code. The device module (reached as torch.<device>,
    # so torch is loaded): no native code until asked.
    for module, heavy in [
        ("plugin", [f"{package}._C", "torch"]),
        ("device_module", [f"{package}._C"]),
    ]:
        loaded = run_python(f"""
            import json, sys
            import {package}.{module}
            print(json.dumps([m for m in {heavy!r} if m in sys.modules]))
        """)
        assert loaded == [], f"importing {package}.{module} imported {loaded}"


@pytest.mark.parametrize(
    "package,device_type", [("plait_backend_xpu", "xpu"), ("plait_backend_mps", "mps")]
)
def test_backend_info(package, device_type):
    pytest.importorskip("torch")
    import importlib

    plugin = importlib.import_module(f"{package}.plugin")
    info = plugin.torch_backend_info(device_type=device_type)
    assert info.device_type == device_type
    assert info.distribution == package.replace("_", "-")
    assert plugin.torch_backend_info(device_type="cuda") is None
    assert plugin.torch_backend_device_module(device_type="cuda") is None


# -- xpu -----------------------------------------------------------------------------------


def test_xpu_native_reports_a_reason():
    for kind in ("gpu", "cpu", "accelerator", "all"):
        count, reason = XC.device_count(kind)
        assert count >= 0
        assert bool(reason) == (count == 0)
    if not XC.compiled_with_opencl():
        assert "built without OpenCL" in XPU_REASON
        assert XC.platforms() == [] and XC.devices("all") == []
    with pytest.raises(ValueError, match="expected gpu, cpu, accelerator or all"):
        XC.device_count("tpu")


@needs_no_xpu
def test_torch_xpu_unavailable_in_a_subprocess():
    report = run_python(
        """
        import json
        import torch
        report = {"available": torch.xpu.is_available(), "count": torch.xpu.device_count(),
                  "reason": torch.xpu.unavailable_reason(), "device": str(torch.device("xpu"))}
        try:
            torch.empty(1, device="xpu")
        except RuntimeError as exc:
            report["error"] = str(exc)
        print(json.dumps(report))
        """
    )
    assert report["available"] is False and report["count"] == 0
    assert report["reason"] == XPU_REASON
    assert report["device"] == "xpu"
    assert "no OpenCL (xpu) device was found" in report["error"]


def test_xpu_device_type_variable():
    code = """
        import json
        from plait_backend_xpu import device_module as xpu
        print(json.dumps({"count": xpu.device_count(), "reason": xpu.unavailable_reason()}))
        """
    everything = run_python(code, PLAIT_XPU_DEVICE_TYPE="all")
    assert everything["count"] == XC.device_count("all")[0]
    bad = run_python(code, PLAIT_XPU_DEVICE_TYPE="tpu")
    assert bad["count"] == 0 and "PLAIT_XPU_DEVICE_TYPE" in bad["reason"]


@needs_no_xpu
def test_xpu_device_module_without_a_device():
    from plait_backend_xpu import device_module as xpu

    assert xpu.is_available() is False and xpu.device_count() == 0
    assert xpu.devices() == []
    assert xpu.memory_allocated() == 0
    xpu.manual_seed(3)  # core's generator: no device needed
    assert xpu.initial_seed() == 3
    with pytest.raises(RuntimeError, match="no OpenCL"):
        xpu.get_rng_state()
    with pytest.raises(RuntimeError, match="no OpenCL"):
        xpu.synchronize()


# -- mps -----------------------------------------------------------------------------------


@needs_no_mps
def test_mps_native_probe():
    probe = MC.probe()
    assert probe["available"] is False
    if sys.platform != "darwin":
        assert MC.compiled_with_metal() is False
        assert "MPS needs macOS with Metal" in probe["reason"]


@needs_no_mps
def test_torch_mps_unavailable_in_a_subprocess():
    report = run_python(
        """
        import json
        import torch
        report = {"available": torch.mps.is_available(), "count": torch.mps.device_count(),
                  "reason": torch.mps.unavailable_reason(), "device": str(torch.device("mps"))}
        try:
            torch.empty(1, device="mps")
        except RuntimeError as exc:
            report["error"] = str(exc)
        print(json.dumps(report))
        """
    )
    assert report["available"] is False and report["count"] == 0
    assert report["reason"] == MC.probe()["reason"]
    assert report["device"] == "mps"
    assert "no MPS device was found" in report["error"]


@needs_no_mps
def test_mps_device_module_without_a_device():
    from plait_backend_mps import device_module as mps

    assert mps.is_available() is False and mps.device_count() == 0
    assert mps.current_allocated_memory() == 0
    mps.manual_seed(4)
    assert mps.initial_seed() == 4
    with pytest.raises(RuntimeError, match="no MPS device"):
        mps.set_rng_state(mps.default_generator().get_state())
    with pytest.raises(RuntimeError, match="no MPS device"):
        mps.synchronize()
    with pytest.raises(RuntimeError, match="one device"):
        mps.set_device(1)
