"""What real programs call and hit: formatting 0-d tensors, the CUDA query surface on a machine
without CUDA, the process-wide default dtype, storage slices, ``set_``, ``resize_``, dtype
views, complex views and ``conj`` (each checked against PyTorch 2.13's behaviour)."""

import io
import threading
import warnings

import numpy as np
import pytest

import torch
from torch._core import registry

# What PyTorch's CPU build answers, which torch.cuda answers while no CUDA backend is installed.
# With plait-backend-cuda installed (the workflows build it wherever nvcc is), torch.cuda is that
# backend's module, which answers for a machine with its driver (issue 14 covers it there).
without_cuda_backend = pytest.mark.skipif(
    "cuda" in registry.installed(),
    reason="plait-backend-cuda is installed: torch.cuda is its module, not the CPU build's answers")

# -- Tensor.__format__ -----------------------------------------------------------------------


@pytest.mark.parametrize(("value", "spec", "expected"), [
    (1.5, ".4f", "1.5000"),
    (1.5, ">10", "       1.5"),
    (1.5, "", "1.5"),
    (3, "d", "3"),
    (3, ".2f", "3.00"),
    (True, "", "True"),
    (True, ">3", "  1"),
])
def test_zero_dim_tensors_format_as_their_number(value, spec, expected):
    assert format(torch.tensor(value), spec) == expected


def test_format_of_a_tensor_that_requires_grad():
    loss = torch.tensor(0.25, requires_grad=True) * 2
    assert f"{loss:.3f}" == "0.500"


def test_other_tensors_take_object_formatting():
    t = torch.tensor([1.5])
    assert format(t, "") == str(t)
    with pytest.raises(TypeError, match="unsupported format string"):
        format(t, ".2f")


# -- torch.save after autograd ----------------------------------------------------------------


def test_save_and_load_tensors_that_went_through_autograd():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w * 3).sum().backward()
    buf = io.BytesIO()
    torch.save({"w": w, "grad": w.grad, "y": w * 2}, buf)
    buf.seek(0)
    back = torch.load(buf)
    assert back["w"].requires_grad and back["w"].tolist() == [1.0, 2.0]
    assert back["grad"].tolist() == [3.0, 3.0]
    assert back["y"].tolist() == [2.0, 4.0]
    # as PyTorch: a saved non-leaf comes back a leaf that requires grad; no gradient is saved
    assert back["y"].requires_grad and back["y"].grad_fn is None and back["w"].grad is None


def test_save_and_load_a_module_after_backward():
    model = torch.nn.Linear(2, 1)
    model(torch.ones(1, 2)).sum().backward()
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    back = torch.load(buf, weights_only=False)
    assert isinstance(back, torch.nn.Linear)
    assert back.weight.tolist() == model.weight.tolist()
    assert back.weight.grad is None  # PyTorch does not save gradients


# -- linalg inside inference_mode ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["solve", "inv", "det", "cholesky", "eigh", "slogdet", "qr",
                                  "svd", "pinv", "matrix_norm", "eigvalsh", "lu_factor",
                                  "inv_ex", "cholesky_ex"])
def test_linalg_runs_inside_inference_mode(name):
    a = torch.tensor([[4.0, 1.0], [1.0, 3.0]])
    with torch.inference_mode():
        fn = getattr(torch.linalg, name)
        out = fn(a, a) if name == "solve" else fn(a)
    first = out[0] if isinstance(out, tuple) else out
    assert first.is_inference()
    if name == "det":
        assert out.item() == pytest.approx(11.0)
    if name == "solve":
        assert torch.allclose(out, torch.eye(2), atol=1e-6)


# -- torch.cuda without CUDA ----------------------------------------------------------------------

cuda_missing = pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA backend is serving")


