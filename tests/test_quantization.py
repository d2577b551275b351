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
import torch.nn as nn

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


def test_files_use_pytorchs_form_and_pytorchs_files_load():
    """tests/data/serialization/quantized.pt was written by PyTorch 2.13:
    ``torch.save({"qt": torch.quantize_per_tensor(torch.tensor([-1.0, 0.0, 1.0, 2.0]), 0.1, 10,
    torch.quint8), "qc": torch.quantize_per_channel(torch.tensor([[-0.7, 1.6, -0.8], [1.6, -1.6,
    -0.6]]), torch.tensor([0.1, 0.2]), torch.tensor([0, 1]), 0, torch.qint8)}, path)``."""
    import pathlib
    import zipfile

    path = pathlib.Path(__file__).parent / "data" / "serialization" / "quantized.pt"
    loaded = torch.load(path)
    assert loaded["qt"].int_repr().tolist() == [0, 10, 20, 30]
    assert (loaded["qt"].q_scale(), loaded["qt"].q_zero_point()) == (0.1, 10)
    assert loaded["qc"].int_repr().tolist() == [[-7, 16, -8], [9, -7, -2]]
    assert loaded["qc"].q_per_channel_zero_points().tolist() == [0, 1]
    assert loaded["qc"].q_per_channel_scales().dtype is torch.float64
    # what Plait writes names PyTorch's rebuild function and storage types
    buffer = io.BytesIO()
    torch.save(loaded, buffer)
    with zipfile.ZipFile(buffer) as archive:
        pickled = archive.read(next(n for n in archive.namelist() if n.endswith("data.pkl")))
    assert b"_rebuild_qtensor" in pickled and b"QInt8Storage" in pickled
    assert b"QUInt8Storage" in pickled and b"per_channel_affine" in pickled
    # a quantizer Plait does not read is refused, not guessed at
    storage = torch._utils.TypedStorage(
        wrap_storage=torch.zeros(2, dtype=torch.int8).untyped_storage(), dtype=torch.qint8)
    with pytest.raises(pickle.UnpicklingError, match="unsupported quantizer"):
        torch._utils._rebuild_qtensor(storage, 0, (2,), (1,), (
            torch.per_channel_affine_float_qparams, torch.ones(2), torch.zeros(2), 0), False,
            None)


def test_views_keep_parameters_and_arithmetic_is_refused():
    q = torch.quantize_per_tensor(torch.arange(6.0).reshape(2, 3), 0.5, 1, torch.qint8)
    assert q.t().int_repr().tolist() == [[1, 7], [3, 9], [5, 11]]
    assert q[1].q_zero_point() == 1 and q[1].dequantize().tolist() == [3.0, 4.0, 5.0]
    assert q.reshape(3, 2).shape == (3, 2) and q.detach().is_quantized
    with pytest.raises(NotImplementedError, match=r"aten::add\.Tensor.*QuantizedCPU"):
        q + 1
    with pytest.raises(RuntimeError, match="Quantize only works on Float Tensor"):
        torch.quantize_per_tensor(torch.tensor([1, 2]), 0.1, 0, torch.quint8)
    # PyTorch's answers: same dtype and device is the tensor itself, another dtype is refused
    assert q.to(torch.qint8) is q and q.cpu() is q and q[1, 2].item() == 5.0
    with pytest.raises(RuntimeError, match="requires quantized dtype"):
        q.float()
    with pytest.raises(TypeError, match="unsupported ScalarType QInt8"):
        q.numpy()
    assert q.__dict__ == {}  # the quantizer's fields are slots, not user attributes


# -- dynamic quantization ---------------------------------------------------------------------

def np_choose_qparams(low: float, high: float, qmin: int, qmax: int) -> tuple[float, int]:
    """PyTorch's choice for dynamic activations: the range widened to hold 0, a scale of at
    least float32(6.1e-5) (a smaller one is raised to it, the range widened in proportion), the
    zero point from the end that represents its bound with less error."""
    low, high = min(low, 0.0), max(high, 0.0)
    scale = (high - low) / (qmax - qmin) or 0.1
    smallest = float(np.float32(6.1e-5))
    if scale < smallest:
        low, high = low * smallest / scale, high * smallest / scale
        scale = smallest
    from_low, from_high = qmin - low / scale, qmax - high / scale
    initial = from_low if abs(qmin) - abs(low / scale) < abs(qmax) - abs(high / scale) \
        else from_high
    return scale, int(np.clip(np.rint(initial), qmin, qmax))


