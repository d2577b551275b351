"""Scaled dot-product attention: ``aten::scaled_dot_product_attention`` against numpy, PyTorch's
semantics (masks, causal, scale, grouped query attention, dropout, errors), gradients by finite
differences, and the fused CPU kernels against core's composite (the reference)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numgrad import check_grad, check_gradgrad

import torch
from torch._core import dispatch as _dispatch
from torch._fused import attention as _attention

torch.ones(1) + 1  # the first op registers the backend's kernels (fused ones included)

SDPA = torch.ops.aten.scaled_dot_product_attention
FLASH = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
FLASH_BACKWARD = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward
MATH = torch.ops.aten._scaled_dot_product_attention_math


def fused_registered() -> bool:
    op = _dispatch.get("aten::_scaled_dot_product_flash_attention_for_cpu")
    return op is not None and op.has_kernel("CPU")


# -- numpy reference ----------------------------------------------------------------------


def np_sdpa(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None,
            is_causal: bool = False, scale: float | None = None,
            enable_gqa: bool = False) -> np.ndarray:
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    if enable_gqa and q.ndim >= 3 and q.shape[-3] != k.shape[-3]:
        groups = q.shape[-3] // k.shape[-3]
        k, v = np.repeat(k, groups, axis=-3), np.repeat(v, groups, axis=-3)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    L, S = s.shape[-2:]
    if is_causal:
        s = np.where(np.tril(np.ones((L, S), dtype=bool)), s, -np.inf)
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    m = s.max(-1, keepdims=True) if S else np.zeros(s.shape[:-1] + (1,))
    m = np.where(np.isneginf(m), 0.0, m)
    e = np.exp(s - m)
    total = e.sum(-1, keepdims=True)
    p = e / np.where(total == 0, 1.0, total)
    return np.matmul(p, v)


def rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


def t(a: np.ndarray, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    return torch.tensor(np.ascontiguousarray(a), dtype=dtype)


TOL = {torch.float32: dict(atol=2e-5, rtol=2e-5), torch.float64: dict(atol=1e-12, rtol=1e-12),
       torch.float16: dict(atol=2e-2, rtol=2e-2), torch.bfloat16: dict(atol=5e-2, rtol=5e-2)}


# -- public API vs numpy ------------------------------------------------------------------


CASES = [
    # (q shape, k shape, v shape, kwargs, mask shape or None, mask kind)
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), {}, None, None),
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), {"is_causal": True}, None, None),
    ((2, 3, 7, 4), (2, 3, 5, 4), (2, 3, 5, 6), {"is_causal": True}, None, None),
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), {"scale": 0.3}, None, None),
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), {}, (5, 7), "bool"),
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), {}, (2, 1, 5, 7), "float"),
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), {}, (7,), "float"),
    ((3, 5, 4), (3, 7, 4), (3, 7, 6), {}, None, None),
    ((5, 4), (7, 4), (7, 6), {"is_causal": True}, None, None),
    ((2, 4, 5, 4), (2, 2, 7, 4), (2, 2, 7, 6), {"enable_gqa": True}, None, None),
    ((2, 4, 5, 4), (1, 2, 7, 4), (1, 2, 7, 6), {"enable_gqa": True, "is_causal": True}, None,
     None),
    ((1, 3, 5, 4), (2, 1, 7, 4), (2, 1, 7, 6), {}, None, None),  # broadcast batch
    ((2, 1, 1, 4), (2, 1, 300, 4), (2, 1, 300, 3), {}, None, None),
    ((1, 1, 300, 8), (1, 1, 300, 8), (1, 1, 300, 8), {"is_causal": True}, None, None),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[3]}-{c[5]}")
def test_matches_numpy(case, dtype):
    qs, ks, vs, kwargs, mask_shape, mask_kind = case
    rng = np.random.default_rng(0)
    q, k, v = rand(rng, *qs), rand(rng, *ks), rand(rng, *vs)
    mask = None
    if mask_kind == "bool":
        mask = rng.random(mask_shape) > 0.3
    elif mask_kind == "float":
        mask = rng.standard_normal(mask_shape)
    want = np_sdpa(q, k, v, mask, **kwargs)
    tmask = None if mask is None else (torch.tensor(mask) if mask.dtype == bool
                                       else t(mask, dtype))
    got = SDPA(t(q, dtype), t(k, dtype), t(v, dtype), tmask, **kwargs)
    assert got.dtype == dtype
    torch.testing.assert_close(got, t(want, dtype), **TOL[dtype])
    F = pytest.importorskip("torch.nn.functional")
    if hasattr(F, "scaled_dot_product_attention"):
        again = F.scaled_dot_product_attention(t(q, dtype), t(k, dtype), t(v, dtype), tmask,
                                               **kwargs)
        torch.testing.assert_close(again, got, atol=0, rtol=0)


def test_fully_masked_rows_give_zeros():
    rng = np.random.default_rng(1)
    q, k, v = rand(rng, 1, 2, 4, 3), rand(rng, 1, 2, 5, 3), rand(rng, 1, 2, 5, 2)
    mask = np.ones((4, 5), dtype=bool)
    mask[1] = False
    out = SDPA(t(q), t(k), t(v), torch.tensor(mask))
    assert out[..., 1, :].abs().max().item() == 0.0
    torch.testing.assert_close(out, t(np_sdpa(q, k, v, mask)))
    # a float mask of -inf everywhere, and a fused call: zeros and a logsumexp of -inf
    neg = torch.full((4, 5), float("-inf"), dtype=torch.float64)
    out, lse = FLASH(t(q), t(k), t(v), attn_mask=neg)
    assert out.abs().max().item() == 0.0
    assert bool(torch.isneginf(lse).all())


def test_no_keys_gives_zeros():
    q = torch.randn(2, 3, 4, 5, dtype=torch.float64)
    out = SDPA(q, torch.zeros(2, 3, 0, 5, dtype=torch.float64),
               torch.zeros(2, 3, 0, 6, dtype=torch.float64))
    assert tuple(out.shape) == (2, 3, 4, 6)
    assert out.abs().sum().item() == 0.0


def test_zero_size_batch_and_rows():
    out = SDPA(torch.randn(0, 2, 3, 4), torch.randn(0, 2, 5, 4), torch.randn(0, 2, 5, 6))
    assert tuple(out.shape) == (0, 2, 3, 6)
    out = SDPA(torch.randn(2, 0, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6))
    assert tuple(out.shape) == (2, 0, 6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_types_compute_in_float32(dtype):
    rng = np.random.default_rng(2)
    q, k, v = rand(rng, 2, 2, 6, 8), rand(rng, 2, 2, 9, 8), rand(rng, 2, 2, 9, 4)
    got = SDPA(t(q, dtype), t(k, dtype), t(v, dtype), is_causal=True)
    assert got.dtype == dtype
    qr, kr, vr = (t(a, dtype).double().numpy() for a in (q, k, v))
    torch.testing.assert_close(got.double(), t(np_sdpa(qr, kr, vr, is_causal=True)),
                               **TOL[dtype])


# -- errors -------------------------------------------------------------------------------


def _qkv(*shapes, dtype=torch.float32):
    return [torch.randn(*s, dtype=dtype) for s in shapes]


@pytest.mark.parametrize("call, match", [
    (lambda: SDPA(*_qkv((4,), (4,), (4,))), "at least 2 dimensional"),
    (lambda: SDPA(torch.randn(2, 3), torch.randn(2, 3, dtype=torch.float64),
                  torch.randn(2, 3)), "same dtype"),
    (lambda: SDPA(*_qkv((2, 3), (2, 3), (2, 3)), torch.zeros(2, 2, dtype=torch.int64)),
     "attn_mask dtype"),
    (lambda: SDPA(*_qkv((2, 3), (2, 3), (2, 3)), torch.zeros(2, 2, dtype=torch.float64)),
     "attn_mask dtype"),
    (lambda: SDPA(*_qkv((2, 3), (2, 3), (2, 3)), torch.zeros(2, 2, requires_grad=True),
                  is_causal=True), "should not be set when is_causal"),
    (lambda: SDPA(*_qkv((2, 3), (2, 3), (2, 3)), dropout_p=1.5), "between 0 and 1"),
    (lambda: SDPA(*_qkv((1, 3, 2, 4), (1, 2, 2, 4), (1, 2, 2, 4)), enable_gqa=True),
     "must divide"),
    (lambda: SDPA(*_qkv((2, 3), (2, 4), (2, 3))), "embedding size"),
    (lambda: SDPA(*_qkv((2, 3), (2, 3), (5, 3))), "sequence length"),
    (lambda: SDPA(torch.ones(2, 3, dtype=torch.int64), torch.ones(2, 3, dtype=torch.int64),
                  torch.ones(2, 3, dtype=torch.int64)), "floating point"),
])
def test_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


def test_type_errors():
    with pytest.raises(TypeError, match="query"):
        SDPA([[1.0]], torch.ones(1, 1), torch.ones(1, 1))
    with pytest.raises(TypeError, match="attn_mask"):
        SDPA(torch.ones(1, 1), torch.ones(1, 1), torch.ones(1, 1), [[True]])


def test_heads_without_gqa_must_match():
    with pytest.raises(RuntimeError):
        SDPA(*_qkv((1, 4, 2, 3), (1, 2, 2, 3), (1, 2, 2, 3)))


# -- dropout ------------------------------------------------------------------------------


def test_dropout_is_seeded_and_scaled():
    q, k, v = _qkv((2, 2, 6, 4), (2, 2, 8, 4), (2, 2, 8, 3), dtype=torch.float64)
    torch.manual_seed(3)
    a = SDPA(q, k, v, dropout_p=0.4)
    torch.manual_seed(3)
    b = SDPA(q, k, v, dropout_p=0.4)
    torch.testing.assert_close(a, b, atol=0, rtol=0)
    assert (a - SDPA(q, k, v)).abs().max().item() > 1e-6
    # p = 1 drops everything
    assert SDPA(q, k, v, dropout_p=1.0).abs().sum().item() == 0.0


def test_math_op_with_explicit_dropout_mask():
    rng = np.random.default_rng(4)
    q, k, v = rand(rng, 2, 5, 3), rand(rng, 2, 6, 3), rand(rng, 2, 6, 4)
    keep = rng.random((2, 5, 6)) > 0.25
    out, attn = MATH(t(q), t(k), t(v), None, 0.25, False, torch.tensor(keep))
    s = np.matmul(q, np.swapaxes(k, -1, -2)) / math.sqrt(3)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    p = np.where(keep, p, 0.0) / 0.75
    torch.testing.assert_close(attn, t(p))
    torch.testing.assert_close(out, t(np.matmul(p, v)))


def test_dropout_mean_matches_no_dropout():
    torch.manual_seed(5)
    q, k, v = _qkv((1, 1, 4, 4), (1, 1, 6, 4), (1, 1, 6, 3), dtype=torch.float64)
    runs = torch.stack([SDPA(q, k, v, dropout_p=0.3) for _ in range(400)])
    torch.testing.assert_close(runs.mean(0), SDPA(q, k, v), atol=0.15, rtol=0.1)


# -- gradients ----------------------------------------------------------------------------


GRAD_CASES = [
    dict(),
    dict(is_causal=True),
    dict(scale=0.7),
    dict(enable_gqa=True),
]


@pytest.mark.parametrize("kwargs", GRAD_CASES, ids=str)
def test_gradients_by_finite_differences(kwargs):
    rng = np.random.default_rng(6)
    heads_kv = 1 if kwargs.get("enable_gqa") else 2
    q = t(rand(rng, 1, 2, 3, 2))
    k = t(rand(rng, 1, heads_kv, 4, 2))
    v = t(rand(rng, 1, heads_kv, 4, 3))
    check_grad(lambda a, b, c: SDPA(a, b, c, **kwargs), q, k, v)


def test_gradients_with_masks_and_broadcast_batch():
    rng = np.random.default_rng(7)
    q, k, v = t(rand(rng, 2, 1, 3, 2)), t(rand(rng, 1, 2, 4, 2)), t(rand(rng, 1, 2, 4, 3))
    keep = torch.tensor(rng.random((3, 4)) > 0.3)
    check_grad(lambda a, b, c: SDPA(a, b, c, keep), q, k, v)
    mask = t(rand(rng, 3, 4))
    # a float mask that needs a gradient goes through the math path
    check_grad(lambda a, b, c, m: SDPA(a, b, c, m), q, k, v, mask)


def test_gradient_of_logsumexp_output():
    rng = np.random.default_rng(8)
    q, k, v = t(rand(rng, 1, 3, 2)), t(rand(rng, 1, 4, 2)), t(rand(rng, 1, 4, 2))
    check_grad(lambda a, b, c: FLASH(a, b, c, is_causal=True)[1], q, k, v)


def test_second_derivatives():
    rng = np.random.default_rng(9)
    q, k, v = t(rand(rng, 1, 2, 2)), t(rand(rng, 1, 3, 2)), t(rand(rng, 1, 3, 2))
    check_gradgrad(lambda a, b, c: SDPA(a, b, c, is_causal=True), q, k, v)


def test_dropout_gradient_flows():
    q, k, v = (x.requires_grad_() for x in _qkv((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3)))
    SDPA(q, k, v, dropout_p=0.5).sum().backward()
    assert q.grad is not None and k.grad is not None and v.grad is not None
    assert v.grad.abs().sum().item() > 0


# -- fused kernel vs composite ------------------------------------------------------------


def _layouts(rng: np.random.Generator, shape: tuple[int, ...], layout: str,
             dtype: torch.dtype) -> torch.Tensor:
    a = rand(rng, *shape)
    if layout == "contiguous":
        return t(a, dtype)
    if layout == "colmajor":  # the last two dims transposed in memory
        return t(np.swapaxes(a, -1, -2), dtype).transpose(-1, -2)
    if layout == "strided":  # neither matrix stride is 1: the wrapper copies
        big = np.repeat(a, 2, axis=-1)
        return t(big, dtype)[..., ::2]
    raise AssertionError(layout)


FUSED_CASES = [
    # (q, k, v shapes, kwargs)
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), {}),
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), {"is_causal": True}),
    ((1, 2, 9, 4), (1, 2, 3, 4), (1, 2, 3, 5), {"is_causal": True}),  # L > S
    ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), {}),
    ((3, 1, 8), (3, 1, 8), (3, 1, 8), {"is_causal": True}),
    ((2, 1, 33, 16), (2, 1, 1100, 16), (2, 1, 1100, 7), {}),  # several row blocks
    ((1, 2, 300, 8), (1, 2, 300, 8), (1, 2, 300, 8), {"is_causal": True, "scale": 0.2}),
    ((1, 4, 5, 4), (2, 1, 7, 4), (2, 1, 7, 3), {}),  # broadcast (stride-0) batch
]


@pytest.mark.skipif(not fused_registered(), reason="no fused CPU attention kernel")
@pytest.mark.parametrize("layout", ["contiguous", "colmajor", "strided"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", FUSED_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[3]}")
def test_fused_matches_composite(case, dtype, layout):
    qs, ks, vs, kwargs = case
    rng = np.random.default_rng(10)
    q, k, v = (_layouts(rng, s, layout, dtype) for s in (qs, ks, vs))
    out, lse = FLASH(q, k, v, **kwargs)
    ref_out, ref_lse = _attention.flash_composite(q, k, v, **kwargs)
    torch.testing.assert_close(out, ref_out, **TOL[dtype])
    torch.testing.assert_close(lse, ref_lse, **TOL[dtype])
    g = t(rand(rng, *out.shape), dtype)
    grads = FLASH_BACKWARD(g, q, k, v, out, lse, 0.0, kwargs.get("is_causal", False),
                           scale=kwargs.get("scale"))
    ref = _attention.flash_backward_composite(g, q, k, v, ref_out, ref_lse,
                                              kwargs.get("is_causal", False), None,
                                              kwargs.get("scale"))
    for got, want in zip(grads, ref):
        torch.testing.assert_close(got, want, **TOL[dtype])


@pytest.mark.skipif(not fused_registered(), reason="no fused CPU attention kernel")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mask_shape", [(5, 7), (2, 1, 5, 7), (7,), (2, 3, 1, 7)])
def test_fused_masks_and_dtypes(mask_shape, dtype):
    rng = np.random.default_rng(11)
    q, k, v = (t(rand(rng, *s), dtype) for s in ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6)))
    mdt = dtype if dtype in (torch.float32, torch.float64) else torch.float32
    mask = t(rand(rng, *mask_shape), mdt)
    keep = torch.tensor(rng.random(mask_shape) > 0.2)
    for m in (mask, keep, mask.transpose(-1, -2).contiguous().transpose(-1, -2)
              if mask.ndim >= 2 else mask):
        out, lse = FLASH(q, k, v, attn_mask=m)
        ref_out, ref_lse = _attention.flash_composite(q, k, v, attn_mask=m)
        assert out.dtype == dtype
        torch.testing.assert_close(out, ref_out, **TOL[dtype])
        torch.testing.assert_close(lse, ref_lse, **TOL[dtype])


@pytest.mark.skipif(not fused_registered(), reason="no fused CPU attention kernel")
def test_fused_propagates_nan_and_is_thread_count_independent():
    q, k, v = _qkv((2, 2, 40, 8), (2, 2, 50, 8), (2, 2, 50, 8))
    q[0, 0, 3, 1] = float("nan")
    out, _ = FLASH(q, k, v)
    assert bool(torch.isnan(out[0, 0, 3]).all())
    assert not bool(torch.isnan(out[0, 0, 4]).any())
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = FLASH(q, k, v, is_causal=True)[0]
        torch.set_num_threads(2)
        two = FLASH(q, k, v, is_causal=True)[0]
    finally:
        torch.set_num_threads(threads)
    torch.testing.assert_close(one, two, atol=0, rtol=0, equal_nan=True)


@pytest.mark.skipif(not fused_registered(), reason="no fused CPU attention kernel")
def test_fused_gradients_through_autograd():
    rng = np.random.default_rng(12)
    q, k, v = t(rand(rng, 2, 2, 6, 3)), t(rand(rng, 2, 2, 8, 3)), t(rand(rng, 2, 2, 8, 4))
    mask = torch.tensor(rng.random((6, 8)) > 0.3)
    check_grad(lambda a, b, c: SDPA(a, b, c, mask), q, k, v)
    check_grad(lambda a, b, c: SDPA(a, b, c, is_causal=True), q, k, v)


def test_mask_and_is_causal_combine_as_pytorch():
    # PyTorch 2.13's fused CPU path applies an explicit mask and the causal triangle together;
    # its math path (dropout, a mask that needs grad) refuses the pair.
    rs = np.random.RandomState(3)
    q, k, v = (torch.tensor(rs.standard_normal((2, 2, n, 3))) for n in (4, 5, 5))
    keep = torch.ones(4, 5, dtype=torch.bool).tril()
    for mask in (torch.tensor(rs.standard_normal((4, 5))), torch.tensor(rs.rand(4, 5) > 0.3)):
        both = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                                 is_causal=True)
        additive = torch.where(mask, 0.0, -math.inf) if mask.dtype == torch.bool else mask
        folded = torch.where(keep, additive, -math.inf).to(torch.float64)
        expect = _np_attention(q.numpy(), k.numpy(), v.numpy(), folded.numpy())
        np.testing.assert_allclose(both.numpy(), expect, rtol=1e-12, atol=1e-12)
    mask = torch.zeros(4, 5, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=keep, is_causal=True,
                                                         dropout_p=0.5)


def _np_attention(q, k, v, mask):
    """Softmax attention; a row that masks every key gives zeros (PyTorch's fused CPU path)."""
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]) + mask
    hidden = np.isneginf(s).all(-1, keepdims=True)
    s = np.exp(s - np.where(hidden, 0, s.max(-1, keepdims=True)))
    return np.where(hidden, 0, s / np.where(hidden, 1, s.sum(-1, keepdims=True))) @ v


