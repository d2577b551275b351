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


# -- registration and the launch boundary, no GPU needed -------------------------------------


def test_every_primitive_of_the_table_has_a_kernel():
    from plait_backend_cuda import fused, kernels

    from torch.backends import contract

    table = kernels.kernels()
    # a primitive added to core's table needs a cuda kernel (one that declines is enough)
    assert set(table) == set(contract.PRIMITIVES), set(contract.PRIMITIVES) ^ set(table)
    for name, kernel in table.items():
        assert getattr(kernel, "may_decline", False), name  # declines reach the fallback
        assert f"``{name}(" in kernel.__doc__
    assert set(fused.fused_kernels()) == {
        "aten::_softmax", "aten::_log_softmax", "aten::_softmax_backward_data",
        "aten::_log_softmax_backward_data"}


class _Block:
    def __init__(self, nbytes):
        self.nbytes = nbytes


class _Storage:
    def __init__(self, nbytes):
        self._handle = _Block(nbytes)


class _Operand:
    """What buffer_args reads of a tensor (contract.memory: storage handle and offset)."""

    def __init__(self, shape, stride, offset, itemsize, nbytes):
        self.shape, self._stride, self._offset = shape, stride, offset
        self._itemsize, self._storage = itemsize, _Storage(nbytes)

    def untyped_storage(self):
        return self._storage

    def storage_offset(self):
        return self._offset

    def element_size(self):
        return self._itemsize

    def stride(self):
        return self._stride

    def numel(self):
        return int(np.prod(self.shape))


def test_launch_boundary_checks_every_operands_reach():
    from plait_backend_cuda.kernels import buffer_args

    # a (3, 4) float32 view at element 2 reaches element 2 + 2*4 + 3 = 13: 56 bytes
    inside = _Operand((3, 4), (4, 1), 2, 4, 56)
    buffers, offsets = buffer_args([inside])
    assert offsets == [2] and buffers[0] is inside.untyped_storage()._handle
    # a transposed view's reach is the same block; one element more than the block holds fails
    assert buffer_args([_Operand((4, 3), (1, 4), 2, 4, 56)])[1] == [2]
    with pytest.raises(RuntimeError, match="reaches outside its block of 52 bytes"):
        buffer_args([_Operand((3, 4), (4, 1), 2, 4, 52)])
    # broadcast (stride 0) reaches one element; an empty tensor reaches none
    assert buffer_args([_Operand((1000, 4), (0, 1), 0, 8, 32)])[1] == [0]
    assert buffer_args([_Operand((0, 4), (4, 1), 9, 8, 0)])[1] == [9]


class _FakeKernel:
    """Stands for a _C.Kernel: checks a launch as the native launcher does (arguments against
    the signature letters, block and grid limits) and records it, running nothing."""

    def __init__(self, name, signature, launches):
        self.name, self.signature, self.launches = name, signature, launches

    def __call__(self, global_size, local_size, *args):
        assert len(args) == len(self.signature), (self.name, len(args), self.signature)
        for letter, arg in zip(self.signature, args):
            if letter == "b":
                assert hasattr(arg, "nbytes"), (self.name, arg)
            elif letter in "lL":
                low = -(1 << 63) if letter == "l" else 0
                assert type(arg) is int and low <= arg < low + (1 << 64), (self.name, arg)
            elif letter in "iI":
                assert type(arg) is int and abs(arg) < 1 << 32, (self.name, arg)
            else:
                assert isinstance(arg, (int, float)), (self.name, arg)
        assert 1 <= len(global_size) == len(local_size) <= 3
        assert int(np.prod(local_size)) <= 1024
        for g, loc in zip(global_size, local_size):
            assert loc > 0 and g % loc == 0, (self.name, global_size, local_size)
        self.launches.append(self.name)


@pytest.fixture
def dry_run(monkeypatch):
    """The cuda kernels' launch code over CPU tensors (their blocks have ``nbytes`` too), with
    a program cache that records each requested source and returns :class:`_FakeKernel`."""
    from plait_backend_cuda import device_module, kernels

    launches, sources = [], {}

    class Programs:
        def kernel(self, index, source, name, signature):
            sources[name] = source
            return _FakeKernel(name, signature, launches)

    monkeypatch.setattr(device_module, "programs", Programs)
    monkeypatch.setattr(kernels, "_KERNELS", {})
    return launches, sources