def np_dynamic_linear(x: np.ndarray, w_int: np.ndarray, w_scale: np.ndarray,
                      bias: np.ndarray) -> np.ndarray:
    """fbgemm's dynamic linear: quint8 input over 0..127, exact integer products,
    fma(float32(acc), x_scale * w_scale, bias) in float32."""
    x_scale, x_zp = np_choose_qparams(float(x.min()), float(x.max()), 0, 127)
    qx = np.clip(np_quantize(x, x_scale, x_zp, torch.quint8), 0, 127).astype(np.int64)
    acc = (qx - x_zp) @ w_int.astype(np.int64).T
    multiplier = np.float32(x_scale) * np.asarray(w_scale, dtype=np.float32)
    fused = acc.astype(np.float32).astype(np.float64) * multiplier.astype(np.float64) + bias
    return fused.astype(np.float32)


def _linear(weight: list[list[float]], bias: list[float]) -> nn.Linear:
    layer = nn.Linear(len(weight[0]), len(weight))
    with torch.no_grad():
        layer.weight.copy_(torch.tensor(weight))
        layer.bias.copy_(torch.tensor(bias))
    return layer


def test_quantize_dynamic_linear_agrees_with_pytorch_and_numpy():
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    model = nn.Sequential(_linear([[0.5, -0.25, 0.125], [-1.0, 0.75, 0.3]], [0.1, -0.2]))
    x = torch.tensor([[1.0, 2.0, -0.5], [0.3, -1.2, 2.5]])
    # PyTorch 2.13's outputs and weights for these numbers, written out
    per_tensor = quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
    assert per_tensor[0].weight().int_repr().tolist() == [[64, -32, 16], [-127, 96, 38]]
    assert per_tensor[0].weight().q_scale() == 0.007843137718737125  # float32(1 / 127.5)
    assert per_tensor(x).tolist() == [[0.030535738915205002, 0.17931143939495087],
                                      [0.8604508638381958, -0.6428346633911133]]
    per_channel = quantize_dynamic(model, {nn.Linear: per_channel_dynamic_qconfig})
    assert per_channel[0].weight().q_per_channel_scales().tolist() == [
        0.003921568859368563, 0.007843137718737125]
    assert per_channel(x).tolist() == [[0.026651224121451378, 0.17931143939495087],
                                       [0.8593083620071411, -0.6428346633911133]]
    # an input range below 255 * 6.1e-5 gets the smallest scale
    assert per_tensor(x * 1e-3).tolist() == [[0.09992345422506332, -0.199601948261261],
                                             [0.1007731482386589, -0.2004770040512085]]
    tiny = torch.quantize_per_tensor_dynamic(torch.tensor([-0.001, 0.0005, 0.002]),
                                             torch.quint8, False)
    assert (tiny.q_scale(), tiny.q_zero_point()) == (6.0999998822808266e-05, 85)
    half = torch.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.float16)
    assert half(x).tolist() == [[0.03750000149011612, 0.14997558295726776],
                                [0.8625000715255737, -0.6498779654502869]]
    assert model[0].weight.dtype is torch.float32 and not hasattr(model[0], "qconfig")


@pytest.mark.parametrize("per_channel,input_scale", [(False, 2.0), (True, 2.0), (False, 1e-4)])
def test_dynamic_linear_matches_numpy_reference(per_channel, input_scale):
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    generator = torch.Generator().manual_seed(3)
    model = nn.Sequential(nn.Linear(9, 6), nn.ReLU(), nn.Linear(6, 4))
    spec = {nn.Linear: per_channel_dynamic_qconfig} if per_channel else {nn.Linear}
    quantized = quantize_dynamic(model, spec)
    assert not quantized.training and type(quantized[1]) is nn.ReLU
    x = (torch.randn(2, 5, 9, generator=generator) + 0.25) * input_scale
    hidden = x.numpy()
    for layer, float_layer in ((quantized[0], model[0]), (quantized[2], model[2])):
        w = float_layer.weight.detach().numpy()
        bound = np.maximum(np.abs(w).max(axis=1 if per_channel else None), 0)
        w_scale = np.maximum(bound.astype(np.float32) / np.float32(127.5),
                             np.finfo(np.float32).eps)
        w_int = np_quantize(w, w_scale[:, None] if per_channel else w_scale, 0, torch.qint8)
        np.testing.assert_array_equal(layer.weight().int_repr().numpy(), w_int)
        hidden = np_dynamic_linear(hidden.reshape(-1, w.shape[1]), w_int, w_scale,
                                   float_layer.bias.detach().numpy())
        if layer is quantized[0]:
            hidden = np.maximum(hidden, 0)
    out = quantized(x)
    assert out.shape == (2, 5, 4) and out.grad_fn is None
    np.testing.assert_array_equal(out.reshape(-1, 4).numpy(), hidden)
    # and within a quantization step or so of the float model
    torch.testing.assert_close(out, model(x).detach(), atol=0.05 * input_scale + 0.01, rtol=0)


