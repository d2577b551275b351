"""Scaled dot-product attention: ``softmax(Q K^T * scale + mask) V``.

Three operators, with PyTorch's names and schemas:

- ``aten::scaled_dot_product_attention`` (what ``torch.nn.functional`` calls) checks its
  arguments, turns a bool mask into an additive one, repeats the key/value heads for grouped
  query attention, and picks a kernel: ``_scaled_dot_product_attention_math`` when dropout is on
  (or the mask itself needs a gradient), else ``_scaled_dot_product_flash_attention_for_cpu``.
  It is ``CompositeImplicitAutograd``: autograd flows through whichever op it picks.
- ``aten::_scaled_dot_product_attention_math`` returns ``(output, attention weights)``; it is
  written in matmul + softmax (+ dropout through the core RNG) and differentiated through that
  decomposition.
- ``aten::_scaled_dot_product_flash_attention_for_cpu`` returns ``(output, logsumexp)`` (the
  log of each query row's softmax denominator, scaled scores and mask included). Its composite
  kernel here is the reference and the fallback; a backend overrides it with a fused kernel
  (plait-backend-cpu: blocked Q K^T, softmax in place, @ V). Its derivative formula
  (``autograd/_formulas/attention.py``) recomputes the probabilities from the logsumexp and,
  when no higher-order graph is being built, calls
  ``aten::_scaled_dot_product_flash_attention_for_cpu_backward``, which a backend may fuse too.

Semantics (PyTorch's): the mask is bool (True takes part) or floating (added to the scores) and
broadcasts to ``(..., L, S)``; ``is_causal`` masks with a top-left aligned lower triangle (query
``i`` sees keys ``j <= i``); ``scale`` defaults to ``1 / sqrt(E)``; a query row that can see no
key gives zeros (and a logsumexp of ``-inf``). float16 and bfloat16 compute in float32 and round
once. Batch dimensions (everything before the last two) broadcast between query, key, value and
mask.
"""

from __future__ import annotations

import math
from typing import Any

from .._aten import elementwise as _ew, factories as _fac, reductions as _red
from .._aten.convert import to_dtype
from .._aten.linalg import matmul
from .._aten.random import rand
from .._core import config as _config, dispatch as _dispatch, dtype as _dtype
from .._core.promotion import broadcast_shapes
from .._core.tensor import Tensor
from .softmax import softmax

__all__: list[str] = []  # no torch.* function: torch.nn.functional exposes the op
METHODS: dict[str, Any] = {}

_HALF = (_dtype.float16, _dtype.bfloat16)
_NEG_INF = float("-inf")


# -- argument checks -----------------------------------------------------------------------


def check_args(query: Any, key: Any, value: Any, attn_mask: Any, dropout_p: float,
           is_causal: bool) -> None:
    if not (query.__class__ is key.__class__ is value.__class__ is Tensor):
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, Tensor):
                raise TypeError(f"scaled_dot_product_attention(): argument '{name}' must be "
                                f"Tensor, not {type(t).__name__}")
    if attn_mask is not None and not isinstance(attn_mask, Tensor):
        raise TypeError("scaled_dot_product_attention(): argument 'attn_mask' must be Tensor, "
                        f"not {type(attn_mask).__name__}")
    # (the shapes as tuples: a Size's indexing is a Python call)
    qs, ks, vs = tuple(query._shape), tuple(key._shape), tuple(value._shape)
    if len(qs) < 2 or len(ks) < 2 or len(vs) < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if not (query._dtype is key._dtype is value._dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cname(query)} key.dtype: {_cname(key)} and value.dtype: {_cname(value)} "
            "instead.")
    if not query._dtype.is_floating_point:
        raise RuntimeError(f"scaled_dot_product_attention: expected query, key and value to "
                           f"be floating point, but got {query._dtype}")
    if attn_mask is not None and attn_mask._dtype not in (_dtype.bool_, _dtype.float32,
                                                          query._dtype):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_cname(attn_mask)} and  query.dtype: {_cname(query)} "
            "instead.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if qs[-1] != ks[-1]:
        raise RuntimeError(
            f"scaled_dot_product_attention: query and key must have the same embedding size, "
            f"got query.size(-1) = {query.shape[-1]} and key.size(-1) = {key.shape[-1]}")
    if ks[-2] != vs[-2]:
        raise RuntimeError(
            f"scaled_dot_product_attention: key and value must have the same sequence length, "
            f"got key.size(-2) = {key.shape[-2]} and value.size(-2) = {value.shape[-2]}")


