"""plait-backend-cpu's kernels that pick their vector registers per CPU (``native_vector_bytes``
in the backend's simd.h: 64 bytes on AVX-512, 32 on AVX2, 16 below). The environment variable
PLAIT_CPU_VECTOR_BYTES forces a width, so each width's code runs here whatever the CPU: the
direct convolution kernels, layer norm's row sums and amax must give the same bits at every
width (a width the CPU lacks is slower, never different), and the same bits as the run that
picks its own width, which the other test files check against the reference kernels.

The convolution's input gradient is the exception by design: it is a product (the weight
transposed times the output gradient) scattered by col2im, and products run on the packed
float32 kernels (sgemm.cpp: AVX-512 or AVX2, the same bits as each other) only where the CPU
has AVX2 and FMA and the width is at least 32; a forced 16 stands for a CPU without them and
leaves the product to OpenBLAS, whose summation order is its own and differs between its
CPU-specific kernels (it matched the packed kernels' bits on the AVX-512 machines this test
first ran on, not on AVX2 ones). So a run's input gradient is compared bit for bit with the
runs that use the same product kernels, and every run's is checked against float64 math."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("plait_backend_cpu._C", reason="plait-backend-cpu is not installed")

# Runs in a subprocess (the width is read once per process) and saves every result to argv[1].
_SCRIPT = r"""
import sys
import numpy as np
import plait_backend_cpu._C as native
import torch

aten = torch.ops.aten
rng = np.random.default_rng(5)


def rand(*shape, dtype=torch.float32):
    return torch.tensor(rng.uniform(-1, 1, shape).tolist(), dtype=torch.float64).to(dtype)


results = {}
# A convolution the direct kernels take (a grid of 6x6 positions, 16 * 3 * 3 reduction rows),
# with 20 output channels: one full block of 16 and a partial one.
x, w, b = rand(3, 16, 11, 11), rand(20, 16, 3, 3), rand(20)
out = torch.conv2d(x, w, b, stride=2, padding=1)
grads = aten.convolution_backward(rand(*out.shape), x, w, [20], [2, 2], [1, 1], [1, 1], False,
                                  [0, 0], 1, [True, True, True])
results.update(conv=out, grad_input=grads[0], grad_weight=grads[1], grad_bias=grads[2])
# Layer norm over rows of 100 (three blocks of 32 lanes and a tail) and of 70 in float64.
for name, dtype, cols, affine in (("ln32", torch.float32, 100, True),
                                  ("ln32_plain", torch.float32, 100, False),
                                  ("ln64", torch.float64, 70, True)):
    x = rand(7, cols, dtype=dtype) * 3 + 1
    w, b = (rand(cols, dtype=dtype), rand(cols, dtype=dtype)) if affine else (None, None)
    y, mean, rstd = aten.native_layer_norm(x, [cols], w, b, 1e-5)
    gi, gw, gb = aten.native_layer_norm_backward(rand(7, cols, dtype=dtype), x, [cols], mean,
                                                 rstd, w, b, [True, affine, affine])
    results.update({name: y, name + "_mean": mean, name + "_rstd": rstd, name + "_gi": gi})
    if affine:
        results.update({name + "_gw": gw, name + "_gb": gb})
results["amax"] = torch.amax(rand(1000), 0)
# Whether products run on the packed float32 kernels (see the module docstring).
results["packed"] = torch.tensor(bool(native.blas_info()["packed_kernel"]))
np.savez(sys.argv[1], **{k: v.numpy() for k, v in results.items()})
"""


def _run(tmp_path: Path, width: int | None) -> dict[str, np.ndarray]:
    env = {k: v for k, v in os.environ.items() if k != "PLAIT_CPU_VECTOR_BYTES"}
    if width is not None:
        env["PLAIT_CPU_VECTOR_BYTES"] = str(width)
    target = tmp_path / f"width_{width}.npz"
    subprocess.run([sys.executable, "-c", _SCRIPT, str(target)], env=env, check=True,
                   capture_output=True, text=True)
    with np.load(target) as saved:
        return {name: saved[name] for name in saved.files}


# Results computed by products, whose bits follow the product kernels rather than the width.
_PRODUCTS = {"grad_input"}


def test_every_vector_width_gives_the_same_bits(tmp_path: Path) -> None:
    own = _run(tmp_path, None)
    forced = {width: _run(tmp_path, width) for width in (16, 32, 64)}
    for width, results in forced.items():
        assert results.keys() == own.keys()
        same_products = bool(results["packed"]) == bool(own["packed"])
        for name, value in own.items():
            if name == "packed" or (name in _PRODUCTS and not same_products):
                continue
            assert results[name].dtype == value.dtype, (width, name)
            assert results[name].tobytes() == value.tobytes(), (width, name)
    # a forced 16 leaves products to OpenBLAS, as a CPU without AVX2 and FMA runs them
    assert not forced[16]["packed"]
    for results in (own, *forced.values()):
        _check_values(results)


def _check_values(got: dict[str, np.ndarray]) -> None:
    """Guards the comparison above against comparing garbage with garbage: the convolution and
    layer norm agree with float64 formulas written here."""
    rng = np.random.default_rng(5)

    def rand(*shape):
        return rng.uniform(-1, 1, shape).astype(np.float32).astype(np.float64)

    x, w, b = rand(3, 16, 11, 11), rand(20, 16, 3, 3), rand(20)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    expected = np.empty((3, 20, 6, 6))
    for i in range(6):
        for j in range(6):
            window = padded[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
            expected[:, :, i, j] = np.einsum("nchw,ochw->no", window, w) + b
    np.testing.assert_allclose(got["conv"], expected, rtol=1e-5, atol=1e-5)
    grad_out = rand(3, 20, 6, 6)
    np.testing.assert_allclose(got["grad_bias"], grad_out.sum(axis=(0, 2, 3)), rtol=1e-5,
                               atol=1e-5)
    grad_weight = np.zeros((20, 16, 3, 3))
    for i in range(6):
        for j in range(6):
            window = padded[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
            grad_weight += np.einsum("nchw,no->ochw", window, grad_out[:, :, i, j])
    np.testing.assert_allclose(got["grad_weight"], grad_weight, rtol=1e-5, atol=1e-5)
    grad_padded = np.zeros(padded.shape)
    for i in range(6):
        for j in range(6):
            grad_padded[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3] += np.einsum(
                "no,ochw->nchw", grad_out[:, :, i, j], w)
    np.testing.assert_allclose(got["grad_input"], grad_padded[:, :, 1:-1, 1:-1], rtol=1e-5,
                               atol=1e-5)
    x = rand(7, 100) * 3 + 1
    w, b = rand(100), rand(100)
    mean = x.mean(axis=1, keepdims=True)
    normalized = (x - mean) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got["ln32"], normalized * w + b, rtol=1e-5, atol=1e-5)
