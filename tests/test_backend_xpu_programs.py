"""plait-backend-xpu under programs written for PyTorch's Intel GPU device ("xpu"): training
code moves data and modules with ``.to("xpu")``, indexes device tensors with host-built
indices, calls the ``torch.xpu`` API and every loss of ``torch.nn.functional``. Each test is a
regression found by running such programs on PoCL (an OpenCL CPU device counted as xpu).

The CPU fallback is off in every test (``TORCH_DEVICE_CPU_FALLBACK=0``): an operator that is not
served on the device fails the test instead of running on the host. Expected values come from
numpy formulas or from PyTorch's documented results written here, never from the code under
test. The tests skip, saying why, where no OpenCL device exists.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import torch
import torch.nn.functional as F

XC = pytest.importorskip("plait_backend_xpu._C", reason="plait-backend-xpu is not installed")

COUNT, REASON = XC.device_count("all")
pytestmark = [
    pytest.mark.skipif(COUNT == 0, reason=f"no OpenCL device: {REASON}"),
    pytest.mark.usefixtures("xpu_all_devices", "no_cpu_fallback"),
]


@pytest.fixture
def no_cpu_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """An operator the device does not serve raises instead of running on the host."""
    monkeypatch.setenv("TORCH_DEVICE_CPU_FALLBACK", "0")


# -- host-built indices on device tensors --------------------------------------------------


def test_cpu_index_tensor_reads_an_xpu_tensor():
    # PyTorch moves a CPU index (or mask) to the indexed tensor's device
    x = torch.arange(10.0, device="xpu").reshape(2, 5)
    assert x[torch.tensor([1, 0])].cpu().tolist() == [[5, 6, 7, 8, 9], [0, 1, 2, 3, 4]]
    assert x[:, torch.tensor([4, 0])].cpu().tolist() == [[4, 0], [9, 5]]
    mask = torch.tensor([[True, False, False, False, True], [False] * 4 + [True]])
    assert x[mask].cpu().tolist() == [0.0, 4.0, 9.0]
    assert x[torch.tensor([1]), torch.tensor([2])].device.type == "xpu"


def test_cpu_index_tensor_writes_an_xpu_tensor():
    x = torch.zeros(6, device="xpu")
    x[torch.tensor([0, 5])] = 2.0
    x[torch.tensor([False, True, False, False, False, False])] = torch.tensor(7.0)
    x[torch.tensor([3])] = torch.tensor([4.0], device="xpu")
    assert x.cpu().tolist() == [2.0, 7.0, 0.0, 4.0, 0.0, 2.0]


# -- losses that built a host tensor -------------------------------------------------------


def _multi_margin(x: np.ndarray, t: np.ndarray, margin: float = 1.0) -> float:
    """PyTorch's documented multi_margin_loss (p=1, mean): sum over i != y of
    max(0, margin - x[y] + x[i]) / C, averaged over the batch."""
    n, c = x.shape
    total = 0.0
    for row, y in zip(x, t):
        total += sum(max(0.0, margin - row[y] + row[i]) for i in range(c) if i != y) / c
    return total / n


def test_multi_margin_loss_on_xpu():
    x = np.sin(np.arange(12.0)).reshape(4, 3).astype(np.float32)
    t = np.array([0, 2, 1, 2])
    got = F.multi_margin_loss(torch.tensor(x, device="xpu"), torch.tensor(t, device="xpu"))
    assert got.device.type == "xpu"
    assert got.item() == pytest.approx(_multi_margin(x, t), rel=1e-5)


def test_multilabel_margin_loss_on_xpu():
    # PyTorch's doc example: x = [[0.1, 0.2, 0.4, 0.8]], y = [[3, 0, -1, 1]] gives 0.85
    x = torch.tensor([[0.1, 0.2, 0.4, 0.8]], device="xpu")
    y = torch.tensor([[3, 0, -1, 1]], device="xpu")
    assert F.multilabel_margin_loss(x, y).item() == pytest.approx(0.85, rel=1e-5)


# -- the torch.xpu API ---------------------------------------------------------------------


def test_xpu_api_names_programs_call():
    cap = torch.xpu.get_device_capability(0)
    assert isinstance(cap, dict)  # PyTorch's XPU answer: properties, not CUDA's (major, minor)
    assert cap["name"] == torch.xpu.get_device_name(0)
    assert cap["total_memory"] == torch.xpu.get_device_properties(0).total_memory
    assert torch.xpu.get_arch_list() == []
    assert torch.xpu.get_gencode_flags() == ""
    assert torch.xpu.is_tf32_supported() is False
    assert torch.xpu.is_current_stream_capturing() is False
    assert torch.xpu.can_device_access_peer(0, 0) is False
    gens = torch.xpu.default_generators
    assert len(gens) == torch.xpu.device_count()
    assert gens[0].device == torch.device("xpu", 0)
    torch.xpu.set_stream(torch.xpu.current_stream())
    assert torch.xpu.current_device() == 0


def test_record_stream_after_a_side_stream_copy():
    # a prefetcher's pattern: copy on a side stream, wait for it, record the tensor's use
    side = torch.xpu.Stream()
    with torch.xpu.stream(side):
        x = torch.arange(4.0).pin_memory().to("xpu", non_blocking=True)
    torch.xpu.current_stream().wait_stream(side)
    assert x.record_stream(torch.xpu.current_stream()) is None
    assert (x * 2).cpu().tolist() == [0.0, 2.0, 4.0, 6.0]
    with pytest.raises(NotImplementedError, match="record_stream"):
        torch.ones(2).record_stream(side)  # PyTorch's operator has no CPU kernel


def test_device_of_and_stream_context_select_without_raising():
    # both were the placeholder's classes, whose use raised "does not support this yet"
    t = torch.ones(2, device="xpu")
    with torch.xpu.device_of(t):
        assert torch.xpu.current_device() == t.get_device() == 0
    with torch.xpu.device_of(torch.ones(1)):  # a CPU tensor selects nothing
        assert torch.xpu.current_device() == 0
    with torch.xpu.StreamContext(torch.xpu.Stream()):
        assert (t + 1).cpu().tolist() == [2.0, 2.0]
    with torch.xpu.StreamContext(None):
        assert torch.xpu.current_device() == 0


def test_running_out_of_device_memory_is_torch_out_of_memory_error():
    # programs catch torch.OutOfMemoryError (or look for "out of memory") to retry smaller
    too_big = torch.xpu.get_device_properties().max_mem_alloc_size + 1
    with pytest.raises(torch.OutOfMemoryError, match=r"XPU out of memory\. Tried to allocate"):
        torch.empty(too_big, dtype=torch.uint8, device="xpu")
    assert issubclass(torch.xpu.OutOfMemoryError, RuntimeError)
    assert torch.ones(2, device="xpu").sum().item() == 2.0  # the device still works


def test_memory_stats_as_nested_dict_nests_the_dotted_keys():
    x = torch.empty(1000, device="xpu")
    flat = torch.xpu.memory_stats()
    nested = torch.xpu.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == flat["allocated_bytes.all.current"]
    assert nested["num_ooms"] == flat["num_ooms"]
    assert flat["allocated_bytes.all.current"] >= x.numel() * 4


# -- distributions ---------------------------------------------------------------------------


def test_a_distribution_parameter_stays_a_leaf_and_gets_its_gradient():
    # broadcast_tensors returns a tensor that already has the broadcast shape itself (PyTorch's
    # expand_outplace), so D.Normal(loc, 1.0).loc is loc and loc.grad fills
    loc = torch.zeros(2, device="xpu", requires_grad=True)
    normal = torch.distributions.Normal(loc, 1.0)
    assert normal.loc is loc
    value = torch.tensor([1.0, -0.5], device="xpu")
    normal.log_prob(value).sum().backward()
    # d/dloc log N(v; loc, 1) = v - loc
    assert loc.grad.cpu().tolist() == [1.0, -0.5]
    x, y = torch.broadcast_tensors(loc, torch.ones(3, 1, device="xpu"))
    assert x.shape == y.shape == (3, 2) and x is not loc


# -- program builds ----------------------------------------------------------------------------


def test_first_builds_print_nothing_on_stderr(tmp_path):
    # integer amax/maximum kernels compare a value with itself (the NaN test of the float
    # rows): PoCL's compiler printed "N warnings generated." on stderr at each first build
    code = textwrap.dedent("""
        import torch
        a = torch.tensor([3, -1, 7], device="xpu")
        print(a.amax().item(), torch.maximum(a, a.flip(0)).tolist(), a.cummax(0).values.tolist())
    """)
    env = {**os.environ, "PLAIT_XPU_DEVICE_TYPE": "all", "TORCH_DEVICE_CPU_FALLBACK": "0",
           "PLAIT_XPU_CACHE_DIR": str(tmp_path / "plait"), "POCL_CACHE_DIR": str(tmp_path / "pocl")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["7", "[7,", "-1,", "7]", "[3,", "3,", "7]"]
    assert done.stderr == ""


# -- optimizers --------------------------------------------------------------------------------


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_on_xpu_solves_least_squares_without_warnings(line_search):
    # float() of the closure's loss happens outside grad mode, as in PyTorch: no "Converting a
    # tensor with requires_grad=True to a scalar" warning from the optimizer's own lines
    a = np.cos(np.arange(24.0)).reshape(8, 3)
    b = np.sin(np.arange(8.0))
    w = torch.zeros(3, device="xpu", dtype=torch.float64, requires_grad=True)
    ta, tb = torch.tensor(a, device="xpu"), torch.tensor(b, device="xpu")
    opt = torch.optim.LBFGS([w], lr=1, max_iter=100, tolerance_grad=1e-12,
                            tolerance_change=1e-16, line_search_fn=line_search)

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = ((ta @ w - tb) ** 2).sum()
        loss.backward()
        return loss

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            opt.step(closure)
    expected = np.linalg.lstsq(a, b, rcond=None)[0]
    np.testing.assert_allclose(w.detach().cpu().numpy(), expected, rtol=1e-6, atol=1e-8)


def _count_host_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A one-element list counting the device-to-host reads from now on (each waits for the
    device's queue)."""
    from plait_backend_xpu import memory

    reads = [0]
    original = memory.DeviceCopier.to_host

    def counting(self: object, *args: object) -> None:
        reads[0] += 1
        original(self, *args)

    monkeypatch.setattr(memory.DeviceCopier, "to_host", counting)
    return reads