def _cname(t: Tensor) -> str:
    from .._aten.convert import scalar_type_name

    return scalar_type_name(t._dtype)


def _repeat_kv_heads(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """Grouped query attention: each key/value head serves ``Hq / Hkv`` consecutive query
    heads (dimension -3), as ``repeat_interleave`` lays them out."""
    if query.ndim < 3 or key.ndim < 3 or value.ndim < 3:
        return key, value
    hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
    if hk != hv:
        raise RuntimeError(f"scaled_dot_product_attention: number of heads in key ({hk}) and "
                           f"value ({hv}) must be equal for grouped query attention")
    if hq == hk:
        return key, value
    if hk == 0 or hq % hk:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in "
                           f"query (got {hq} query heads and {hk} key/value heads)")
    groups = hq // hk
    return key.repeat_interleave(groups, -3), value.repeat_interleave(groups, -3)


def additive_mask(mask: Tensor | None, dtype: _dtype.dtype) -> Tensor | None:
    """A bool mask (True takes part) as 0 / -inf in ``dtype``; a float mask cast to it."""
    if mask is None:
        return None
    if mask._dtype is _dtype.bool_:
        return _ew.where(mask, 0.0, _NEG_INF).to(dtype)
    return mask if mask._dtype is dtype else mask.to(dtype)


def softmax_scale(query: Tensor, scale: float | None) -> float:
    if scale is not None:
        return float(scale)
    e = query.shape[-1]
    return 1.0 / math.sqrt(e) if e else math.inf


# -- the public op -------------------------------------------------------------------------


def _sdpa(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
          dropout_p: float = 0.0, is_causal: bool = False, *, scale: float | None = None,
          enable_gqa: bool = False) -> Tensor:
    if (attn_mask is None and dropout_p == 0.0 and not enable_gqa
            and query.__class__ is key.__class__ is value.__class__ is Tensor):
        # The usual call (no mask, no dropout): straight to the flash op, whose every kernel
        # (the composite below, a backend's fused one, its plan) makes the same checks this
        # call would (check_args with these arguments), so they run once, not twice.
        if scale is None:
            return _FLASH(query, key, value, 0.0, is_causal)[0]
        return _FLASH(query, key, value, 0.0, is_causal, scale=scale)[0]
    check_args(query, key, value, attn_mask, dropout_p, is_causal and attn_mask is None)
    if enable_gqa:
        key, value = _repeat_kv_heads(query, key, value)
    mask = additive_mask(attn_mask, query._dtype)
    mask_needs_grad = mask is not None and mask.requires_grad and _config.is_grad_enabled()
    if is_causal and mask is not None:
        # PyTorch 2.13's fused CPU path applies both; its math path (dropout, a mask that
        # needs grad) refuses the pair, with the message check_args gives.
        if dropout_p > 0.0 or mask_needs_grad:
            check_args(query, key, value, attn_mask, dropout_p, True)
        keep = _causal_keep(query.shape[-2], key.shape[-2], query.device)
        mask = _ew.where(keep, mask, _NEG_INF)
        is_causal = False
    if dropout_p > 0.0 or mask_needs_grad:
        return ATEN["_scaled_dot_product_attention_math"](
            query, key, value, mask, dropout_p, is_causal, scale=scale)[0]
    flash = ATEN["_scaled_dot_product_flash_attention_for_cpu"]
    # the keyword arguments only when not the defaults, as PyTorch's dispatcher shows the call
    # to a mode (and the call's plan key is shorter)
    if mask is None:
        if scale is None:
            return flash(query, key, value, 0.0, is_causal)[0]
        return flash(query, key, value, 0.0, is_causal, scale=scale)[0]
    if scale is None:
        return flash(query, key, value, 0.0, is_causal, attn_mask=mask)[0]
    return flash(query, key, value, 0.0, is_causal, attn_mask=mask, scale=scale)[0]


