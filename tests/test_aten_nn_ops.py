"""The nn layout operators that are aten operators of their own in PyTorch: ``F.pad`` in
constant mode reaches ``aten::constant_pad_nd``, ``F.pixel_shuffle`` / ``F.pixel_unshuffle``
reach ``aten::pixel_shuffle`` / ``aten::pixel_unshuffle``, backward passes included.

Values are compared with numpy (np.pad, reshape/transpose written out here); gradients with
gradcheck in float64; operator names as PyTorch's dispatch mode reports them.
"""

from __future__ import annotations

import numpy as np
import pytest
from dispatch_recording import CallNames

import torch
import torch.nn.functional as F


def _names(fn) -> list[str]:
    mode = CallNames()
    with mode:
        fn()
    return mode.names


def _np_constant_pad(a: np.ndarray, pad: list[int], value: float) -> np.ndarray:
    """numpy's constant pad, with negative widths cropping first (constant_pad_nd's rule)."""
    widths = [(0, 0)] * a.ndim
    crops = [slice(None)] * a.ndim
    for k in range(len(pad) // 2):
        dim = a.ndim - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        crops[dim] = slice(max(-before, 0), a.shape[dim] - max(-after, 0))
        widths[dim] = (max(before, 0), max(after, 0))
    return np.pad(a[tuple(crops)], widths, constant_values=value)


def _np_pixel_shuffle(a: np.ndarray, r: int) -> np.ndarray:
    """out[..., c, h*r + i, w*r + j] = a[..., c*r*r + i*r + j, h, w], written as loops."""
    *lead, c, h, w = a.shape
    out = np.empty((*lead, c // (r * r), h * r, w * r), a.dtype)
    for ch in range(c // (r * r)):
        for i in range(r):
            for j in range(r):
                out[..., ch, i::r, j::r] = a[..., ch * r * r + i * r + j, :, :]
    return out


PADS = [(1, 1), (2, 0, 1, 3), (-1, 2), (1, -2, -1, 0), (0, 0), (1, 1, 1, 1, 1, 1)]


@pytest.mark.parametrize("pad", PADS)
def test_constant_pad_matches_numpy_and_is_one_operator(pad) -> None:
    x = torch.randn(2, 4, 5)
    got = F.pad(x, pad, value=-1.5)
    np.testing.assert_array_equal(got.numpy(), _np_constant_pad(x.numpy(), list(pad), -1.5))
    assert _names(lambda: F.pad(x, pad, value=-1.5)) == ["aten.constant_pad_nd.default"]


def test_constant_pad_copies_integers_and_refuses_negative_sizes() -> None:
    x = torch.arange(6).view(2, 3)
    got = F.pad(x, (0, 0))
    assert got.dtype == torch.int64 and got.tolist() == x.tolist()
    got[0, 0] = 100  # a zero pad still copies, as constant_pad_nd does
    assert x[0, 0].item() == 0
    np.testing.assert_array_equal(F.pad(x, (2, -1), value=7).numpy(),
                                  _np_constant_pad(x.numpy(), [2, -1], 7))
    with pytest.raises(RuntimeError, match="resulted in a negative output size"):
        torch.ops.aten.constant_pad_nd.default(x, [-2, -2])
    with pytest.raises(RuntimeError, match="Length of pad must be even"):
        torch.ops.aten.constant_pad_nd.default(x, [1])


def test_constant_pad_shapes_on_meta() -> None:
    x = torch.empty(3, 4, 5, device="meta")
    got = F.pad(x, (1, 2, -1, 3))
    assert got.device.type == "meta" and tuple(got.shape) == (3, 6, 8)


def test_constant_pad_gradients_and_backward_operator() -> None:
    x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    pad = (1, -2, 2, 1)
    assert torch.autograd.gradcheck(lambda t: F.pad(t, pad, value=3.0), (x,))
    assert torch.autograd.gradgradcheck(lambda t: F.pad(t, pad, value=3.0) ** 2, (x,))
    y = F.pad(x, pad)
    grad = torch.randn(y.shape, dtype=torch.float64)
    names = _names(lambda: y.backward(grad))
    assert "aten.constant_pad_nd.default" in names  # the gradient is the cropped gradient
    expected = np.zeros((2, 3, 4))
    expected[:, :, 0:2] = grad.numpy()[:, 2:5, 1:3]  # last dim: +1 before, -2 after
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@pytest.mark.parametrize("shape,r", [((1, 4, 2, 3), 2), ((2, 3, 18, 2, 2), 3), ((9, 1, 1), 3)])
def test_pixel_shuffle_matches_numpy_and_unshuffle_inverts_it(shape, r) -> None:
    x = torch.randn(*shape)
    got = F.pixel_shuffle(x, r)
    np.testing.assert_array_equal(got.numpy(), _np_pixel_shuffle(x.numpy(), r))
    np.testing.assert_array_equal(F.pixel_unshuffle(got, r).numpy(), x.numpy())
    assert _names(lambda: F.pixel_shuffle(x, r)) == ["aten.pixel_shuffle.default"]
    assert _names(lambda: F.pixel_unshuffle(got, r)) == ["aten.pixel_unshuffle.default"]


def test_pixel_shuffle_gradients_meta_and_errors() -> None:
    x = torch.randn(2, 8, 3, 2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: F.pixel_shuffle(t, 2), (x,))
    assert torch.autograd.gradgradcheck(lambda t: F.pixel_unshuffle(t, 1) ** 2, (x,))
    y = F.pixel_shuffle(x, 2)
    assert "aten.pixel_unshuffle.default" in _names(lambda: y.sum().backward())
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 8, 3, 2)))
    assert tuple(F.pixel_shuffle(torch.empty(1, 8, 3, 2, device="meta"), 2).shape) == (1, 2, 6, 4)
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(torch.randn(1, 3, 2, 2), 2)
    with pytest.raises(RuntimeError, match="expects height to be divisible"):
        F.pixel_unshuffle(torch.randn(1, 1, 3, 2), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        F.pixel_shuffle(torch.randn(4, 4), 2)


def test_onnx_exports_constant_pad_and_shuffles() -> None:
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    import io

    def fn(x):
        up = F.pixel_shuffle(x, 2)
        return (torch.ops.aten.constant_pad_nd.default(x, [1, -1, 2, 0], 0.5), up,
                F.pixel_unshuffle(up, 2), F.pad(x, (1, 2), value=-3.0))

    x = torch.randn(2, 8, 3, 4)
    buffer = io.BytesIO()
    torch.onnx.export(fn, (x,), buffer, input_names=["x"])
    onnx.checker.check_model(onnx.load_from_string(buffer.getvalue()))
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    for got, want in zip(session.run(None, {"x": x.numpy()}), fn(x)):
        np.testing.assert_allclose(got, want.numpy(), rtol=0, atol=0)


def test_vmap_batches_pad_and_shuffles_per_sample() -> None:
    from torch.func import vmap

    x = torch.randn(2, 3, 4, 2, 2)
    # batch dim 1: each sample x[:, i] handled alone, then stacked
    got = vmap(lambda t: F.pad(t, (1, -1, 2, 0), value=0.25), in_dims=1)(x)
    want = np.stack([_np_constant_pad(x[:, i].numpy(), [1, -1, 2, 0], 0.25) for i in range(3)])
    np.testing.assert_array_equal(got.numpy(), want)
    got = vmap(lambda t: F.pixel_shuffle(t, 2), in_dims=1)(x)
    want = np.stack([_np_pixel_shuffle(x[:, i].numpy(), 2) for i in range(3)])
    np.testing.assert_array_equal(got.numpy(), want)


def _np_nearest(a: np.ndarray, out_h: int, out_w: int, scales) -> np.ndarray:
    """PyTorch's nearest rule: output i reads floor(i * step), step 1/scale or size/out."""
    h, w = a.shape[-2:]
    step_h = 1.0 / scales[0] if scales else h / out_h
    step_w = 1.0 / scales[1] if scales else w / out_w
    rows = [min(int(np.floor(i * step_h)), h - 1) for i in range(out_h)]
    cols = [min(int(np.floor(j * step_w)), w - 1) for j in range(out_w)]
    return a[..., rows, :][..., cols]


NEAREST = [({"scale_factor": 2}, (8, 6), (2.0, 2.0)), ({"size": (5, 7)}, (5, 7), None),
           ({"scale_factor": (1.5, 0.5)}, (6, 1), (1.5, 0.5)), ({"size": 3}, (3, 3), None)]


@pytest.mark.parametrize("kwargs,out,scales", NEAREST)
def test_upsample_nearest2d_matches_numpy_and_is_one_operator(kwargs, out, scales) -> None:
    x = torch.randn(2, 3, 4, 3)
    got = F.interpolate(x, **kwargs)
    np.testing.assert_array_equal(got.numpy(), _np_nearest(x.numpy(), *out, scales))
    assert _names(lambda: F.interpolate(x, **kwargs)) == ["aten.upsample_nearest2d.default"]
    meta = F.interpolate(torch.empty(2, 3, 4, 3, device="meta"), **kwargs)
    assert tuple(meta.shape) == (2, 3, *out)


def test_upsample_nearest2d_gradients_and_backward_operator() -> None:
    x = torch.randn(1, 2, 3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: F.interpolate(t, size=(5, 3)), (x,))
    assert torch.autograd.gradgradcheck(lambda t: F.interpolate(t, scale_factor=2) ** 2, (x,))
    y = F.interpolate(x, scale_factor=(2, 0.5))
    grad = torch.randn(y.shape, dtype=torch.float64)
    assert _names(lambda: y.backward(grad)) == ["aten.upsample_nearest2d_backward.default"]
    expected = np.zeros((1, 2, 3, 4))  # rows read 0,0,1,1,2,2; columns read 0 and 2
    g = grad.numpy()
    for i in range(6):
        for j in range(2):
            expected[:, :, i // 2, 2 * j] += g[:, :, i, j]
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_onnx_exports_upsample_nearest2d() -> None:
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    import io

    def fn(x):
        return F.interpolate(x, scale_factor=2), F.interpolate(x, size=(5, 7))

    x = torch.randn(2, 3, 4, 3)
    buffer = io.BytesIO()
    torch.onnx.export(fn, (x,), buffer, input_names=["x"])
    onnx.checker.check_model(onnx.load_from_string(buffer.getvalue()))
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    for got, want in zip(session.run(None, {"x": x.numpy()}), fn(x)):
        np.testing.assert_array_equal(got, want.numpy())


def test_vmap_folds_samples_into_upsample_nearest2d() -> None:
    from torch.func import vmap

    x = torch.randn(3, 2, 2, 4, 3)
    got = vmap(lambda t: F.interpolate(t, size=(5, 2)), in_dims=2)(x)
    want = np.stack([_np_nearest(x[:, :, i].numpy(), 5, 2, None) for i in range(2)])
    np.testing.assert_array_equal(got.numpy(), want)


# -- batch, instance and group normalisation --------------------------------------------------


def _np_batch_norm(a: np.ndarray, w: np.ndarray | None, b: np.ndarray | None,
                   eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-channel (dim 1) normalisation with the biased batch variance, in float64."""
    dims = (0, *range(2, a.ndim))
    shape = [1, a.shape[1]] + [1] * (a.ndim - 2)
    mean = a.mean(dims)
    invstd = 1 / np.sqrt(a.var(dims) + eps)
    out = (a - mean.reshape(shape)) * invstd.reshape(shape)
    if w is not None:
        out = out * w.reshape(shape)
    if b is not None:
        out = out + b.reshape(shape)
    return out, mean, invstd


def test_batch_norm_training_is_one_operator_and_updates_running_stats() -> None:
    x, w, b = torch.randn(4, 3, 5, 2), torch.randn(3), torch.randn(3)
    mean0, var0 = torch.randn(3), torch.rand(3) + 0.5
    rm, rv = mean0.clone(), var0.clone()
    out = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.2, eps=1e-3)
    a = x.numpy().astype(np.float64)
    want, mean, _ = _np_batch_norm(a, w.numpy(), b.numpy(), 1e-3)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
    count = 4 * 5 * 2
    unbiased = a.var((0, 2, 3)) * count / (count - 1)
    np.testing.assert_allclose(rm.numpy(), 0.8 * mean0.numpy() + 0.2 * mean, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), 0.8 * var0.numpy() + 0.2 * unbiased, rtol=1e-5)
    assert _names(lambda: F.batch_norm(x, rm, rv, w, b, training=True)) == [
        "aten.native_batch_norm.default"]
    assert _names(lambda: F.batch_norm(x, None, None, training=True)) == [
        "aten.native_batch_norm.default"]


def test_batch_norm_evaluation_uses_running_stats() -> None:
    x, w = torch.randn(6, 4), torch.randn(4)
    rm, rv = torch.randn(4), torch.rand(4) + 0.5
    before = rm.clone(), rv.clone()
    out = F.batch_norm(x, rm, rv, w, None, training=False, eps=1e-5)
    want = (x.numpy() - rm.numpy()) / np.sqrt(rv.numpy() + 1e-5) * w.numpy()
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    assert torch.equal(rm, before[0]) and torch.equal(rv, before[1])
    assert _names(lambda: F.batch_norm(x, rm, rv, training=False)) == [
        "aten.native_batch_norm.default"]
    with pytest.raises(RuntimeError, match="running_mean and running_var must be defined"):
        F.batch_norm(x, None, None, training=False)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.batch_norm(x[:1], None, None, training=True)


def test_native_batch_norm_outputs() -> None:
    x = torch.randn(3, 2, 4, dtype=torch.float64)
    out, mean, invstd = torch.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)
    want, want_mean, want_invstd = _np_batch_norm(x.numpy(), None, None, 1e-5)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-10)
    np.testing.assert_allclose(mean.numpy(), want_mean, rtol=1e-10)
    np.testing.assert_allclose(invstd.numpy(), want_invstd, rtol=1e-10)
    out, mean, invstd = torch.native_batch_norm(x, None, None, torch.zeros(2), torch.ones(2),
                                                False, 0.1, 1e-5)
    assert mean.shape == (0,) and invstd.shape == (0,)
    half = torch.native_batch_norm(x.half(), None, None, None, None, True, 0.1, 1e-5)
    assert [t.dtype for t in half] == [torch.float16] * 3
    np.testing.assert_allclose(half[0].float().numpy(), want, atol=1e-2)
    # mixed precision: a bfloat16 input with float32 parameters saves float32 statistics
    mixed = torch.native_batch_norm(x.bfloat16(), torch.ones(2), None, None, None, True, 0.1,
                                    1e-5)
    assert [t.dtype for t in mixed] == [torch.bfloat16, torch.float32, torch.float32]
    np.testing.assert_allclose(mixed[1].numpy(), want_mean, atol=2e-2)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradients(training) -> None:
    x = torch.randn(4, 3, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, dtype=torch.float64, requires_grad=True)
    rm, rv = torch.randn(3, dtype=torch.float64), torch.rand(3, dtype=torch.float64) + 0.5

    def fn(x, w, b):
        return F.batch_norm(x, rm.clone(), rv.clone(), w, b, training=training)

    assert torch.autograd.gradcheck(fn, (x, w, b))
    assert torch.autograd.gradgradcheck(fn, (x, w, b))
    y = fn(x, w, b)
    grad = torch.randn(y.shape, dtype=torch.float64)
    names = _names(lambda: y.backward(grad))
    assert [n for n in names if n != "aten.detach.default"] == [
        "aten.native_batch_norm_backward.default"], names


def test_batch_norm_without_affine_gradients() -> None:
    x = torch.randn(5, 2, 3, dtype=torch.float64, requires_grad=True)
    fn = lambda t: F.batch_norm(t, None, None, training=True) ** 2  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x,))
    assert torch.autograd.gradgradcheck(fn, (x,))
    # d/dx of sum(out) is zero: the normalised values of a channel sum to zero
    x.grad = None
    F.batch_norm(x, None, None, training=True).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 0, atol=1e-12)


def test_instance_norm_is_a_batch_norm_of_the_folded_view() -> None:
    x, w, b = torch.randn(2, 3, 7), torch.randn(3), torch.randn(3)
    rm, rv = torch.zeros(3), torch.ones(3)
    out = F.instance_norm(x, rm, rv, w, b, use_input_stats=True, momentum=0.1)
    a = x.numpy().astype(np.float64)
    mean, var = a.mean(-1, keepdims=True), a.var(-1, keepdims=True)
    want = (a - mean) / np.sqrt(var + 1e-5) * w.numpy()[:, None] + b.numpy()[:, None]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rm.numpy(), 0.1 * mean[..., 0].mean(0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * (var[..., 0] * 7 / 6).mean(0),
                               rtol=1e-5)
    names = _names(lambda: F.instance_norm(x))
    assert names.count("aten.native_batch_norm.default") == 1
    assert not {"aten.mean.dim", "aten.var.correction"} & set(names)
    xd = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    wd = torch.randn(3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t, w: F.instance_norm(t, weight=w), (xd, wd))
    # evaluation: the running statistics, unchanged
    out = F.instance_norm(x, rm, rv, use_input_stats=False)
    np.testing.assert_allclose(out.numpy(), (a - rm.numpy()[:, None])
                               / np.sqrt(rv.numpy()[:, None] + 1e-5), rtol=1e-5, atol=1e-5)


def test_group_norm_is_one_operator() -> None:
    x, w, b = torch.randn(2, 6, 3, 2), torch.randn(6), torch.randn(6)
    out = F.group_norm(x, 3, w, b, eps=1e-4)
    a = x.numpy().astype(np.float64).reshape(2, 3, -1)
    normed = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-4)
    want = normed.reshape(2, 6, 3, 2) * w.numpy()[:, None, None] + b.numpy()[:, None, None]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
    assert _names(lambda: F.group_norm(x, 3, w, b)) == ["aten.native_group_norm.default"]
    _out, mean, rstd = torch.ops.aten.native_group_norm.default(x, w, b, 2, 6, 6, 3, 1e-4)
    assert mean.shape == rstd.shape == (2, 3)
    np.testing.assert_allclose(mean.numpy(), a.mean(-1), rtol=1e-5, atol=1e-6)
    assert F.group_norm(x.bfloat16(), 3).dtype == torch.bfloat16


def test_group_norm_gradients() -> None:
    x = torch.randn(2, 4, 3, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)
    fn = lambda x, w, b: F.group_norm(x, 2, w, b)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x, w, b))
    assert torch.autograd.gradgradcheck(fn, (x, w, b))
    y = fn(x, w, b)
    grad = torch.randn(y.shape, dtype=torch.float64)
    names = _names(lambda: y.backward(grad))
    assert [n for n in names if n != "aten.detach.default"] == [
        "aten.native_group_norm_backward.default"], names


def test_native_group_norm_statistics_are_differentiable() -> None:
    # PyTorch makes native_group_norm's mean and rstd differentiable outputs (not batch or
    # layer norm's): gradients through all three outputs against central differences
    x = torch.randn(2, 6, 2, dtype=torch.float64, requires_grad=True)
    w = torch.randn(6, dtype=torch.float64, requires_grad=True)
    b = torch.randn(6, dtype=torch.float64, requires_grad=True)
    fn = lambda x, w, b: torch.ops.aten.native_group_norm(x, w, b, 2, 6, 2, 3, 1e-5)  # noqa: E731
    out, mean, rstd = fn(x, w, b)
    assert out.requires_grad and mean.requires_grad and rstd.requires_grad
    assert torch.autograd.gradcheck(fn, (x, w, b))
    assert torch.autograd.gradgradcheck(fn, (x, w, b))
    # the mean alone: d mean[n, g] / dx = 1 / 4 over the group's 2 channels x 2 positions
    (dx,) = torch.autograd.grad(mean.sum(), x, retain_graph=True)
    np.testing.assert_allclose(dx.numpy(), np.full((2, 6, 2), 0.25), rtol=1e-12)
    # rstd alone: -rstd^3 (x - mean) / 4, written out in numpy
    (dx,) = torch.autograd.grad(rstd.sum(), x)
    a = x.detach().numpy().reshape(2, 3, 4)
    r = 1 / np.sqrt(a.var(-1, keepdims=True) + 1e-5)
    want = -r ** 3 * (a - a.mean(-1, keepdims=True)) / 4
    np.testing.assert_allclose(dx.numpy(), want.reshape(2, 6, 2), rtol=1e-10, atol=1e-12)


def test_batch_norm_on_meta_tensors() -> None:
    x = torch.empty(4, 3, 5, device="meta")
    rm, rv = torch.zeros(3, device="meta"), torch.ones(3, device="meta")
    out, mean, invstd = torch.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
    assert out.shape == (4, 3, 5) and mean.shape == invstd.shape == (3,)
    assert out.device.type == "meta"
    assert F.group_norm(x, 3).shape == (4, 3, 5)


def test_export_makes_batch_norm_training_functional() -> None:
    from torch.export import export

    model = torch.nn.BatchNorm1d(3)
    ep = export(model, (torch.randn(4, 3),))
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert "aten._native_batch_norm_legit_functional.default" in targets
    assert "aten.native_batch_norm.default" not in targets


@pytest.mark.parametrize("make", [lambda: torch.nn.GroupNorm(2, 4),
                                  lambda: torch.nn.InstanceNorm1d(4, affine=True),
                                  lambda: torch.nn.BatchNorm1d(4).eval()])
def test_onnx_exports_normalisations(make) -> None:
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    import io

    model, x = make(), torch.randn(3, 4, 5)
    if isinstance(model, torch.nn.BatchNorm1d):
        model.running_mean.normal_()
        model.running_var.uniform_(0.5, 2)
    buffer = io.BytesIO()
    torch.onnx.export(model, (x,), buffer, input_names=["x"])
    onnx.checker.check_model(onnx.load_from_string(buffer.getvalue()))
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": x.numpy()})[0]
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-5, atol=1e-5)


# -- pooling ----------------------------------------------------------------------------------


def _np_max_pool2d(a: np.ndarray, k: int, s: int, p: int, d: int, ceil: bool):
    """Loops over windows (padding never picked): the first maximum and its flat index."""
    h, w = a.shape[-2:]

    def size(n: int) -> int:
        num = n + 2 * p - d * (k - 1) - 1
        out = (-(-num // s) if ceil else num // s) + 1
        return out - 1 if ceil and (out - 1) * s >= n + p else out

    oh, ow = size(h), size(w)
    values = np.empty(a.shape[:-2] + (oh, ow), a.dtype)
    index = np.empty(a.shape[:-2] + (oh, ow), np.int64)
    for lead in np.ndindex(*a.shape[:-2]):
        for i in range(oh):
            for j in range(ow):
                best, where = -np.inf, -1
                for u in range(k):
                    for v in range(k):
                        r, c = i * s - p + u * d, j * s - p + v * d
                        if 0 <= r < h and 0 <= c < w and a[lead + (r, c)] > best:
                            best, where = a[lead + (r, c)], r * w + c
                values[lead + (i, j)], index[lead + (i, j)] = best, where
    return values, index


def _np_avg_pool2d(a: np.ndarray, k: int, s: int, p: int, include_pad: bool) -> np.ndarray:
    h, w = a.shape[-2:]
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.empty(a.shape[:-2] + (oh, ow), a.dtype)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * s - p, j * s - p
            block = a[..., max(r0, 0):r0 + k, max(c0, 0):c0 + k]
            count = k * k if include_pad else block.shape[-1] * block.shape[-2]
            out[..., i, j] = block.sum((-2, -1)) / count
    return out


POOLS = [(2, 2, 0, 1, False), (3, 2, 1, 1, True), (3, 1, 1, 2, False), (2, 3, 1, 1, True)]


@pytest.mark.parametrize("k,s,p,d,ceil", POOLS)
def test_max_pool2d_matches_numpy_and_is_one_operator(k, s, p, d, ceil) -> None:
    x = torch.randn(2, 3, 7, 8)
    values, index = F.max_pool2d(x, k, s, p, d, ceil, return_indices=True)
    want, want_index = _np_max_pool2d(x.numpy(), k, s, p, d, ceil)
    np.testing.assert_array_equal(values.numpy(), want)
    np.testing.assert_array_equal(index.numpy(), want_index)
    assert _names(lambda: F.max_pool2d(x, k, s, p, d, ceil)) == [
        "aten.max_pool2d_with_indices.default"]
    unbatched = F.max_pool2d(x[0], k, s, p, d, ceil)
    np.testing.assert_array_equal(unbatched.numpy(), want[0])


def test_max_pool_picks_nan_and_integers() -> None:
    x = torch.tensor([[[[1.0, float("nan"), 3.0, float("nan")]]]])
    values, index = F.max_pool2d(x, (1, 4), return_indices=True)
    assert torch.isnan(values).all() and index.tolist() == [[[[3]]]]  # the last NaN
    ints = torch.tensor([[[[-5, -7], [-9, -6]]]])
    assert F.max_pool2d(ints, 2, padding=1).tolist() == [[[[-5, -7], [-9, -6]]]]


def test_max_pool1d_is_the_2d_operator_on_a_view() -> None:
    x = torch.randn(2, 3, 9)
    assert _names(lambda: F.max_pool1d(x, 3, 2)) == [
        "aten.unsqueeze.default", "aten.max_pool2d_with_indices.default",
        "aten.squeeze.dim", "aten.squeeze.dim"]
    values, index = F.max_pool1d(x, 3, 2, 1, return_indices=True)
    a = np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1)), constant_values=-np.inf)
    windows = np.stack([a[..., 2 * j:2 * j + 3] for j in range(5)], -2)
    np.testing.assert_array_equal(values.numpy(), windows.max(-1))
    np.testing.assert_array_equal(index.numpy(), windows.argmax(-1) + 2 * np.arange(5) - 1)


@pytest.mark.parametrize("include_pad", [True, False])
def test_avg_pool2d_matches_numpy_and_is_one_operator(include_pad) -> None:
    x = torch.randn(2, 3, 7, 6, dtype=torch.float64)
    got = F.avg_pool2d(x, 3, 2, 1, count_include_pad=include_pad)
    np.testing.assert_allclose(got.numpy(), _np_avg_pool2d(x.numpy(), 3, 2, 1, include_pad),
                               rtol=1e-12)
    assert _names(lambda: F.avg_pool2d(x, 2)) == ["aten.avg_pool2d.default"]
    rows = x[0]
    assert _names(lambda: F.avg_pool1d(rows, 2)) == [
        "aten.unsqueeze.default", "aten.avg_pool2d.default", "aten.squeeze.dim"]
    np.testing.assert_allclose(F.avg_pool2d(x, 2, divisor_override=3).numpy(),
                               _np_avg_pool2d(x.numpy(), 2, 2, 0, True) * 4 / 3, rtol=1e-12)


def test_adaptive_max_pool2d_matches_numpy() -> None:
    x = torch.randn(2, 3, 7, 5)
    values, index = F.adaptive_max_pool2d(x, (3, 4), return_indices=True)
    a = x.numpy()
    for i in range(3):
        r0, r1 = (i * 7) // 3, -(-((i + 1) * 7) // 3)
        for j in range(4):
            c0, c1 = (j * 5) // 4, -(-((j + 1) * 5) // 4)
            block = a[..., r0:r1, c0:c1].reshape(2, 3, -1)
            np.testing.assert_array_equal(values[..., i, j].numpy(), block.max(-1))
            arg = block.argmax(-1)
            width = c1 - c0
            np.testing.assert_array_equal(index[..., i, j].numpy(),
                                          (r0 + arg // width) * 5 + c0 + arg % width)
    assert _names(lambda: F.adaptive_max_pool2d(x, 2)) == ["aten.adaptive_max_pool2d.default"]
    assert _names(lambda: F.adaptive_avg_pool2d(x, 1)) == ["aten.mean.dim"]


def test_pooling_gradients_and_backward_operators() -> None:
    x = torch.randn(1, 2, 6, 5, dtype=torch.float64, requires_grad=True)
    cases = [(lambda t: F.max_pool2d(t, 3, 2, 1, ceil_mode=True),
              "aten.max_pool2d_with_indices_backward.default"),
             (lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True, count_include_pad=False),
              "aten.avg_pool2d_backward.default"),
             (lambda t: F.adaptive_max_pool2d(t, (4, 3)),
              "aten.adaptive_max_pool2d_backward.default")]
    for fn, backward in cases:
        assert torch.autograd.gradcheck(fn, (x,))
        assert torch.autograd.gradgradcheck(fn, (x,))
        y = fn(x)
        grad = torch.randn(y.shape, dtype=torch.float64)
        names = _names(lambda: torch.autograd.grad(y, x, grad))  # noqa: B023
        assert names == [backward]


def test_max_pool_backward_adds_into_the_picked_positions() -> None:
    x = torch.tensor([[[[1.0, 5.0, 2.0], [0.0, 3.0, 4.0]]]], requires_grad=True)
    y = F.max_pool2d(x, 2, 1)  # both windows pick the 5
    y.backward(torch.tensor([[[[2.0, 3.0]]]]))
    assert x.grad.tolist() == [[[[0.0, 5.0, 0.0], [0.0, 0.0, 0.0]]]]


def test_pooling_under_vmap_and_on_meta() -> None:
    from torch.func import vmap

    x = torch.randn(3, 2, 2, 6, 6)
    got = vmap(lambda t: F.max_pool2d(t, 2))(x)
    np.testing.assert_array_equal(got.numpy(), F.max_pool2d(x.reshape(6, 2, 6, 6), 2)
                                  .reshape(3, 2, 2, 3, 3).numpy())
    got = vmap(lambda t: F.avg_pool2d(t, 3, 1, 1))(x[:, 0])
    np.testing.assert_allclose(got.numpy(), F.avg_pool2d(x[:, 0], 3, 1, 1).numpy(), rtol=1e-6)
    meta = torch.empty(2, 3, 9, 9, device="meta")
    values, index = F.max_pool2d(meta, 3, 2, return_indices=True)
    assert values.shape == index.shape == (2, 3, 4, 4) and index.dtype == torch.int64
    assert F.avg_pool2d(meta, 2).shape == (2, 3, 4, 4)
    assert F.adaptive_max_pool2d(meta, 5).shape == (2, 3, 5, 5)


def test_onnx_exports_pooling() -> None:
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    import io

    def fn(x):
        values, index = F.adaptive_max_pool2d(x, (3, 2), return_indices=True)
        return (values, index, F.max_pool2d(x, 3, 2, 1), F.avg_pool1d(x[0], 2),
                F.max_pool1d(x[0], 2))

    x = torch.randn(2, 3, 7, 6)
    buffer = io.BytesIO()
    torch.onnx.export(fn, (x,), buffer, input_names=["x"])
    onnx.checker.check_model(onnx.load_from_string(buffer.getvalue()))
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    for got, want in zip(session.run(None, {"x": x.numpy()}), fn(x)):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-6)


# -- bilinear upsampling ----------------------------------------------------------------------


def _np_bilinear(a: np.ndarray, out_h: int, out_w: int, align: bool,
                 scales: tuple[float | None, float | None] = (None, None)) -> np.ndarray:
    """Bilinear resampling written out: rows then columns, PyTorch's source coordinates."""
    def taps(size: int, out: int, scale: float | None) -> list[tuple[int, int, float]]:
        if align:
            step = (size - 1) / (out - 1) if out > 1 else 0.0
            src = [i * step for i in range(out)]
        else:
            step = 1 / scale if scale else size / out
            src = [max((i + 0.5) * step - 0.5, 0.0) for i in range(out)]
        return [(min(int(s), size - 1), min(int(s) + 1, size - 1), s - min(int(s), size - 1))
                for s in src]

    h, w = a.shape[-2:]
    rows = np.stack([(1 - lam) * a[..., i0, :] + lam * a[..., i1, :]
                     for i0, i1, lam in taps(h, out_h, scales[0])], -2)
    return np.stack([(1 - lam) * rows[..., j0] + lam * rows[..., j1]
                     for j0, j1, lam in taps(w, out_w, scales[1])], -1)


@pytest.mark.parametrize("kwargs,out,align,scales", [
    (dict(scale_factor=2), (8, 10), False, (2.0, 2.0)),
    (dict(size=(3, 7)), (3, 7), False, (None, None)),
    (dict(size=(6, 3), align_corners=True), (6, 3), True, (None, None)),
    (dict(scale_factor=(1.5, 0.5)), (6, 2), False, (1.5, 0.5))])
def test_bilinear_matches_numpy_and_is_one_operator(kwargs, out, align, scales) -> None:
    x = torch.randn(2, 3, 4, 5, dtype=torch.float64)
    got = F.interpolate(x, mode="bilinear", **kwargs)
    np.testing.assert_allclose(got.numpy(), _np_bilinear(x.numpy(), *out, align, scales),
                               rtol=1e-12, atol=1e-12)
    assert _names(lambda: F.interpolate(x, mode="bilinear", **kwargs)) == [
        "aten.upsample_bilinear2d.default"]


def test_bilinear_gradients_and_backward_operator() -> None:
    x = torch.randn(1, 2, 3, 4, dtype=torch.float64, requires_grad=True)
    for kwargs in (dict(size=(5, 3)), dict(scale_factor=2, align_corners=True)):
        fn = lambda t: F.interpolate(t, mode="bilinear", **kwargs)  # noqa: B023, E731
        assert torch.autograd.gradcheck(fn, (x,))
        assert torch.autograd.gradgradcheck(lambda t: fn(t) ** 2, (x,))  # noqa: B023
    y = F.interpolate(x, scale_factor=2, mode="bilinear")
    grad = torch.randn(y.shape, dtype=torch.float64)
    assert _names(lambda: torch.autograd.grad(y, x, grad, retain_graph=True)) == [
        "aten.upsample_bilinear2d_backward.default"]
    # the adjoint: <up(x), g> == <x, up^T(g)>
    (gx,) = torch.autograd.grad(y, x, grad)
    np.testing.assert_allclose(float((y * grad).sum()), float((x * gx).sum()), rtol=1e-12)


def test_bilinear_vmap_meta_and_onnx() -> None:
    from torch.func import vmap

    x = torch.randn(3, 2, 2, 4, 3)
    got = vmap(lambda t: F.interpolate(t, size=(5, 2), mode="bilinear"), in_dims=2)(x)
    want = np.stack([_np_bilinear(x[:, :, i].numpy().astype(np.float64), 5, 2, False)
                     for i in range(2)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    meta = torch.empty(2, 3, 4, 4, device="meta")
    assert F.interpolate(meta, scale_factor=2, mode="bilinear").shape == (2, 3, 8, 8)
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    import io

    def fn(t):
        return (F.interpolate(t, scale_factor=2, mode="bilinear"),
                F.interpolate(t, size=(7, 2), mode="bilinear"),
                F.interpolate(t, size=(6, 5), mode="bilinear", align_corners=True))

    t = torch.randn(2, 3, 4, 3)
    buffer = io.BytesIO()
    torch.onnx.export(fn, (t,), buffer, input_names=["x"])
    onnx.checker.check_model(onnx.load_from_string(buffer.getvalue()))
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    for got, want in zip(session.run(None, {"x": t.numpy()}), fn(t)):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)


# -- im2col / col2im (F.unfold / F.fold) ------------------------------------------------------


def _np_im2col(a: np.ndarray, k: tuple[int, int], d: tuple[int, int], p: tuple[int, int],
               s: tuple[int, int]) -> np.ndarray:
    """Columns written out: entry (c*kH*kW + u*kW + v, block i*oW + j)."""
    padded = np.pad(a, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    n, c, h, w = padded.shape
    oh, ow = (h - d[0] * (k[0] - 1) - 1) // s[0] + 1, (w - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.empty((n, c * k[0] * k[1], oh * ow), a.dtype)
    for ch in range(c):
        for u in range(k[0]):
            for v in range(k[1]):
                for i in range(oh):
                    for j in range(ow):
                        out[:, (ch * k[0] + u) * k[1] + v, i * ow + j] = \
                            padded[:, ch, i * s[0] + u * d[0], j * s[1] + v * d[1]]
    return out


BLOCKS = [((2, 2), (1, 1), (0, 0), (1, 1)), ((3, 2), (2, 1), (1, 0), (2, 1)),
          ((2, 3), (1, 2), (1, 1), (1, 2))]


@pytest.mark.parametrize("k,d,p,s", BLOCKS)
def test_unfold_and_fold_are_im2col_and_col2im(k, d, p, s) -> None:
    x = torch.randn(2, 3, 7, 8, dtype=torch.float64)
    cols = F.unfold(x, k, d, p, s)
    want = _np_im2col(x.numpy(), k, d, p, s)
    np.testing.assert_array_equal(cols.numpy(), want)
    assert _names(lambda: F.unfold(x, k, d, p, s)) == ["aten.im2col.default"]
    y = torch.randn(cols.shape, dtype=torch.float64)
    folded = F.fold(y, (7, 8), k, d, p, s)
    assert _names(lambda: F.fold(y, (7, 8), k, d, p, s)) == ["aten.col2im.default"]
    # fold is unfold's adjoint: <unfold(x), y> == <x, fold(y)>
    np.testing.assert_allclose(float((cols * y).sum()), float((x * folded).sum()), rtol=1e-12)
    np.testing.assert_array_equal(F.unfold(x[0], k, d, p, s).numpy(), want[0])


def test_im2col_col2im_gradients_vmap_meta() -> None:
    from torch.func import vmap

    x = torch.randn(1, 2, 5, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: F.unfold(t, (2, 3), padding=1), (x,))
    assert torch.autograd.gradgradcheck(lambda t: F.unfold(t, 2, stride=2) ** 2, (x,))
    cols = torch.randn(1, 8, 6, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: F.fold(t, (3, 4), 2), (cols,))
    y = F.unfold(x, 2)
    grad = torch.randn(y.shape, dtype=torch.float64)
    assert _names(lambda: torch.autograd.grad(y, x, grad)) == ["aten.col2im.default"]
    batch = torch.randn(3, 2, 2, 5, 4)
    got = vmap(lambda t: F.unfold(t, 2))(batch)
    np.testing.assert_array_equal(got.numpy(), np.stack([F.unfold(b, 2).numpy()
                                                         for b in batch]))
    got = vmap(lambda t: F.fold(t, (3, 4), 2))(torch.randn(3, 8, 6))
    assert got.shape == (3, 2, 3, 4)
    meta = torch.empty(2, 3, 6, 6, device="meta")
    assert F.unfold(meta, 3).shape == (2, 27, 16)
    assert F.fold(torch.empty(2, 27, 16, device="meta"), 6, 3).shape == (2, 3, 6, 6)


def test_onnx_exports_unfold_and_fold() -> None:
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    import io

    def fn(t):
        cols = F.unfold(t, (3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
        return cols, F.fold(cols, (7, 6), (3, 2), dilation=(1, 2), padding=1, stride=(2, 1))

    t = torch.randn(2, 3, 7, 6)
    buffer = io.BytesIO()
    torch.onnx.export(fn, (t,), buffer, input_names=["x"])
    onnx.checker.check_model(onnx.load_from_string(buffer.getvalue()))
    session = ort.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    for got, want in zip(session.run(None, {"x": t.numpy()}), fn(t)):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)


def test_functional_batch_norm_form_returns_the_running_stats() -> None:
    x = torch.randn(4, 3, 5, dtype=torch.float64, requires_grad=True)
    rm, rv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    functional = torch.ops.aten._native_batch_norm_legit_functional.default
    _out, mean, _invstd, new_mean, new_var = functional(x, None, None, rm, rv, True, 0.1,
                                                        1e-5)
    assert torch.equal(rm, torch.zeros(3, dtype=torch.float64))  # not written
    a = x.detach().numpy()
    np.testing.assert_allclose(new_mean.numpy(), 0.1 * a.mean((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(new_var.numpy(), 0.9 + 0.1 * a.var((0, 2), ddof=1), rtol=1e-12)
    assert not new_mean.requires_grad and not mean.requires_grad
    assert torch.autograd.gradcheck(
        lambda t: functional(t, None, None, rm, rv, True, 0.1, 1e-5)[0], (x,))


def test_batch_norm_under_vmap_takes_no_fallback() -> None:
    import warnings

    from torch.func import grad, vmap

    x = torch.randn(3, 4, 2, 5, dtype=torch.float64)
    w, b = torch.randn(2, dtype=torch.float64), torch.randn(2, dtype=torch.float64)
    weights = torch.randn(3, 2, dtype=torch.float64)

    def loss(weight, t):
        out = F.batch_norm(t, None, None, weight, b, training=True)
        return (out ** 2 * torch.arange(5.0, dtype=torch.float64)).sum()

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the loop fallback warns
        got = vmap(lambda t, ww: F.batch_norm(t, None, None, ww, b, training=True))(x, weights)
        grads = vmap(grad(loss), in_dims=(None, 0))(w, x)
    for i in range(3):  # each sample's own batch statistics and weight
        a = x[i].numpy()
        want, _, _ = _np_batch_norm(a, weights[i].numpy(), b.numpy(), 1e-5)
        np.testing.assert_allclose(got[i].numpy(), want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(grads[i].detach().numpy(),
                                   grad(loss)(w, x[i]).detach().numpy(), rtol=1e-10)


def test_adaptive_avg_pool2d_is_one_operator() -> None:
    x = torch.randn(2, 3, 7, 5, dtype=torch.float64)
    got = F.adaptive_avg_pool2d(x, (3, 2))
    a = x.numpy()
    for i, (r0, r1) in enumerate([(0, 3), (2, 5), (4, 7)]):
        for j, (c0, c1) in enumerate([(0, 3), (2, 5)]):
            np.testing.assert_allclose(got[..., i, j].numpy(),
                                       a[..., r0:r1, c0:c1].mean((-2, -1)), rtol=1e-12)
    assert _names(lambda: F.adaptive_avg_pool2d(x, (3, 2))) == [
        "aten._adaptive_avg_pool2d.default"]
    rows = x[0]
    assert _names(lambda: F.adaptive_avg_pool1d(rows, 3)) == [
        "aten.unsqueeze.default", "aten._adaptive_avg_pool2d.default", "aten.squeeze.dim"]
    xg = x.clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda t: F.adaptive_avg_pool2d(t, (3, 4)), (xg,))
    assert torch.autograd.gradgradcheck(lambda t: F.adaptive_avg_pool2d(t, (2, 3)) ** 2, (xg,))
    y = F.adaptive_avg_pool2d(xg, (3, 2))
    grad = torch.randn(y.shape, dtype=torch.float64)
    assert _names(lambda: torch.autograd.grad(y, xg, grad)) == [
        "aten._adaptive_avg_pool2d_backward.default"]
    assert F.adaptive_avg_pool2d(torch.empty(2, 3, 7, 5, device="meta"), 4).shape == \
        (2, 3, 4, 4)


def test_top_level_native_group_norm_and_constant_pad_nd() -> None:
    x = torch.randn(2, 4, 3, dtype=torch.float64)
    out, mean, rstd = torch.native_group_norm(x, None, None, 2, 4, 3, 2, 1e-5)
    a = x.numpy().reshape(2, 2, 6)
    np.testing.assert_allclose(mean.numpy(), a.mean(-1), rtol=1e-12)
    np.testing.assert_allclose(rstd.numpy(), 1 / np.sqrt(a.var(-1) + 1e-5), rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), F.group_norm(x, 2).numpy(), rtol=1e-12)
    padded = torch.constant_pad_nd(x, [1, -1], 2.5)
    np.testing.assert_array_equal(padded.numpy(), _np_constant_pad(x.numpy(), [1, -1], 2.5))
