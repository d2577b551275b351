"""Cross-entropy over logits through the fusable pair ``aten::_cross_entropy_forward`` /
``aten::_cross_entropy_backward``: the composites against numpy and their gradients (first and
second order, float64), and plait-backend-cpu's fused kernels against the composites over
dtypes, weights, ignore_index, reductions, (C,) inputs, zero-size batches, thread counts and
errors."""

from __future__ import annotations

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad

import torch
import torch.nn.functional as F
from torch._core import dispatch as _dispatch

A = torch.ops.aten
F64 = torch.float64
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
FWD, BWD = "aten::_cross_entropy_forward", "aten::_cross_entropy_backward"
NONE, MEAN, SUM = 0, 1, 2


def _tol(dtype: torch.dtype) -> dict[str, float]:
    if dtype == torch.float64:
        return {"atol": 1e-12, "rtol": 1e-10}
    if dtype == torch.float32:
        return {"atol": 2e-5, "rtol": 2e-5}
    return {"atol": 3e-2, "rtol": 3e-2}  # the composite rounds every step to 16 bits


def _rand(shape: tuple[int, ...], dtype: torch.dtype = torch.float32, scale: float = 3.0,
          seed: int = 0) -> torch.Tensor:
    values = np.random.default_rng(seed).standard_normal(shape) * scale
    return torch.tensor(values.tolist(), dtype=F64).reshape(shape).to(dtype)


def _targets(rows: int, classes: int, seed: int = 0, ignored: int = 0) -> torch.Tensor:
    t = np.random.default_rng(seed).integers(0, classes, rows)
    t[:ignored] = -100
    return torch.tensor(t.tolist(), dtype=torch.int64)


def _composite(qualname: str):
    return _dispatch.get(qualname).kernels["CompositeExplicitAutograd"]


def _fused(qualname: str):
    kernel = _dispatch.get(qualname).kernels.get("CPU")
    if kernel is None:
        pytest.skip("plait-backend-cpu's fused kernels are not installed")
    return kernel


def _same(a, b, dtype):
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        torch.testing.assert_close(x, y, equal_nan=True, **_tol(dtype))


def _np(t: torch.Tensor) -> np.ndarray:
    return np.array(t.detach().to(F64).tolist(), dtype=np.float64).reshape(tuple(t.shape))


def _np_cross_entropy(x, t, w, reduction, ignore_index):
    z = x - x.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    wt = (w[safe] if w is not None else np.ones(len(t))) * keep
    loss = -logp[np.arange(len(t)), safe] * wt
    if reduction == NONE:
        return loss
    return loss.sum() / wt.sum() if reduction == MEAN else loss.sum()


# -- the composites ----------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_matches_numpy(reduction, weighted):
    x, t = _rand((6, 5), F64), _targets(6, 5, ignored=2)
    w = _rand((5,), F64, seed=1).abs() if weighted else None
    got = F.cross_entropy(x, t, weight=w, reduction=reduction, ignore_index=-100)
    want = _np_cross_entropy(_np(x), np.array(t.tolist()), None if w is None else _np(w),
                             {"none": NONE, "mean": MEAN, "sum": SUM}[reduction], -100)
    np.testing.assert_allclose(_np(got), want, rtol=1e-12, atol=1e-12)


def test_cross_entropy_takes_the_fused_pair_and_matches_the_log_softmax_path():
    x, t = _rand((5, 4), F64).requires_grad_(True), _targets(5, 4, ignored=1)
    loss = F.cross_entropy(x, t)
    assert "CrossEntropyForward" in type(loss.grad_fn).__name__
    want = F.nll_loss(F.log_softmax(x, 1), t)
    torch.testing.assert_close(loss, want)
    (g,) = torch.autograd.grad(loss, x)
    (h,) = torch.autograd.grad(want, x)
    torch.testing.assert_close(g, h)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_gradients_first_and_second_order(reduction, weighted):
    x, t = _rand((5, 4), F64, scale=1.0), _targets(5, 4, seed=2, ignored=1)
    w = _rand((4,), F64, seed=3).abs() + 0.5 if weighted else None
    check_grad(lambda a: F.cross_entropy(a, t, weight=w, reduction=reduction), x)
    check_gradgrad(lambda a: F.cross_entropy(a, t, weight=w, reduction=reduction), x)
    x1 = _rand((4,), F64, seed=4)  # a (C,) input with a 0-d target
    check_gradgrad(lambda a: F.cross_entropy(a, torch.tensor(2), reduction=reduction), x1)