def test_grad_scaler_checks_gradients_on_the_device(monkeypatch):
    model = torch.nn.Sequential(*(torch.nn.Linear(4, 4) for _ in range(5))).to("xpu")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("xpu", init_scale=8.0)
    x = torch.ones(2, 4, device="xpu")
    model(x).sum().backward()
    reads = _count_host_reads(monkeypatch)
    scaler.unscale_(opt)
    assert reads[0] == 0  # was one read per parameter (10 here)
    assert len(list(model.parameters())) == 10
    before = [p.detach().cpu().clone() for p in model.parameters()]
    scaler.step(opt)
    scaler.update()
    assert any(not torch.equal(b, p.detach().cpu()) for b, p in zip(before, model.parameters()))
    assert scaler.get_scale() == 8.0  # no overflow, growth_interval not reached
    # one gradient with an inf: the step is skipped and the scale backs off (x 0.5)
    opt.zero_grad()
    model(x).sum().backward()
    with torch.no_grad():
        model[3].bias.grad[1] = float("inf")
    before = [p.detach().cpu().clone() for p in model.parameters()]
    scaler.step(opt)
    scaler.update()
    assert all(torch.equal(b, p.detach().cpu()) for b, p in zip(before, model.parameters()))
    assert scaler.get_scale() == 4.0


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_interpolate_runs_without_host_reads(monkeypatch, mode):
    # the positions upsampling builds are in range: no index range check reading them back
    # (a bilinear forward waited for the queue 8 times, its backward 4)
    base = np.sin(np.arange(2 * 3 * 4 * 5.0)).reshape(2, 3, 4, 5).astype(np.float32)
    x = torch.tensor(base, device="xpu", requires_grad=True)
    reads = _count_host_reads(monkeypatch)
    y = F.interpolate(x, size=(8, 10), mode=mode)
    y.backward(torch.ones_like(y))
    assert reads[0] == 0
    monkeypatch.undo()
    if mode == "nearest":  # size doubled: each input pixel is read by a 2 x 2 block
        expected = base.repeat(2, axis=2).repeat(2, axis=3)
        np.testing.assert_array_equal(y.detach().cpu().numpy(), expected)
        np.testing.assert_array_equal(x.grad.cpu().numpy(), np.full(base.shape, 4.0))
    else:  # half-pixel centres: each dim's weights sum to 2 per input pixel when doubled
        assert y.shape == (2, 3, 8, 10)
        np.testing.assert_allclose(x.grad.cpu().numpy(), np.full(base.shape, 4.0), rtol=1e-6)