# -- the math path (dropout, differentiable mask) ------------------------------------------


def _causal_keep(l_len: int, s_len: int, device: Any) -> Tensor:
    return _fac.ones(l_len, s_len, dtype=_dtype.bool_, device=device).tril()


def _scores(query: Tensor, key: Tensor, mask: Tensor | None, is_causal: bool,
            scale: float) -> Tensor:
    """``Q K^T * scale`` plus the mask, ``-inf`` where causality hides a key. (..., L, S)"""
    s = matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        s = s.masked_fill(~_causal_keep(s.shape[-2], s.shape[-1], s.device), _NEG_INF)
    if mask is not None:
        s = s + mask
    return s


def _math_kernel(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                 dropout_p: float = 0.0, is_causal: bool = False,
                 dropout_mask: Tensor | None = None, *, scale: float | None = None,
                 enable_gqa: bool = False) -> tuple[Tensor, Tensor]:
    check_args(query, key, value, attn_mask, dropout_p, is_causal)
    if enable_gqa:
        key, value = _repeat_kv_heads(query, key, value)
    dt = query._dtype
    if dt in _HALF:
        query, key, value = (to_dtype(t, _dtype.float32) for t in (query, key, value))
    mask = additive_mask(attn_mask, query._dtype)
    s = _scores(query, key, mask, is_causal, softmax_scale(query, scale))
    if s.shape[-1] == 0:
        attn = s
    else:
        # a row that sees no key gives zeros, not the NaN of 0/0 (PyTorch's safe softmax); its
        # scores are replaced before the softmax too, so that its backward (which reads the
        # softmax's output) stays finite
        unseen = _red.amax(s.detach(), -1, keepdim=True) == _NEG_INF
        attn = _ew.where(unseen, 0.0, softmax(_ew.where(unseen, 0.0, s), -1))
    if dropout_p > 0.0:
        if dropout_p >= 1.0:
            attn = attn * 0.0
        else:
            keep = (dropout_mask if dropout_mask is not None
                    else rand(attn.shape, dtype=attn.dtype, device=attn.device) >= dropout_p)
            attn = attn.masked_fill(~keep, 0.0) * (1.0 / (1.0 - dropout_p))
    out = matmul(attn, value)
    return to_dtype(out, dt), to_dtype(attn, dt)


# -- the flash op: (output, logsumexp) ------------------------------------------------------


def flash_composite(query: Tensor, key: Tensor, value: Tensor, dropout_p: float = 0.0,
                  is_causal: bool = False, *, attn_mask: Tensor | None = None,
                  scale: float | None = None) -> tuple[Tensor, Tensor]:
    """The reference of the fused kernels: (output (..., L, Ev), logsumexp (..., L))."""
    check_args(query, key, value, attn_mask, dropout_p, is_causal)
    if dropout_p != 0.0:
        raise RuntimeError("_scaled_dot_product_flash_attention_for_cpu: dropout is not "
                           "supported here; scaled_dot_product_attention runs dropout through "
                           "_scaled_dot_product_attention_math")
    dt = query._dtype
    if dt in _HALF:
        query, key, value = (to_dtype(t, _dtype.float32) for t in (query, key, value))
    mask = additive_mask(attn_mask, query._dtype)
    s = _scores(query, key, mask, is_causal, softmax_scale(query, scale))  # (..., L, S)
    batch = broadcast_shapes(s.shape[:-2], value.shape[:-2])
    l_len, ev = s.shape[-2], value.shape[-1]
    if s.shape[-1] == 0:  # no keys: every row sees nothing
        out = _fac.zeros(*batch, l_len, ev, dtype=query.dtype, device=query.device)
        lse = _fac.full((*batch, l_len), _NEG_INF, dtype=query.dtype, device=query.device)
        return to_dtype(out, dt), lse
    m = _red.amax(s, -1, keepdim=True)
    m = _ew.where(m == _NEG_INF, 0.0, m)  # a row that sees nothing: exp(-inf - 0) = 0
    e = _ew.exp(s - m)
    total = _red.sum(e, -1, keepdim=True)
    out = matmul(e, value) / _ew.where(total == 0.0, 1.0, total)
    lse = (m + _ew.log(total)).squeeze(-1)
    if tuple(lse.shape[:-1]) != tuple(batch):  # value has batch dimensions the scores lack
        lse = lse.expand(*batch, l_len).contiguous()
    return to_dtype(out, dt), lse