@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM])
def test_backward_op_gradients_in_grad_output_and_self(reduction):
    x, t = _rand((4, 5), F64, scale=1.0), _targets(4, 5, seed=5, ignored=1)
    w = _rand((5,), F64, seed=6).abs() + 0.5
    g = _rand((4,) if reduction == NONE else (), F64, seed=7)

    def backward(grad, a):  # the saved logsumexp is a constant that matches the logits
        return A._cross_entropy_backward(grad, a, t, w, reduction, -100,
                                         torch.logsumexp(a, -1).detach())

    check_grad(backward, g, x)
    check_gradgrad(backward, g, x)


def test_every_target_ignored_gives_nan_loss_and_zero_gradients():
    x = _rand((3, 4)).requires_grad_(True)
    t = torch.tensor([-100, -100, -100])
    loss = F.cross_entropy(x, t)
    assert torch.isnan(loss)
    (g,) = torch.autograd.grad(loss, x)
    assert torch.equal(g, torch.zeros(3, 4))
    assert float(F.cross_entropy(x, t, reduction="sum")) == 0.0


def test_errors_match_pytorch():
    x = _rand((3, 4))
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(x, torch.tensor([0, 7, 1]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds"):
        F.cross_entropy(x, torch.tensor([0, -1, 1]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target"):
        F.cross_entropy(x, torch.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        F.cross_entropy(x, torch.tensor([0, 1, 2]), weight=torch.ones(3))
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument"):
        F.cross_entropy(x, torch.tensor([0, 1, 2]), weight=torch.ones(4, requires_grad=True))
    with pytest.raises(IndexError, match="out of bounds"):
        _fused(FWD)(x, torch.tensor([0, 4, 1]), None, MEAN, -100)
    with pytest.raises(IndexError, match="out of bounds"):
        lse = torch.logsumexp(x, -1)
        _fused(BWD)(torch.tensor(1.0), x, torch.tensor([0, 1, 9]), None, MEAN, -100, lse)


# -- fused kernels against the composites --------------------------------------------------------


def _both(args: tuple, dtype: torch.dtype, reduction: int) -> None:
    x, t, w, red, ii = args
    fused, comp = _fused(FWD)(*args), _composite(FWD)(*args)
    _same(fused, comp, dtype)
    g = _rand(tuple(t.shape) if red == NONE else (), dtype, seed=11)
    lse = comp[1]
    _same(_fused(BWD)(g, x, t, w, red, ii, lse), _composite(BWD)(g, x, t, w, red, ii, lse),
          dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(7, 5), (33, 100), (3, 1)])
def test_fused_matches_composite(dtype, reduction, weighted, shape):
    rows, classes = shape
    x = _rand(shape, dtype, seed=rows)
    t = _targets(rows, classes, seed=classes, ignored=1)
    w = _rand((classes,), dtype, seed=2).abs() if weighted else None
    _both((x, t, w, reduction, -100), dtype, reduction)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM])
def test_fused_takes_a_single_row_and_other_ignore_indices(dtype, reduction):
    x = _rand((6,), dtype, seed=3)
    _both((x, torch.tensor(4), None, reduction, -100), dtype, reduction)
    _both((x, torch.tensor(4), None, reduction, 4), dtype, reduction)  # ignored
    x2 = _rand((5, 6), dtype, seed=4)
    t = torch.tensor([0, 2, 2, 5, 1])
    _both((x2, t, _rand((6,), dtype).abs(), reduction, 2), dtype, reduction)


def test_fused_handles_extreme_rows_like_the_composite():
    x = torch.tensor([[float("-inf"), 0.0, 1.0], [1e30, -1e30, 0.0], [50.0, -50.0, 0.0]])
    t = torch.tensor([1, 2, 0])
    for red in (NONE, MEAN, SUM):
        _both((x, t, None, red, -100), torch.float32, red)


def test_fused_on_non_contiguous_and_broadcast_operands():
    base = _rand((8, 6), seed=5)
    x = base.t()[:, :5]  # (6, 5), transposed strides
    t = _targets(6, 5, seed=6)
    w = torch.ones(1).expand(5)  # stride 0
    _both((x, t, w, MEAN, -100), torch.float32, MEAN)
    lse = torch.logsumexp(x, -1)
    g = torch.ones(1).expand(6)
    _same(_fused(BWD)(g, x, t, None, NONE, -100, lse),
          _composite(BWD)(g, x, t, None, NONE, -100, lse), torch.float32)


@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM])
def test_fused_zero_size_batch(reduction):
    x, t = torch.zeros(0, 4), torch.zeros(0, dtype=torch.int64)
    fused, comp = _fused(FWD)(x, t, None, reduction, -100), _composite(FWD)(x, t, None,
                                                                             reduction, -100)
    _same(fused, comp, torch.float32)
    assert fused[0].shape == ((0,) if reduction == NONE else ())


