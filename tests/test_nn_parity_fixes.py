"""Regression tests for the nn differences from PyTorch that the module parity run
(``benchmarks/parity/nn_collect.py``) found; expected values are PyTorch 2.13's behaviour,
written out by hand."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest
from numgrad import check_grad

import torch
import torch.nn as nn
import torch.nn.functional as F


def _f64(values: object, grad: bool = True) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64, requires_grad=grad)


# -- lazy modules follow .double() / .to(dtype) before their first call -------------------------

@pytest.mark.parametrize("make, x", [
    (lambda: nn.LazyLinear(3), (4, 5)),
    (lambda: nn.LazyConv2d(2, 3), (1, 2, 5, 5)),
])
def test_lazy_module_materializes_in_converted_dtype(make, x):
    m = make().double()
    assert m.weight.dtype == torch.float64
    out = m(torch.zeros(x, dtype=torch.float64))
    assert out.dtype == torch.float64
    assert m.weight.dtype == torch.float64 and m.bias.dtype == torch.float64
    m32 = make().to(torch.float64).float()
    assert m32(torch.zeros(x)).dtype == torch.float32


# -- ParameterDict sorts the keys of a plain dict (not of an OrderedDict) -------------------------

def test_parameter_dict_key_order():
    p = {"w": nn.Parameter(torch.zeros(2)), "b": nn.Parameter(torch.zeros(1))}
    assert list(nn.ParameterDict(p).keys()) == ["b", "w"]
    assert list(nn.ParameterDict(OrderedDict(p)).keys()) == ["w", "b"]
    assert list(nn.ParameterDict(list(p.items())).keys()) == ["w", "b"]
    d = nn.ParameterDict()
    d.update({"z": nn.Parameter(torch.zeros(1)), "a": nn.Parameter(torch.zeros(1))})
    assert list(d.state_dict()) == ["a", "z"]
    # ModuleDict keeps insertion order, as in PyTorch
    assert list(nn.ModuleDict({"w": nn.ReLU(), "b": nn.ReLU()}).keys()) == ["w", "b"]


# -- F.bilinear -----------------------------------------------------------------------------------

def test_functional_bilinear_values_and_grads():
    rng = np.random.default_rng(0)
    x1, x2 = rng.normal(size=(3, 4)), rng.normal(size=(3, 2))
    w, b = rng.normal(size=(5, 4, 2)), rng.normal(size=5)
    out = F.bilinear(_f64(x1), _f64(x2), _f64(w), _f64(b))
    np.testing.assert_allclose(out.detach().numpy(),
                               np.einsum("ni,oij,nj->no", x1, w, x2) + b, rtol=1e-12)
    check_grad(F.bilinear, _f64(x1), _f64(x2), _f64(w), _f64(b))
    with pytest.raises(RuntimeError, match="batch dimensions do not match"):
        F.bilinear(_f64(x1), _f64(np.zeros((2, 2))), _f64(w))


# -- grid_sample(mode="nearest") gives the grid a zero gradient (not None) ------------------------

@pytest.mark.parametrize("shape, grid_shape", [((1, 2, 3, 4), (1, 2, 3, 2)),
                                               ((1, 1, 2, 3, 3), (1, 2, 2, 2, 3))])
def test_grid_sample_nearest_grid_grad_is_zero(shape, grid_shape):
    x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
    grid = (torch.rand(grid_shape, dtype=torch.float64) * 2 - 1).requires_grad_()
    out = F.grid_sample(x, grid, mode="nearest", align_corners=False)
    out.sum().backward()
    assert grid.grad is not None and grid.grad.shape == grid.shape
    assert bool((grid.grad == 0).all())
    assert x.grad is not None


# -- LayerNorm's repr always names bias ------------------------------------------------------------

def test_layer_norm_repr_without_affine():
    assert repr(nn.LayerNorm(5, elementwise_affine=False)) == \
        "LayerNorm((5,), eps=1e-05, elementwise_affine=False, bias=False)"
    assert repr(nn.LayerNorm(5, bias=False)) == \
        "LayerNorm((5,), eps=1e-05, elementwise_affine=True, bias=False)"


# -- CTC: an impossible alignment without zero_infinity has NaN gradients (that sample only) ------

def test_ctc_infinite_loss_gradient_is_nan_for_that_sample():
    lp = torch.randn(4, 2, 3, dtype=torch.float64).log_softmax(2).requires_grad_()
    targets = torch.tensor([[1, 1, 2], [1, 2, 0]])
    loss = F.ctc_loss(lp, targets, [3, 4], [3, 1], reduction="none")
    assert math.isinf(loss[0].item()) and math.isfinite(loss[1].item())
    loss.sum().backward()
    g = lp.grad
    assert bool(g[:3, 0].isnan().all())  # the steps sample 0 uses
    assert bool((g[3, 0] == 0).all())  # beyond its input length
    assert bool(g[:, 1].isfinite().all())
    lp.grad = None
    F.ctc_loss(lp, targets, [3, 4], [3, 1], zero_infinity=True).backward()
    assert bool(lp.grad.isfinite().all()) and bool((lp.grad[:, 0] == 0).all())


# -- max pooling: ties send the whole gradient to the first maximum, NaN wins --------------------

def test_max_pool_ties_route_gradient_to_first_maximum():
    x = _f64([[[1.0, 1.0, 0.0, 0.0, 3.0, 3.0]]])
    out, idx = F.max_pool1d(x, 2, return_indices=True)
    out.sum().backward()
    assert idx.tolist() == [[[0, 2, 4]]]
    assert x.grad.tolist() == [[[1.0, 0.0, 1.0, 0.0, 1.0, 0.0]]]
    x = _f64([[[2.0, 2.0], [2.0, 2.0]]])
    F.max_pool2d(x.unsqueeze(0), 2).sum().backward()  # no indices requested
    assert x.grad.tolist() == [[[1.0, 0.0], [0.0, 0.0]]]
    x = _f64([[1.0, 1.0, 5.0, 5.0, 5.0]])  # windows [0, 3) and [2, 5) share the first 5
    F.adaptive_max_pool1d(x, 2).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 2.0, 0.0, 0.0]]
    x = _f64([[4.0, 4.0, 1.0, 4.0]])
    F.adaptive_max_pool1d(x, 2).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0, 1.0]]


def test_max_pool_nan_takes_last_nan_and_its_gradient():
    nan = math.nan
    x = _f64([[[3.0, nan, 1.0, nan, 0.5, 2.0]]])
    out, idx = F.max_pool1d(x, 3, return_indices=True)
    out.sum().backward()
    assert math.isnan(out[0, 0, 0].item()) and math.isnan(out[0, 0, 1].item())
    assert idx.tolist() == [[[1, 3]]]
    assert x.grad.tolist() == [[[0.0, 1.0, 0.0, 1.0, 0.0, 0.0]]]
    x = _f64([[[nan, 1.0], [nan, 2.0]]])
    out, idx = F.max_pool2d(x.unsqueeze(0), 2, return_indices=True)
    assert idx.flatten().tolist() == [2]
    x = _f64([[1.0, nan, 2.0, nan, 7.0]])
    out, idx = F.adaptive_max_pool1d(x, 2, return_indices=True)
    out.sum().backward()
    assert idx.tolist() == [[1, 3]]  # windows [0, 3) and [2, 5)
    assert x.grad.isfinite().all()


def test_fractional_max_pool_ties_first_maximum():
    x = _f64([[[[1.0, 1.0, 1.0, 1.0]] * 4]])
    out, idx = F.fractional_max_pool2d(x, 2, output_size=2, return_indices=True,
                                       _random_samples=torch.zeros(1, 1, 2,
                                                                   dtype=torch.float64))
    out.sum().backward()
    assert idx.flatten().tolist() == [0, 2, 8, 10]
    assert x.grad.sum().item() == 4.0 and x.grad.max().item() == 1.0


def test_max_pool_values_unchanged_without_grad():
    x = torch.randn(2, 3, 7, 6, dtype=torch.float64)
    with torch.no_grad():
        a = F.max_pool2d(x, 3, 2, 1)
    b = F.max_pool2d(x.requires_grad_(), 3, 2, 1)
    assert torch.equal(a, b.detach())


# -- binary_cross_entropy: PyTorch's gradient formula at saturated inputs --------------------------

def test_bce_gradient_at_saturated_inputs():
    x = _f64([0.0, 1.0, 0.5, 1.0, 0.3])
    y = _f64([1.0, 0.0, 1.0, 1.0, 0.6])
    loss = F.binary_cross_entropy(x, y, reduction="none")
    assert loss.detach().tolist()[:2] == [100.0, 100.0]
    loss.sum().backward()
    expected = [(xi - yi) / max(xi * (1 - xi), 1e-12) for xi, yi in
                zip([0.0, 1.0, 0.5, 1.0, 0.3], [1.0, 0.0, 1.0, 1.0, 0.6])]
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)
    assert y.grad.tolist()[:2] == [math.inf, -math.inf] and y.grad[3].item() == -math.inf


def test_bce_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    x, y = _f64(rng.uniform(0.1, 0.9, (3, 4))), _f64(rng.uniform(0, 1, (3, 4)))
    w = torch.tensor(rng.uniform(0, 1, 4))
    check_grad(lambda a, b: F.binary_cross_entropy(a, b, weight=w, reduction="none"), x, y)


# -- RNN modules refuse an input of another dtype than their weights, with PyTorch's message --

@pytest.mark.parametrize("make", [lambda: nn.LSTM(2, 3), lambda: nn.GRU(2, 3),
                                  lambda: nn.RNN(2, 3)])
def test_rnn_dtype_mismatch_message(make):
    with pytest.raises(ValueError, match=r"RNN input dtype \(torch.float64\) does not match "
                       r"weight dtype \(torch.float32\). Convert input: "
                       r"input.to\(torch.float32\), or convert model: "
                       r"model.to\(torch.float64\)"):
        make()(torch.zeros(4, 1, 2, dtype=torch.float64))
    packed = nn.utils.rnn.pack_sequence([torch.zeros(3, 2, dtype=torch.float64)])
    module = make()
    # PyTorch's LSTM leaves packed input to its matmul's RuntimeError
    with pytest.raises(RuntimeError if isinstance(module, nn.LSTM) else ValueError):
        module(packed)
    out, _ = make().double()(torch.zeros(4, 1, 2, dtype=torch.float64))
    assert out.dtype == torch.float64


# -- TransformerEncoder: what PyTorch's nested-tensor inference path does to padded positions ------

def _encoder(**layer_kwargs: object) -> nn.TransformerEncoder:
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, **layer_kwargs)
    return nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8)).eval()


def test_transformer_encoder_nested_path_zeroes_padding():
    enc = _encoder()
    assert enc.use_nested_tensor and enc.layers[0].activation_relu_or_gelu == 1
    x = torch.randn(2, 5, 8)
    pad = torch.tensor([[False] * 3 + [True] * 2, [False] * 5])
    with torch.no_grad():
        out = enc(x, src_key_padding_mask=pad)
    ref = enc(x, src_key_padding_mask=pad).detach()  # with autograd: no nested path
    bias = enc.norm(torch.zeros(8)).detach()  # norm(0) at the padded positions
    torch.testing.assert_close(out[0, 3:], bias.expand(2, 8))
    torch.testing.assert_close(out[0, :3], ref[0, :3])
    torch.testing.assert_close(out[1], ref[1])
    assert not torch.allclose(ref[0, 3:], bias.expand(2, 8))
    with torch.no_grad():  # left padding, a mask, or training mode: no nested path
        left = enc(x, src_key_padding_mask=pad.flip(1))
        assert not torch.allclose(left[0, :2], bias.expand(2, 8))
        causal = nn.Transformer.generate_square_subsequent_mask(5)
        masked = enc(x, mask=causal, src_key_padding_mask=pad)
        assert not torch.allclose(masked[0, 3:], bias.expand(2, 8))


def test_transformer_encoder_nested_tensor_warning():
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=False)
    with pytest.warns(UserWarning, match="self.use_nested_tensor is False because "
                      "encoder_layer.self_attn.batch_first was not True"):
        enc = nn.TransformerEncoder(layer, 1)
    assert not enc.use_nested_tensor
    assert nn.TransformerEncoderLayer(8, 2, activation="gelu").activation_relu_or_gelu == 2
    assert nn.TransformerEncoderLayer(8, 2, activation=torch.tanh).activation_relu_or_gelu == 0
    with pytest.warns(UserWarning, match="num_heads is odd"):
        nn.TransformerEncoder(nn.TransformerEncoderLayer(9, 3, batch_first=True), 1)


# -- signatures: BatchNorm's keyword-only bias, no divisor_override in 1-d, no avg return_indices --

def test_batch_norm_bias_keyword():
    m = nn.BatchNorm1d(4, bias=False)
    assert m.bias is None and m.weight is not None
    assert list(m.state_dict()) == ["weight", "running_mean", "running_var",
                                    "num_batches_tracked"]
    assert repr(m) == ("BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=False, "
                       "track_running_stats=True)")
    x = torch.randn(5, 4, dtype=torch.float64)
    m = m.double()
    with torch.no_grad():
        m.weight.copy_(torch.tensor([1.0, 2.0, 0.5, -1.0]))
    mean, var = x.mean(0), x.var(0, unbiased=False)
    torch.testing.assert_close(m(x), (x - mean) / torch.sqrt(var + 1e-5) * m.weight.detach())
    with pytest.raises(TypeError):
        nn.BatchNorm2d(3, 1e-5, 0.1, True, True, None, None, False)  # bias is keyword-only
    assert nn.InstanceNorm1d(3, affine=True, bias=False).bias is None


def test_pooling_signatures():
    with pytest.raises(TypeError):
        nn.AvgPool1d(2, divisor_override=3)
    assert nn.AvgPool2d(2, divisor_override=3).divisor_override == 3
    with pytest.raises(TypeError):
        F.adaptive_avg_pool2d(torch.zeros(1, 1, 4, 4), 2, return_indices=True)
    assert F.adaptive_max_pool2d(torch.zeros(1, 1, 4, 4), 2, return_indices=True)[1].dtype \
        == torch.int64


# -- circular padding with negative pads crops first, then wraps what is left ----------------------

def test_circular_pad_negative():
    x = torch.arange(5.0).reshape(1, 1, 5)
    assert F.pad(x, (-1, 2), mode="circular").tolist() == [[[1.0, 2.0, 3.0, 4.0, 1.0, 2.0]]]
    assert F.pad(x, (2, -1), mode="circular").tolist() == [[[2.0, 3.0, 0.0, 1.0, 2.0, 3.0]]]
    assert F.pad(x, (1, 1), mode="circular").tolist() == [[[4.0, 0.0, 1.0, 2.0, 3.0, 4.0, 0.0]]]
    x = torch.arange(12.0).reshape(1, 1, 3, 4)
    assert F.pad(x, (-1, 2, 1, -1), mode="circular").tolist() == [[[
        [5.0, 6.0, 7.0, 5.0, 6.0], [1.0, 2.0, 3.0, 1.0, 2.0], [5.0, 6.0, 7.0, 5.0, 6.0]]]]


# -- ELU/CELU/SELU/PReLU at exactly 0: first derivative from the left, second from the right --

@pytest.mark.parametrize("fn, first", [
    (lambda x: F.elu(x, 2.0), 2.0), (lambda x: F.celu(x, 2.0), 1.0),
    (F.selu, 1.0507009873554805 * 1.6732632423543772),
])
def test_exponential_units_derivatives_at_zero(fn, first):
    x = _f64([-0.5, 0.0, 0.5])
    g, = torch.autograd.grad(fn(x).sum(), x, create_graph=True)
    g2, = torch.autograd.grad(g.sum(), x)
    assert g[1].item() == pytest.approx(first) and g[2].item() == pytest.approx(
        1.0 if fn is not F.selu else 1.0507009873554805)
    assert g2[1].item() == 0.0 and g2[2].item() == 0.0 and g2[0].item() > 0
    check_grad(fn, _f64([-1.3, -0.2, 0.4, 2.0]))


def test_prelu_mixed_second_derivative_at_zero():
    x, w = _f64([-0.5, 0.0, 0.5]), _f64([0.3])
    gx, gw = torch.autograd.grad(F.prelu(x, w).sum(), (x, w), create_graph=True)
    assert gx.tolist() == pytest.approx([0.3, 0.3, 1.0]) and gw.tolist() == [-0.5]
    hx, hw = torch.autograd.grad(gx.sum() + gw.sum(), (x, w))
    assert hx.tolist() == [1.0, 0.0, 0.0] and hw.tolist() == [1.0]
    check_grad(F.prelu, _f64([[-1.0, 0.5], [2.0, -0.3]]), _f64([0.2, 0.7]))


# -- half precision: softplus without overflow, norms computed in float32 (as PyTorch) ------------

@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_softplus_half_no_overflow(dtype):
    x = torch.tensor([5.0, 12.0, 15.0, 19.0, 30.0], dtype=dtype)
    out = F.softplus(x)
    assert bool(out.isfinite().all()) and out.tolist()[1:] == [12.0, 15.0, 19.0, 30.0]
    assert F.mish(x).tolist()[1:] == [12.0, 15.0, 19.0, 30.0]
    y = _f64([-30.0, -0.5, 0.0, 0.5, 19.0, 21.0])
    g, = torch.autograd.grad(F.softplus(y).sum(), y)
    np.testing.assert_allclose(g.numpy(), 1 / (1 + np.exp(-y.detach().numpy())), rtol=1e-8)
    check_grad(lambda t: F.softplus(t, 0.7, 10.0), _f64([-3.0, -0.1, 0.2, 13.0, 15.0]))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_norms_half_precision_in_float32(dtype):
    m = nn.BatchNorm1d(2).to(dtype)
    x = torch.tensor([[1.0, 0.5], [1.0, -0.5], [1.0, 2.0]], dtype=dtype, requires_grad=True)
    y = m(x)
    (y * torch.arange(6.0).reshape(3, 2).to(dtype)).sum().backward()
    assert y.dtype == dtype and m.running_var.dtype == dtype
    assert bool(x.grad.isfinite().all())  # rsqrt(eps)**3 overflows float16
    g = nn.GroupNorm(2, 4).to(dtype)
    assert g(torch.ones(1, 4, 3, dtype=dtype)).dtype == dtype
    z = torch.zeros(3, dtype=dtype, requires_grad=True)
    F.rms_norm(z, (3,)).sum().backward()  # eps=None: float32's epsilon, as in PyTorch
    assert z.grad.tolist() == [2896.0] * 3