@without_cuda_backend
@cuda_missing
@pytest.mark.parametrize(("name", "args", "expected"), [
    ("is_available", (), False),
    ("device_count", (), 0),
    ("is_initialized", (), False),
    ("is_bf16_supported", (), False),
    ("is_tf32_supported", (), False),
    ("memory_allocated", (), 0),
    ("memory_allocated", (0,), 0),
    ("max_memory_allocated", ("cuda:0",), 0),
    ("memory_reserved", (), 0),
    ("max_memory_reserved", (), 0),
    ("memory_stats", (), {}),
    ("empty_cache", (), None),
    ("reset_peak_memory_stats", (), None),
    ("get_arch_list", (), []),
    ("manual_seed", (1,), None),
    ("manual_seed_all", (1,), None),
    ("default_generators", None, ()),
])
def test_cuda_queries_answer_as_a_cpu_build(name, args, expected):
    entry = getattr(torch.cuda, name)
    assert (entry if args is None else entry(*args)) == expected


@without_cuda_backend
@cuda_missing
def test_cuda_bf16_probe_takes_its_keyword():
    assert torch.cuda.is_bf16_supported(including_emulation=False) is False


@without_cuda_backend
@cuda_missing
def test_cuda_renamed_memory_counters_warn():
    with pytest.warns(FutureWarning, match="memory_reserved"):
        assert torch.cuda.memory_cached() == 0


@without_cuda_backend
@cuda_missing
@pytest.mark.parametrize("name", ["current_device", "get_device_name", "get_device_capability",
                                  "get_device_properties", "mem_get_info", "synchronize", "init",
                                  "get_rng_state", "current_stream", "Stream", "Event"])
def test_cuda_entries_that_need_a_device_raise_as_pytorch(name):
    # PyTorch's CPU build raises AssertionError; the error also is a RuntimeError naming what
    # to install
    with pytest.raises(AssertionError, match="plait-backend-cuda"):
        getattr(torch.cuda, name)()
    with pytest.raises(RuntimeError):
        getattr(torch.cuda, name)()


@without_cuda_backend
@cuda_missing
def test_cuda_tensors_raise_assertion_and_runtime_errors():
    with pytest.raises(AssertionError):
        torch.ones(2).cuda()
    with pytest.raises(RuntimeError):
        torch.empty(2, device="cuda")


@without_cuda_backend
@cuda_missing
def test_cuda_context_managers_without_a_device():
    with torch.cuda.device_of(torch.ones(1)), torch.cuda.stream(None), torch.cuda.device(None):
        pass
    with pytest.raises(AssertionError):
        with torch.cuda.device(0):
            pass


@without_cuda_backend
def test_out_of_memory_error_is_shared():
    assert torch.cuda.OutOfMemoryError is torch.OutOfMemoryError
    assert issubclass(torch.OutOfMemoryError, RuntimeError)


@without_cuda_backend
@cuda_missing
def test_cuda_amp_autocast_is_the_deprecated_alias():
    with pytest.warns(FutureWarning, match="torch.amp.autocast"):
        ctx = torch.cuda.amp.autocast(enabled=False)
    with ctx:
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype is torch.float32


@without_cuda_backend
def test_torch_version_reports_no_cuda():
    import torch.version

    assert torch.version.cuda is None and torch.version.hip is None
    assert torch.version.__version__ == torch.__version__


# -- default dtype: process-wide -------------------------------------------------------------------


def test_default_dtype_is_seen_by_other_threads_default_device_is_not():
    seen = {}

    def worker():
        seen["dtype"] = torch.ones(1).dtype
        seen["device"] = torch.get_default_device()

    torch.set_default_dtype(torch.float64)
    torch.set_default_device("meta")
    try:
        th = threading.Thread(target=worker)
        th.start()
        th.join()
    finally:
        torch.set_default_dtype(torch.float32)
        torch.set_default_device(None)
    assert seen == {"dtype": torch.float64, "device": torch.device("cpu")}


def test_no_warnings_on_import_surface():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch.cuda.is_available() is False or torch.cuda.device_count() > 0


# -- view(dtype) across element sizes ----------------------------------------------------------


