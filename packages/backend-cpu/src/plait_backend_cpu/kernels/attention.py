"""Wrappers of the fused attention kernels: ``aten::_scaled_dot_product_flash_attention_for_cpu``
and its backward (the ops ``aten::scaled_dot_product_attention`` runs without dropout).

The wrappers do the layout work once: they broadcast the batch dimensions (stride 0, no copy),
hand query, key and value to the native kernel as row- or column-major matrices (copying an
operand only when neither of its last two strides is 1), and give float16/bfloat16 inputs to
the float32 kernel. Anything else (dropout, zero-size matrices, a dtype without a kernel)
runs core's composite, which is also the reference the tests compare with.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import Kernel

Operand = tuple[int, list[int], int, int]

FORWARD = "aten::_scaled_dot_product_flash_attention_for_cpu"
BACKWARD = "aten::_scaled_dot_product_flash_attention_for_cpu_backward"


def _additive_mask(mask: Any, dtype: Any) -> Any:
    """A bool mask (True takes part) as 0 / -inf in ``dtype``; a float mask cast to it."""
    import torch

    if mask is None:
        return None
    if mask.dtype == torch.bool:
        return torch.where(mask, 0.0, -math.inf).to(dtype)
    return mask if mask.dtype == dtype else mask.to(dtype)


def _softmax_scale(query: Any, scale: float | None) -> float:
    """PyTorch's default scale, 1/sqrt(E), unless one is given."""
    if scale is not None:
        return float(scale)
    e = query.shape[-1]
    return 1.0 / math.sqrt(e) if e else math.inf


def _batch_strides(t: Any, batch: tuple[int, ...]) -> list[int]:
    """``t``'s strides over the broadcast ``batch`` dims (its own dims before the last two,
    aligned right; 0 where it broadcasts): what ``t.expand(*batch, rows, cols).stride()``
    gives, worked out without making the view (this runs three times per attention call)."""
    shape, strides = t.shape, t.stride()
    own = len(shape) - 2
    out = [0] * len(batch)
    first = len(batch) - own
    for i in range(own):
        if shape[i] != 1:
            out[first + i] = strides[i]
    return out


def _matrix(t: Any, batch: tuple[int, ...], rows: int, cols: int) -> tuple[Any, Operand]:
    """``t`` as a (batch..., rows, cols) operand the gemm takes: row-major (column stride 1,
    row stride >= cols) or column-major (row stride 1, column stride >= rows). Returns the
    tensor that owns the memory (a contiguous copy if ``t`` is neither) and the operand."""
    for attempt in (t, None):
        if attempt is None:
            attempt = t.contiguous()
        strides = attempt.stride()
        rs, cs = strides[-2], strides[-1]
        # strides of size-1 dimensions are arbitrary: give them the value the gemm wants
        if cols == 1:
            cs = 1
        if rows == 1:
            rs = max(cols, 1) if cs == 1 else 1
        if (cs == 1 and rs >= cols) or (rs == 1 and cs >= rows):
            return attempt, (attempt.data_ptr(), _batch_strides(attempt, batch), rs, cs)
    raise AssertionError("a contiguous tensor is always a row-major matrix")


