"""plait-backend-cuda: availability without a GPU, and round trips when one is present.

Without a driver or a GPU (this project's machines and CI) ``torch.cuda.is_available()`` is
False, ``torch.device("cuda")`` parses, and the first allocation raises a RuntimeError that
says "no CUDA driver or device was found"; the checks that touch CUDA run in a subprocess so
that a crash in the driver stack fails the test instead of the session. The tests marked
``needs_gpu`` run where a device is present and skip with the reason otherwise.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

C = pytest.importorskip("plait_backend_cuda._C", reason="plait-backend-cuda is not installed")

COUNT, REASON = C.device_count()
needs_gpu = pytest.mark.skipif(COUNT == 0, reason=f"no CUDA device: {REASON}")
needs_no_gpu = pytest.mark.skipif(COUNT > 0, reason="a CUDA device is present")


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


# -- the native extension ------------------------------------------------------------------


def test_device_count_never_raises_and_explains_zero():
    count, reason = C.device_count()
    assert isinstance(count, int) and count >= 0
    if count == 0:
        assert reason  # CUDA's error string, or the stub's "built without CUDA"
        assert C.driver_error() == reason
    else:
        assert reason == "" and C.driver_error() == ""


def test_build_info():
    info = C.build_info()
    assert info["cuda"] == C.compiled_with_cuda()
    if info["cuda"]:
        assert info["cudart"] == "static"
        assert info["runtime_version"] >= 12000
        assert "native" not in info["architectures"]
    else:
        assert REASON == "plait-backend-cuda was built without CUDA (nvcc not found)"


@needs_no_gpu
def test_native_operations_raise_cuda_errors_without_a_device():
    with pytest.raises(RuntimeError, match="CUDA"):
        C.DeviceBuffer(16, 0)
    with pytest.raises(RuntimeError):
        C.synchronize(0)
    assert C.memory_stats(0) == (0, 0)


def test_plugin_and_device_module_are_light():
    # The plugin is imported while torch itself imports: neither torch nor native code.
    done = run_python(
        """
        import sys
        import plait_backend_cuda.plugin
        print([m for m in ("plait_backend_cuda._C", "torch", "numpy") if m in sys.modules])
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    # The device module is reached as torch.cuda (torch is loaded): no native code until asked.
    done = run_python(
        """
        import sys
        import plait_backend_cuda.device_module
        print("plait_backend_cuda._C" in sys.modules)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_backend_info():
    pytest.importorskip("torch")
    from plait_backend_cuda import plugin

    info = plugin.torch_backend_info(device_type="cuda")
    assert info.device_type == "cuda" and info.distribution == "plait-backend-cuda"
    assert {"float64", "amp"} <= info.capabilities
    assert info.amp_dtypes == ("float16", "bfloat16")
    assert plugin.torch_backend_info(device_type="cpu") is None
    assert plugin.torch_backend_allocator(device_type="cpu") is None
    assert plugin.torch_backend_device_module(device_type="xpu") is None


# -- without a GPU -------------------------------------------------------------------------


@needs_no_gpu
def test_torch_cuda_without_a_device_in_a_subprocess():
    done = run_python(
        """
        import json
        import torch
        report = {"available": torch.cuda.is_available(), "count": torch.cuda.device_count(),
                  "device": str(torch.device("cuda")), "device1": str(torch.device("cuda:1"))}
        try:
            torch.empty(2, device="cuda")
        except RuntimeError as exc:
            report["error"] = str(exc)
        report["still_available"] = torch.cuda.is_available()
        print(json.dumps(report))
        """
    )
    assert done.returncode == 0, done.stderr  # neither call crashed the process
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["available"] is False and report["still_available"] is False
    assert report["count"] == 0
    assert report["device"] == "cuda" and report["device1"] == "cuda:1"
    assert "no CUDA driver or device was found" in report["error"]
    assert REASON in report["error"]  # the CUDA error string itself


@needs_no_gpu
def test_device_module_without_a_device():
    from plait_backend_cuda import device_module as cuda

    assert cuda.is_available() is False
    assert cuda.device_count() == 0
    assert cuda.unavailable_reason() == REASON
    assert cuda.memory_allocated() == 0 and cuda.max_memory_allocated() == 0
    cuda.manual_seed(1)  # core's generators: torch.manual_seed must work without a GPU
    cuda.manual_seed_all(2)
    assert cuda.initial_seed() == 2
    with pytest.raises(RuntimeError, match="no CUDA driver or device was found"):
        cuda.get_rng_state()
    with pytest.raises(RuntimeError, match="no CUDA driver or device was found"):
        cuda.synchronize()
    with pytest.raises(RuntimeError, match="no CUDA driver or device was found"):
        cuda.set_device(0)
    assert cuda.current_device() == 0


def test_amp_dtypes():
    torch = pytest.importorskip("torch")
    from plait_backend_cuda import device_module as cuda

    assert cuda.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]


# -- with a GPU ----------------------------------------------------------------------------


@needs_gpu
def test_device_buffer_round_trip():
    src = np.arange(256, dtype=np.uint8)
    back = np.zeros_like(src)
    before = C.memory_stats(0)[0]
    buf = C.DeviceBuffer(src.nbytes, 0)
    assert buf.ptr != 0 and buf.nbytes == 256 and buf.device == 0
    assert C.memory_stats(0)[0] == before + 256
    C.memcpy_h2d(buf.ptr, src.ctypes.data, src.nbytes)
    other = C.DeviceBuffer(src.nbytes, 0)
    C.memcpy_d2d(other.ptr, buf.ptr, src.nbytes)
    C.memcpy_d2h(back.ctypes.data, other.ptr, src.nbytes)
    C.synchronize(0)
    np.testing.assert_array_equal(back, src)
    del buf, other
    assert C.memory_stats(0)[0] == before


@needs_gpu
def test_copier_round_trip_with_offsets():
    from plait_backend_cuda.allocator import DeviceAllocator, DeviceCopier

    alloc, copier = DeviceAllocator(C), DeviceCopier(C)
    a, b = alloc.allocate(64, 0), alloc.allocate(64, 0)
    assert alloc.host_buffer(a) is None and alloc.data_ptr(a) == a.ptr
    copier.to_device(a, 16, np.arange(32, dtype=np.uint8))
    copier.device_to_device(b, 0, a, 16, 32)
    out = np.zeros(32, np.uint8)
    copier.to_host(out, b, 0)
    np.testing.assert_array_equal(out, np.arange(32))
    with pytest.raises(IndexError):
        copier.to_device(a, 48, np.zeros(32, np.uint8))


@needs_gpu
def test_torch_tensor_round_trip_through_cuda():
    torch = pytest.importorskip("torch")
    assert torch.cuda.is_available() and torch.cuda.device_count() == COUNT
    x = torch.tensor([[1.5, -2.0], [3.25, 4.0]])
    y = x.to("cuda")
    assert y.device.type == "cuda"
    torch.cuda.synchronize()
    np.testing.assert_array_equal(y.cpu().numpy(), x.numpy())
    assert torch.cuda.memory_allocated() >= 16
    assert isinstance(torch.cuda.get_device_name(), str)