@pytest.mark.parametrize(("make", "dtype", "shape", "stride", "offset"), [
    (lambda: torch.arange(12.).reshape(3, 4), torch.float16, (3, 8), (8, 1), 0),
    (lambda: torch.arange(12.).reshape(3, 4), torch.float64, (3, 2), (2, 1), 0),
    (lambda: torch.arange(12.).reshape(3, 4).view(torch.int8)[1:, 2:], torch.int16,
     (2, 7), (8, 1), 9),
    (lambda: torch.tensor(1.0), torch.int32, (), (), 0),
    (lambda: torch.arange(4.), torch.complex64, (2,), (1,), 0),
])
def test_view_dtype_geometry(make, dtype, shape, stride, offset):
    src = make()
    out = src.view(dtype)
    assert (tuple(out.shape), out.stride(), out.storage_offset()) == (shape, stride, offset)
    assert out.dtype is dtype
    assert out.untyped_storage().data_ptr() == src.untyped_storage().data_ptr()


def test_view_dtype_reads_the_same_bytes():
    # 1.0f is 0x3F800000, 2.0f 0x40000000: little-endian halves
    assert torch.tensor([1.0, 2.0]).view(torch.int16).tolist() == [0, 16256, 0, 16384]
    wide = torch.tensor([1.5, -2.0]).view(torch.float64)
    assert wide.view(torch.float32).tolist() == [1.5, -2.0]


@pytest.mark.parametrize(("make", "dtype", "message"), [
    (lambda: torch.arange(12.).reshape(3, 4).t(), torch.float16,
     r"self.stride\(-1\) must be 1 to view Float as Half \(different element sizes\), but got 4"),
    (lambda: torch.tensor(1.0), torch.float16,
     r"self.dim\(\) cannot be 0 to view Float as Half"),
    (lambda: torch.arange(6.).reshape(2, 3), torch.float64,
     r"self.size\(-1\) must be divisible by 2 to view Float as Double .*but got 3"),
    (lambda: torch.ones(2, 0), torch.float64,
     r"self.stride\(0\) must be divisible by 2 to view Float as Double .*but got 1"),
])
def test_view_dtype_errors_as_pytorch(make, dtype, message):
    with pytest.raises(RuntimeError, match=message):
        make().view(dtype)


def test_view_dtype_is_not_differentiable():
    assert torch.ones(3, requires_grad=True).view(torch.float16).requires_grad is False


# -- complex views and conj --------------------------------------------------------------------


def test_view_as_real_and_complex_share_memory():
    z = torch.tensor([1 + 2j, 3 - 1j])
    pairs = torch.view_as_real(z)
    assert pairs.tolist() == [[1.0, 2.0], [3.0, -1.0]]
    assert pairs.dtype is torch.float32 and pairs.stride() == (2, 1) and pairs._base is z
    pairs[0, 1] = 5.0
    assert z.tolist() == [1 + 5j, 3 - 1j]
    back = torch.view_as_complex(pairs)
    assert back.dtype is torch.complex64 and back.tolist() == z.tolist()
    back[1] = 0j
    assert pairs[1].tolist() == [0.0, 0.0]


def test_real_and_imag_are_views():
    z = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex128)
    assert z.real.tolist() == [1.0, 3.0] and z.imag.tolist() == [2.0, -1.0]
    assert z.real.dtype is torch.float64 and z.imag.storage_offset() == 1
    z.real.mul_(10)
    assert z.tolist() == [10 + 2j, 30 - 1j]
    x = torch.ones(2)
    assert x.real is x
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        _ = x.imag


@pytest.mark.parametrize(("make", "message"), [
    (lambda: torch.view_as_real(torch.ones(2)), "only supported for complex tensors"),
    (lambda: torch.view_as_complex(torch.ones(3)), "last dimension of size 2"),
    (lambda: torch.view_as_complex(torch.ones(2, 2).t()), "last dimension with stride 1"),
    (lambda: torch.view_as_complex(torch.ones(4, 2, dtype=torch.int32)), "scalar type: Int"),
])
def test_complex_view_errors(make, message):
    with pytest.raises(RuntimeError, match=message):
        make()


def test_view_as_complex_of_a_strided_slice():
    pairs = torch.arange(8.).reshape(4, 2)[::2]
    assert torch.view_as_complex(pairs).tolist() == [0 + 1j, 4 + 5j]


