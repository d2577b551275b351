"""plait-backend-cpu's float32 convolution forward in column tiles (im2col of a tile of grid
positions straight into the packed kernels' B panels, then one product per tile with the
weight packed once), against a direct numpy computation in float64: tiles that start and end
inside a line of the grid, output channel counts that are not a multiple of the kernels' 6-row
panels (and one of a single channel, and one past a 96-row block), reductions deeper than a
256-deep slab, strides, dilation, groups, 1-d and 3-d, a strided input, and the same bits for
1, 2 and 3 threads."""

from __future__ import annotations

import numpy as np
import pytest
from conv_oracle import windows

import torch
import torch.nn.functional as F

pytest.importorskip("plait_backend_cpu._C", reason="plait-backend-cpu is not installed")

# (input shape, weight shape, stride, padding, dilation, groups): every case has more than
# 2**18 im2col elements per (sample, group), so the forward runs several column tiles, and
# more than 1024 grid positions (or 1-d/3-d), so the direct 2-d kernel does not take it.
CASES = [
    ((2, 16, 40, 50), (24, 16, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 5, 70, 70), (13, 5, 7, 7), (1, 1), (3, 3), (1, 1), 1),
    ((1, 32, 100, 90), (20, 16, 3, 3), (2, 2), (1, 1), (1, 1), 2),
    ((2, 16, 80, 75), (7, 16, 3, 3), (1, 2), (2, 0), (2, 1), 1),
    ((2, 300, 400), (8, 300, 5), (1,), (2,), (1,), 1),
    ((1, 8, 12, 20, 20), (10, 8, 3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1),
]
# The forward's packed weight: rows past a 96-row block and deeper than a 256-deep slab, and
# a single output channel (a one-row weight is packed column after column).
FORWARD_CASES = CASES + [
    ((1, 30, 33, 33), (100, 30, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 32, 40, 41), (1, 32, 3, 3), (1, 1), (1, 1), (1, 1), 1),
]
CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def expected(case, x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The convolution in float64 and the same sum over absolute values (an error scale)."""
    xs, ws, stride, padding, dilation, groups = case
    nd = len(xs) - 2
    grid = [(xs[2 + d] + 2 * padding[d] - dilation[d] * (ws[2 + d] - 1) - 1) // stride[d] + 1
            for d in range(nd)]
    letters, k_letters = "uvw"[:nd], "ijk"[:nd]
    results = []
    for xv, wv in ((x, w), (np.abs(x), np.abs(w))):
        win = windows(xv, grid, ws[2:], stride, padding, dilation)
        win = win.reshape((xs[0], groups, ws[1]) + win.shape[2:])
        wg = wv.reshape((groups, ws[0] // groups) + tuple(ws[1:]))
        out = np.einsum(f"nGc{letters}{k_letters},Goc{k_letters}->nGo{letters}", win, wg)
        results.append(out.reshape((xs[0], ws[0]) + tuple(grid)))
    return results[0], results[1]


def run(case, x: torch.Tensor, w: torch.Tensor) -> np.ndarray:
    _, _, stride, padding, dilation, groups = case
    conv = CONV[len(case[0]) - 2]
    return conv(x, w, stride=stride, padding=padding, dilation=dilation, groups=groups).numpy()


@pytest.mark.parametrize("case", FORWARD_CASES)
def test_tiled_forward_matches_float64_and_threads_agree(case) -> None:
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, case[0]).astype(np.float32)
    w = rng.uniform(-1, 1, case[1]).astype(np.float32)
    want, scale = expected(case, x.astype(np.float64), w.astype(np.float64))
    old = torch.get_num_threads()
    got = {}
    try:
        for threads in (1, 2, 3):
            torch.set_num_threads(threads)
            got[threads] = run(case, torch.from_numpy(x), torch.from_numpy(w))
    finally:
        torch.set_num_threads(old)
    assert got[1].shape == want.shape
    assert np.all(np.abs(got[1] - want) <= 1e-5 * scale + 1e-6)
    assert got[2].tobytes() == got[1].tobytes()
    assert got[3].tobytes() == got[1].tobytes()


def test_tiled_forward_of_a_strided_input() -> None:
    """A channels-last (permuted) input: the kernel reads it through a contiguous copy."""
    case = CASES[0]
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, case[0]).astype(np.float32)
    w = rng.uniform(-1, 1, case[1]).astype(np.float32)
    x_last = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    assert not x_last.is_contiguous()
    want, scale = expected(case, x.astype(np.float64), w.astype(np.float64))
    got = run(case, x_last, torch.from_numpy(w))
    assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-6)


def expected_grads(case, x: np.ndarray, w: np.ndarray, g: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(grad_input, grad_weight) of sum(g * conv2d(x, w)) in float64: the weight gradient from
    the windows, the input gradient by adding each kernel offset's contribution into the
    padded image, one offset at a time."""
    xs, ws, stride, padding, dilation, groups = case
    n, grid = xs[0], g.shape[2:]
    ci, co = ws[1], ws[0] // groups
    win = windows(x, grid, ws[2:], stride, padding, dilation)
    win = win.reshape((n, groups, ci) + win.shape[2:])
    gg = g.reshape((n, groups, co) + grid)
    gw = np.einsum("nGcuvij,nGouv->Gocij", win, gg).reshape(ws)
    padded = np.zeros((n, groups, ci, xs[2] + 2 * padding[0] + stride[0] * grid[0],
                       xs[3] + 2 * padding[1] + stride[1] * grid[1]))
    wg = w.reshape((groups, co, ci) + tuple(ws[2:]))
    for i in range(ws[2]):
        for j in range(ws[3]):
            y0, x0 = i * dilation[0], j * dilation[1]
            padded[:, :, :, y0:y0 + stride[0] * grid[0]:stride[0],
                   x0:x0 + stride[1] * grid[1]:stride[1]] += np.einsum(
                       "nGouv,Goc->nGcuv", gg, wg[:, :, :, i, j])
    gi = padded[:, :, :, padding[0]:padding[0] + xs[2], padding[1]:padding[1] + xs[3]]
    return gi.reshape(xs), gw


@pytest.mark.parametrize("case", [c for c in CASES if len(c[0]) == 4])
def test_tiled_gradients_match_float64_and_threads_agree(case) -> None:
    rng = np.random.default_rng(9)
    x = rng.uniform(-1, 1, case[0]).astype(np.float32)
    w = rng.uniform(-1, 1, case[1]).astype(np.float32)
    want_out, _ = expected(case, x.astype(np.float64), w.astype(np.float64))
    g = rng.uniform(-1, 1, want_out.shape).astype(np.float32)
    want_gi, want_gw = expected_grads(case, x.astype(np.float64), w.astype(np.float64),
                                      g.astype(np.float64))
    scale_gi, scale_gw = expected_grads(case, np.abs(x).astype(np.float64),
                                        np.abs(w).astype(np.float64),
                                        np.abs(g).astype(np.float64))
    old = torch.get_num_threads()
    got = {}
    try:
        for threads in (1, 2, 3):
            torch.set_num_threads(threads)
            xt = torch.from_numpy(x).requires_grad_(True)
            wt = torch.from_numpy(w).requires_grad_(True)
            out = F.conv2d(xt, wt, stride=case[2], padding=case[3], dilation=case[4],
                           groups=case[5])
            gi, gw = torch.autograd.grad(out, (xt, wt), torch.from_numpy(g))
            got[threads] = (gi.numpy(), gw.numpy())
    finally:
        torch.set_num_threads(old)
    gi, gw = got[1]
    assert np.all(np.abs(gi - want_gi) <= 1e-5 * scale_gi + 1e-6)
    assert np.all(np.abs(gw - want_gw) <= 1e-5 * scale_gw + 1e-6)
    for threads in (2, 3):
        assert got[threads][0].tobytes() == gi.tobytes(), threads
        assert got[threads][1].tobytes() == gw.tobytes(), threads


@pytest.mark.parametrize("case", [c for c in CASES if len(c[0]) == 4])
def test_tiled_transposed_forward_is_the_input_gradient(case) -> None:
    """conv_transpose2d runs the input gradient's tiles (columns, then col2im) as its
    forward: against the float64 input gradient of the matching conv2d."""
    xs, ws, stride, padding, dilation, groups = case
    rng = np.random.default_rng(10)
    x = rng.uniform(-1, 1, xs)
    w = rng.uniform(-1, 1, ws).astype(np.float32)
    grid_shape = expected(case, x, w.astype(np.float64))[0].shape
    g = rng.uniform(-1, 1, grid_shape).astype(np.float32)
    want, _ = expected_grads(case, x, w.astype(np.float64), g.astype(np.float64))
    scale, _ = expected_grads(case, x, np.abs(w).astype(np.float64),
                              np.abs(g).astype(np.float64))
    extra = [xs[2 + d] - ((grid_shape[2 + d] - 1) * stride[d] - 2 * padding[d]
                          + dilation[d] * (ws[2 + d] - 1) + 1) for d in range(2)]
    got = F.conv_transpose2d(torch.from_numpy(g), torch.from_numpy(w), stride=stride,
                             padding=padding, output_padding=extra, groups=groups,
                             dilation=dilation).numpy()
    assert got.shape == want.shape
    assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-6)
