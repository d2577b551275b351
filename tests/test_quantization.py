"""Quantized tensors (torch.quantize_per_tensor/per_channel) and dynamic quantization
(torch.ao.quantization.quantize_dynamic), against numpy computations of PyTorch's CPU
arithmetic: quantize is round_half_even(fma(x, float32(1/scale), zero_point)) clamped,
dequantize is (q - zero_point) * float32(scale); a dynamic Linear quantizes its input to quint8
from the input's min/max over half the range (0..127, fbgemm's reduce_range), multiplies the
integers exactly and returns fma(float32(acc), input_scale * weight_scale, bias). Expected
reprs are PyTorch 2.13's output, written out."""

from __future__ import annotations

import copy
import io
import pickle

import numpy as np
import pytest

import torch

_RANGES = {torch.qint8: (-128, 127, np.int8), torch.quint8: (0, 255, np.uint8),
           torch.qint32: (-(2 ** 31), 2 ** 31 - 1, np.int32)}


def np_quantize(x: np.ndarray, scale: np.ndarray | float, zero_point: np.ndarray | int,
                dtype: torch.dtype) -> np.ndarray:
    """PyTorch's CPU quantization: a fused multiply-add of float32 factors, emulated exactly in
    float64 then rounded once to float32."""
    low, high, np_type = _RANGES[dtype]
    inverse = (np.float32(1.0) / np.asarray(scale, dtype=np.float32)).astype(np.float64)
    fused = (x.astype(np.float64) * inverse + np.asarray(zero_point, np.float64))
    return np.clip(np.rint(fused.astype(np.float32)), low, high).astype(np_type)


def np_dequantize(q: np.ndarray, scale: np.ndarray | float,
                  zero_point: np.ndarray | int) -> np.ndarray:
    return ((q.astype(np.int64) - zero_point).astype(np.float32)
            * np.asarray(scale, dtype=np.float32))


@pytest.mark.parametrize("dtype,scale,zero_point", [
    (torch.qint8, 0.037, 0), (torch.quint8, 0.05, 128), (torch.quint8, 0.013, 3),
    (torch.qint32, 0.001, -7)])
def test_quantize_per_tensor_matches_numpy(dtype, scale, zero_point):
    x = torch.randn(5, 13, generator=torch.Generator().manual_seed(1)) * 3
    q = torch.quantize_per_tensor(x, scale, zero_point, dtype)
    expected = np_quantize(x.numpy(), scale, zero_point, dtype)
    assert q.dtype is dtype and q.is_quantized and q.shape == (5, 13)
    assert q.qscheme() is torch.per_tensor_affine
    assert q.q_scale() == scale and q.q_zero_point() == zero_point
    ints = q.int_repr()
    assert ints.dtype is {torch.qint8: torch.int8, torch.quint8: torch.uint8,
                          torch.qint32: torch.int32}[dtype]
    np.testing.assert_array_equal(ints.numpy(), expected)
    np.testing.assert_array_equal(q.dequantize().numpy(),
                                  np_dequantize(expected, scale, zero_point))
    np.testing.assert_array_equal(torch.dequantize(q).numpy(), q.dequantize().numpy())


def test_quantize_clamps_and_rounds_half_to_even():
    x = torch.tensor([-100.0, 0.25, 0.35, 0.75, 100.0])
    q = torch.quantize_per_tensor(x, 0.5, 10, torch.quint8)
    # 0.25/0.5 = 0.5 -> 0 (even), 0.75/0.5 = 1.5 -> 2; the ends clamp to 0 and 255
    assert q.int_repr().tolist() == [0, 10, 11, 12, 210]
    assert torch.quantize_per_tensor(x, 0.5, 0, torch.qint8).int_repr().tolist() == [
        -128, 0, 1, 2, 127]