def test_dynamic_linear_repr_and_state_dict_round_trip():
    from torch.ao.quantization import quantize_dynamic

    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    quantized = quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
    assert repr(quantized) == (
        "Sequential(\n"
        "  (0): DynamicQuantizedLinear(in_features=4, out_features=3, dtype=torch.qint8, "
        "qscheme=torch.per_tensor_affine)\n"
        "  (1): ReLU()\n"
        "  (2): DynamicQuantizedLinear(in_features=3, out_features=2, dtype=torch.qint8, "
        "qscheme=torch.per_tensor_affine)\n)")
    assert repr(quantize_dynamic(model, dtype=torch.float16)[2]) == (
        "DynamicQuantizedLinear(in_features=3, out_features=2, dtype=torch.float16)")
    state = quantized.state_dict()
    assert list(state) == ["0.scale", "0.zero_point", "0._packed_params.dtype",
                           "0._packed_params._packed_params", "2.scale", "2.zero_point",
                           "2._packed_params.dtype", "2._packed_params._packed_params"]
    assert state["0._packed_params.dtype"] is torch.qint8
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    fresh = quantize_dynamic(nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)))
    fresh.load_state_dict(torch.load(buffer))
    assert torch.equal(fresh[0].weight(), quantized[0].weight())
    x = torch.randn(3, 4)
    assert torch.equal(fresh(x), quantized(x))


def test_observers_compute_pytorchs_parameters():
    from torch.ao.quantization import MinMaxObserver, PerChannelMinMaxObserver

    affine = MinMaxObserver()
    affine(torch.tensor([-1.0, 3.0]))
    scale, zero_point = affine.calculate_qparams()
    # scale (3 - -1) / 255, zero point 0 - round(-1 / scale) = 64
    assert scale.tolist() == [np.float32(4.0) / np.float32(255.0)] and zero_point.tolist() == [64]
    assert repr(affine) == "MinMaxObserver(min_val=-1.0, max_val=3.0)"
    assert (MinMaxObserver(reduce_range=True).quant_min,
            MinMaxObserver(reduce_range=True).quant_max) == (0, 127)
    channels = PerChannelMinMaxObserver(ch_axis=0, dtype=torch.qint8,
                                        qscheme=torch.per_channel_symmetric)
    channels(torch.tensor([[-1.0, 3.0], [0.5, 0.25]]))
    scales, zero_points = channels.calculate_qparams()
    assert scales.tolist() == [np.float32(3.0) / np.float32(127.5),
                               np.float32(0.5) / np.float32(127.5)]
    assert zero_points.tolist() == [0, 0]
    assert repr(torch.ao.quantization.default_dynamic_qconfig) == (
        "QConfig(activation=functools.partial(<class 'torch.ao.quantization.observer."
        "PlaceholderObserver'>, dtype=torch.quint8, quant_min=0, quant_max=255, "
        "is_dynamic=True){}, weight=functools.partial(<class 'torch.ao.quantization.observer."
        "MinMaxObserver'>, dtype=torch.qint8, qscheme=torch.per_tensor_symmetric){})")


def _np_sigmoid(v: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-v.astype(np.float64)))).astype(np.float32)


def test_dynamic_lstm_matches_numpy_reference_and_round_trips():
    from torch.ao.quantization import quantize_dynamic

    torch.manual_seed(4)
    lstm = nn.LSTM(3, 4)
    quantized = quantize_dynamic(nn.Sequential(lstm), {nn.LSTM}, dtype=torch.qint8)
    assert repr(quantized[0]) == "DynamicQuantizedLSTM(3, 4)"
    x = torch.randn(5, 2, 3) * 2
    out, (h, c) = quantized(x)

    def w_int_and_scale(name: str) -> tuple[np.ndarray, np.ndarray]:
        w = getattr(lstm, name).detach().numpy()
        scale = np.maximum(np.float32(np.abs(w).max()) / np.float32(127.5),
                           np.finfo(np.float32).eps)
        return np_quantize(w, scale, 0, torch.qint8), scale

    w_ih, s_ih = w_int_and_scale("weight_ih_l0")
    w_hh, s_hh = w_int_and_scale("weight_hh_l0")
    b_ih, b_hh = lstm.bias_ih_l0.detach().numpy(), lstm.bias_hh_l0.detach().numpy()
    # PyTorch's CPU kernel applies the input weights to the whole sequence at once
    gi = np_dynamic_linear(x.numpy().reshape(10, 3), w_ih, s_ih, b_ih).reshape(5, 2, 16)
    hx = np.zeros((2, 4), np.float32)
    cx = np.zeros((2, 4), np.float32)
    for t in range(5):
        gates = gi[t] + np_dynamic_linear(hx, w_hh, s_hh, b_hh)
        i, f, g, o = np.split(gates, 4, axis=1)
        cx = _np_sigmoid(f) * cx + _np_sigmoid(i) * np.tanh(g)
        hx = _np_sigmoid(o) * np.tanh(cx)
        np.testing.assert_allclose(out[t].numpy(), hx, atol=2e-6, rtol=0)
    np.testing.assert_allclose(c[0].numpy(), cx, atol=2e-6, rtol=0)
    assert torch.equal(h[0], out[-1])

    state = quantized.state_dict()
    assert list(state) == ["0._all_weight_values.0.param"]
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    fresh = quantize_dynamic(nn.Sequential(nn.LSTM(3, 4)), {nn.LSTM})
    fresh.load_state_dict(torch.load(buffer))
    assert torch.equal(fresh(x)[0], out)