def test_an_index_range_check_reads_the_device_once(monkeypatch):
    x = torch.arange(12.0, device="xpu").reshape(4, 3)
    idx = torch.tensor([3, 0, 3], device="xpu")
    reads = _count_host_reads(monkeypatch)
    picked = x.index_select(0, idx)
    assert reads[0] == 1  # both extremes in one copy (was one read each)
    monkeypatch.undo()
    assert picked.cpu().tolist() == [[9, 10, 11], [0, 1, 2], [9, 10, 11]]
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(0, torch.tensor([0, 4], device="xpu"))
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 0 with size 4"):
        x[torch.tensor([-5], device="xpu")]


def test_cross_entropy_step_does_not_wait_for_the_device(monkeypatch):
    # the target's range is checked on the device (plait_backend_xpu.losses): no host read in
    # the forward or the backward; a bad target raises at the next synchronisation
    from plait_backend_xpu import memory

    reads = []
    read = memory.DeviceCopier.to_host
    monkeypatch.setattr(memory.DeviceCopier, "to_host",
                        lambda self, *args: (reads.append(1), read(self, *args))[1])
    logits = np.sin(np.arange(24.0)).reshape(6, 4).astype(np.float32)
    classes = [0, 3, 1, 2, -100, 3]
    x = torch.tensor(logits, device="xpu", requires_grad=True)
    t = torch.tensor(classes, device="xpu")
    for _ in range(2):
        x.grad = None
        reads.clear()
        F.cross_entropy(x, t).backward()
        assert len(reads) == 0
    # against the softmax's gradient over the rows that count (numpy, float64)
    z = logits.astype(np.float64)
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    want = np.zeros_like(p)
    rows = [r for r, c in enumerate(classes) if c != -100]
    for r in rows:
        want[r] = p[r]
        want[r, classes[r]] -= 1
    np.testing.assert_allclose(x.grad.cpu().numpy(), want / len(rows), rtol=1e-5, atol=1e-7)
    bad = torch.tensor([0, 4, 1, 2, 0, 3], device="xpu")
    loss = F.cross_entropy(x, bad)  # no error yet: the check waits on the device
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        loss.item()
    assert math.isfinite(loss.item())  # the error is raised once: the next read goes on
    F.nll_loss(x, torch.tensor([0, 1, -3, 2, 0, 3], device="xpu"))
    with pytest.raises(IndexError, match="Target -3 is out of bounds"):
        torch.xpu.synchronize()
    torch.xpu.synchronize()


