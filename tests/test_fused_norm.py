"""softmax / log_softmax, layer_norm and cross-entropy: the public API against numpy, PyTorch's
errors, gradients by finite differences (float64), and the fused CPU kernels of
plait-backend-cpu against their composite twins in core over dtypes and odd layouts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad

import torch
from torch._core import dispatch as _dispatch

A = torch.ops.aten
F64 = torch.float64
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]

FUSED_OPS = ("aten::_softmax", "aten::_log_softmax", "aten::_softmax_backward_data",
             "aten::_log_softmax_backward_data", "aten::native_layer_norm",
             "aten::native_layer_norm_backward")


def _tol(dtype: torch.dtype) -> dict[str, float]:
    if dtype == torch.float64:
        return {"atol": 1e-12, "rtol": 1e-10}
    if dtype == torch.float32:
        return {"atol": 2e-6, "rtol": 2e-5}
    return {"atol": 2e-2, "rtol": 2e-2}  # one rounding of a float32 result, maybe off by an ulp


def _rand(shape: tuple[int, ...], dtype: torch.dtype = torch.float32, scale: float = 3.0,
          seed: int = 0) -> torch.Tensor:
    values = np.random.default_rng(seed).standard_normal(shape) * scale
    return torch.tensor(values.tolist(), dtype=F64).reshape(shape).to(dtype)


def _np(t: torch.Tensor) -> np.ndarray:
    return np.array(t.detach().to(F64).tolist(), dtype=np.float64).reshape(tuple(t.shape))


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
        assert (x is None) == (y is None)
        if x is not None:
            assert x.dtype == y.dtype and x.shape == y.shape
            torch.testing.assert_close(x, y, equal_nan=True, **_tol(dtype))


# -- public API against numpy ----------------------------------------------------------------


def _np_log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    m = x.max(axis=dim, keepdims=True)
    z = x - m
    return z - np.log(np.exp(z).sum(axis=dim, keepdims=True))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax_match_numpy(dim):
    x = _rand((4, 7))
    expected = _np_log_softmax(_np(x), dim)
    np.testing.assert_allclose(_np(torch.log_softmax(x, dim)), expected, atol=1e-5)
    np.testing.assert_allclose(_np(torch.softmax(x, dim)), np.exp(expected), atol=1e-6)


def test_softmax_of_infinite_rows_follows_the_composite_rule():
    x = torch.tensor([[-math.inf, -math.inf], [math.inf, 1.0], [0.0, -math.inf]])
    y = torch.softmax(x, 1)
    # an infinite maximum makes the whole row NaN, as in PyTorch
    assert torch.isnan(y[0]).all() and torch.isnan(y[1]).all()
    assert y[2].tolist() == [1.0, 0.0]
    assert torch.log_softmax(x, 1)[2, 1] == -math.inf


def _np_layer_norm(x, axis, w=None, b=None, eps=1e-5):
    dims = tuple(range(axis, x.ndim))
    mean = x.mean(axis=dims, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=dims, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    out = (x - mean) * rstd
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out, mean, rstd


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_matches_numpy(dtype, affine):
    x = _rand((3, 4, 5), dtype) + 2
    w = _rand((4, 5), dtype, seed=1) if affine else None
    b = _rand((4, 5), dtype, seed=2) if affine else None
    out, mean, rstd = _np_layer_norm(_np(x), 1, None if w is None else _np(w),
                                     None if b is None else _np(b), 1e-3)
    got = torch.layer_norm(x, [4, 5], w, b, 1e-3)
    assert got.dtype == dtype and got.shape == x.shape
    np.testing.assert_allclose(_np(got), out, atol=1e-5, rtol=1e-5)
    o, m, r = torch.native_layer_norm(x, (4, 5), w, b, 1e-3)
    assert m.shape == (3, 1, 1) and r.shape == (3, 1, 1) and m.dtype == dtype
    np.testing.assert_allclose(_np(m), mean, atol=1e-6, rtol=1e-6)
    np.testing.assert_allclose(_np(r), rstd, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(_np(o), out, atol=1e-5, rtol=1e-5)


def test_layer_norm_accepts_an_int_shape_and_keeps_half_dtypes():
    x = _rand((2, 6), torch.float16)
    y = torch.layer_norm(x, 6)
    assert y.dtype == torch.float16
    np.testing.assert_allclose(_np(y), _np_layer_norm(_np(x), 1)[0], atol=1e-2)


def test_layer_norm_of_empty_rows_gives_pytorchs_statistics():
    out, mean, rstd = torch.native_layer_norm(torch.zeros(2, 0), [0], None, None, 1e-5)
    assert out.shape == (2, 0)
    assert mean.tolist() == [[0.0], [0.0]] and torch.isnan(rstd).all()
    assert torch.layer_norm(torch.zeros(0, 3), [3]).shape == (0, 3)


def _np_cross_entropy(x, t, w=None, reduction=1, ignore_index=-100, smoothing=0.0):
    """Class-index targets, x (N, C), t (N,)."""
    logp = _np_log_softmax(x, 1)
    c = x.shape[1]
    w = np.ones(c) if w is None else w
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    wt = w[safe] * keep
    nll = -logp[np.arange(len(t)), safe] * wt
    smooth = -(logp * w).sum(1) * keep
    if reduction == 0:
        return (1 - smoothing) * nll + smoothing / c * smooth
    if reduction == 2:
        return (1 - smoothing) * nll.sum() + smoothing / c * smooth.sum()
    return (1 - smoothing) * nll.sum() / wt.sum() + smoothing / c * smooth.sum() / wt.sum()


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 1])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
def test_cross_entropy_matches_numpy(reduction, weighted, ignore_index, smoothing):
    x = _rand((6, 4), F64)
    t = torch.tensor([0, 1, 3, 1, 2, 0])
    w = torch.tensor([0.5, 2.0, 1.0, 1.5], dtype=F64) if weighted else None
    got = A.cross_entropy_loss(x, t, w, reduction, ignore_index, smoothing)
    want = _np_cross_entropy(_np(x), np.array(t.tolist()), None if w is None else _np(w),
                             reduction, ignore_index, smoothing)
    np.testing.assert_allclose(_np(got), want, rtol=1e-12, atol=1e-12)


def test_cross_entropy_over_spatial_dims_is_rowwise_cross_entropy():
    x = _rand((2, 3, 4, 5), F64)
    t = torch.tensor(np.random.default_rng(3).integers(0, 3, (2, 4, 5)).tolist())
    got = A.cross_entropy_loss(x, t, None, 0)
    rows = x.permute(0, 2, 3, 1).reshape(-1, 3)
    want = _np_cross_entropy(_np(rows), np.array(t.reshape(-1).tolist()), reduction=0)
    assert got.shape == (2, 4, 5)
    np.testing.assert_allclose(_np(got).reshape(-1), want, rtol=1e-12)
    np.testing.assert_allclose(_np(A.cross_entropy_loss(x, t)), want.mean(), rtol=1e-12)


def test_cross_entropy_with_probability_targets():
    x = _rand((3, 4), F64)
    p = torch.softmax(_rand((3, 4), F64, seed=5), 1)
    w = torch.tensor([1.0, 2.0, 0.5, 1.0], dtype=F64)
    logp = _np_log_softmax(_np(x), 1)
    target = _np(p) * 0.8 + 0.2 / 4
    per_row = -(logp * target * _np(w)).sum(1)
    got = A.cross_entropy_loss(x, p, w, 0, -100, 0.2)
    np.testing.assert_allclose(_np(got), per_row, rtol=1e-12)
    np.testing.assert_allclose(_np(A.cross_entropy_loss(x, p, w, 1, -100, 0.2)),
                               per_row.sum() / 3, rtol=1e-12)


def test_nll_loss_pieces_follow_pytorch_structure():
    logp = torch.log_softmax(_rand((3, 5), F64), 1)
    t = torch.tensor([4, 0, 2])
    out, total = A.nll_loss_forward(logp, t, None, 2, -100)
    assert total.item() == 3.0
    np.testing.assert_allclose(_np(out), -_np(logp)[[0, 1, 2], [4, 0, 2]].sum(), rtol=1e-12)
    none, total0 = A.nll_loss_forward(logp, t, None, 0, -100)
    assert none.shape == (3,) and total0.shape == ()
    grad = A.nll_loss_backward(torch.tensor(2.0, dtype=F64), logp, t, None, 1, -100, total)
    expected = np.zeros((3, 5))
    expected[[0, 1, 2], [4, 0, 2]] = -2.0 / 3
    np.testing.assert_allclose(_np(grad), expected)
    assert A.nll_loss_nd(logp[0], torch.tensor(1), None, 0).shape == ()


def test_cross_entropy_with_every_target_ignored_is_nan():
    x = _rand((2, 3))
    assert math.isnan(A.cross_entropy_loss(x, torch.tensor([-100, -100])).item())
    assert A.cross_entropy_loss(x, torch.tensor([-100, -100]), None, 2).item() == 0.0


# -- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize("call, error, match", [
    (lambda: torch.layer_norm(torch.ones(2, 3), [4]), RuntimeError,
     r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\]"),
    (lambda: torch.layer_norm(torch.ones(2, 3), [3], torch.ones(2)), RuntimeError,
     "Expected weight to be of same shape as normalized_shape"),
    (lambda: torch.layer_norm(torch.ones(2, 3), [3], None, torch.ones(4)), RuntimeError,
     "Expected bias to be of same shape"),
    (lambda: torch.layer_norm(torch.ones(2, 3), []), RuntimeError,
     "at least 1-dimensional"),
    (lambda: torch.layer_norm(torch.ones(2, 3, dtype=torch.int64), [3]), NotImplementedError,
     "not implemented for 'Long'"),
    (lambda: torch.layer_norm([1.0], [1]), TypeError, "must be Tensor"),
    (lambda: A.cross_entropy_loss(torch.ones(3, 5), torch.tensor([0, 5, 1])), IndexError,
     "Target 5 is out of bounds."),
    (lambda: A.cross_entropy_loss(torch.ones(3, 5), torch.tensor([0, -1, 1])), IndexError,
     "Target -1 is out of bounds."),
    (lambda: A.cross_entropy_loss(torch.ones(3, 5), torch.tensor([0, 1])), ValueError,
     r"Expected input batch_size \(3\) to match target batch_size \(2\)."),
    (lambda: A.cross_entropy_loss(torch.ones(3, 5), torch.tensor([0, 1, 1]), torch.ones(4)),
     RuntimeError, "weight tensor should be defined either for all 5 classes"),
    (lambda: A.cross_entropy_loss(torch.ones(3, 5), torch.tensor([0, 1, 1], dtype=torch.int32)),
     RuntimeError, "expected target dtype to be Long or Byte, but got Int"),
    (lambda: A.cross_entropy_loss(torch.ones(3, 5), torch.ones(3, 5), ignore_index=1),
     RuntimeError, "ignore_index is not supported for floating point target"),
    (lambda: A.cross_entropy_loss(torch.ones(3, 5), torch.ones(3, 5, dtype=torch.int64)),
     RuntimeError, "Expected floating point type for target with class probabilities"),
    (lambda: A.cross_entropy_loss(torch.ones(3, 5), torch.tensor([0, 1, 1]),
                                  label_smoothing=1.5), RuntimeError,
     "label_smoothing must be between 0.0 and 1.0"),
    (lambda: A.cross_entropy_loss(torch.ones(2, 3, 4), torch.zeros(2, dtype=torch.int64)),
     RuntimeError, r"Expected target size \[2, 4\], got \[2\]"),
    (lambda: A.nll_loss_forward(torch.ones(2, 3, 4), torch.zeros(2, dtype=torch.int64), None, 1,
                                -100), RuntimeError, "input tensor should be 1D or 2D"),
    (lambda: A.cross_entropy_loss(torch.ones(3, 5), torch.tensor([0, 1, 1]),
                                  torch.ones(5).requires_grad_(True)), RuntimeError,
     "not differentiable with respect to argument 'weight'"),
    (lambda: torch.softmax(torch.ones(2, dtype=torch.int64), 0), NotImplementedError,
     "not implemented for 'Long'"),
])
def test_errors_match_pytorch(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- gradients (float64, finite differences) ----------------------------------------------------


@pytest.mark.parametrize("fn", [torch.softmax, torch.log_softmax])
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_gradients(fn, dim):
    x = _rand((3, 4), F64, scale=1.0)
    check_grad(lambda a: fn(a, dim), x)
    check_gradgrad(lambda a: fn(a, dim), x)


def test_layer_norm_gradients_first_and_second_order():
    x = _rand((3, 4), F64, scale=1.0)
    w, b = _rand((4,), F64, seed=1), _rand((4,), F64, seed=2)
    check_grad(lambda a, c, d: torch.layer_norm(a, [4], c, d), x, w, b)
    check_gradgrad(lambda a, c, d: torch.layer_norm(a, [4], c, d), x, w, b)
    x3 = _rand((2, 2, 3), F64, scale=1.0)
    check_gradgrad(lambda a: torch.layer_norm(a, [2, 3], None, None, 1e-3), x3)


def test_native_layer_norm_statistics_are_not_differentiable():
    x = _rand((2, 3), F64).requires_grad_(True)
    out, mean, rstd = torch.native_layer_norm(x, [3], None, None, 1e-5)
    assert out.requires_grad and not mean.requires_grad and not rstd.requires_grad


@pytest.mark.parametrize("kwargs", [
    {}, {"reduction": 0}, {"reduction": 2}, {"ignore_index": 1, "label_smoothing": 0.3},
])
def test_cross_entropy_gradients(kwargs):
    x = _rand((4, 3), F64, scale=1.0)
    t = torch.tensor([0, 1, 2, 1])
    w = torch.tensor([0.5, 2.0, 1.0], dtype=F64)
    check_grad(lambda a: A.cross_entropy_loss(a, t, w, **kwargs), x)
    check_gradgrad(lambda a: A.cross_entropy_loss(a, t, w, **kwargs), x)


def test_cross_entropy_gradient_with_probability_targets():
    x = _rand((3, 4), F64, scale=1.0)
    p = torch.softmax(_rand((3, 4), F64, seed=4), 1)
    check_grad(lambda a, q: A.cross_entropy_loss(a, q), x, p)
    check_gradgrad(lambda a: A.cross_entropy_loss(a, p, None, 0), x)


# -- fused kernels against their composites ----------------------------------------------------

SOFTMAX_LAYOUTS = [
    ((5, 37), 1), ((4, 6, 7), 1), ((4, 6, 7), 0), ((3, 300, 2), 1), ((3, 0), 1), ((0, 3), 1),
    ((7,), 0), ((), 0), ((3, 1), 1), ((1, 5), 0), ((2, 3, 1000), -1),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape, dim", SOFTMAX_LAYOUTS)
def test_fused_softmax_matches_composite(dtype, log, shape, dim):
    name = "aten::_log_softmax" if log else "aten::_softmax"
    backward = "aten::_log_softmax_backward_data" if log else "aten::_softmax_backward_data"
    fused, composite = _fused(name), _composite(name)
    x = _rand(shape, dtype)
    y = fused(x, dim, False)
    assert y.is_contiguous()
    _same(y, composite(x, dim, False), dtype)
    g = _rand(shape, dtype, seed=1)
    _same(_fused(backward)(g, y, dim, dtype), _composite(backward)(g, y, dim, dtype), dtype)


@pytest.mark.parametrize("log", [False, True])
def test_fused_softmax_takes_non_contiguous_inputs(log):
    name = "aten::_log_softmax" if log else "aten::_softmax"
    x = _rand((6, 8)).t()  # (8, 6), transposed
    _same(_fused(name)(x, 1, False), _composite(name)(x, 1, False), torch.float32)
    strided = _rand((4, 10))[:, ::2]
    _same(_fused(name)(strided, 0, False), _composite(name)(strided.contiguous(), 0, False),
          torch.float32)
    backward = "aten::_log_softmax_backward_data" if log else "aten::_softmax_backward_data"
    y = _fused(name)(x, 1, False)
    g = _rand((6, 8), seed=2).t()
    _same(_fused(backward)(g, y.t().contiguous().t(), 1, torch.float32),
          _composite(backward)(g, y, 1, torch.float32), torch.float32)


def test_fused_softmax_handles_extreme_rows_like_the_composite():
    x = torch.tensor([[-math.inf] * 20, [math.inf] + [1.0] * 19, [math.nan] + [0.0] * 19,
                      [-1000.0] + [0.0] * 19, [88.0, -88.0] + [0.0] * 18])
    for name in ("aten::_softmax", "aten::_log_softmax"):
        _same(_fused(name)(x, 1, False), _composite(name)(x, 1, False), torch.float32)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_fused_softmax_rows_in_and_out_of_the_fast_exponential_range(dtype):
    # Rows whose spread is under 104 take the kernel's range-checked exponential, the others
    # (and rows with inf or NaN) the general one; both must match the composite, and the
    # result must not depend on the thread count.
    rng = np.random.default_rng(11)
    x = rng.standard_normal((48, 300)) * 5
    x[1, 7] = -103.0  # just inside the range
    x[2, 7] = -105.0  # just outside
    x[3, :] = -200.0
    x[3, ::3] = 0.0  # a spread of 200
    x[4, 5] = math.nan
    x[5, 9] = -math.inf
    x[6, :] = -math.inf
    x[7, 2] = math.inf
    t = torch.from_numpy(x).to(dtype)
    before = torch.get_num_threads()
    try:
        for name in ("aten::_softmax", "aten::_log_softmax"):
            results = []
            for count in (1, 2, 3):
                torch.set_num_threads(count)
                y = _fused(name)(t, 1, False)
                results.append(_np(y).tobytes())
                _same(y, _composite(name)(t, 1, False), dtype)
            assert results[0] == results[1] == results[2]
    finally:
        torch.set_num_threads(before)


LAYER_NORM_LAYOUTS = [((5, 37), [37]), ((2, 3, 4), [3, 4]), ((0, 4), [4]), ((3, 1), [1]),
                      ((7,), [7]), ((600, 3), [3]), ((2, 0), [0])]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape, normalized", LAYER_NORM_LAYOUTS)
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_fused_layer_norm_matches_composite(dtype, shape, normalized, affine):
    x = (_rand(shape, F64) + 1.5).to(dtype)
    w = _rand(tuple(normalized), dtype, seed=1) if affine in ("weight", "both") else None
    b = _rand(tuple(normalized), dtype, seed=2) if affine in ("bias", "both") else None
    name = "aten::native_layer_norm"
    fused = _fused(name)(x, normalized, w, b, 1e-5)
    _same(fused, _composite(name)(x, normalized, w, b, 1e-5), dtype)
    g = _rand(shape, dtype, seed=3)
    _, mean, rstd = fused
    name = "aten::native_layer_norm_backward"
    for mask in ([True, True, True], [True, False, False], [False, True, True]):
        _same(_fused(name)(g, x, normalized, mean, rstd, w, b, mask),
              _composite(name)(g, x, normalized, mean, rstd, w, b, mask), dtype)


def test_fused_layer_norm_takes_non_contiguous_inputs_and_mixed_dtypes():
    x = _rand((6, 10))[:, ::2]
    w = _rand((5,), seed=1)
    name = "aten::native_layer_norm"
    _same(_fused(name)(x, [5], w, None, 1e-5), _composite(name)(x, [5], w, None, 1e-5),
          torch.float32)
    # a float32 weight with a float16 input: left to the composite, which computes in float32
    xh = _rand((3, 5), torch.float16)
    _same(_fused(name)(xh, [5], w, None, 1e-5), _composite(name)(xh, [5], w, None, 1e-5),
          torch.float16)


def test_fused_kernels_do_not_depend_on_the_thread_count():
    _fused("aten::_softmax")
    x = _rand((700, 130), seed=7)
    g = _rand((700, 130), seed=8)
    w, b = _rand((130,), seed=9), _rand((130,), seed=10)
    before = torch.get_num_threads()

    def run():
        out, mean, rstd = A.native_layer_norm(x, [130], w, b, 1e-5)
        grads = A.native_layer_norm_backward(g, x, [130], mean, rstd, w, b, [True, True, True])
        return (torch.softmax(x, 1), torch.softmax(x, 0), out) + tuple(grads)

    try:
        torch.set_num_threads(1)
        one = run()
        torch.set_num_threads(2)
        two = run()
    finally:
        torch.set_num_threads(before)
    for a, c in zip(one, two):
        assert torch.equal(a, c)


def test_fused_kernels_fall_back_where_they_do_not_apply():
    x = _rand((3, 4))
    # out-of-range dims reach the composite, which raises PyTorch's error
    with pytest.raises(IndexError):
        _fused("aten::_softmax")(x, 2, False)
    # a grad of another dtype than the output: the composite casts
    y = _fused("aten::_softmax")(x, 1, False)
    got = _fused("aten::_softmax_backward_data")(x.double(), y, 1, torch.float32)
    _same(got, _composite("aten::_softmax_backward_data")(x.double(), y, 1, torch.float32),
          torch.float32)


def test_autograd_runs_through_the_fused_kernels():
    _fused("aten::_softmax")
    x = _rand((4, 6), scale=1.0).requires_grad_(True)
    w = _rand((6,), seed=1).requires_grad_(True)
    b = _rand((6,), seed=2).requires_grad_(True)
    t = torch.tensor([0, 5, 3, 3])
    loss = A.cross_entropy_loss(torch.layer_norm(x, [6], w, b), t)
    gx, gw, gb = torch.autograd.grad(loss, (x, w, b))
    # the same graph in float64 runs the fused float64 kernels; compare with finite differences
    x64, w64, b64 = (v.detach().double() for v in (x, w, b))
    check_grad(lambda a, c, d: A.cross_entropy_loss(torch.layer_norm(a, [6], c, d), t),
               x64, w64, b64)
    for got, leaf in ((gx, x64), (gw, w64), (gb, b64)):
        assert got.dtype == torch.float32 and got.shape == leaf.shape
    ref = torch.autograd.grad(A.cross_entropy_loss(
        torch.layer_norm(x64.requires_grad_(True), [6], w64.requires_grad_(True),
                         b64.requires_grad_(True)), t), (x64, w64, b64))
    for got, want in zip((gx, gw, gb), ref):
        torch.testing.assert_close(got.double(), want, atol=1e-5, rtol=1e-4)


def test_layer_norm_backward_passes_its_saved_statistics_without_detach():
    # PyTorch's LayerNormBackward0 hands the saved mean and rstd to native_layer_norm_backward
    # as they are: a dispatch mode sees no detach before it (the gradients are checked above)
    from torch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    x = torch.randn(2, 3, requires_grad=True)
    w, b = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    y = torch.nn.functional.layer_norm(x, (3,), w, b)
    with Log() as mode:
        y.backward(torch.ones(2, 3))
    first = mode.ops.index("aten.native_layer_norm_backward.default")
    assert "aten.detach.default" not in mode.ops[:first]


@pytest.mark.parametrize("n", [1, 5, 16, 31, 32, 33, 70])
def test_softmax_rows_of_any_length_match_numpy(n):
    # short rows (under the native kernel's lane count) and long ones, with rows holding
    # +inf, -inf only and NaN: numpy's exp(x - max) / sum gives PyTorch's values (NaN rows)
    rng = np.random.default_rng(n)
    x = rng.standard_normal((6, n)).astype(np.float32) * 4
    x[1, 0] = np.inf
    x[2, :] = -np.inf
    x[3, n // 2] = np.nan
    x[4, -1] = -np.inf
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x64 - x64.max(-1, keepdims=True))
        want = e / e.sum(-1, keepdims=True)
        want_log = x64 - x64.max(-1, keepdims=True) - np.log(e.sum(-1, keepdims=True))
    got = torch.softmax(torch.tensor(x), -1).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7, equal_nan=True)
    got_log = torch.log_softmax(torch.tensor(x), -1).numpy()
    np.testing.assert_allclose(got_log, want_log, rtol=2e-6, atol=2e-6, equal_nan=True)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_keeps_only_its_output_for_backward(log):
    # as PyTorch's SoftmaxBackward0 (dim, result): writing the input in place afterwards
    # leaves the backward valid; the gradient is the softmax Jacobian's, written out in numpy
    xs = np.array([[0.5, -1.0, 2.0], [0.0, 0.3, -0.2]])
    w = np.array([1.0, -2.0, 0.5])
    for _ in range(3):  # (the later calls run planned)
        x = torch.tensor(xs, requires_grad=True)
        h = x * 1.0
        y = torch.log_softmax(h, -1) if log else torch.softmax(h, -1)
        assert not hasattr(y.grad_fn, "_saved_self")
        h.add_(1.0)
        (g,) = torch.autograd.grad((y * torch.tensor(w)).sum(), x)
        p = np.exp(xs - xs.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        want = w - p * w.sum() if log else p * (w - (p * w).sum(-1, keepdims=True))
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-12, atol=1e-12)