def test_dynamic_gru_bidirectional_batch_first_shapes_and_float16():
    from torch.ao.quantization import quantize_dynamic

    gru = nn.GRU(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    quantized = quantize_dynamic(nn.Sequential(gru), {nn.GRU})[0]
    assert repr(quantized) == ("DynamicQuantizedGRU(3, 4, num_layers=2, batch_first=True, "
                               "bidirectional=True)")
    x = torch.randn(2, 6, 3)
    out, h = quantized(x)
    assert out.shape == (2, 6, 8) and h.shape == (4, 2, 4)
    # the last layer's forward state is its output at the last step, the backward one at the first
    assert torch.equal(h[2], out[:, -1, :4]) and torch.equal(h[3], out[:, 0, 4:])
    expected, _ = gru(x)
    torch.testing.assert_close(out, expected.detach(), atol=0.05, rtol=0)
    half = quantize_dynamic(nn.Sequential(gru), {nn.GRU}, dtype=torch.float16)[0]
    torch.testing.assert_close(half(x)[0], expected.detach(), atol=2e-3, rtol=0)


def test_dynamic_cells_repr_state_dict_and_arithmetic():
    from torch.ao.quantization import quantize_dynamic

    torch.manual_seed(5)
    model = nn.Sequential(nn.LSTMCell(3, 4), nn.GRUCell(3, 4),
                          nn.RNNCell(3, 4, nonlinearity="relu"))
    quantized = quantize_dynamic(model)  # the default spec converts the cells too
    assert repr(quantized) == ("Sequential(\n  (0): DynamicQuantizedLSTMCell(3, 4)\n"
                               "  (1): DynamicQuantizedGRUCell(3, 4)\n"
                               "  (2): DynamicQuantizedRNNCell(3, 4, nonlinearity=relu)\n)")
    assert list(quantized.state_dict()) == [
        f"{i}._packed_weight_{part}" for i in range(3) for part in ("ih", "hh")]
    x, h = torch.randn(2, 3), torch.randn(2, 4)
    # relu is exact: the RNN cell is the sum of two dynamic linears, clamped at zero
    cell = model[2]
    expected = np.zeros((2, 4), np.float32)
    for weight, bias, inp in ((cell.weight_ih, cell.bias_ih, x), (cell.weight_hh, cell.bias_hh, h)):
        w = weight.detach().numpy()
        scale = np.float32(np.abs(w).max()) / np.float32(127.5)
        expected = expected + np_dynamic_linear(inp.numpy(), np_quantize(w, scale, 0, torch.qint8),
                                                scale, bias.detach().numpy())
    np.testing.assert_array_equal(quantized[2](x, h).numpy(), np.maximum(expected, 0))
    h1, c1 = quantized[0](x, (h, h))
    expected_h, expected_c = model[0](x, (h, h))
    torch.testing.assert_close(h1, expected_h.detach(), atol=0.05, rtol=0)
    torch.testing.assert_close(c1, expected_c.detach(), atol=0.05, rtol=0)
    torch.testing.assert_close(quantized[1](x), model[1](x).detach(), atol=0.05, rtol=0)


def test_older_module_path_reaches_the_dynamic_layers():
    # torch.nn.quantized.dynamic is PyTorch's older spelling of torch.ao.nn.quantized.dynamic
    import torch.ao.nn.quantized.dynamic as current
    import torch.nn.quantized.dynamic as older

    model = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(torch.nn.Linear(4, 3)),
                                                   {torch.nn.Linear}, dtype=torch.qint8)
    assert older.Linear is current.Linear
    assert isinstance(model[0], older.Linear)