def test_nll_loss_with_weights_and_ignored_targets_matches_numpy():
    logp = np.log(np.linspace(0.05, 0.95, 15)).reshape(5, 3).astype(np.float32)
    classes = [2, 0, -1, 1, 2]
    weight = np.array([0.5, 2.0, 1.5], dtype=np.float32)
    x = torch.tensor(logp, device="xpu", requires_grad=True)
    w = torch.tensor(weight, device="xpu")
    t = torch.tensor(classes, device="xpu")
    kept = [(r, c) for r, c in enumerate(classes) if c != -1]
    picked = np.array([-logp[r, c] * weight[c] for r, c in kept], dtype=np.float64)
    total = sum(weight[c] for _, c in kept)
    for reduction, want in (("sum", picked.sum()), ("mean", picked.sum() / total)):
        got = F.nll_loss(x, t, weight=w, ignore_index=-1, reduction=reduction)
        np.testing.assert_allclose(got.item(), want, rtol=1e-6)
    none = F.nll_loss(x, t, weight=w, ignore_index=-1, reduction="none")
    np.testing.assert_allclose(none.detach().cpu().numpy(),
                               [picked[kept.index((r, c))] if c != -1 else 0.0
                                for r, c in enumerate(classes)], rtol=1e-6)
    F.nll_loss(x, t, weight=w, ignore_index=-1).backward()
    grad = np.zeros((5, 3))
    for r, c in kept:
        grad[r, c] = -weight[c] / total
    np.testing.assert_allclose(x.grad.cpu().numpy(), grad, rtol=1e-6)
    with pytest.raises(RuntimeError, match="expected target dtype"):  # at once, as before
        F.nll_loss(x, t.to(torch.int32))


