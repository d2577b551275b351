"""plait-backend-cpu's convolution kernels: the native ``convolution`` primitive against core's
reference kernel, and the fused ``aten::convolution_backward`` against a numpy oracle (strided
windows + einsum), over shapes, strides, padding, dilation, groups, transposed layouts,
dtypes, strided operands and zero sizes."""

from __future__ import annotations

import numpy as np
import pytest
from conv_oracle import windows

import torch
from torch._aten import conv as _conv
from torch._refs import CPU_KERNELS

pytest.importorskip("plait_backend_cpu._C", reason="plait-backend-cpu is not installed")


def _ops():
    from torch._core import dispatch as _dispatch

    # the backend registers its kernels when the first operator runs
    torch.conv1d(torch.ones(1, 1, 1), torch.ones(1, 1, 1))
    return _dispatch.get("prims::convolution"), _dispatch.get("aten::convolution_backward")


def test_native_kernels_are_registered() -> None:
    prim, backward = _ops()
    assert "plait_backend_cpu" in getattr(prim.kernels["CPU"], "__module__", "")
    assert "plait_backend_cpu" in getattr(backward.kernels["CPU"], "__module__", "")


def rand(shape, seed, dtype=torch.float64):
    gen = np.random.default_rng(seed)
    return torch.tensor(gen.uniform(-1, 1, shape).tolist(), dtype=torch.float64).reshape(
        shape).to(dtype)


# (input shape, weight shape, stride, padding, dilation, groups, transposed)
CASES = [
    ((2, 3, 9), (4, 3, 3), [1], [0], [1], 1, False),
    ((2, 4, 10), (6, 2, 3), [2], [2], [2], 2, False),
    ((1, 3, 7, 6), (5, 3, 3, 2), [1, 2], [1, 0], [1, 1], 1, False),
    ((3, 4, 8, 8), (4, 1, 3, 3), [2, 2], [1, 1], [2, 1], 4, False),  # depthwise
    ((2, 6, 5, 5), (3, 6, 1, 1), [1, 1], [0, 0], [1, 1], 1, False),  # 1x1: no im2col
    ((2, 6, 5, 5), (3, 6, 1, 1), [2, 1], [0, 1], [1, 1], 1, False),  # 1x1 strided, padded
    ((1, 2, 4, 5, 4), (3, 2, 2, 3, 2), [1, 2, 1], [1, 0, 1], [2, 1, 1], 1, False),
    ((1, 1, 40, 40), (2, 1, 5, 5), [1, 1], [2, 2], [1, 1], 1, False),
    ((2, 3, 5), (3, 2, 3), [2], [1], [1], 1, True),
    ((2, 4, 4, 3), (4, 3, 3, 2), [2, 1], [1, 0], [1, 2], 2, True),
    ((1, 4, 3, 3), (4, 2, 1, 1), [1, 1], [0, 0], [1, 1], 1, True),  # 1x1 transposed
    ((1, 2, 2, 3, 2), (2, 2, 2, 2, 2), [2, 1, 2], [0, 1, 0], [1, 1, 2], 1, True),
    # float32 2-d with >= 32 reduction rows on a small grid: the direct kernel (two channel
    # vectors, the second partial; full 6-column tiles and single columns; padding, dilation)
    ((2, 8, 15, 13), (20, 8, 3, 3), [2, 1], [1, 0], [1, 2], 1, False),
    ((2, 12, 10, 10), (8, 6, 3, 3), [1, 1], [1, 1], [1, 1], 2, False),  # grouped, direct
    ((2, 6, 7, 7), (6, 8, 3, 3), [2, 2], [1, 1], [1, 1], 1, True),  # its input grad: direct
    # a small grid with more reduction rows than channels: the weight gradient of runs of
    # samples in one product
    ((16, 16, 9, 9), (32, 16, 3, 3), [2, 2], [0, 0], [1, 1], 1, False),
    # a kernel wider than the 16 columns whose bounds im2col keeps on its stack
    ((1, 2, 5, 40), (3, 2, 2, 17), [1, 2], [1, 9], [1, 1], 1, False),
]


def out_shape(case, output_padding=None):
    xs, ws, stride, padding, dilation, groups, transposed = case
    nd = len(xs) - 2
    return _conv.output_size(xs, ws, stride, padding, dilation, transposed,
                             output_padding or [0] * nd, groups)


def reference(case, x, w):
    _xs, _ws, stride, padding, dilation, groups, transposed = case
    out = torch.empty(out_shape(case), dtype=x.dtype)
    CPU_KERNELS["convolution"](out, x, w, stride, padding, dilation, transposed, groups)
    return out


