"""Derivative formulas: scaled dot-product attention's flash op (output, logsumexp).

The rule recomputes the attention probabilities from the saved logsumexp instead of saving
them (memory stays O(L) per row, as in the fused kernels). When a higher-order graph is being
built it writes the gradient in differentiable ops; otherwise it calls the backward op, which a
backend may serve with a fused kernel."""

from __future__ import annotations

from ..._core import config as _config
from ..._fused import attention as _attention
from . import derivative


@derivative("aten::_scaled_dot_product_flash_attention_for_cpu", takes_none=True)
def _flash_attention(ctx, grad_out, grad_logsumexp):
    query, key, value = ctx.args[:3]
    is_causal = ctx.args[4] if len(ctx.args) > 4 else ctx.kwargs.get("is_causal", False)
    mask = ctx.kwargs.get("attn_mask")
    scale = ctx.kwargs.get("scale")
    out, logsumexp = ctx.result
    if grad_out is None:  # only logsumexp was used
        grad_out = out.detach().new_zeros(out.shape)
    # (logsumexp usually receives no gradient: None, with no zeros made or read)
    if _config.is_grad_enabled() or (grad_logsumexp is not None
                                     and bool(grad_logsumexp.ne(0).any())):
        dq, dk, dv = _attention.flash_backward_composite(
            grad_out, query, key, value, out, logsumexp, is_causal, mask, scale,
            grad_logsumexp)
    elif scale is None:  # (PyTorch's backward call passes attn_mask, and scale when set)
        dq, dk, dv = _attention.ATEN["_scaled_dot_product_flash_attention_for_cpu_backward"](
            grad_out, query, key, value, out, logsumexp, 0.0, is_causal, attn_mask=mask)
    else:
        dq, dk, dv = _attention.ATEN["_scaled_dot_product_flash_attention_for_cpu_backward"](
            grad_out, query, key, value, out, logsumexp, 0.0, is_causal, attn_mask=mask,
            scale=scale)
    needs = ctx.needs_input_grad
    return (dq if needs[0] else None, dk if needs[1] else None, dv if needs[2] else None,
            None, None)