def test_fused_every_target_ignored():
    x = _rand((4, 3))
    t = torch.full((4,), -100, dtype=torch.int64)
    loss, lse = _fused(FWD)(x, t, None, MEAN, -100)
    assert torch.isnan(loss)
    grad = _fused(BWD)(torch.tensor(1.0), x, t, None, MEAN, -100, lse)
    assert torch.equal(grad, torch.zeros(4, 3))
    # zero class weights: same
    t2 = torch.tensor([0, 1, 1, 0])
    w = torch.tensor([0.0, 0.0, 1.0])
    grad = _fused(BWD)(torch.tensor(1.0), x, t2, w, MEAN, -100, lse)
    assert torch.equal(grad, torch.zeros(4, 3))


def test_fused_falls_back_where_it_does_not_apply():
    x = _rand((4, 3))
    t = torch.tensor([0, 1, 2, 1])
    # a weight of another dtype: the composite raises PyTorch's error
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        _fused(FWD)(x, t, torch.ones(3, dtype=F64), MEAN, -100)
    # a uint8 target: the composite takes it
    t8 = t.to(torch.uint8)
    _same(_fused(FWD)(x, t8, None, SUM, -100), _composite(FWD)(x, t8, None, SUM, -100),
          torch.float32)
    # a grad of another dtype: the composite
    lse = torch.logsumexp(x, -1)
    g = torch.tensor(2.0, dtype=F64)
    _same(_fused(BWD)(g, x, t, None, SUM, -100, lse),
          _composite(BWD)(g, x, t, None, SUM, -100, lse), torch.float32)


@pytest.mark.parametrize("shape", [(2000, 130), (20000, 5)])  # long rows, and few classes
def test_fused_results_do_not_depend_on_the_thread_count(shape):
    rows, classes = shape
    x = _rand(shape, seed=7)
    t = _targets(rows, classes, seed=8, ignored=5)
    w = _rand((classes,), seed=9).abs()
    before = torch.get_num_threads()

    def run():
        out = []
        for red in (NONE, MEAN, SUM):
            loss, lse = _fused(FWD)(x, t, w, red, -100)
            g = torch.ones(rows) if red == NONE else torch.tensor(1.0)
            out += [loss, lse, _fused(BWD)(g, x, t, w, red, -100, lse)]
        # and the composites agree
        _same(tuple(out[3:5]), _composite(FWD)(x, t, w, MEAN, -100), torch.float32)
        return out

    try:
        torch.set_num_threads(1)
        one = run()
        torch.set_num_threads(2)
        two = run()
    finally:
        torch.set_num_threads(before)
    for a, c in zip(one, two):
        assert torch.equal(a, c)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_autograd_through_the_fused_kernels_matches_float64(dtype):
    _fused(FWD)
    x = _rand((16, 10), dtype, scale=1.0).requires_grad_(True)
    t = _targets(16, 10, seed=3, ignored=2)
    w = _rand((10,), dtype, seed=4).abs() + 0.5
    loss = F.cross_entropy(x, t, weight=w)
    (g,) = torch.autograd.grad(loss, x)
    x64 = x.detach().double().requires_grad_(True)
    want = F.cross_entropy(x64, t, weight=w.double())
    (h,) = torch.autograd.grad(want, x64)
    assert g.dtype == dtype and loss.dtype == dtype
    torch.testing.assert_close(loss.double(), want, **_tol(dtype))
    torch.testing.assert_close(g.double(), h, **_tol(dtype))


def test_the_logsumexp_output_is_not_differentiable():
    # internal, as native_layer_norm's mean and rstd: handed back detached
    x = _rand((4, 5), F64, scale=1.0).requires_grad_(True)
    loss, lse = A._cross_entropy_forward(x, _targets(4, 5, seed=9), None, MEAN, -100)
    assert loss.requires_grad and not lse.requires_grad
    torch.testing.assert_close(lse, torch.logsumexp(x.detach(), -1))