def native(case, x, w):
    _xs, _ws, stride, padding, dilation, groups, transposed = case
    out = torch.empty(out_shape(case), dtype=x.dtype)
    prim, _ = _ops()
    prim(out, x, w, stride, padding, dilation, transposed, groups)
    return out


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_primitive_matches_reference(case, dtype) -> None:
    x, w = rand(case[0], 1, dtype), rand(case[1], 2, dtype)
    got, want = native(case, x, w), reference(case, x, w)
    tol = 1e-12 if dtype is torch.float64 else 1e-5
    np.testing.assert_allclose(got.double().numpy(), want.double().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", [CASES[2], CASES[12]])  # im2col + GEMM, direct
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_types_compute_in_float32(case, dtype) -> None:
    x, w = rand(case[0], 3, dtype), rand(case[1], 4, dtype)
    got = native(case, x, w)
    assert got.dtype is dtype
    # the float32 result rounded once. Two float32 sums in different orders may straddle a
    # rounding tie of the half type, so the reference's rounding may differ by one half ulp.
    want32 = reference(case, x.float(), w.float())
    assert_within_one_ulp(got, want32.to(dtype), want32)


def assert_within_one_ulp(got, want, want32) -> None:
    """``got`` equals the rounded float32 result ``want``, except where ``want32`` lies within
    a float32 rounding error of a tie: there ``got`` may be the tie's other neighbour (which
    also puts it one half ulp away)."""
    g, w, w32 = (t.double().numpy() for t in (got, want, want32))
    differ = g != w
    tie_distance = np.abs(w32 - (g + w) / 2)[differ]
    assert np.all(tie_distance <= 1e-6 * np.abs(w32[differ])), (g[differ], w[differ])


def test_strided_operands_and_layouts(monkeypatch) -> None:
    case = CASES[2]
    x = rand((1, 7, 6, 3), 5).permute(0, 3, 1, 2)  # channels last
    w = rand((5, 3, 2, 3), 6).transpose(2, 3)  # (5, 3, 3, 2), strided
    assert not x.is_contiguous() and not w.is_contiguous()
    np.testing.assert_allclose(native(case, x, w).numpy(),
                               reference(case, x.contiguous(), w.contiguous()).numpy(),
                               rtol=1e-12, atol=1e-12)
    # a non-contiguous output: computed natively into a fresh block, then copied in
    want = reference(case, x, w).numpy()
    calls = []
    real = CPU_KERNELS["convolution"]
    monkeypatch.setitem(CPU_KERNELS, "convolution", lambda *a: calls.append(1) or real(*a))
    out = torch.empty(out_shape(case)[::-1], dtype=torch.float64).permute(3, 2, 1, 0)
    prim, _ = _ops()
    prim(out, x, w, case[2], case[3], case[4], False, 1)
    assert not calls
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)


def test_zero_sizes() -> None:
    case = ((0, 3, 5, 5), (2, 3, 3, 3), [1, 1], [0, 0], [1, 1], 1, False)
    assert native(case, torch.zeros(0, 3, 5, 5, dtype=torch.float64),
                  rand((2, 3, 3, 3), 7)).shape == (0, 2, 3, 3)
    no_channels = ((2, 0, 5, 5), (2, 0, 3, 3), [1, 1], [0, 0], [1, 1], 1, False)
    got = native(no_channels, torch.zeros(2, 0, 5, 5, dtype=torch.float64),
                 torch.zeros(2, 0, 3, 3, dtype=torch.float64))
    assert got.shape == (2, 2, 3, 3) and not got.any()
    x = torch.zeros(0, 3, 5, 5, dtype=torch.float32, requires_grad=True)
    w = rand((2, 3, 3, 3), 8, torch.float32).requires_grad_()
    torch.conv2d(x, w).sum().backward()
    assert x.grad.shape == x.shape and not w.grad.any()


INTEGERS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


def int_values(shape, seed, dtype):
    """Values that overflow every integer width in a few products (-120..119, 0..239)."""
    gen = np.random.default_rng(seed)
    low = 0 if dtype is torch.uint8 else -120
    return torch.tensor(gen.integers(low, low + 240, shape).tolist(), dtype=torch.int64
                        ).reshape(shape).to(dtype)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", INTEGERS)
def test_integer_primitive_is_exact_and_wraps(case, dtype) -> None:
    # every layout natively (core refuses dilated/transposed non-int64 before the primitive,
    # as PyTorch does, but the primitive itself takes them)
    x, w = int_values(case[0], 28, dtype), int_values(case[1], 29, dtype)
    got, want = native(case, x, w), reference(case, x, w)
    assert got.dtype is dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", INTEGERS)
