"""plait-backend-cuda's kernels: every kernel the shared tables render in the CUDA dialect
compiles (NVRTC, which needs no GPU), and, where a GPU is present, the registered kernels
compute what numpy formulas written here say, on the device (no CPU fallback).

The compile checks skip where NVRTC is not installed (the ``nvidia-cuda-nvrtc`` wheel that
plait-backend-cuda depends on, or a CUDA toolkit); the device checks skip without a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

C = pytest.importorskip("plait_backend_cuda._C", reason="plait-backend-cuda is not installed")
from plait_backend_cuda import catalogue, nvrtc  # noqa: E402
from plait_backend_cuda._render import pointwise, render  # noqa: E402

NVRTC_MISSING = nvrtc.available()
needs_nvrtc = pytest.mark.skipif(bool(NVRTC_MISSING), reason=NVRTC_MISSING[:200])
COUNT, REASON = C.device_count()
needs_gpu = pytest.mark.skipif(COUNT == 0, reason=f"no CUDA device: {REASON}")


# -- rendering and compiling, no GPU needed --------------------------------------------------


def test_catalogue_covers_every_family_and_dtype():
    kernels = list(catalogue.every_kernel())
    families = {family for family, _ in kernels}
    assert families == set(catalogue.FAMILIES)
    names = [k.name for _, k in kernels]
    assert len(names) == len(set(names))
    # every elementwise row has a kernel for each dtype its table renders
    for op, row in pointwise.ROWS.items():
        for dtype in render.DTYPES:
            if row.expression(dtype)[0] is not None:
                assert any(n.startswith(f"plait_{op}_") and f"_{dtype}_" in n for n in names), \
                    (op, dtype)
    # every cast between real dtypes
    for dst in render.REAL:
        for src in render.REAL:
            assert f"plait_copy__{dst}_{src}_r3" in names


def test_cuda_dialect_needs_no_header():
    # NVRTC from the wheel has no CUDA headers: nothing rendered may include one
    for _, kernel in catalogue.every_kernel():
        assert "#include" not in kernel.source, kernel.name
        assert kernel.source.count('extern "C" __global__ void') == 1


@needs_nvrtc
def test_every_rendered_kernel_compiles():
    # the whole catalogue through NVRTC's front end (types, overloads, names: where a
    # dialect or table change breaks CUDA); code generation for a tenth of it below
    kernels = [k for _, k in catalogue.every_kernel()]
    assert len(kernels) > 1000
    nvrtc.compile_source(catalogue.combined_source(kernels), "compute_80", name="catalogue.cu",
                         check_only=True)


@needs_nvrtc
def test_a_tenth_of_the_catalogue_generates_ptx():
    kernels = [k for _, k in catalogue.every_kernel()][::10]
    compiled = nvrtc.compile_source(catalogue.combined_source(kernels), "compute_80",
                                    options=("--Ofast-compile=max",))
    assert compiled.ptx
    ptx = compiled.image.decode(errors="replace")
    for kernel in kernels:
        assert f".entry {kernel.name}(" in ptx, kernel.name


@needs_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_one_kernel_per_family_assembles_to_a_cubin(arch):
    # ptxas too (register limits, shared memory): the first kernel of every family
    firsts: dict[str, render.Rendered] = {}
    for family, kernel in catalogue.every_kernel():
        firsts.setdefault(family, kernel)
    compiled = nvrtc.compile_source(catalogue.combined_source(list(firsts.values())), arch)
    assert not compiled.ptx
    assert compiled.image[:4] == b"\x7fELF"  # a cubin is an ELF image


@needs_nvrtc
def test_compile_error_carries_the_log():
    with pytest.raises(nvrtc.NvrtcError, match="undefined_name"):
        nvrtc.compile_source('extern "C" __global__ void k() { undefined_name(); }', "sm_80",
                             check_only=True)


def test_half_conversions_round_to_nearest_even():
    # the dialect's 16-bit float codecs are PTX cvt with round-to-nearest-even
    assert "cvt.rn.f16.f32" in render.CUDA.prelude
    assert "plait_float_to_half" in render.CUDA.half_store
    store = render.store(render.CUDA, render.DTYPES["bfloat16"], "p", "i", "v")
    assert store == "p[i] = plait_float_to_bf16(v);"


# -- on a GPU ------------------------------------------------------------------------------------


@pytest.fixture
def calls():
    from plait_backend_cuda import kernels

    kernels.CALLS.clear()
    return kernels.CALLS


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32"])
def test_elementwise_on_the_device(calls, dtype):
    import torch

    a = np.arange(-6, 6, dtype=np.float64).reshape(3, 4)
    b = np.full((3, 4), 3.0)
    ta = torch.tensor(a, dtype=getattr(torch, dtype), device="cuda")
    tb = torch.tensor(b, dtype=getattr(torch, dtype), device="cuda")
    assert np.array_equal((ta + tb).cpu().double().numpy(), a + b)
    assert np.array_equal((ta * tb).t().contiguous().cpu().double().numpy(), (a * b).T)
    assert np.array_equal(torch.where(ta > 0, ta, tb).cpu().double().numpy(),
                          np.where(a > 0, a, b))
    assert calls["add"] and calls["mul"] and calls["gt"] and calls["where"]


@needs_gpu
def test_reductions_scans_and_matmul_on_the_device(calls):
    import torch

    a = (np.arange(3 * 1000, dtype=np.float32) % 7).reshape(3, 1000)
    t = torch.tensor(a, device="cuda")
    assert np.allclose(t.sum(1).cpu().numpy(), a.sum(1))
    assert np.array_equal(t.amax(0).cpu().numpy(), a.max(0))
    assert np.array_equal(t.argmax(1).cpu().numpy(), a.argmax(1))
    assert np.allclose(t.cumsum(1).cpu().numpy(), a.cumsum(1), rtol=1e-5)
    big = torch.ones(1 << 22, device="cuda")
    assert big.sum().item() == float(1 << 22)  # split into chunks, then reduced again
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    tm = torch.tensor(m, device="cuda")
    assert np.allclose((tm @ tm.t()).cpu().numpy(), m @ m.T)
    assert calls["sum"] >= 2 and calls["amax"] and calls["argmax"] and calls["cumsum"]
    assert calls["matmul"]