def test_every_family_launches_consistently_with_its_kernel(dry_run):
    # every argument list the launch code builds matches its kernel's signature (no GPU: the
    # launches are recorded, not run); then the sources it asked for compile
    from plait_backend_cuda import fused, kernels

    import torch

    launches, sources = dry_run
    k = kernels.kernels()
    f32 = torch.ones(4, 6)
    strided = torch.ones(6, 4).t()
    for op, row in pointwise.ROWS.items():
        dtype = next(d for d in ("float32", "int32", "bool") if row.expression(d)[0] is not None)
        a = strided.to(getattr(torch, dtype))
        out = torch.empty(4, 6, dtype=torch.bool if row.writes_bool else a.dtype)
        binary = op in pointwise.BINARY or op in pointwise.COMPARE
        k[op](out, a, f32.to(a.dtype)) if binary else k[op](out, a)
    for mode in pointwise.DIV:
        k["div"](torch.empty(4, 6), f32, strided, mode)
    k["where"](torch.empty(4, 6), torch.ones(4, 6, dtype=torch.bool), f32, strided)
    k["copy_"](torch.empty(4, 6, dtype=torch.float16), strided)
    k["fill_"](torch.empty(5, dtype=torch.complex128), 1 + 2j)
    k["arange_"](torch.empty(7, dtype=torch.int64), 3, -2)
    k["arange_"](torch.empty(7, dtype=torch.bfloat16), 0.5, 0.25)
    for op in ("sum", "prod", "amax", "amin", "any", "all"):
        out_dtype = torch.bool if op in ("any", "all") else torch.float32
        k[op](torch.empty(4, 1, dtype=out_dtype), f32, [1])  # reduced dims kept, of size 1
        k[op](torch.empty(1, 1, 6, dtype=out_dtype), torch.ones(4, 200, 6), [0, 1])
    k["sum"](torch.empty(1), torch.ones(1 << 20), [0])  # one long row: split in two passes
    for op in ("argmax", "argmin"):
        k[op](torch.empty(4, 1, dtype=torch.int64), f32, 1)
    for op in ("cumsum", "cumprod"):
        k[op](torch.empty(4, 6), strided, 1)
    for op in ("cummax", "cummin"):
        k[op](torch.empty(4, 6), torch.empty(4, 6, dtype=torch.int64), f32, 0)
    k["matmul"](torch.empty(2, 4, 5), torch.ones(2, 4, 3), torch.ones(2, 3, 5))
    index = torch.zeros(4, 3, dtype=torch.int64)
    k["gather"](torch.empty(4, 3), f32, 1, index)
    k["scatter_"](torch.empty(4, 6), 1, index, torch.ones(4, 3))
    k["scatter_"](torch.empty(4, 6), 1, index, torch.ones(4, 3), "sum", True)
    k["searchsorted"](torch.empty(4, 2, dtype=torch.int64), f32, torch.ones(4, 2), False)
    k["random_bits_"](torch.empty(10, dtype=torch.int64), 7, 3)
    k["sort"](torch.empty(4, 6), torch.empty(4, 6, dtype=torch.int64), strided, 1, True)
    k["topk"](torch.empty(4, 2), torch.empty(4, 2, dtype=torch.int64), f32, 2, 1)
    k["convolution"](torch.empty(2, 4, 7, 7), torch.ones(2, 3, 9, 9), torch.ones(4, 3, 3, 3),
                     [1, 1], [0, 0], [1, 1], False, 1)
    k["convolution"](torch.empty(2, 3, 9, 9), torch.ones(2, 4, 7, 7), torch.ones(4, 3, 3, 3),
                     [1, 1], [0, 0], [1, 1], True, 1)
    k["fft_c2c"](torch.empty(4, 6, dtype=torch.complex64), f32.to(torch.complex64), [0, 1], 0,
                 True)
    k["fft_r2c"](torch.empty(4, 4, dtype=torch.complex64), f32, [1], 0, True)
    k["fft_c2r"](torch.empty(4, 6), torch.ones(4, 4, dtype=torch.complex64), [1], 0)
    c64 = f32.to(torch.complex64)
    k["exp"](torch.empty(4, 6, dtype=torch.complex64), c64)  # in complex128, rounded once
    k["mul"](torch.empty(4, 6, dtype=torch.complex64), c64, c64)
    k["sum"](torch.empty(4, 1, dtype=torch.complex64), c64, [1])
    k["cumprod"](torch.empty(4, 6, dtype=torch.complex64), c64, 1)
    k["matmul"](torch.empty(4, 4, dtype=torch.complex64), c64, c64.t())
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        k["copy_"](torch.empty(4, 6), c64)
    fused.fused_kernels()["aten::_softmax"](f32, 1, False)
    fused.fused_kernels()["aten::_log_softmax_backward_data"](f32, f32, 1, torch.float32)
    ran = {name.removeprefix("plait_").split("_")[0] for name in launches}
    assert {"exp", "add", "where", "copy", "fill", "arange", "sum", "argmax", "cumsum",
            "cummax", "matmul", "gather", "scatter", "searchsorted", "random", "sort",
            "convolution", "dft", "softmax"} <= ran, sorted(ran)
    if NVRTC_MISSING:
        pytest.skip(f"the {len(launches)} launches were consistent; {NVRTC_MISSING[:150]}")
    nvrtc.compile_source(catalogue.combined_source(
        [render.Rendered(source, name, "") for name, source in sources.items()]),
        "compute_90", check_only=True)


