"""``torch.autocast`` through the dispatcher's Autocast key, checked against explicit casts."""

from __future__ import annotations

import threading
import warnings
from typing import Any

import pytest

import torch
import torch.nn.functional as F
from torch._core import config as _config
from torch.utils._python_dispatch import TorchDispatchMode

BF16, F16, F32, F64 = torch.bfloat16, torch.float16, torch.float32, torch.float64


def ints(*shape: int, seed: int = 0) -> torch.Tensor:
    """Small integers as float32: exact in bfloat16 and float16, so products compare exactly."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-3, 4, shape, generator=g).to(F32)


def test_the_registry_answers_what_cpu_supports() -> None:
    assert torch.amp.is_autocast_available("cpu")
    assert torch.get_autocast_dtype("cpu") is BF16  # PyTorch's CPU default
    assert not torch.amp.is_autocast_available("meta")
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'meta'"):
        torch.autocast("meta")
    with torch.autocast("meta", enabled=False):  # PyTorch's `enabled=<is available>` idiom
        assert not torch.is_autocast_enabled("meta")
        assert (ints(2, 2) @ ints(2, 2)).dtype is F32


def test_lower_precision_ops_cast_their_inputs_down() -> None:
    a, b = ints(4, 3), ints(3, 5, seed=1)
    batch, batch2 = ints(2, 4, 3, seed=2), ints(2, 3, 5, seed=3)
    bias = ints(4, 5, seed=4)
    with torch.autocast("cpu"):
        results = {
            "matmul": a @ b,
            "mm": torch.mm(a, b),
            "bmm": torch.bmm(batch, batch2),
            "addmm": torch.addmm(bias, a, b),
            "baddbmm": torch.baddbmm(bias, batch, batch2),
        }
    expected = {
        "matmul": a.to(BF16) @ b.to(BF16),
        "mm": torch.mm(a.to(BF16), b.to(BF16)),
        "bmm": torch.bmm(batch.to(BF16), batch2.to(BF16)),
        "addmm": torch.addmm(bias.to(BF16), a.to(BF16), b.to(BF16)),
        "baddbmm": torch.baddbmm(bias.to(BF16), batch.to(BF16), batch2.to(BF16)),
    }
    for name, got in results.items():
        assert got.dtype is BF16, name
        assert torch.equal(got, expected[name]), name


def test_convolution_and_linear_run_in_the_autocast_dtype() -> None:
    x, w, bias = ints(1, 2, 5, 5), ints(3, 2, 3, 3, seed=1), ints(3, seed=2)
    lin_w = ints(4, 6, seed=3)
    with torch.autocast("cpu", dtype=F16):
        conv = F.conv2d(x, w, bias)
        lin = F.linear(ints(2, 6, seed=4), lin_w)
    assert conv.dtype is F16 and lin.dtype is F16
    assert torch.equal(conv, F.conv2d(x.to(F16), w.to(F16), bias.to(F16)))
    assert torch.equal(lin, F.linear(ints(2, 6, seed=4).to(F16), lin_w.to(F16)))


def test_cpu_fp32_ops_cast_half_precision_inputs_up() -> None:
    # PyTorch's CPU list: losses and linear algebra in float32 (pointwise math stays low, below)
    x = torch.tensor([[0.5, -1.25], [2.0, 0.75]], dtype=BF16)
    y = torch.tensor([[1.0, 0.25], [-0.5, 1.5]], dtype=BF16)
    labels = torch.tensor([1, 0])
    with torch.autocast("cpu"):
        got = {
            "mse": F.mse_loss(x, y), "l1": F.l1_loss(x, y),
            "ce": F.cross_entropy(x, labels), "prod": x.prod(),
            "bce": F.binary_cross_entropy_with_logits(x, y.sigmoid()),
            "inv": torch.linalg.inv(x),
        }
    up, yup = x.to(F32), y.to(F32)
    expected = {
        "mse": F.mse_loss(up, yup), "l1": F.l1_loss(up, yup),
        "ce": F.cross_entropy(up, labels), "prod": up.prod(),
        "bce": F.binary_cross_entropy_with_logits(up, y.sigmoid().to(F32)),
        "inv": torch.linalg.inv(up),
    }
    for name, value in got.items():
        assert value.dtype is F32, name
        assert torch.equal(value, expected[name]), name


def test_cpu_pointwise_math_and_reductions_stay_in_low_precision() -> None:
    x = torch.tensor([[0.5, -1.25], [2.0, 0.75]], dtype=BF16)
    with torch.autocast("cpu"):
        got = [x.exp(), x.sum(), torch.softmax(x, 1), torch.log_softmax(x, 1), x.pow(2),
               F.layer_norm(x, (2,))]
    expected = [x.exp(), x.sum(), torch.softmax(x, 1), torch.log_softmax(x, 1), x.pow(2),
                F.layer_norm(x, (2,))]
    for value, plain in zip(got, expected, strict=True):
        assert value.dtype is BF16 and torch.equal(value, plain)


def test_cpu_promote_ops_run_in_the_widest_input_dtype() -> None:
    low, half = ints(2, 2).to(BF16), ints(2, 2, seed=1).to(F16)
    with torch.autocast("cpu"):
        stacked = torch.stack([low, half])
        joined = torch.cat([low, half])
    # bfloat16 and float16 promote to float32 (neither holds the other)
    assert stacked.dtype is F32 and joined.dtype is F32
    assert torch.equal(stacked, torch.stack([low.to(F32), half.to(F32)]))
    assert torch.equal(joined, torch.cat([low.to(F32), half.to(F32)]))


def test_accelerators_follow_their_own_list() -> None:
    from torch.amp import _policy

    # the lists PyTorch documents for CUDA (and the devices that follow it) against the CPU's
    for op, accelerator, cpu in [("exp", "fp32", None), ("sum", "fp32", None),
                                 ("mm", "lower", "lower"), ("mse_loss", "fp32", "fp32"),
                                 ("cat", None, "promote"), ("addcmul", "promote", None),
                                 ("linalg_inv", None, "fp32")]:
        assert _policy.policy_of("toy", op) == accelerator, op
        assert _policy.policy_of("cuda", op) == accelerator, op
        assert _policy.policy_of("cpu", op) == cpu, op


def test_composites_cost_no_import_and_follow_the_policy_of_their_operator() -> None:
    import subprocess
    import sys

    code = ("import sys, torch, torch.nn.functional as F; "
            "assert 'torch.amp.autocast_mode' not in sys.modules; "
            "x = torch.ones(2, dtype=torch.bfloat16); "
            "assert F.mse_loss(x, x).dtype is torch.bfloat16; "
            "assert 'torch.amp.autocast_mode' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unlisted_ops_float64_and_other_devices_are_left_alone() -> None:
    a, d = ints(2, 2), ints(2, 2).to(F64)
    with torch.autocast("cpu"):
        assert (a + a).dtype is F32  # not listed: ordinary promotion
        assert (d @ d).dtype is F64  # float64 is never cast
        assert (d.exp()).dtype is F64
        assert torch.equal(a.to(BF16) + a, a.to(BF16).to(F32) + a)


def test_nesting_disabling_and_the_decorator() -> None:
    a = ints(2, 2)
    with torch.autocast("cpu"):
        with torch.autocast("cpu", enabled=False):
            assert not torch.is_autocast_enabled("cpu")
            assert (a @ a).dtype is F32
        with torch.autocast("cpu", dtype=F16):
            assert (a @ a).dtype is F16 and torch.get_autocast_dtype("cpu") is F16
        assert torch.is_autocast_enabled("cpu") and (a @ a).dtype is BF16
        assert torch.get_autocast_dtype("cpu") is BF16
    assert not torch.is_autocast_enabled("cpu") and (a @ a).dtype is F32

    @torch.autocast("cpu")
    def product(x: torch.Tensor) -> torch.Tensor:
        return x @ x

    assert product(a).dtype is BF16 and (a @ a).dtype is F32


def test_costs_nothing_outside_a_region() -> None:
    before = (_config.state.keys_active, _config.state.modes_active)
    with torch.autocast("cpu"):
        inside = (_config.state.keys_active, _config.state.modes_active)
    assert inside == (before[0] + 1, before[1] + 1)
    assert (_config.state.keys_active, _config.state.modes_active) == before


def test_gradients_come_back_in_the_inputs_dtype() -> None:
    x = ints(3, 4)
    w = ints(4, 2, seed=1).requires_grad_()
    with torch.autocast("cpu"):
        out = x @ w
    assert out.dtype is BF16
    out.float().sum().backward()
    assert w.grad.dtype is F32
    # d(sum(x @ w))/dw = x^T @ ones, computed in bfloat16 and cast back
    expected = (x.to(BF16).t() @ torch.ones(3, 2, dtype=BF16)).to(F32)
    assert torch.equal(w.grad, expected)


class CastCounter(TorchDispatchMode):
    def __init__(self) -> None:
        self.casts = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        if func is torch.ops.aten._to_copy.default:
            self.casts += 1
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("cache_enabled", [True, False])
def test_weight_casts_are_cached_within_a_region(cache_enabled: bool) -> None:
    weight = ints(3, 3).requires_grad_()
    x = ints(2, 3, seed=1)
    with torch.autocast("cpu", cache_enabled=cache_enabled), CastCounter() as counter:
        x @ weight
        x @ weight
    # x is cast in both calls; the leaf weight once when cached, twice when not
    assert counter.casts == (3 if cache_enabled else 4)


def test_an_unsupported_dtype_warns_and_disables() -> None:
    with pytest.warns(UserWarning, match="not supported"):
        region = torch.autocast("cpu", dtype=F64)
    with region:
        assert not torch.is_autocast_enabled("cpu")
        assert (ints(2, 2) @ ints(2, 2)).dtype is F32


def test_autocast_is_per_thread() -> None:
    seen: list[torch.dtype] = []
    a = ints(2, 2)
    with torch.autocast("cpu"):
        worker = threading.Thread(target=lambda: seen.append((a @ a).dtype))
        worker.start()
        worker.join()
        assert (a @ a).dtype is BF16
    assert seen == [F32]


def test_the_deprecated_cpu_spelling() -> None:
    with pytest.warns(FutureWarning, match="torch.amp.autocast"):
        region = torch.cpu.amp.autocast()
    with warnings.catch_warnings(), region:
        assert (ints(2, 2) @ ints(2, 2)).dtype is BF16
    assert torch.amp.autocast is torch.autocast


def test_torch_linalg_and_fft_functions_take_their_operators_policy() -> None:
    """Functions Plait writes in other ops but PyTorch lists as operators (torch.cdist,
    torch.linalg.eigh, torch.fft.rfft, torch.stft...) cast half-precision inputs to float32 as
    their operators do (a bfloat16 matmul output fed to them once raised "not implemented for
    BFloat16" or came back in bfloat16), and the ops inside them are not cast again."""
    a = torch.tensor([[2.5, 0.5, 0.0], [0.5, 3.0, 0.25], [0.0, 0.25, 2.0]], dtype=BF16)
    signal = torch.linspace(-1, 1, 32, dtype=BF16)
    calls = {
        "eigh": lambda m: torch.linalg.eigh(m)[0], "eigvalsh": torch.linalg.eigvalsh,
        "svdvals": torch.linalg.svdvals, "svd": lambda m: torch.linalg.svd(m)[1],
        "cond": torch.linalg.cond,
        "cdist": lambda m: torch.cdist(m, m), "pinverse": torch.pinverse,
        "quantile": lambda m: torch.quantile(m, 0.25),
        "rfft": lambda m: torch.fft.rfft(m).abs(), "fft2": lambda m: torch.fft.fft2(m).abs(),
    }
    with torch.autocast("cpu", dtype=BF16):
        got = {name: fn(a) for name, fn in calls.items()}
        spectrum = torch.stft(signal, 8, window=torch.ones(8), return_complex=True)
        # only the CPU's list matters here: matrix_norm is on the accelerators' alone
        norm = torch.linalg.matrix_norm(a)
    for name, value in got.items():
        assert value.dtype is F32, name
        assert torch.equal(value, calls[name](a.to(F32))), name
    assert norm.dtype is BF16
    assert spectrum.dtype is torch.complex64
    assert torch.equal(spectrum, torch.stft(signal.to(F32), 8, window=torch.ones(8),
                                            return_complex=True))


def test_tensor_methods_of_listed_operators_take_their_policy() -> None:
    """x.svd(), x.inverse(), x.pinverse(), x.quantile() reach the same listed operators as
    their torch.* forms: float32 results from bfloat16 inputs on the CPU; in-place methods and
    x.norm() (on the accelerators' list only) are left alone, as in PyTorch."""
    a = torch.tensor([[2.5, 0.5], [0.5, 3.0]], dtype=BF16)
    with torch.autocast("cpu", dtype=BF16):
        got = {"svd": a.svd()[1], "inverse": a.inverse(), "pinverse": a.pinverse(),
               "quantile": a.quantile(0.5), "cholesky": a.cholesky()}
        norm = a.norm()
    up = a.to(F32)
    expected = {"svd": up.svd()[1], "inverse": up.inverse(), "pinverse": up.pinverse(),
                "quantile": up.quantile(0.5), "cholesky": up.cholesky()}
    for name, value in got.items():
        assert value.dtype is F32, name
        assert torch.equal(value, expected[name]), name
    assert norm.dtype is BF16


def test_functions_pytorch_runs_as_one_native_op_cast_nothing_inside() -> None:
    """torch.linalg.lu_solve and solve_triangular (one native op in PyTorch, on no list) keep
    their inputs' dtypes and cast none of the ops they are written in: float32 operands give a
    float32 result inside a bfloat16 region (a product inside once ran in bfloat16 and failed
    on the mixed dtypes)."""
    a = torch.tensor([[2.0, 0.5, 0.25], [0.5, 3.0, 0.5], [0.25, 0.5, 4.0]])
    b = torch.tensor([[1.0], [2.0], [3.0]])
    lu, pivots = torch.linalg.lu_factor(a)
    with torch.autocast("cpu", dtype=BF16):
        solved = torch.linalg.lu_solve(lu, pivots, b)
        triangular = torch.linalg.solve_triangular(a.triu(), b, upper=True)
        det = torch.linalg.det(a)
    assert solved.dtype is triangular.dtype is det.dtype is F32
    assert torch.equal(solved, torch.linalg.lu_solve(lu, pivots, b))
    assert torch.equal(triangular, torch.linalg.solve_triangular(a.triu(), b, upper=True))
    assert torch.equal(det, torch.linalg.det(a))


def test_every_listed_operator_is_an_operator_or_a_marked_function() -> None:
    """Each name of PyTorch's autocast lists (and Plait's UNCAST) is an aten operator here, or
    a function marked with its policy; what is left is named with the reason."""
    import torch._functions as torch_functions
    import torch.fft as fft_module
    import torch.linalg as linalg_module
    import torch.nn.functional as functional
    from torch._core import dispatch
    from torch.amp import _policy

    operators = {op.name.partition(".")[0] for op in dispatch.operators("aten")}
    marked = {*torch_functions._AUTOCAST_COMPOSITES.values(),
              *linalg_module._AUTOCAST_COMPOSITES.values(),
              *functional._AUTOCAST_COMPOSITES.values()}
    marked |= {name for name in _policy.LISTED if name.startswith("fft_")
               and getattr(fft_module, name[4:], None) is not None}
    left = {name for name in _policy.LISTED | _policy.UNCAST
            if name not in operators and name not in marked}
    # the conv* functions call aten::convolution and softmax/log_softmax aten::_softmax /
    # _log_softmax (all listed); the rest are PyTorch-internal operators with no Plait
    # counterpart (nll_loss2d is nll_loss here; frobenius_norm is torch.norm's); F.pad's
    # reflect/replicate modes are not cast (one function for every mode)
    assert left == {
        "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
        "conv_transpose2d", "conv_transpose3d", "softmax", "log_softmax", "_lu_with_info",
        "_native_multi_head_attention", "mkldnn_rnn_layer", "nll_loss2d", "frobenius_norm",
        "reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d",
        "replication_pad3d",
    }