def test_quantize_per_channel_matches_numpy():
    x = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(2))
    scales = torch.tensor([0.01, 0.02, 0.05, 0.1], dtype=torch.float64)
    zero_points = torch.tensor([0, 2, -3, 5])
    q = torch.quantize_per_channel(x, scales, zero_points, 1, torch.qint8)
    shape = (1, 4, 1)
    expected = np_quantize(x.numpy(), scales.numpy().reshape(shape),
                           zero_points.numpy().reshape(shape), torch.qint8)
    np.testing.assert_array_equal(q.int_repr().numpy(), expected)
    np.testing.assert_array_equal(
        q.dequantize().numpy(),
        np_dequantize(expected, scales.numpy().reshape(shape), zero_points.numpy().reshape(shape)))
    assert q.qscheme() is torch.per_channel_affine and q.q_per_channel_axis() == 1
    assert q.q_per_channel_scales().dtype is torch.float64
    assert q.q_per_channel_scales().tolist() == scales.tolist()
    assert q.q_per_channel_zero_points().tolist() == [0, 2, -3, 5]
    with pytest.raises(RuntimeError, match="kPerTensorAffine"):
        q.q_scale()


def test_reprs_are_pytorchs():
    q = torch.quantize_per_tensor(torch.tensor([-1.0, 0.0, 1.0, 2.0]), 0.1, 10, torch.quint8)
    assert repr(q) == (
        "tensor([-1.,  0.,  1.,  2.], size=(4,), dtype=torch.quint8,\n"
        "       quantization_scheme=torch.per_tensor_affine, scale=0.1, zero_point=10)")
    qc = torch.quantize_per_channel(torch.tensor([[-0.7, 1.6, -0.8], [1.6, -1.6, -0.6]]),
                                    torch.tensor([0.1, 0.2]), torch.tensor([0, 1]), 0,
                                    torch.qint8)
    assert repr(qc) == (
        "tensor([[-0.7000,  1.6000, -0.8000],\n"
        "        [ 1.6000, -1.6000, -0.6000]], size=(2, 3), dtype=torch.qint8,\n"
        "       quantization_scheme=torch.per_channel_affine,\n"
        "       scale=tensor([0.1000, 0.2000], dtype=torch.float64),\n"
        "       zero_point=tensor([0, 1]), axis=0)")
    # a tensor scale is read as float32
    q1 = torch.quantize_per_tensor(torch.tensor([1.5]), torch.tensor(0.1), torch.tensor(3),
                                   torch.quint8)
    assert repr(q1) == (
        "tensor([1.5000], size=(1,), dtype=torch.quint8,\n"
        "       quantization_scheme=torch.per_tensor_affine, scale=0.10000000149011612,\n"
        "       zero_point=3)")
    assert repr(torch.per_channel_symmetric) == "torch.per_channel_symmetric"


def _same(a, b) -> bool:
    return torch.equal(a, b) and type(a) is type(b)


def test_save_load_pickle_and_deepcopy_round_trip():
    q = torch.quantize_per_tensor(torch.randn(4, 3), 0.02, 5, torch.quint8)
    qc = torch.quantize_per_channel(torch.randn(2, 3), torch.tensor([0.1, 0.2]),
                                    torch.tensor([1, -1]), 0, torch.qint8)
    buffer = io.BytesIO()
    torch.save({"q": q, "qc": qc, "scheme": torch.per_tensor_affine}, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)  # weights_only: the restricted loader allows them
    assert _same(loaded["q"], q) and _same(loaded["qc"], qc)
    assert loaded["q"].q_scale() == 0.02 and loaded["qc"].q_per_channel_axis() == 0
    assert loaded["scheme"] is torch.per_tensor_affine
    assert _same(pickle.loads(pickle.dumps(qc)), qc)
    assert _same(copy.deepcopy(q), q)
    assert not torch.equal(q, torch.quantize_per_tensor(torch.randn(4, 3), 0.03, 5,
                                                        torch.quint8))


def test_views_keep_parameters_and_arithmetic_is_refused():
    q = torch.quantize_per_tensor(torch.arange(6.0).reshape(2, 3), 0.5, 1, torch.qint8)
    assert q.t().int_repr().tolist() == [[1, 7], [3, 9], [5, 11]]
    assert q[1].q_zero_point() == 1 and q[1].dequantize().tolist() == [3.0, 4.0, 5.0]
    assert q.reshape(3, 2).shape == (3, 2) and q.detach().is_quantized
    with pytest.raises(NotImplementedError, match=r"aten::add\.Tensor.*QuantizedCPU"):
        q + 1
    with pytest.raises(RuntimeError, match="Quantize only works on Float Tensor"):
        torch.quantize_per_tensor(torch.tensor([1, 2]), 0.1, 0, torch.quint8)