# -- a device without double precision (Intel Arc/Iris GPUs) ---------------------------------


@pytest.fixture
def without_fp64(monkeypatch: pytest.MonkeyPatch) -> None:
    """The xpu device reports no double precision (as Intel GPUs without fp64 do): its float64
    kernels raise, and composites must accumulate in float32 there."""
    from plait_backend_xpu import device_module

    from torch._aten import elementwise

    info, listed = device_module.device_info, device_module.devices
    # device_info keeps the first devices() it reads: put the real list back afterwards
    monkeypatch.setattr(device_module, "_device_infos", device_module._device_infos)
    monkeypatch.setattr(device_module, "device_info", lambda i: {**info(i), "fp64": False})
    monkeypatch.setattr(device_module, "devices",
                        lambda: [{**d, "fp64": False} for d in listed()])
    monkeypatch.setattr(elementwise, "_DOUBLE_PRECISION", {})  # asked again, per device


@pytest.mark.usefixtures("without_fp64")
def test_norm_layers_and_statistics_train_without_fp64():
    assert torch.xpu.get_device_properties(0).has_fp64 is False
    with pytest.raises(RuntimeError, match="Required aspect fp64"):
        torch.ones(2, device="xpu").double().sum()  # the device really refuses float64
    base = np.sin(np.arange(2 * 3 * 4 * 4.0) * 0.7).reshape(2, 3, 4, 4).astype(np.float32)
    x = torch.tensor(base, device="xpu", requires_grad=True)
    bn = torch.nn.BatchNorm2d(3).to("xpu")
    y = bn(x)  # training mode: batch statistics (var_mean)
    y.pow(2).sum().backward()
    mean = base.mean(axis=(0, 2, 3), keepdims=True)
    var = base.var(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(y.detach().cpu().numpy(), (base - mean) / np.sqrt(var + 1e-5),
                               rtol=1e-4, atol=1e-5)
    unbiased = base.var(axis=(0, 2, 3), ddof=1)
    np.testing.assert_allclose(bn.running_var.cpu().numpy(), 0.9 + 0.1 * unbiased, rtol=1e-5)
    assert x.grad is not None and torch.isfinite(x.grad).all().item()
    t = torch.tensor(base, device="xpu")
    np.testing.assert_allclose(t.std(dim=(2, 3)).cpu().numpy(), base.std(axis=(2, 3), ddof=1),
                               rtol=1e-5)
    gn = F.group_norm(t, 3).cpu().numpy()
    g_mean = base.mean(axis=(2, 3), keepdims=True)
    np.testing.assert_allclose(gn, (base - g_mean) / np.sqrt(base.var(axis=(2, 3),
                               keepdims=True) + 1e-5), rtol=1e-4, atol=1e-5)
    a, b = t.flatten(), t.flatten().flip(0)
    np.testing.assert_allclose(torch.lerp(a, b, 0.3).cpu().numpy(),
                               base.ravel() + 0.3 * (base.ravel()[::-1] - base.ravel()),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.usefixtures("without_fp64")
def test_sampling_and_composites_without_fp64():
    # Categorical.sample (multinomial), xlogy (distributions' log-probabilities) and an
    # integer linspace widened to float64
    probs = torch.tensor([[0.0, 0.25, 0.75], [1.0, 0.0, 0.0]], device="xpu")
    drawn = torch.multinomial(probs, 200, replacement=True).cpu()
    assert drawn[1].eq(0).all().item() and drawn[0].ne(0).all().item()
    assert 0.6 < drawn[0].eq(2).float().mean().item() < 0.9
    picked = torch.distributions.Categorical(probs=probs[0]).sample((50,))
    assert picked.device.type == "xpu" and picked.ne(0).all().item()
    got = torch.xlogy(torch.tensor([0.0, 2.0, 3.0], device="xpu"),
                      torch.tensor([0.0, 3.0, 0.5], device="xpu")).cpu().numpy()
    np.testing.assert_allclose(got, [0.0, 2 * np.log(3.0), 3 * np.log(0.5)], rtol=1e-6)
    assert torch.linspace(0, 10, 4, dtype=torch.int64, device="xpu").cpu().tolist() == \
        [0, 3, 6, 10]


@pytest.mark.usefixtures("without_fp64")
def test_special_functions_and_samplers_without_fp64():
    # they computed in float64 (an error on such a device); now in float32 there, as PyTorch's
    # GPU kernels compute float32 special functions and samples
    x = np.array([0.5, 1.0, 2.0])
    t = torch.tensor(x, dtype=torch.float32, device="xpu")
    expected = {
        "i0": (torch.special.i0(t), np.i0(x)),
        "erfcx": (torch.special.erfcx(t), [math.exp(v * v) * math.erfc(v) for v in x]),
        "gammainc": (torch.special.gammainc(torch.ones_like(t), t), 1 - np.exp(-x)),
        "zeta": (torch.special.zeta(torch.full_like(t, 2.0), torch.ones_like(t)),
                 [math.pi**2 / 6] * 3),
        "chebyshev_t": (torch.special.chebyshev_polynomial_t(t, 3), 4 * x**3 - 3 * x),
    }
    for name, (got, want) in expected.items():
        assert got.device.type == "xpu" and got.dtype == torch.float32, name
        np.testing.assert_allclose(got.cpu().numpy(), want, rtol=2e-6, err_msg=name)
    torch.manual_seed(3)
    gamma = torch.distributions.Gamma(torch.full((4000,), 3.0, device="xpu"), 1.0).sample()
    counts = torch.poisson(torch.full((4000,), 4.0, device="xpu"))
    trials = torch.empty(4000, device="xpu").geometric_(0.25)
    for drawn, mean in ((gamma, 3.0), (counts, 4.0), (trials, 4.0)):
        assert drawn.device.type == "xpu" and drawn.dtype == torch.float32
        # means of 4000 draws: within 5 standard errors (variances 3, 4 and 12)
        assert abs(drawn.mean().item() - mean) < 5 * math.sqrt(12 / 4000)
    assert gamma.min().item() > 0 and counts.eq(counts.round()).all().item()
    assert trials.min().item() >= 1 and trials.eq(trials.round()).all().item()


def test_a_bfloat16_std_is_rounded_once():
    # the variance was rounded to bfloat16 and its root rounded again: 1 ulp off PyTorch's
    base = np.sin(np.arange(24.0)).reshape(6, 4)
    x = torch.tensor(base, dtype=torch.bfloat16, device="xpu")
    exact = torch.tensor(x.double().cpu().numpy().std(axis=1, ddof=1)).to(torch.bfloat16)
    assert torch.equal(x.std(1).cpu(), exact)  # e.g. row 3: 0.65625, not 0.65234375
