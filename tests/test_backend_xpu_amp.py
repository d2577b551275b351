"""Autocast on ``xpu`` (plait-backend-xpu on PoCL's CPU device here): the shared Autocast key
with the accelerator op lists PyTorch gives xpu (its CUDA lists), float16 by default as in
PyTorch 2.13, bfloat16 on request, every op on the device (the CPU fallback is off).

Expected dtypes are PyTorch's documented policies; expected values are float32 numpy
products rounded as the test says. Skips, saying why, where no OpenCL device exists.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torch

XC = pytest.importorskip("plait_backend_xpu._C", reason="plait-backend-xpu is not installed")
from plait_backend_xpu import device_module as xpu_module  # noqa: E402

COUNT, REASON = XC.device_count("all")
pytestmark = pytest.mark.skipif(COUNT == 0, reason=f"no OpenCL device: {REASON}")


@pytest.fixture(scope="module", autouse=True)
def every_device_type():
    """Count CPU devices (PoCL) as xpu devices here, the CPU fallback off; defaults back
    after."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PLAIT_XPU_DEVICE_TYPE", "all")
        mp.setenv("TORCH_DEVICE_CPU_FALLBACK", "0")
        xpu_module.refresh()
        yield
    xpu_module.refresh()


def _randn(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_autocast_is_available_on_xpu_with_float16_by_default():
    assert torch.amp.is_autocast_available("xpu")
    assert torch.get_autocast_dtype("xpu") == torch.float16
    assert torch.xpu.is_bf16_supported()
    a = torch.from_numpy(_randn(4, 8)).to("xpu")
    with torch.autocast("xpu"):
        assert torch.is_autocast_enabled("xpu")
        assert (a @ a.t()).dtype == torch.float16
    assert not torch.is_autocast_enabled("xpu")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_the_accelerator_lists_apply_on_xpu(dtype):
    a_np, b_np = _randn(6, 8), _randn(8, 5, seed=1)
    a, b = torch.from_numpy(a_np).to("xpu"), torch.from_numpy(b_np).to("xpu")
    image = torch.from_numpy(_randn(1, 2, 5, 5, seed=2)).to("xpu")
    kernel = torch.from_numpy(_randn(3, 2, 3, 3, seed=3)).to("xpu")
    with torch.autocast("xpu", dtype=dtype):
        product = a @ b  # lower: the autocast dtype
        assert product.dtype == dtype
        assert torch.nn.functional.linear(a, b.t()).dtype == dtype
        assert torch.nn.functional.conv2d(image, kernel).dtype == dtype
        # fp32 on accelerators (unlike the CPU's list): exp, sum, softmax, layer_norm
        assert torch.exp(product).dtype == torch.float32
        assert product.sum().dtype == torch.float32
        assert torch.softmax(product, -1).dtype == torch.float32
        assert torch.nn.functional.layer_norm(product, (5,)).dtype == torch.float32
        # promote: the widest floating input
        assert torch.addcmul(a, a.to(dtype), a).dtype == torch.float32
        # not listed: runs in its inputs' dtype
        assert (product + product).dtype == dtype
        assert torch.relu(product).dtype == dtype
        # float64 is never cast
        assert (a.double() @ b.double()).dtype == torch.float64
    # the product is the float32 one, rounded to the autocast dtype (inputs rounded first)
    rounded = torch.from_numpy(a_np).to(dtype).float().numpy() @ \
        torch.from_numpy(b_np).to(dtype).float().numpy()
    tolerance = 1e-2 if dtype == torch.bfloat16 else 2e-3
    np.testing.assert_allclose(product.float().cpu().numpy(), rounded, rtol=tolerance,
                               atol=tolerance)


def test_a_cpu_region_leaves_xpu_tensors_alone_and_the_other_way_round():
    a = torch.from_numpy(_randn(4, 4)).to("xpu")
    c = torch.from_numpy(_randn(4, 4))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert (a @ a).dtype == torch.float32
    with torch.autocast("xpu", dtype=torch.float16):
        assert (c @ c).dtype == torch.float32


def test_gradients_come_back_in_float32():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                torch.nn.Linear(16, 3)).to("xpu")
    x = torch.from_numpy(_randn(5, 8)).to("xpu")
    target = torch.tensor([0, 1, 2, 1, 0]).to("xpu")
    with torch.autocast("xpu", dtype=torch.bfloat16):
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits, target)
    assert logits.dtype == torch.bfloat16 and loss.dtype == torch.float32
    loss.backward()
    for p in model.parameters():
        assert p.grad is not None and p.grad.dtype == torch.float32 and p.grad.device.type == "xpu"
        assert torch.isfinite(p.grad).all()


def test_an_unsupported_dtype_disables_autocast_with_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autocast("xpu", dtype=torch.float32):
            assert not torch.is_autocast_enabled("xpu")
    assert any("not supported" in str(w.message) and "Disabling autocast" in str(w.message)
               for w in caught)
