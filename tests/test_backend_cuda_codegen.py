"""torch.compile's generated CUDA C++ (plait-backend-cuda's ``torch_backend_codegen``).

Without a GPU (this machine): kernel groups traced on the CPU render in the CUDA dialect with
the renderer plait-backend-xpu uses for OpenCL C, and NVRTC compiles them to PTX and to a
cubin. With a GPU: compiled functions on cuda tensors equal eager cuda's, through the
generator. The compile checks skip where NVRTC is not installed; the device checks without a
GPU.
"""

from __future__ import annotations

import pytest

import torch
import torch.nn.functional as F
from torch._inductor.compile_fx import compile_fx
from torch._inductor.scheduler import schedule
from torch.fx.experimental.proxy_tensor import make_fx

C = pytest.importorskip("plait_backend_cuda._C", reason="plait-backend-cuda is not installed")
from plait_backend_cuda import codegen, nvrtc  # noqa: E402
from plait_backend_cuda._render import render_group  # noqa: E402

NVRTC_MISSING = nvrtc.available()
needs_nvrtc = pytest.mark.skipif(bool(NVRTC_MISSING), reason=NVRTC_MISSING[:200])
COUNT, REASON = C.device_count()
needs_gpu = pytest.mark.skipif(COUNT == 0, reason=f"no CUDA device: {REASON}")

#: Functions whose groups cover the lowering table's kinds: float chains, broadcasts, integer
#: and bool values, casts, 16-bit floats and the fused reductions.
CASES = {
    "gelu_mul_add": (lambda x, y, z: F.gelu(x) * y + z, [(8, 16), (8, 16), (16,)],
                     torch.float32),
    "clamp_tanh_gelu": (lambda x, y: (x.clamp(-1.0, 2.0) * 3).tanh()
                        - F.gelu(y, approximate="tanh"), [(8, 16), (16,)], torch.float32),
    "float64": (lambda x, y: torch.erf(x).exp() / (y * y + 1) + x.log1p().sqrt(),
                [(4, 5), (4, 5)], torch.float64),
    "int": (lambda i, j: torch.maximum(i * 3 - j, j).abs() + 7, [(4, 5), (5,)], torch.int64),
    "bool": (lambda x, y: (torch.logical_and(x > 0, y < 1), torch.where(x > y, x, y * 2.0),
                           (x * 0.5).to(torch.bool)), [(4, 5), (4, 5)], torch.float32),
    "half": (lambda x, y: F.silu(x * y) + y.exp(), [(4, 5), (4, 5)], torch.float16),
    "bfloat16": (lambda x: (x * 3).sigmoid().to(torch.float32), [(4, 5)], torch.bfloat16),
    "sum": (lambda x, b: (x * b + 1).relu().sum(-1), [(6, 300), (300,)], torch.float32),
    "amax": (lambda x: (x.exp(), x.exp().amax(-1, keepdim=True)), [(6, 30)], torch.float64),
    "amin": (lambda x: (x - 1).amin(-1), [(6, 30)], torch.float32),
}


def _inputs(shapes, dtype, device="cpu"):
    if dtype.is_floating_point:
        return [torch.randn(*s).to(dtype).to(device) for s in shapes]
    return [torch.randint(-5, 5, s, dtype=dtype).to(device) for s in shapes]



def _groups(name):
    fn, shapes, dtype = CASES[name]
    # traced on meta tensors: a device other than the CPU, as cuda's groups are (16-bit
    # floats are fused there only)
    gm = make_fx(fn)(*_inputs(shapes, dtype, "meta"))
    return schedule(gm).groups


def _kernels(name):
    """Every kernel a case's groups render: the contiguous one and a rank-3 strided one."""
    out = []
    for group in _groups(name):
        renderer = codegen.renderer(group)
        for rank in (0, 3):
            kernel = (renderer.reduction_kernel(rank) if renderer.reduction
                      else renderer.pointwise(rank))
            out.append(kernel)
    return out


def test_groups_render_cuda_source_without_headers():
    for name in CASES:
        kernels = _kernels(name)
        assert kernels, name
        for kernel in kernels:
            assert "#include" not in kernel.source
            assert kernel.source.count('extern "C" __global__ void') == 1
    # float math through the f-suffixed functions; double through the plain ones
    gelu = _kernels("gelu_mul_add")[0].source
    assert "erff(" in gelu and "erf(" not in gelu.replace("erff(", "")
    assert "exp(" in _kernels("float64")[0].source
    # a reduction combines in shared memory
    assert "__shared__ float partial[" in _kernels("sum")[0].source


@needs_nvrtc
@pytest.mark.parametrize("name", sorted(CASES))
def test_groups_compile_to_ptx(name):
    kernels = _kernels(name)
    for kernel in kernels:
        compiled = nvrtc.compile_source(kernel.source, "compute_80",
                                        options=("--Ofast-compile=max",))
        assert f".entry {kernel.name}(" in compiled.image.decode(errors="replace"), name


@needs_nvrtc
def test_a_group_assembles_to_a_cubin():
    # ptxas too (registers, shared memory), for the architecture of an H100/H200
    for kernel in _kernels("sum") + _kernels("half"):
        compiled = nvrtc.compile_source(kernel.source, "sm_90")
        assert compiled.image[:4] == b"\x7fELF"


def test_the_hook_answers_cuda_pointwise_only():
    from plait_backend_cuda import plugin

    assert isinstance(plugin.torch_backend_codegen(device_type="cuda", target="pointwise"),
                      codegen.CudaCodegen)
    assert plugin.torch_backend_codegen(device_type="xpu", target="pointwise") is None
    assert plugin.torch_backend_codegen(device_type="cuda", target="matmul") is None


def test_unsupported_groups_are_declined():
    # complex values are not fused by the scheduler; a group is declined when the renderer
    # meets a member outside the lowering table (as a newer scheduler might hand it)
    group = _groups("gelu_mul_add")[0]
    group.members[0].target = torch.ops.aten.cumsum.default
    with pytest.raises(render_group.Unsupported):
        codegen.renderer(group)


@needs_gpu
@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_groups_equal_eager_on_the_gpu(name, monkeypatch):
    from torch._inductor import config

    monkeypatch.setattr(config, "compile_in_background", False)  # every call generated
    fn, shapes, dtype = CASES[name]
    inputs = _inputs(shapes, dtype, "cuda")
    compiled = compile_fx(make_fx(fn)(*inputs), inputs)
    launches = codegen.STATS["launches"]
    got, expected = compiled(*inputs), fn(*inputs)
    got = got if isinstance(got, (tuple, list)) else (got,)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    tol = 2e-2 if dtype in (torch.float16, torch.bfloat16) else None
    for g, e in zip(got, expected, strict=True):
        assert g.device.type == "cuda" and g.dtype == e.dtype and g.shape == e.shape
        torch.testing.assert_close(g.cpu(), e.cpu(), atol=tol, rtol=tol, equal_nan=True)
    assert all(r.calls["vendor"] == 1 for r in compiled.groups)
    assert codegen.STATS["launches"] == launches + len(compiled.groups)