def test_masks_broadcast_to_the_scores_or_raise():
    """A mask whose last dims do not broadcast to (L, S) raises PyTorch's size error; masks
    that broadcast (a row, a column of ones, a batch of them) give the masked softmax."""
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 6, 4), torch.randn(2, 3, 6, 4)
    for bad in (torch.randn(5, 5), torch.randn(4, 6), torch.randn(5)):
        with pytest.raises(RuntimeError, match="must match the size"):
            SDPA(q, k, v, attn_mask=bad)
    for mask in (torch.randn(6), torch.randn(5, 1), torch.randn(2, 1, 5, 6)):
        scores = q @ k.transpose(-1, -2) / 2.0 + mask
        want = scores.softmax(-1) @ v
        got = SDPA(q, k, v, attn_mask=mask)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


# -- the fused kernel's small heads (rows shorter than its 16 lanes) against numpy -------------


def _np_sdpa_grads(q: np.ndarray, k: np.ndarray, v: np.ndarray, g: np.ndarray, is_causal: bool,
                   scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Softmax attention's gradients written out in float64: dV = P^T dO, dP = dO V^T,
    dS = P (dP - rowsum(dP P)), dQ = scale dS K, dK = scale dS^T Q."""
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    if is_causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    dv = np.matmul(np.swapaxes(p, -1, -2), g)
    dp = np.matmul(g, np.swapaxes(v, -1, -2))
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return scale * np.matmul(ds, k), scale * np.matmul(np.swapaxes(ds, -1, -2), q), dv


@pytest.mark.skipif(not fused_registered(), reason="no fused CPU attention kernel")
@pytest.mark.parametrize("layout", ["contiguous", "colmajor"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,is_causal", [
    ((2, 4, 8, 4), True),   # a GPT of width 16's heads
    ((2, 4, 8, 4), False),
    ((1, 2, 32, 8), True),  # causal rows of 1 to 32 keys: both sides of 16 lanes
    ((1, 2, 17, 8), False),  # rows of 17: 16 lanes and a tail
    ((3, 5, 3), False),
])
def test_fused_small_heads_match_numpy(shape, is_causal, dtype, layout):
    rng = np.random.default_rng(13)
    tq, tk, tv = (_layouts(rng, shape, layout, dtype) for _ in range(3))
    q, k, v = (x.double().numpy() for x in (tq, tk, tv))  # (the values the kernel reads)
    g = rand(rng, *shape)
    scale = 1.0 / math.sqrt(shape[-1])
    out, lse = FLASH(tq, tk, tv, is_causal=is_causal)
    # float32 against float64 sums of up to 33 terms
    tol = TOL[dtype] if dtype == torch.float64 else dict(atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(out.double().numpy(), np_sdpa(q, k, v, is_causal=is_causal),
                               rtol=tol["rtol"], atol=tol["atol"])
    grads = FLASH_BACKWARD(t(g, dtype), tq, tk, tv, out, lse, 0.0, is_causal)
    for got, want in zip(grads, _np_sdpa_grads(q, k, v, g, is_causal, scale)):
        np.testing.assert_allclose(got.double().numpy(), want, rtol=tol["rtol"],
                                   atol=tol["atol"])


@pytest.mark.skipif(not fused_registered(), reason="no fused CPU attention kernel")
def test_fused_backward_of_strided_grad_out_matches_numpy():
    # A GPT block writes the heads back with y.transpose(1, 2).contiguous(): the output's
    # gradient reaches the backward as a transposed view. Repeated calls (the planned kernel
    # after the first) must read it as a view, not as contiguous memory.
    rng = np.random.default_rng(17)
    B, H, T, D = 2, 3, 20, 4
    q, k, v = (torch.tensor(rand(rng, B, H, T, D)) for _ in range(3))
    scale = 1.0 / math.sqrt(D)
    out, lse = FLASH(q, k, v, is_causal=True)
    for _ in range(3):
        gt = rand(rng, B, T, H, D)
        g = torch.tensor(gt).transpose(1, 2)  # (B, H, T, D), strided
        assert not g.is_contiguous()
        # (the overload itself: calls of the packet are not planned)
        grads = FLASH_BACKWARD.default(g, q, k, v, out, lse, 0.0, True)
        want = _np_sdpa_grads(*(x.double().numpy() for x in (q, k, v)),
                              np.swapaxes(gt, 1, 2), True, scale)
        for got, ref in zip(grads, want):
            np.testing.assert_allclose(got.double().numpy(), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(not fused_registered(), reason="no fused CPU attention kernel")
def test_fused_small_head_propagates_nan():
    q, k, v = _qkv((1, 2, 8, 4), (1, 2, 8, 4), (1, 2, 8, 4))
    q[0, 1, 5, 2] = float("nan")
    out, _ = FLASH(q, k, v, is_causal=True)
    assert bool(torch.isnan(out[0, 1, 5]).all())
    assert not bool(torch.isnan(out[0, 1, 4]).any())
    assert not bool(torch.isnan(out[0, 0]).any())


def test_self_attention_gradient_on_repeated_calls():
    # one tensor as query, key and value: the backward op then takes one tensor three times,
    # and its later calls (planned) must still give the finite-difference gradient
    rng = np.random.default_rng(8)
    x = t(rand(rng, 1, 2, 3, 2))
    for _ in range(3):
        check_grad(lambda a: SDPA(a, a, a, is_causal=True), x)


def test_dispatch_mode_sees_pytorchs_keyword_arguments():
    # PyTorch 2.13 hands a mode the flash op without its default keywords, and its backward
    # with attn_mask only (scale when one is given)
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = {}

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.setdefault(str(func), []).append(dict(kwargs or {}))
            return func(*args, **(kwargs or {}))

    q = torch.randn(1, 2, 3, 4, requires_grad=True)
    with Log():
        SDPA(q, q, q, is_causal=True).sum().backward()
        SDPA(q, q, q, scale=0.5).sum().backward()
    fwd = seen["aten._scaled_dot_product_flash_attention_for_cpu.default"]
    bwd = seen["aten._scaled_dot_product_flash_attention_for_cpu_backward.default"]
    assert fwd == [{}, {"scale": 0.5}]
    assert bwd == [{"attn_mask": None}, {"attn_mask": None, "scale": 0.5}]