def test_complex_views_carry_gradients():
    z = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    (torch.view_as_real(z) * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert z.grad.tolist() == [1 + 2j, 3 + 4j]
    w = torch.tensor([1 + 2j, 3 + 4j], requires_grad=True)
    (w.real * 2 + w.imag * 5).sum().backward()
    assert w.grad.tolist() == [2 + 5j, 2 + 5j]
    pairs = torch.tensor([[1.0, 2.0]], requires_grad=True)
    (torch.view_as_real(torch.view_as_complex(pairs)) * torch.tensor([[3.0, 7.0]])).sum().backward()
    assert pairs.grad.tolist() == [[3.0, 7.0]]


def test_conj_family():
    z = torch.tensor([1 + 2j, 3 - 1j])
    assert torch.conj(z).tolist() == [1 - 2j, 3 + 1j]
    assert z.conj().tolist() == [1 - 2j, 3 + 1j] and z.tolist() == [1 + 2j, 3 - 1j]
    assert torch.conj_physical(z).tolist() == [1 - 2j, 3 + 1j]
    assert z.conj().resolve_conj().tolist() == [1 - 2j, 3 + 1j]
    assert z.is_conj() is False and torch.is_conj(z) is False
    x = torch.ones(2)
    assert x.conj() is x and torch.conj_physical(x) is x and x.resolve_conj() is x


def test_complex_vdot_conjugates_its_first_argument():
    a = torch.tensor([1 + 2j, 2 - 1j])
    b = torch.tensor([3 + 1j, 1j])
    # sum(conj(a) * b) = (1-2j)(3+1j) + (2+1j)(1j) = (5-5j) + (-1+2j)
    assert torch.vdot(a, b).item() == 4 - 3j


# -- storage slices, set_, resize_ ----------------------------------------------------------------


def test_storage_slice_shares_the_bytes():
    t = torch.arange(4.0)
    storage = t.untyped_storage()
    part = storage[4:8]
    assert isinstance(part, torch.UntypedStorage) and part.nbytes() == 4
    assert part.data_ptr() - storage.data_ptr() == 4
    part[0] = 7
    assert storage[4] == 7
    storage[0:4] = 1
    assert t[0].view(torch.int32).item() == 0x01010101
    assert (storage[-4:].nbytes(), storage[2:100].nbytes(), storage[5:2].nbytes()) == (4, 14, 0)


def test_storage_slice_errors():
    storage = torch.arange(4.0).untyped_storage()
    with pytest.raises(RuntimeError, match="only a step of 1 is supported"):
        storage[0:8:2]
    with pytest.raises(TypeError, match="with float"):
        storage[1.5]
    with pytest.raises(IndexError):
        storage[16]


def test_set_to_a_storage_with_size_and_stride():
    src = torch.arange(6.0)
    t = torch.empty(0).set_(src.untyped_storage(), 1, (2, 2), (2, 1))
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert (t.stride(), t.storage_offset()) == ((2, 1), 1)
    t[0, 0] = 100.0
    assert src[1].item() == 100.0
    whole = torch.empty(0).set_(src.untyped_storage())
    assert whole.shape == (6,)
    contiguous = torch.empty(0).set_(source=src.untyped_storage(), storage_offset=0, size=(2, 3))
    assert contiguous.stride() == (3, 1)


def test_set_to_a_tensor_and_to_nothing():
    src = torch.arange(6.0)
    t = torch.empty(0)
    assert t.set_(src[2:]) is t and t._version == 1
    assert t.tolist() == [2.0, 3.0, 4.0, 5.0] and t.storage_offset() == 2
    assert t.untyped_storage().data_ptr() == src.untyped_storage().data_ptr()
    empty = torch.ones(3).set_()
    assert empty.shape == (0,) and empty.untyped_storage().nbytes() == 0


def test_set_grows_a_storage_that_is_too_small():
    src = torch.arange(6.0)
    t = torch.empty(0).set_(src.untyped_storage(), 0, (10,), (1,))
    assert t.shape == (10,) and src.untyped_storage().nbytes() == 40
    assert t[:6].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_set_errors():
    with pytest.raises(RuntimeError, match="of type float to a tensor of type long int"):
        torch.empty(0, dtype=torch.int64).set_(torch.ones(2))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        torch.ones(2, requires_grad=True).set_(torch.ones(2))


def test_resize_shrinks_and_grows_keeping_bytes():
    t = torch.arange(4.0)
    assert t.resize_(2).tolist() == [0.0, 1.0]
    grown = torch.arange(4.0).resize_(2, 3)
    assert grown.shape == (2, 3) and grown.flatten()[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert grown.untyped_storage().nbytes() >= 24
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        torch.ones(2, requires_grad=True).resize_(3)


# -- torch.backends.cuda -------------------------------------------------------------------------


def test_backends_cuda_matmul_tf32_is_the_matmul_precision():
    switches = torch.backends.cuda.matmul
    assert switches.allow_tf32 is False  # the default precision is "highest"
    try:
        switches.allow_tf32 = True
        assert torch.get_float32_matmul_precision() == "high"
        torch.set_float32_matmul_precision("medium")
        assert switches.allow_tf32 is True
        switches.allow_tf32 = False
        assert torch.get_float32_matmul_precision() == "highest"
    finally:
        torch.set_float32_matmul_precision("highest")
    assert switches.allow_fp16_reduced_precision_reduction is True
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        switches.foo = 1


def test_backends_cuda_attention_switches():
    cuda = torch.backends.cuda
    assert cuda.flash_sdp_enabled() and cuda.math_sdp_enabled()
    try:
        cuda.enable_flash_sdp(False)
        assert cuda.flash_sdp_enabled() is False
        with pytest.warns(FutureWarning, match="sdp_kernel"):
            with cuda.sdp_kernel(enable_math=False):
                assert cuda.math_sdp_enabled() is False and cuda.flash_sdp_enabled() is True
        assert cuda.math_sdp_enabled() is True and cuda.flash_sdp_enabled() is False
    finally:
        cuda.enable_flash_sdp(True)


@without_cuda_backend
@cuda_missing
def test_backends_cuda_is_not_built_without_a_backend():
    assert torch.backends.cuda.is_built() is False


# -- GradScaler ---------------------------------------------------------------------------------


@without_cuda_backend
@cuda_missing
def test_cuda_grad_scaler_disables_itself_without_cuda():
    with pytest.warns(FutureWarning, match="torch.amp.GradScaler"):
        with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
            scaler = torch.cuda.amp.GradScaler()
    assert scaler.is_enabled() is False and scaler.get_scale() == 1.0
    assert scaler.state_dict() == {}
    p = torch.nn.Parameter(torch.tensor([1.0]))
    opt = torch.optim.SGD([p], lr=0.5)
    loss = (p * 2).sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.step(opt)
    scaler.update()
    assert p.tolist() == [0.0]


def test_grad_scaler_scales_unscales_and_skips_overflowing_steps():
    p = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = torch.optim.SGD([p], lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
    scaled = scaler.scale((p * p).sum())
    assert scaled.item() == 20.0
    scaled.backward()
    assert p.grad.tolist() == [8.0, 16.0]
    scaler.step(opt)
    assert p.grad.tolist() == [2.0, 4.0]
    assert p.tolist() == pytest.approx([0.8, 1.6])
    scaler.update()
    assert scaler.get_scale() == 4.0
    opt.zero_grad()
    scaler.scale((p * p).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 8.0  # two clean steps: grown
    opt.zero_grad()
    scaler.scale((p * float("inf")).sum()).backward()
    before = p.tolist()
    assert scaler.step(opt) is None
    scaler.update()
    assert p.tolist() == before and scaler.get_scale() == 4.0  # skipped, backed off
    assert scaler.state_dict() == {"scale": 4.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                   "growth_interval": 2, "_growth_tracker": 0}
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called on this optimizer"):
        scaler.unscale_(opt)


def test_grad_scaler_per_optimizer_state_as_pytorch_lays_it_out():
    """Libraries (fastai's mixed-precision callback) import OptState and read
    _per_optimizer_states[id(optimizer)]: the stage, and per device a flag tensor that is 1
    after an overflow."""
    from torch.amp.grad_scaler import OptState

    p = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = torch.optim.SGD([p], lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0)
    assert [s.name for s in OptState] == ["READY", "UNSCALED", "STEPPED"]
    assert scaler._per_optimizer_states[id(opt)]["stage"] is OptState.READY
    scaler.scale((p * float("inf")).sum()).backward()
    scaler.unscale_(opt)
    state = scaler._per_optimizer_states[id(opt)]
    assert state["stage"] is OptState.UNSCALED
    assert [flag.item() for flag in state["found_inf_per_device"].values()] == [1.0]
    assert scaler.step(opt) is None and state["stage"] is OptState.STEPPED
    scaler.update()
    assert scaler.get_scale() == 1.0
    assert scaler._per_optimizer_states[id(opt)]["stage"] is OptState.READY
    with pytest.raises(AssertionError, match="No inf checks were recorded"):
        scaler.update()


# -- torch.linalg composites --------------------------------------------------------------------

_A = [[0.5, 1.0, -0.3], [0.2, -1.5, 0.7], [2.0, 0.1, 0.4]]


def test_linalg_matrix_exp_and_its_gradient():
    a = torch.tensor(_A, dtype=torch.float64, requires_grad=True)
    expected = [[1.5087034424375647, 0.6712063687733928, -0.14791212111207008],
                [0.7553189933005208, 0.435748321478946, 0.42169547419365355],
                [3.0563398725666087, 0.9474960956645824, 1.2989027889078042]]
    out = torch.linalg.matrix_exp(a)
    assert torch.allclose(out, torch.tensor(expected, dtype=torch.float64), rtol=1e-12)
    out.sum().backward()
    grad = [[4.023586018714606, 2.9961058978073196, 6.622850037673668],
            [1.8934684944040951, 1.404207933098439, 3.313553029061838],
            [1.9594609029151049, 1.4376291836058643, 3.5197052843979586]]
    assert torch.allclose(a.grad, torch.tensor(grad, dtype=torch.float64), rtol=1e-10)
    small = torch.linalg.matrix_exp(torch.stack([torch.tensor(_A) * 3, torch.tensor(_A) * 0.01]))
    assert small.dtype is torch.float32
    assert small[1, 0].tolist() == pytest.approx([1.004993, 9.948740e-03, -2.978584e-03],
                                                 rel=1e-5)
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        torch.linalg.matrix_exp(torch.ones(2, 3))


@pytest.mark.parametrize(("p", "expected"), [(None, 110.65531575737415),
                                             ("fro", 150.58957891780366),
                                             (-2, 0.009037071496796658),
                                             (1, 171.2278481012665)])
def test_linalg_cond(p, expected):
    assert torch.linalg.cond(torch.tensor(_A, dtype=torch.float64), p).item() == \
        pytest.approx(expected, rel=1e-10)


def test_linalg_tensorsolve_tensorinv_diagonal():
    t = torch.eye(6, dtype=torch.float64).reshape(2, 3, 6) + \
        0.1 * torch.arange(36.0, dtype=torch.float64).reshape(2, 3, 6) / 36
    b = torch.ones(2, 3, dtype=torch.float64)
    expected = [0.9713977334052887, 0.8936859147328657, 0.8159740960604425,
                0.7382622773880194, 0.6605504587155964, 0.5828386400431732]
    assert torch.linalg.tensorsolve(t, b).tolist() == pytest.approx(expected, rel=1e-12)
    moved = torch.linalg.tensorsolve(t.permute(2, 0, 1), b, dims=(0,))
    assert moved.tolist() == pytest.approx(expected, rel=1e-12)
    inv = torch.linalg.tensorinv(t, ind=2)
    assert inv.shape == (6, 2, 3)
    assert (inv.reshape(6, 6) @ b.reshape(6)).tolist() == pytest.approx(expected, rel=1e-12)
    with pytest.raises(RuntimeError, match=r"but got 3 != 2"):
        torch.linalg.tensorsolve(torch.ones(2, 3), torch.ones(2))
    m = torch.arange(24.0).reshape(2, 3, 4)
    assert torch.linalg.diagonal(m).tolist() == [[0.0, 5.0, 10.0], [12.0, 17.0, 22.0]]


def test_linalg_composites_inside_inference_mode():
    a = torch.tensor(_A)
    with torch.inference_mode():
        assert torch.linalg.matrix_exp(a).is_inference()
        assert torch.linalg.cond(a).is_inference()


def test_flatten_and_unflatten_dense_tensors():
    """torch._utils' buffer helpers (fastai's fp16 utilities, gradient bucketing code): one
    flat copy of the tensors in order, and views of it shaped like them."""
    from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

    tensors = [torch.arange(6.0).view(2, 3), torch.ones(2), torch.arange(4.0).view(2, 2).t()]
    flat = _flatten_dense_tensors(tensors)
    assert flat.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 1.0, 0.0, 2.0, 1.0, 3.0]
    back = _unflatten_dense_tensors(flat, tensors)
    assert isinstance(back, tuple)
    assert [t.tolist() for t in back] == [t.tolist() for t in tensors]
    back[1].fill_(7.0)  # views of the buffer
    assert flat[6:8].tolist() == [7.0, 7.0]


def test_numpy_of_a_tensor_requiring_grad_only_under_no_grad():
    """PyTorch refuses numpy() on a tensor that requires grad only while grad mode is on
    (botorch converts parameter views inside torch.no_grad())."""
    p = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    view = p.view(-1)
    with pytest.raises(RuntimeError, match=r"Use tensor\.detach"):
        view.numpy()
    with torch.no_grad():
        array = view.numpy()
        assert np.asarray(p).tolist() == [1.0, 2.0]
    assert array.tolist() == [1.0, 2.0]
    array[0] = 5.0  # shares memory with the parameter
    assert p.tolist()[0] == 5.0


def test_python_scalar_types_stand_for_dtypes():
    """PyTorch takes bool/int/float/complex wherever a dtype goes (zuko calls
    torch.as_tensor(order, dtype=int)): bool, int64, float64, complex128."""
    x = torch.ones(2)
    assert torch.zeros(2, dtype=bool).dtype == torch.bool
    assert torch.as_tensor([1, 2], dtype=int).dtype == torch.int64
    assert torch.tensor([1], dtype=float).dtype == torch.float64
    assert torch.full((2,), 1, dtype=complex).dtype == torch.complex128
    assert x.to(float).dtype == torch.float64
    assert x.to("cpu", int).dtype == torch.int64
    assert x.to(dtype=bool).tolist() == [True, True]
    assert x.sum(dtype=float).dtype == torch.float64
    assert x.new_zeros(2, dtype=int).dtype == torch.int64
    with pytest.raises(TypeError):
        torch.empty(2, dtype=str)


def test_fill_diagonal_():
    """Tensor.fill_diagonal_ as PyTorch documents it (pytorch-metric-learning zeroes a
    similarity matrix's diagonal with it): a tall matrix's diagonal wraps after columns + 1
    rows only with wrap=True; an N-d tensor needs equal dimensions."""
    tall = torch.zeros(7, 3).fill_diagonal_(5.0, wrap=True)
    assert tall.tolist() == [[5, 0, 0], [0, 5, 0], [0, 0, 5], [0, 0, 0],
                             [5, 0, 0], [0, 5, 0], [0, 0, 5]]
    assert torch.zeros(7, 3).fill_diagonal_(5.0).sum().item() == 15.0  # no wrap
    wide = torch.zeros(6, 4).t().fill_diagonal_(3.0)  # a transposed (strided) matrix
    assert wide.tolist() == [[3, 0, 0, 0, 0, 0], [0, 3, 0, 0, 0, 0], [0, 0, 3, 0, 0, 0],
                             [0, 0, 0, 3, 0, 0]]
    cube = torch.zeros(3, 3, 3).fill_diagonal_(1.0)
    assert cube.sum().item() == 3.0 and cube[2, 2, 2].item() == 1.0
    x = torch.ones(3, 3, requires_grad=True)
    (x * 2).fill_diagonal_(0.0).sum().backward()
    assert x.grad.tolist() == [[0, 2, 2], [2, 0, 2], [2, 2, 0]]
    with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
        torch.zeros(3).fill_diagonal_(1.0)
    with pytest.raises(RuntimeError, match="equal length"):
        torch.zeros(2, 3, 3).fill_diagonal_(1.0)