def flash_backward_composite(grad_out: Tensor, query: Tensor, key: Tensor, value: Tensor,
                             out: Tensor, logsumexp: Tensor, is_causal: bool,
                             attn_mask: Tensor | None, scale: float | None,
                             grad_logsumexp: Tensor | None = None
                             ) -> tuple[Tensor, Tensor, Tensor]:
    """Gradients of the flash op in differentiable ops (so double backward works):
    ``P = exp(S - lse)``, ``dV = P^T dO``, ``dS = P * (dO V^T - rowsum(dO * O) + dlse)``,
    ``dQ = dS K * scale``, ``dK = dS^T Q * scale``. Gradients have the broadcast batch shape;
    autograd sums them down to each input's."""
    dt = query._dtype
    f = (lambda t: to_dtype(t, _dtype.float32)) if dt in _HALF else (lambda t: t)
    q, k, v, o, g = f(query), f(key), f(value), f(out), f(grad_out)
    sc = softmax_scale(q, scale)
    mask = additive_mask(attn_mask, q._dtype)
    s = _scores(q, k, mask, is_causal, sc)
    lse = to_dtype(logsumexp, q._dtype).unsqueeze(-1)
    lse = _ew.where(lse == _NEG_INF, math.inf, lse)  # rows that saw nothing: P = 0
    p = _ew.exp(s - lse)  # (..., L, S)
    dv = matmul(p.transpose(-2, -1), g)
    dp = matmul(g, v.transpose(-2, -1))
    delta = _red.sum(g * o, -1, keepdim=True)
    if grad_logsumexp is not None:
        delta = delta - to_dtype(grad_logsumexp, q._dtype).unsqueeze(-1)
    ds = p * (dp - delta)
    dq = matmul(ds, k) * sc
    dk = matmul(ds.transpose(-2, -1), q) * sc
    return to_dtype(dq, dt), to_dtype(dk, dt), to_dtype(dv, dt)


def flash_backward_reference(grad_out: Tensor, query: Tensor, key: Tensor, value: Tensor,
                           out: Tensor, logsumexp: Tensor, dropout_p: float, is_causal: bool, *,
                           attn_mask: Tensor | None = None, scale: float | None = None
                           ) -> tuple[Tensor, Tensor, Tensor]:
    if dropout_p != 0.0:
        raise RuntimeError("_scaled_dot_product_flash_attention_for_cpu_backward: dropout is "
                           "not supported")
    return flash_backward_composite(grad_out, query, key, value, out, logsumexp, is_causal,
                                    attn_mask, scale)


ATEN = _dispatch.define_aten({
    "scaled_dot_product_attention": (
        "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
        "Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, "
        "float? scale=None, bool enable_gqa=False) -> Tensor",
        _sdpa, _dispatch.COMPOSITE_IMPLICIT),
    "_scaled_dot_product_attention_math": (
        "_scaled_dot_product_attention_math(Tensor query, Tensor key, Tensor value, "
        "Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, "
        "Tensor? dropout_mask=None, *, float? scale=None, bool enable_gqa=False) "
        "-> (Tensor, Tensor)",
        _math_kernel, _dispatch.COMPOSITE_IMPLICIT),
    "_scaled_dot_product_flash_attention_for_cpu": (
        "_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, "
        "float dropout_p=0., bool is_causal=False, *, Tensor? attn_mask=None, "
        "float? scale=None) -> (Tensor output, Tensor logsumexp)",
        flash_composite),
    "_scaled_dot_product_flash_attention_for_cpu_backward": (
        "_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor query, "
        "Tensor key, Tensor value, Tensor out, Tensor logsumexp, float dropout_p, "
        "bool is_causal, *, Tensor? attn_mask=None, float? scale=None) "
        "-> (Tensor grad_query, Tensor grad_key, Tensor grad_value)",
        flash_backward_reference),
})

# the op _sdpa runs without mask or dropout, bound once (not an ATEN lookup per call)
_FLASH = ATEN["_scaled_dot_product_flash_attention_for_cpu"]