def _column_major_gemm(p, first, second, out):
    """What cublasGemmStridedBatchedEx computes (column-major, as its documentation defines
    it), over flat arrays whose index 0 is each operand's first element."""
    for batch in range(p.batches):
        f, s, o = (x[batch * st:] for x, st in ((first, p.stride_first),
                                               (second, p.stride_second), (out, p.stride_out)))
        for i in range(p.m):
            for j in range(p.n):
                total = 0.0
                for lane in range(p.k):
                    x = f[i + lane * p.ld_first] if p.op_first == 0 else f[lane + i * p.ld_first]
                    y = s[lane + j * p.ld_second] if p.op_second == 0 else s[j + lane * p.ld_second]
                    total += x * y
                o[i + j * p.ld_out] = total


def _strided(shape, strides, offset, size=4096):
    """(the flat array from the view's first element, the view)"""
    flat = (np.arange(size, dtype=np.float64) % 13 - 6)[offset:]
    return flat, np.lib.stride_tricks.as_strided(flat, shape, [8 * s for s in strides])


@pytest.mark.parametrize("case", [
    # (out shape, out strides), (a strides), (b strides), k
    (((3, 5), (5, 1)), (4, 1), (5, 1), 4),  # contiguous
    (((3, 5), (5, 1)), (1, 3), (5, 1), 4),  # a transposed
    (((3, 5), (5, 1)), (4, 1), (1, 4), 4),  # b transposed
    (((3, 5), (8, 1)), (1, 3), (1, 4), 4),  # both transposed, out rows padded
    (((2, 3, 5), (15, 5, 1)), (12, 4, 1), (20, 1, 4), 4),  # batched
    (((1, 5), (5, 1)), (7, 1), (5, 1), 4),  # one row
    (((3, 1), (1, 1)), (4, 1), (1, 1), 4),  # one column
])
def test_cublas_plan_computes_the_product(case):
    from plait_backend_cuda import cublas
    from plait_backend_cuda.kernels import merge

    (out_shape, out_strides), a_strides, b_strides, k = case
    batch = list(out_shape[:-2])
    a_shape, b_shape = (*batch, out_shape[-2], k), (*batch, k, out_shape[-1])
    a_flat, a = _strided(a_shape, a_strides, 3)
    b_flat, b = _strided(b_shape, b_strides, 5)
    sizes, batch_strides = merge(batch, [list(out_strides[:-2]), list(a_strides[:-2]),
                                         list(b_strides[:-2])])
    p = cublas.plan(out_shape, out_strides, a_strides, b_strides, k, sizes, batch_strides)
    assert p is not None
    out_base = np.full(4096, np.nan)
    out = np.lib.stride_tricks.as_strided(out_base, out_shape, [8 * s for s in out_strides])
    _column_major_gemm(p, b_flat, a_flat, out_base)  # b first: out^T = b^T a^T
    np.testing.assert_array_equal(out, a @ b)


def test_cublas_plan_declines_what_it_cannot_take():
    from plait_backend_cuda import cublas

    # a broadcast row of b (stride 0 along k), a matrix with no unit stride, a broadcast batch
    assert cublas.plan((3, 5), (5, 1), (4, 1), (0, 1), 4, [], []) is None
    assert cublas.plan((3, 5), (5, 1), (8, 2), (5, 1), 4, [], []) is None
    assert cublas.plan((2, 3, 5), (15, 5, 1), (0, 4, 1), (20, 5, 1), 4, [2],
                       [[15], [0], [20]]) is None


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


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int64"])
def test_matmul_layouts_match_the_cpu(calls, dtype):
    from plait_backend_cuda import cublas

    import torch

    rng = np.random.default_rng(4)
    dt = getattr(torch, dtype)
    a = torch.from_numpy(rng.integers(-3, 4, (3, 5, 4)).astype(np.float64)).to(dt)
    b = torch.from_numpy(rng.integers(-3, 4, (3, 4, 6)).astype(np.float64)).to(dt)
    for x, y in ((a, b), (a.transpose(1, 2).contiguous().transpose(1, 2), b),
                 (a, b.transpose(1, 2).contiguous().transpose(1, 2)), (a[0], b[1])):
        got = (x.to("cuda") @ y.to("cuda")).cpu()
        assert torch.equal(got, x @ y)  # small integers: exact in every dtype
    if dtype != "int64" and cublas.available():
        assert calls["matmul_cublas"] >= 4