def test_integer_primitive_runs_natively(dtype, monkeypatch) -> None:
    prim, _ = _ops()
    case = CASES[2]
    x, w = int_values(case[0], 30, dtype), int_values(case[1], 31, dtype)
    calls = []
    real = CPU_KERNELS["convolution"]
    monkeypatch.setitem(CPU_KERNELS, "convolution",
                        lambda *a: calls.append(1) or real(*a))
    out = torch.empty(out_shape(case), dtype=dtype)
    prim(out, x, w, case[2], case[3], case[4], False, 1)
    assert not calls
    np.testing.assert_array_equal(out.numpy(), reference(case, x, w).numpy())


def test_integer_wraparound_matches_pytorch() -> None:
    # values printed by PyTorch 2.13 on the CPU
    full = lambda v, dt: torch.full((1, 1, 3, 3), v, dtype=dt)  # noqa: E731
    assert torch.conv2d(full(100, torch.int8), full(100, torch.int8)).item() == -112
    assert torch.conv2d(full(200, torch.uint8), full(200, torch.uint8)).item() == 64
    assert torch.conv2d(full(2**30, torch.int32), full(3, torch.int32)).item() == -2**30
    assert torch.conv2d(full(100, torch.int8), full(100, torch.int8),
                        torch.tensor([100], dtype=torch.int8)).item() == -12


def test_layout_errors_name_the_primitive() -> None:
    prim, _ = _ops()
    x, w = rand((1, 2, 5), 9), rand((3, 2, 2), 10)
    with pytest.raises(ValueError, match="convolution"):
        prim(torch.empty(1, 3, 4, dtype=torch.float64), x, w, [1, 1], [0], [1], False, 1)
    with pytest.raises(ValueError, match="channels"):
        prim(torch.empty(1, 3, 4, dtype=torch.float64), x, rand((3, 1, 2), 11), [1], [0], [1],
             False, 1)
    with pytest.raises(TypeError, match="dtype"):
        prim(torch.empty(1, 3, 4, dtype=torch.float64), x.float(), w, [1], [0], [1], False, 1)


# -- the fused backward against a numpy oracle --------------------------------------------------


def oracle_backward(case, x, w, g):
    """(grad_input, grad_weight, grad_bias) of sum(g * conv(x, w)), in float64 numpy."""
    xs, ws, stride, padding, dilation, groups, transposed = case
    nd = len(xs) - 2
    x, w, g = (t.double().numpy() for t in (x, w, g))
    kernel = ws[2:]
    letters = "uvw"[:nd]
    k_letters = "ijk"[:nd]
    if not transposed:  # image x, grid g; weight (G*Co, Ci, *K)
        win = windows(x, g.shape[2:], kernel, stride, padding, dilation)
        n = x.shape[0]
        ci, co = ws[1], ws[0] // groups
        win = win.reshape((n, groups, ci) + win.shape[2:])
        gg = g.reshape((n, groups, co) + g.shape[2:])
        gw = np.einsum(f"nGc{letters}{k_letters},nGo{letters}->Goc{k_letters}", win, gg)
        # grad_input: the adjoint of the window gather, the reference's transposed kernel
        gi = torch.empty(xs, dtype=torch.float64)
        as_tensor = lambda a: torch.tensor(a.tolist(), dtype=torch.float64).reshape(a.shape)  # noqa: E731
        CPU_KERNELS["convolution"](gi, as_tensor(g), as_tensor(w), stride, padding, dilation,
                                   True, groups)
        gi = gi.numpy()
        gw = gw.reshape(ws)
    else:  # image g, grid x; weight (G*Ci, Co, *K)
        win = windows(g, x.shape[2:], kernel, stride, padding, dilation)
        n = x.shape[0]
        ci, co = ws[0] // groups, ws[1]
        win = win.reshape((n, groups, co) + win.shape[2:])
        xx = x.reshape((n, groups, ci) + x.shape[2:])
        wg = w.reshape((groups, ci, co) + tuple(kernel))
        gw = np.einsum(f"nGc{letters},nGo{letters}{k_letters}->Gco{k_letters}", xx, win)
        gi = np.einsum(f"nGo{letters}{k_letters},Gco{k_letters}->nGc{letters}", win, wg)
        gi, gw = gi.reshape(xs), gw.reshape(ws)
    gb = g.sum(axis=(0,) + tuple(range(2, g.ndim)))
    return gi, gw, gb


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_fused_backward_matches_oracle(case, dtype) -> None:
    x, w = rand(case[0], 12, dtype), rand(case[1], 13, dtype)
    g = rand(out_shape(case), 14, dtype)
    _, backward = _ops()
    nd = len(case[0]) - 2
    got = backward(g, x, w, None, case[2], case[3], case[4], case[6], [0] * nd, case[5],
                   [True, True, True])
    want = oracle_backward(case, x, w, g)
    tol = 1e-11 if dtype is torch.float64 else 2e-5
    for got_t, want_a, what in zip(got, want, ("input", "weight", "bias")):
        assert got_t.dtype is dtype, what
        np.testing.assert_allclose(got_t.double().numpy(), want_a, rtol=tol, atol=tol,
                                   err_msg=what)
    only_weight = backward(g, x, w, None, case[2], case[3], case[4], case[6], [0] * nd,
                           case[5], [False, True, False])
    assert only_weight[0] is None and only_weight[2] is None
    np.testing.assert_array_equal(only_weight[1].numpy(), got[1].numpy())


