"""Convolutions: the public functions against a direct numpy loop (an oracle independent of the
reference kernel), PyTorch's argument errors, and gradients (first and second) against central
differences in float64."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numgrad import F64, check_grad, check_gradgrad

import torch
from torch._refs import CPU_KERNELS


def rand(shape: tuple[int, ...], seed: int, dtype: torch.dtype = F64) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(shape, dtype=F64, generator=gen).to(dtype)


def direct_conv(x: np.ndarray, w: np.ndarray, stride, padding, dilation, groups) -> np.ndarray:
    """out[n, o, y] = sum over c, k of x[n, g*Ci + c, y*s - p + k*d] * w[o, c, k], by loops."""
    nd = x.ndim - 2
    n = x.shape[0]
    cout, ci = w.shape[:2]
    co = cout // groups
    kernel = w.shape[2:]
    out_sp = [(x.shape[2 + d] + 2 * padding[d] - dilation[d] * (kernel[d] - 1) - 1)
              // stride[d] + 1 for d in range(nd)]
    out = np.zeros((n, cout, *out_sp))
    for y in itertools.product(*(range(s) for s in out_sp)):
        for k in itertools.product(*(range(s) for s in kernel)):
            pos = [y[d] * stride[d] - padding[d] + k[d] * dilation[d] for d in range(nd)]
            if not all(0 <= pos[d] < x.shape[2 + d] for d in range(nd)):
                continue
            for g in range(groups):
                xs = x[(slice(None), slice(g * ci, (g + 1) * ci), *pos)]  # (N, Ci)
                ws = w[(slice(g * co, (g + 1) * co), slice(None), *k)]  # (Co, Ci)
                out[(slice(None), slice(g * co, (g + 1) * co), *y)] += xs @ ws.T
    return out


def direct_conv_transpose(x: np.ndarray, w: np.ndarray, stride, padding, output_padding,
                          groups, dilation) -> np.ndarray:
    """out[n, g*Co + o, x*s - p + k*d] += x[n, g*Ci + c, x] * w[g*Ci + c, o, k], by loops."""
    nd = x.ndim - 2
    n, cin = x.shape[:2]
    ci = cin // groups
    co = w.shape[1]
    kernel = w.shape[2:]
    out_sp = [(x.shape[2 + d] - 1) * stride[d] - 2 * padding[d] + dilation[d] * (kernel[d] - 1)
              + output_padding[d] + 1 for d in range(nd)]
    out = np.zeros((n, co * groups, *out_sp))
    for i in itertools.product(*(range(s) for s in x.shape[2:])):
        for k in itertools.product(*(range(s) for s in kernel)):
            pos = [i[d] * stride[d] - padding[d] + k[d] * dilation[d] for d in range(nd)]
            if not all(0 <= pos[d] < out_sp[d] for d in range(nd)):
                continue
            for g in range(groups):
                xs = x[(slice(None), slice(g * ci, (g + 1) * ci), *i)]  # (N, Ci)
                ws = w[(slice(g * ci, (g + 1) * ci), slice(None), *k)]  # (Ci, Co)
                out[(slice(None), slice(g * co, (g + 1) * co), *pos)] += xs @ ws
    return out


def _tuple(v, nd):
    return (v,) * nd if isinstance(v, int) else tuple(v)


CONV_CASES = [
    # (nd, input shape, weight shape, stride, padding, dilation, groups)
    (1, (2, 3, 7), (4, 3, 3), 1, 0, 1, 1),
    (1, (2, 4, 9), (6, 2, 2), 2, 1, 2, 2),
    (2, (2, 3, 6, 5), (4, 3, 3, 2), 1, 1, 1, 1),
    (2, (1, 4, 7, 7), (4, 1, 3, 3), (2, 1), (1, 0), (1, 2), 4),  # depthwise
    (2, (2, 2, 5, 5), (3, 2, 1, 1), 2, 0, 1, 1),  # 1x1, strided
    (3, (1, 2, 4, 5, 4), (2, 2, 2, 3, 2), (1, 2, 1), 1, (2, 1, 1), 1),
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("with_bias", [False, True])
def test_conv_matches_direct_loops(case, with_bias: bool) -> None:
    nd, xs, ws, stride, padding, dilation, groups = case
    x, w = rand(xs, 0), rand(ws, 1)
    b = rand((ws[0],), 2) if with_bias else None
    fn = {1: torch.conv1d, 2: torch.conv2d, 3: torch.conv3d}[nd]
    got = fn(x, w, b, stride, padding, dilation, groups)
    want = direct_conv(x.numpy(), w.numpy(), _tuple(stride, nd), _tuple(padding, nd),
                       _tuple(dilation, nd), groups)
    if with_bias:
        want += b.numpy().reshape((1, -1) + (1,) * nd)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    # torch.convolution is the same op
    same = torch.convolution(x, w, b, _tuple(stride, nd), _tuple(padding, nd),
                             _tuple(dilation, nd), False, (0,) * nd, groups)
    np.testing.assert_array_equal(same.numpy(), got.numpy())


TRANSPOSE_CASES = [
    # (nd, input shape, weight shape, stride, padding, output_padding, groups, dilation)
    (1, (2, 3, 5), (3, 2, 3), 1, 0, 0, 1, 1),
    (1, (2, 4, 4), (4, 3, 2), 2, 1, 1, 2, 1),
    (2, (2, 2, 3, 4), (2, 3, 3, 3), 2, 1, 1, 1, 1),
    (2, (1, 4, 3, 3), (4, 1, 2, 3), (1, 2), (0, 1), (0, 1), 2, (2, 1)),
    (2, (1, 2, 3, 3), (2, 2, 2, 2), 2, 0, (0, 1), 1, 2),  # output_padding < dilation only
    (3, (1, 2, 2, 3, 2), (2, 2, 2, 2, 2), (2, 1, 1), (1, 0, 0), (1, 0, 0), 1, 1),
]


@pytest.mark.parametrize("case", TRANSPOSE_CASES)
@pytest.mark.parametrize("with_bias", [False, True])
def test_conv_transpose_matches_direct_loops(case, with_bias: bool) -> None:
    nd, xs, ws, stride, padding, output_padding, groups, dilation = case
    x, w = rand(xs, 3), rand(ws, 4)
    b = rand((ws[1] * groups,), 5) if with_bias else None
    fn = {1: torch.conv_transpose1d, 2: torch.conv_transpose2d, 3: torch.conv_transpose3d}[nd]
    got = fn(x, w, b, stride, padding, output_padding, groups, dilation)
    want = direct_conv_transpose(x.numpy(), w.numpy(), _tuple(stride, nd), _tuple(padding, nd),
                                 _tuple(output_padding, nd), groups, _tuple(dilation, nd))
    if with_bias:
        want += b.numpy().reshape((1, -1) + (1,) * nd)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_lower_precision_dtypes(dtype: torch.dtype) -> None:
    x, w = rand((2, 3, 6, 6), 6, dtype), rand((4, 3, 3, 3), 7, dtype)
    got = torch.conv2d(x, w, padding=1)
    assert got.dtype is dtype
    want = direct_conv(x.double().numpy(), w.double().numpy(), (1, 1), (1, 1), (1, 1), 1)
    tol = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 2e-2}[dtype]
    np.testing.assert_allclose(got.double().numpy(), want, rtol=tol, atol=tol * 10)


def test_integer_convolution_wraps_like_pytorch() -> None:
    # PyTorch's CPU convolution accepts integers (not bool) and wraps in the output's width
    x = torch.full((1, 1, 3), 100, dtype=torch.int8)
    w = torch.full((1, 1, 2), 100, dtype=torch.int8)
    got = torch.conv1d(x, w)
    assert got.dtype is torch.int8
    assert got.tolist() == [[[np.int64(20000).astype(np.int8).item()] * 2]]
    xl = torch.arange(6).reshape(1, 2, 3)
    wl = torch.tensor([[[1, 2], [3, 4]]])
    assert torch.conv1d(xl, wl).tolist() == [[[0 + 2 + 9 + 16, 1 + 4 + 12 + 20]]]
    with pytest.raises(NotImplementedError, match="Bool"):
        torch.conv1d(xl.bool(), wl.bool())


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32,
                                   torch.int64])
def test_every_integer_dtype_matches_direct_loops(dtype: torch.dtype) -> None:
    # PyTorch's plain convolution takes every integer dtype, wrapping in the output's width
    gen = np.random.default_rng(40)
    x = gen.integers(0, 200, (2, 4, 7, 6))
    w = gen.integers(0, 200, (6, 2, 3, 3))
    as_dtype = lambda a: torch.tensor(a.tolist()).to(dtype)  # noqa: E731 (wraps to int8)
    got = torch.conv2d(as_dtype(x), as_dtype(w), stride=(2, 1), padding=1, groups=2)
    assert got.dtype is dtype
    want = direct_conv(x, w, (2, 1), (1, 1), (1, 1), 2).astype(np.int64)
    np.testing.assert_array_equal(got.numpy(), want.astype(got.numpy().dtype))


@pytest.mark.parametrize("call, message", [
    (lambda d: torch.conv2d(torch.ones(1, 2, 5, 5, dtype=d), torch.ones(3, 2, 3, 3, dtype=d),
                            dilation=2), '"slow_conv_dilated<>" not implemented for'),
    (lambda d: torch.conv_transpose2d(torch.ones(1, 2, 5, 5, dtype=d),
                                      torch.ones(2, 3, 3, 3, dtype=d)),
     '"slow_conv_transpose2d_out_cpu" not implemented for'),
    (lambda d: torch.conv_transpose3d(torch.ones(1, 2, 3, 3, 3, dtype=d),
                                      torch.ones(2, 3, 2, 2, 2, dtype=d)),
     '"slow_conv_transpose3d_out_cpu" not implemented for'),
])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32,
                                   torch.bool])
def test_kernels_without_narrow_integers(call, message: str, dtype: torch.dtype) -> None:
    # PyTorch 2.13's dilated and transposed CPU kernels take int64 only (and no kernel bool)
    with pytest.raises(NotImplementedError, match=message):
        call(dtype)


def test_bool_convolution_is_refused_unless_empty() -> None:
    b = torch.bool
    with pytest.raises(NotImplementedError, match='"slow_conv2d_cpu" not implemented for '
                                                  "'Bool'"):
        torch.conv2d(torch.ones(1, 2, 5, 5, dtype=b), torch.ones(3, 2, 3, 3, dtype=b))
    with pytest.raises(NotImplementedError, match='"compute_columns3d" not implemented'):
        torch.conv3d(torch.ones(1, 2, 3, 3, 3, dtype=b), torch.ones(3, 2, 2, 2, 2, dtype=b))
    # an empty input returns before PyTorch picks a kernel
    got = torch.conv2d(torch.ones(0, 2, 5, 5, dtype=b), torch.ones(3, 2, 3, 3, dtype=b),
                       dilation=2)
    assert got.dtype is b and tuple(got.shape) == (0, 3, 1, 1)


def test_unbatched_input_and_padding_strings() -> None:
    x, w = rand((3, 8), 8), rand((2, 3, 4), 9)
    batched = torch.conv1d(x.unsqueeze(0), w, padding=2)
    assert torch.conv1d(x, w, padding=2).shape == (2, 9)
    np.testing.assert_array_equal(torch.conv1d(x, w, padding=2).numpy(), batched[0].numpy())
    assert torch.conv1d(x, w, padding="valid").shape == (2, 5)
    # "same" with an even kernel: the extra zero goes to the end, as in PyTorch
    ones = torch.ones(1, 1, 4, dtype=F64)
    seq = torch.arange(5, dtype=F64).reshape(1, 1, 5)
    same = torch.conv1d(seq, ones, padding="same")
    assert same.tolist() == [[[3.0, 6.0, 10.0, 9.0, 7.0]]]
    assert same.is_contiguous()
    assert torch.conv1d(seq, ones, padding="same", dilation=2).tolist() == \
        [[[4.0, 6.0, 4.0, 6.0, 4.0]]]
    img = rand((1, 2, 5, 6), 10)
    assert torch.conv2d(img, rand((3, 2, 3, 4), 11), padding="same").shape == (1, 3, 5, 6)


def test_empty_shapes() -> None:
    w = rand((4, 3, 3, 3), 12)
    assert torch.conv2d(torch.zeros(0, 3, 5, 5, dtype=F64), w).shape == (0, 4, 3, 3)
    empty_c = torch.conv2d(torch.ones(2, 0, 5, 5, dtype=F64), torch.ones(3, 0, 3, 3, dtype=F64),
                           torch.ones(3, dtype=F64))
    assert empty_c.shape == (2, 3, 3, 3)
    assert empty_c.eq(1).all()  # no channels: only the bias


def test_noncontiguous_operands() -> None:
    x = rand((2, 5, 6, 3), 13).permute(0, 3, 1, 2)  # channels last
    w = rand((3, 4, 2, 3), 15).transpose(0, 1)  # (4, 3, 2, 3), strided
    got = torch.conv2d(x, w, stride=(1, 2))
    want = direct_conv(x.contiguous().numpy(), w.contiguous().numpy(), (1, 2), (0, 0), (1, 1), 1)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("call", "exc", "message"), [
    (lambda x, w: torch.conv2d(x[0, 0], w), RuntimeError, "Expected 3D .unbatched. or 4D"),
    (lambda x, w: torch.conv2d(x, torch.ones(6, 3, 3, 3)), RuntimeError,
     r"expected input\[2, 4, 5, 5\] to have 3 channels, but got 4 channels instead"),
    (lambda x, w: torch.conv2d(x, torch.ones(6, 2, 3, 3), groups=3), RuntimeError,
     "to have 6 channels"),
    (lambda x, w: torch.conv2d(x, torch.ones(5, 2, 3, 3), groups=2), RuntimeError,
     "expected weight to be divisible by 2 at dimension 0"),
    (lambda x, w: torch.conv2d(x, w, groups=0), RuntimeError, "non-positive groups"),
    (lambda x, w: torch.conv2d(x, w, padding=-1), RuntimeError, "negative padding"),
    (lambda x, w: torch.conv2d(x, w, stride=0), RuntimeError, "non-positive stride"),
    (lambda x, w: torch.conv2d(x, w, dilation=0), RuntimeError, "non-positive dilation"),
    (lambda x, w: torch.conv2d(x, torch.ones(6, 4, 7, 7)), RuntimeError,
     r"Kernel size: \(7 x 7\). Kernel size can't be greater than actual input size"),
    (lambda x, w: torch.conv2d(x, w.double()), RuntimeError,
     r"Input type \(torch.FloatTensor\) and weight type \(torch.DoubleTensor\)"),
    (lambda x, w: torch.conv2d(x, w, torch.ones(5)), RuntimeError,
     "expected bias to be 1-dimensional with 6 elements"),
    (lambda x, w: torch.conv2d(x, w, torch.ones(6, dtype=torch.float64)), RuntimeError,
     "bias type"),
    (lambda x, w: torch.conv2d(x, w, padding="same", stride=2), RuntimeError,
     "not supported for strided convolutions"),
    (lambda x, w: torch.conv2d(x, w, padding="full"), RuntimeError, "Invalid padding string"),
    (lambda x, w: torch.conv2d(x, w, stride=(1, 1, 1)), RuntimeError,
     "a list of 2 values to match the convolution dimensions"),
    (lambda x, w: torch.conv2d(x, torch.ones(0, 4, 3, 3)), RuntimeError,
     "expected weight to be at least 1 at dimension 0"),
    (lambda x, w: torch.conv_transpose2d(x, torch.ones(4, 3, 3, 3), stride=2,
                                         output_padding=2), RuntimeError,
     "output padding must be smaller than either stride or dilation"),
    (lambda x, w: torch.conv_transpose2d(x, torch.ones(3, 3, 3, 3)), RuntimeError,
     "Given transposed=1"),
    (lambda x, w: torch.conv_transpose2d(x, torch.ones(4, 3, 3, 3), groups=3), RuntimeError,
     "divisible by 3"),
    (lambda x, w: torch.conv_transpose1d(torch.ones(1, 1, 1), torch.ones(1, 1, 1), padding=1),
     RuntimeError, "Output size is too small"),
    (lambda x, w: torch.conv_transpose1d(torch.ones(1, 1, 3), torch.ones(1, 1, 2),
                                         output_padding=-1), RuntimeError,
     "negative output_padding"),
    (lambda x, w: torch.conv_transpose1d(torch.ones(1, 1, 3), torch.ones(1, 1, 2),
                                         padding="same"), TypeError, "must be tuple of ints"),
    (lambda x, w: torch.convolution(torch.ones(4), torch.ones(6), None, [1], [0], [1], False,
                                    [0], 1), RuntimeError, "at least three dimensions"),
    (lambda x, w: torch.convolution(x[0], w, None, [1], [0], [1], False, [0], 1),
     RuntimeError, "Expected 4-dimensional input for 4-dimensional weight"),
    (lambda x, w: torch.conv2d([1.0], w), TypeError, "must be Tensor"),
])
def test_errors(call, exc, message) -> None:
    x, w = torch.ones(2, 4, 5, 5), torch.ones(6, 4, 3, 3)
    with pytest.raises(exc, match=message):
        call(x, w)


def test_convolution_backward_operator() -> None:
    x, w, g = rand((2, 4, 5, 5), 16), rand((6, 2, 3, 3), 17), rand((2, 6, 3, 2), 18)
    op = torch.ops.aten.convolution_backward
    gi, gw, gb = op(g, x, w, [6], [2, 2], [1, 0], [1, 1], False, [0, 0], 2, [True, True, True])
    # <g, conv(x, w)> is bilinear: its gradients are linear functionals we can test exactly
    xr, wr = x.clone().requires_grad_(), w.clone().requires_grad_()
    out = torch.conv2d(xr, wr, None, 2, (1, 0), 1, 2)
    assert out.shape == g.shape
    ex, ew = torch.autograd.grad(out, (xr, wr), g)
    np.testing.assert_allclose(gi.numpy(), ex.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw.numpy(), ew.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gb.numpy(), g.sum((0, 2, 3)).numpy(), rtol=1e-12)
    none_i, only_w, none_b = op(g, x, w, None, [2, 2], [1, 0], [1, 1], False, [0, 0], 2,
                                [False, True, False])
    assert none_i is None and none_b is None
    np.testing.assert_array_equal(only_w.numpy(), gw.numpy())
    with pytest.raises(RuntimeError, match="grad_output"):
        op(g[:, :, :2], x, w, None, [2, 2], [1, 0], [1, 1], False, [0, 0], 2, [True] * 3)


GRAD_CASES = [
    # conv: (nd, transposed, input, weight, stride, padding, dilation, groups, output_padding)
    (1, False, (2, 2, 5), (3, 2, 2), 1, 0, 1, 1, 0),
    (1, False, (1, 4, 7), (4, 2, 3), 2, 1, 2, 2, 0),
    (2, False, (1, 2, 4, 4), (2, 1, 2, 3), (2, 1), (1, 0), 1, 2, 0),
    (3, False, (1, 1, 3, 3, 3), (2, 1, 2, 2, 2), 1, 1, 1, 1, 0),
    (1, True, (2, 2, 3), (2, 2, 2), 2, 1, 1, 1, 1),
    (2, True, (1, 2, 2, 3), (2, 1, 2, 2), (2, 1), 0, (1, 2), 2, (1, 0)),
    (3, True, (1, 1, 2, 2, 2), (1, 2, 2, 1, 2), 2, (0, 0, 1), 1, 1, 0),
]


def _grad_fn(case, with_bias: bool):
    nd, transposed, _xs, _ws, stride, padding, dilation, groups, output_padding = case

    def fn(x, w, b=None):
        if transposed:
            call = {1: torch.conv_transpose1d, 2: torch.conv_transpose2d,
                    3: torch.conv_transpose3d}[nd]
            return call(x, w, b, stride, padding, output_padding, groups, dilation)
        call = {1: torch.conv1d, 2: torch.conv2d, 3: torch.conv3d}[nd]
        return call(x, w, b, stride, padding, dilation, groups)

    return fn


@pytest.mark.parametrize("case", GRAD_CASES)
def test_first_derivatives(case) -> None:
    _nd, transposed, xs, ws, *_ = case
    channels = ws[1] * case[7] if transposed else ws[0]
    x, w, b = rand(xs, 20), rand(ws, 21), rand((channels,), 22)
    check_grad(_grad_fn(case, True), x, w, b)


@pytest.mark.parametrize("case", GRAD_CASES[:2] + GRAD_CASES[4:6])
def test_second_derivatives(case) -> None:
    _nd, transposed, xs, ws, *_ = case
    channels = ws[1] * case[7] if transposed else ws[0]
    x, w, b = rand(xs, 23), rand(ws, 24), rand((channels,), 25)
    check_gradgrad(_grad_fn(case, True), x, w, b)


def test_third_derivative_through_the_backward_formula() -> None:
    # (conv(x, x_kernel) ** 2).sum() differentiated three times in x: every derivative is
    # written in convolution and convolution_backward
    x = rand((1, 1, 5), 26).requires_grad_()
    w = rand((1, 1, 3), 27)
    (g1,) = torch.autograd.grad(torch.conv1d(x, w).pow(3).sum(), x, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = torch.autograd.grad(g2.sum(), x)
    # d^3/dx^3 sum(y^3) with y linear in x: 6 * sum over outputs of (dy/dx)^3 contributions
    a = np.zeros((3, 5))
    for i in range(3):
        a[i, i:i + 3] = w.numpy().ravel()
    want = 6 * (a.sum(1) ** 2)[:, None] * a
    np.testing.assert_allclose(g3.numpy().ravel(), want.sum(0), rtol=1e-10)


def test_the_primitive_reference_kernel_is_registered() -> None:
    assert "convolution" in CPU_KERNELS
    assert torch._core.prims.PRIMITIVES["convolution"][0] == "convolution"
    assert torch._core.prims.VERSION >= 3