def _both(name, out_dtype, inputs, shape, **kwargs):
    """Primitive ``name`` on the CPU and on cuda (inputs moved as views of the same layout)."""
    from plait_backend_cuda import kernels

    import torch

    prim = torch.backends.contract.primitive(name)
    dt = getattr(torch, out_dtype)
    want = torch.empty(shape, dtype=dt)
    prim(want, *inputs, **kwargs)
    got = torch.empty(shape, dtype=dt, device="cuda")
    moved = []
    for t in inputs:
        if not isinstance(t, torch.Tensor):
            moved.append(t)
            continue
        base = t.as_strided((t.untyped_storage().nbytes() // t.element_size(),), (1,), 0)
        moved.append(base.to("cuda").as_strided(t.shape, t.stride(), t.storage_offset()))
    before = kernels.CALLS[name]
    prim(got, *moved, **kwargs)
    assert kernels.CALLS[name] == before + 1, f"{name} did not run on the device"
    return got.cpu(), want


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32", "uint8"])
def test_every_elementwise_row_matches_the_cpu(dtype):
    import torch

    rng = np.random.default_rng(1)
    values = rng.uniform(-3, 3, (4, 6)) if dtype.startswith(("float", "bfloat")) else \
        rng.integers(1, 9, (4, 6))  # no integer division by zero (the CPU raises there)
    a = torch.from_numpy(values).to(getattr(torch, dtype))
    b = torch.from_numpy(np.flip(values, 1).copy()).to(getattr(torch, dtype)).t().contiguous().t()
    for op, row in pointwise.ROWS.items():
        if row.expression(dtype)[0] is None:
            continue
        binary = op in pointwise.BINARY or op in pointwise.COMPARE
        out_dtype = "bool" if row.writes_bool else dtype
        inputs = [a, b] if binary else [a]
        got, want = _both(op, out_dtype, inputs, (4, 6))
        if want.dtype.is_floating_point:
            tolerance = {torch.float16: 1e-3, torch.bfloat16: 1.6e-2}.get(want.dtype, 1e-5)
            torch.testing.assert_close(got, want, rtol=tolerance, atol=1e-5, equal_nan=True,
                                       msg=op)
        else:
            assert torch.equal(got, want), op


@needs_gpu
def test_random_bits_are_the_cpus():
    import torch

    torch.manual_seed(3)
    on_cpu = torch.rand(50)
    torch.manual_seed(3)
    assert torch.equal(torch.rand(50, device="cuda").cpu(), on_cpu)
    prim = torch.backends.contract.primitive("random_bits_")
    for seed, offset, n in ((0, 0, 9), (2**64 - 1, 2**64 - 2, 12), (12345, 77, 1001)):
        want = torch.empty(n, dtype=torch.int64)
        prim(want, seed, offset)
        got = torch.empty(n, dtype=torch.int64, device="cuda")
        prim(got, seed, offset)
        assert torch.equal(got.cpu(), want), (seed, offset)


@needs_gpu
def test_indexing_sort_conv_and_softmax_match_the_cpu():
    import torch

    rng = np.random.default_rng(2)
    a = torch.from_numpy(rng.standard_normal((5, 7)).astype(np.float32))
    index = torch.from_numpy(rng.integers(0, 7, (5, 3)))
    got, want = _both("gather", "float32", [a, 1, index], (5, 3))
    assert torch.equal(got, want)
    values, order = a.to("cuda").sort(1)
    assert torch.equal(values.cpu(), a.sort(1).values)
    assert torch.equal(order.cpu(), a.sort(1).indices)
    x = torch.from_numpy(rng.standard_normal((2, 3, 9, 9)).astype(np.float32))
    w = torch.from_numpy(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    got, want = _both("convolution", "float32", [x, w, [1, 1], [1, 1], [1, 1], False, 1],
                      (2, 4, 9, 9))
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(torch.softmax(a.to("cuda"), 1).cpu(), torch.softmax(a, 1))
