"""``F.multi_head_attention_forward``: the computation behind ``nn.MultiheadAttention``.

Inputs are sequence-first: query (L, N, E), key (S, N, E_k), value (S, N, E_v), or unbatched
(L, E) / (S, E_k) / (S, E_v). Masks follow ``MultiheadAttention``'s convention (a boolean
``True`` marks a position that may *not* be attended; float masks are added to the scores),
which is the opposite of ``scaled_dot_product_attention``'s boolean masks, so every mask is
turned into an additive float mask first.
"""

from __future__ import annotations

import math
import warnings

import torch
from torch import Tensor
from torch._core.config import external_stacklevel
from torch.nn import functional as F

__all__ = ["multi_head_attention_forward"]


def _additive_mask(mask: Tensor | None, name: str, dtype: torch.dtype) -> Tensor | None:
    if mask is None:
        return None
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
            mask, float("-inf"))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask.to(dtype)


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """Appends one zero (attend) column to a mask, for an added key (bias_k or zero_attn)."""
    if mask is None:
        return None
    return torch.cat([mask, mask.new_zeros((*mask.shape[:-1], 1))], -1)


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention: project query/key/value, split into ``num_heads`` heads, attend
    with ``softmax(q k^T / sqrt(head_dim) + mask)``, merge the heads and project the result.
    Returns the output (L, N, E) and, with ``need_weights``, the attention weights (N, L, S),
    averaged over heads unless ``average_attn_weights=False`` (then (N, H, L, S))."""
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")
    batched = query.dim() == 3
    if key.dim() != query.dim() or value.dim() != query.dim():
        raise AssertionError(f"For {'batched (3-D)' if batched else 'unbatched (2-D)'} `query`, "
                             f"expected `key` and `value` to be {query.dim()}-D but found "
                             f"{key.dim()}-D and {value.dim()}-D tensors respectively")
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            if key_padding_mask.dim() != 1:
                raise AssertionError(f"For unbatched (2-D) `query`, expected "
                                     f"`key_padding_mask` to be `None` or 1-D but found "
                                     f"{key_padding_mask.dim()}-D tensor instead")
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape "
                             f"{tuple(value.shape)}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    # the hint only promises that attn_mask is causal: the mask itself is applied below
    dtype = query.dtype
    if attn_mask is not None and key_padding_mask is not None and \
            attn_mask.dtype != key_padding_mask.dtype:
        # PyTorch still combines them (both become additive masks) but says it will stop
        warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. Use "
                      "same type for both instead.", UserWarning,
                      stacklevel=external_stacklevel())
    attn_mask = _additive_mask(attn_mask, "attn_mask", dtype)
    key_padding_mask = _additive_mask(key_padding_mask, "key_padding_mask", dtype)

    # -- input projections
    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, "
                                 "k_proj_weight or v_proj_weight is None")
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_q, w_k, w_v = in_proj_weight.chunk(3, 0)
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3, 0)
    q = F.linear(query, w_q, b_q)
    k = F.linear(key, w_k, b_k)
    v = F.linear(value, w_v, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    # -- extra key/value rows
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = torch.cat([k, bias_k.expand(1, bsz, embed_dim)], 0)
        v = torch.cat([v, bias_v.expand(1, bsz, embed_dim)], 0)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # (L, N, E) -> (N*H, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
         if static_k is None else static_k)
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
         if static_v is None else static_v)
    if add_zero_attn:
        k = torch.cat([k, k.new_zeros((bsz * num_heads, 1, head_dim))], 1)
        v = torch.cat([v, v.new_zeros((bsz * num_heads, 1, head_dim))], 1)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(
            bsz, num_heads, 1, src_len).reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = torch.bmm(q * (1.0 / math.sqrt(head_dim)), k.transpose(1, 2))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = torch.softmax(scores, -1)
        if dropout_p > 0.0:
            weights = F.dropout(weights, dropout_p)
        out = torch.bmm(weights, v)  # (N*H, L, head_dim)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    # an additive mask of (1 or N*H, 1 or L, S) -> (1 or N, 1 or H, 1 or L, S) for the kernel
    mask4 = None if attn_mask is None else (
        attn_mask.reshape(1, 1, *attn_mask.shape[1:]) if attn_mask.shape[0] == 1
        else attn_mask.reshape(bsz, num_heads, *attn_mask.shape[1:]))
    out = F.scaled_dot_product_attention(
        q.reshape(bsz, num_heads, tgt_len, head_dim), k.reshape(bsz, num_heads, src_len, head_dim),
        v.reshape(bsz, num_heads, src_len, head_dim), mask4, dropout_p)
    out = out.permute(2, 0, 1, 3).reshape(tgt_len * bsz, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not batched:
        out = out.squeeze(1)
    return out, None