# im2col rows x grid positions above the 2**21-element column budget: tiles that start and end
# inside a line of the grid
TILED = ((1, 64, 50, 90), (3, 64, 3, 3), [1, 1], [1, 1], [1, 1], 1, False)
TILED_T = ((1, 3, 48, 88), (3, 64, 3, 3), [1, 1], [0, 0], [1, 1], 1, True)


@pytest.mark.parametrize("case", [TILED, TILED_T])
def test_column_tiles(case) -> None:
    x, w = rand(case[0], 25), rand(case[1], 26)
    np.testing.assert_allclose(native(case, x, w).numpy(), reference(case, x, w).numpy(),
                               rtol=1e-11, atol=1e-11)
    g = rand(out_shape(case), 27)
    _, backward = _ops()
    got = backward(g, x, w, None, case[2], case[3], case[4], case[6], [0, 0], case[5],
                   [True, True, False])
    want = oracle_backward(case, x, w, g)
    for got_t, want_a in zip(got[:2], want[:2]):
        np.testing.assert_allclose(got_t.numpy(), want_a, rtol=1e-10, atol=1e-10)


def test_fused_backward_with_strided_gradient_and_half_types() -> None:
    case = CASES[3]
    x, w = rand(case[0], 15), rand(case[1], 16)
    g = rand(tuple(reversed(out_shape(case))), 17).permute(3, 2, 1, 0)
    _, backward = _ops()
    got = backward(g, x, w, None, case[2], case[3], case[4], False, [0, 0], case[5], [True] * 3)
    want = oracle_backward(case, x, w, g)
    for got_t, want_a in zip(got, want):
        np.testing.assert_allclose(got_t.numpy(), want_a, rtol=1e-11, atol=1e-11)
    for dtype in (torch.float16, torch.bfloat16):
        half = backward(g.to(dtype), x.to(dtype), w.to(dtype), None, case[2], case[3], case[4],
                        False, [0, 0], case[5], [True] * 3)
        ref = oracle_backward(case, x.to(dtype), w.to(dtype), g.to(dtype))
        for got_t, want_a in zip(half, ref):
            assert got_t.dtype is dtype
            np.testing.assert_allclose(got_t.double().numpy(), want_a, rtol=2e-2, atol=5e-2)


def test_autograd_uses_the_fused_backward_and_matches_the_composite() -> None:
    x = rand((4, 3, 9, 9), 18, torch.float32).requires_grad_()
    w = rand((8, 3, 3, 3), 19, torch.float32).requires_grad_()
    b = rand((8,), 20, torch.float32).requires_grad_()
    y = torch.conv2d(x, w, b, stride=2, padding=1)
    g = rand(tuple(y.shape), 21, torch.float32)
    gx, gw, gb = torch.autograd.grad(y, (x, w, b), g)
    ref = _conv.convolution_backward_composite(g, x.detach(), w.detach(), [8], [2, 2], [1, 1],
                                               [1, 1], False, [0, 0], 1, [True] * 3)
    for got_t, want_t in zip((gx, gw, gb), ref):
        np.testing.assert_allclose(got_t.numpy(), want_t.numpy(), rtol=1e-5, atol=1e-5)


def test_weight_gradient_does_not_depend_on_the_thread_count() -> None:
    case = ((16, 4, 12, 12), (6, 4, 3, 3), [1, 1], [1, 1], [1, 1], 1, False)
    x, w = rand(case[0], 22, torch.float32), rand(case[1], 23, torch.float32)
    g = rand(out_shape(case), 24, torch.float32)
    _, backward = _ops()
    threads = torch.get_num_threads()
    results = []
    try:
        for n in (1, 2, 3):
            torch.set_num_threads(n)
            results.append(backward(g, x, w, None, case[2], case[3], case[4], False, [0, 0], 1,
                                    [False, True, False])[1].numpy())
    finally:
        torch.set_num_threads(threads)
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])