def _mask_operand(mask: Any, batch: tuple[int, ...]) -> Operand:
    """The additive mask as an operand over (batch..., L, S): any strides, the kernel reads it
    element-wise; a size-1 (broadcast) row or column dim reads its one element."""
    shape, strides = mask.shape, mask.stride()
    rs = strides[-2] if len(shape) >= 2 and shape[-2] != 1 else 0
    cs = strides[-1] if len(shape) >= 1 and shape[-1] != 1 else 0
    return (mask.data_ptr(), _batch_strides(mask, batch), rs, cs)


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of batch shapes (None when they do not broadcast: the composite then
    raises PyTorch's error)."""
    n = max(len(s) for s in shapes)
    out = [1] * n
    for s in shapes:
        for i, size in enumerate(s, n - len(s)):
            if size != 1:
                if out[i] not in (1, size):
                    return None
                out[i] = size
    return tuple(out)


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """The fused forward and backward of scaled dot-product attention."""

    def prepare(query: Any, key: Any, value: Any, attn_mask: Any) -> Any:
        """Compute dtype, its code, the inputs in it, the additive mask and the batch shape;
        None when the case is left to the composite."""
        import torch

        dt = query.dtype
        cdt = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
        code = dtype_codes.get(cdt)
        tensors = (query, key, value) + ((attn_mask,) if attn_mask is not None else ())
        if code is None or cdt not in (torch.float32, torch.float64) or any(
                t.device.type != "cpu" for t in tensors):
            return None
        L, E = query.shape[-2:]
        S, Ev = value.shape[-2:]
        if 0 in (L, S, E, Ev):
            return None
        q, k, v = (t if t.dtype == cdt else t.to(cdt) for t in (query, key, value))
        if attn_mask is not None:
            # the mask's own last dims must broadcast to (L, S): otherwise the composite
            # raises PyTorch's error
            tail = tuple(attn_mask.shape[-2:])
            if (len(tail) == 2 and tail[0] not in (1, L)) or (tail and tail[-1] not in (1, S)):
                return None
        mask = _additive_mask(attn_mask, cdt)
        shapes = [q.shape[:-2], k.shape[:-2], v.shape[:-2]]
        if mask is not None and mask.ndim > 2:
            shapes.append(mask.shape[:-2])
        batch = _broadcast(*shapes)
        if batch is None:
            return None
        return dt, cdt, code, q, k, v, mask, batch, (L, S, E, Ev)

    from torch.backends import contract

    def operands(prepared: Any) -> Any:
        """The query, key and value operands' layouts (batch strides, row and column stride)
        when the gemm takes all three as they are (no copy, no conversion, no mask): what a
        planned call fixes; None otherwise."""
        dt, cdt, _code, q, k, v, mask, batch, (L, S, E, Ev) = prepared
        if dt != cdt or mask is not None:
            return None
        layouts = []
        for t, rows, cols in ((q, L, E), (k, S, E), (v, S, Ev)):
            held, (_ptr, batch_strides, rs, cs) = _matrix(t, batch, rows, cols)
            if held is not t:
                return None  # (a copy would be made per call)
            layouts.append((batch_strides, rs, cs))
        return layouts

    def plan_forward(query: Any, key: Any, value: Any, dropout_p: float = 0.0,
                     is_causal: bool = False, *, attn_mask: Any = None,
                     scale: float | None = None) -> Kernel | None:
        """The kernel of one signature without mask or dropout whose operands the gemm
        takes as they are: checks, broadcast batch and operand layouts worked out once."""
        try:
            contract.check_scaled_dot_product_attention(query, key, value, attn_mask,
                                                        dropout_p, is_causal)
        except (RuntimeError, ValueError, TypeError):
            return None
        prepared = prepare(query, key, value, attn_mask) if dropout_p == 0.0 else None
        layouts = operands(prepared) if prepared is not None else None
        if layouts is None:
            return None
        dt, _cdt, code, _q, _k, _v, _mask, batch, (L, S, E, Ev) = prepared
        (qb, qr, qc), (kb, kr, kc), (vb, vr, vc) = layouts
        batch_list, out_shape, lse_shape = list(batch), (*batch, L, Ev), (*batch, L)
        device, softmax_scale, causal = query.device, _softmax_scale(query, scale), \
            bool(is_causal)
        attention_forward = native.attention_forward

        new_outputs = contract.allocator([(out_shape, dt, device), (lse_shape, dt, device)])

        def planned(query: Any, key: Any, value: Any, dropout_p: float = 0.0,
                    is_causal: bool = False, *, attn_mask: Any = None,
                    scale: float | None = None) -> tuple[Any, Any] | None:
            outs, (out, lse) = new_outputs()
            if not attention_forward(code, batch_list, L, S, E, Ev,
                                     (query.data_ptr(), qb, qr, qc),
                                     (key.data_ptr(), kb, kr, kc),
                                     (value.data_ptr(), vb, vr, vc), None,
                                     out, lse, softmax_scale, causal):
                return None  # the generic path
            return outs

        return planned

    @contract.plannable(plan_forward, native=True)
    def forward(query: Any, key: Any, value: Any, dropout_p: float = 0.0,
                is_causal: bool = False, *, attn_mask: Any = None,
                scale: float | None = None) -> tuple[Any, Any]:

        contract.check_scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
                                                    is_causal)
        prepared = prepare(query, key, value, attn_mask) if dropout_p == 0.0 else None
        if prepared is None:
            return contract.composite(FORWARD)(query, key, value, dropout_p, is_causal,
                                               attn_mask=attn_mask, scale=scale)
        dt, cdt, code, q, k, v, mask, batch, (L, S, E, Ev) = prepared
        q, qo = _matrix(q, batch, L, E)
        k, ko = _matrix(k, batch, S, E)
        v, vo = _matrix(v, batch, S, Ev)
        mo = _mask_operand(mask, batch) if mask is not None else None
        out = contract.empty((*batch, L, Ev), cdt, query.device)
        lse = contract.empty((*batch, L), cdt, query.device)
        if not native.attention_forward(code, list(batch), L, S, E, Ev, qo, ko, vo, mo,
                                        out.data_ptr(), lse.data_ptr(),
                                        _softmax_scale(query, scale), bool(is_causal)):
            return contract.composite(FORWARD)(query, key, value, dropout_p, is_causal,
                                               attn_mask=attn_mask, scale=scale)
        return (out if dt == cdt else out.to(dt)), lse

    def plan_backward(grad_out: Any, query: Any, key: Any, value: Any, out: Any,
                      logsumexp: Any, dropout_p: float, is_causal: bool, *,
                      attn_mask: Any = None, scale: float | None = None) -> Kernel | None:
        """The kernel of one signature the native backward takes with every operand as it
        is (as :func:`plan_forward`)."""
        prepared = prepare(query, key, value, attn_mask) if dropout_p == 0.0 else None
        layouts = operands(prepared) if prepared is not None else None
        if layouts is None:
            return None
        dt, _cdt, code, _q, _k, _v, _mask, batch, (L, S, E, Ev) = prepared
        full = (*batch, L)
        if (tuple(grad_out.shape) != (*full, Ev) or tuple(out.shape) != (*full, Ev)
                or tuple(logsumexp.shape) != full
                or any(t.dtype != dt for t in (grad_out, out, logsumexp))
                or not (out.is_contiguous() and logsumexp.is_contiguous())):
            return None
        # A strided grad_out (the gradient of y.transpose(1, 2).contiguous(), as GPT blocks
        # write the heads back) is copied per call, as the generic path would copy it; the
        # layout work above is still done once.
        dense_grad = grad_out.is_contiguous()
        (qb, qr, qc), (kb, kr, kc), (vb, vr, vc) = layouts
        batch_list = list(batch)
        gq_shape, gk_shape, gv_shape = (*batch, L, E), (*batch, S, E), (*batch, S, Ev)
        device, softmax_scale, causal = query.device, _softmax_scale(query, scale), \
            bool(is_causal)
        attention_backward = native.attention_backward

        new_grads = contract.allocator([(gq_shape, dt, device), (gk_shape, dt, device),
                                        (gv_shape, dt, device)])

        def planned(grad_out: Any, query: Any, key: Any, value: Any, out: Any, logsumexp: Any,
                    dropout_p: float, is_causal: bool, *, attn_mask: Any = None,
                    scale: float | None = None) -> tuple[Any, Any, Any] | None:
            grads, (gq, gk, gv) = new_grads()
            if not dense_grad:
                grad_out = grad_out.contiguous()
            if not attention_backward(code, batch_list, L, S, E, Ev, grad_out.data_ptr(),
                                      (query.data_ptr(), qb, qr, qc),
                                      (key.data_ptr(), kb, kr, kc),
                                      (value.data_ptr(), vb, vr, vc), None, out.data_ptr(),
                                      logsumexp.data_ptr(), gq, gk, gv, softmax_scale, causal):
                return None  # the generic path
            return grads

        return planned

    @contract.plannable(plan_backward, native=True)
    def backward(grad_out: Any, query: Any, key: Any, value: Any, out: Any, logsumexp: Any,
                 dropout_p: float, is_causal: bool, *, attn_mask: Any = None,
                 scale: float | None = None) -> tuple[Any, Any, Any]:

        def fallback() -> tuple[Any, Any, Any]:
            return contract.composite(BACKWARD)(grad_out, query, key, value, out, logsumexp,
                                                dropout_p, is_causal, attn_mask=attn_mask,
                                                scale=scale)

        prepared = prepare(query, key, value, attn_mask) if dropout_p == 0.0 else None
        if prepared is None:
            return fallback()
        dt, cdt, code, q, k, v, mask, batch, (L, S, E, Ev) = prepared
        full = (*batch, L)
        if (tuple(grad_out.shape) != (*full, Ev) or tuple(out.shape) != (*full, Ev)
                or tuple(logsumexp.shape) != full):
            return fallback()
        q, qo = _matrix(q, batch, L, E)
        k, ko = _matrix(k, batch, S, E)
        v, vo = _matrix(v, batch, S, Ev)
        mo = _mask_operand(mask, batch) if mask is not None else None
        go, o, lse = (t if t.dtype == cdt and t.is_contiguous() else t.to(cdt).contiguous()
                      for t in (grad_out, out, logsumexp))
        device = query.device
        gq = contract.empty((*batch, L, E), cdt, device)
        gk = contract.empty((*batch, S, E), cdt, device)
        gv = contract.empty((*batch, S, Ev), cdt, device)
        if not native.attention_backward(code, list(batch), L, S, E, Ev, go.data_ptr(), qo, ko,
                                         vo, mo, o.data_ptr(), lse.data_ptr(), gq.data_ptr(),
                                         gk.data_ptr(), gv.data_ptr(),
                                         _softmax_scale(query, scale), bool(is_causal)):
            return fallback()
        if dt != cdt:
            gq, gk, gv = gq.to(dt), gk.to(dt), gv.to(dt)
        return gq, gk, gv

    return {FORWARD: forward, BACKWARD: backward}
