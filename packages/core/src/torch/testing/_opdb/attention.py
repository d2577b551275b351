"""Op database rows: scaled dot-product attention, through the public
``torch.nn.functional.scaled_dot_product_attention`` (plait-nn), which calls core's aten op.

Values are kept in [-1, 1] so that the softmax stays smooth (no near-ties between a
row's largest scores, where float32 rounding would decide). The small samples (60 elements or
fewer) are the ones the gradcheck run differentiates.
"""

from __future__ import annotations

from . import FLOATS, OpInfo, SampleInput


def _qkv(make, dtype, q, k, v, noncontiguous=False):
    return (make(q, dtype, -1, 1, noncontiguous), make(k, dtype, -1, 1),
            make(v, dtype, -1, 1))


def sdpa_samples(torch, dtype, make):
    q, k, v = _qkv(make, dtype, (1, 2, 3, 2), (1, 2, 4, 2), (1, 2, 4, 2))
    yield SampleInput(q, (k, v), name="small")
    q, k, v = _qkv(make, dtype, (1, 2, 3, 2), (1, 2, 4, 2), (1, 2, 4, 2))
    yield SampleInput(q, (k, v), {"is_causal": True}, name="small causal")
    q, k, v = _qkv(make, dtype, (1, 4, 2, 2), (1, 2, 3, 2), (1, 2, 3, 2))
    yield SampleInput(q, (k, v), {"enable_gqa": True, "scale": 0.7}, name="small gqa, scale")
    q, k, v = _qkv(make, dtype, (2, 3), (4, 3), (4, 2))
    yield SampleInput(q, (k, v, make((2, 4), dtype, -1, 1)), name="2-d, float mask")
    q, k, v = _qkv(make, dtype, (2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6))
    yield SampleInput(q, (k, v), name="basic")
    q, k, v = _qkv(make, dtype, (2, 3, 7, 4), (2, 3, 5, 4), (2, 3, 5, 6), noncontiguous=True)
    yield SampleInput(q, (k, v, None, 0.0, True), name="causal L > S, strided query")
    q, k, v = _qkv(make, dtype, (2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6))
    keep = make((5, 7), "bool")
    yield SampleInput(q, (k, v, keep), name="bool mask")
    q, k, v = _qkv(make, dtype, (2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6))
    yield SampleInput(q, (k, v, make((2, 1, 5, 7), dtype, -1, 1)), name="broadcast float mask")
    q, k, v = _qkv(make, dtype, (1, 3, 5, 4), (2, 1, 7, 4), (2, 1, 7, 6))
    yield SampleInput(q, (k, v), name="broadcast batch")
    q, k, v = _qkv(make, dtype, (3, 5, 4), (3, 7, 4), (3, 7, 6))
    yield SampleInput(q.transpose(-1, -2).contiguous().transpose(-1, -2), (k, v),
                      {"scale": 0.25}, name="3-d, column-major query")
    q, k, v = _qkv(make, dtype, (1, 1, 40, 8), (1, 1, 40, 8), (1, 1, 40, 8))
    yield SampleInput(q, (k, v), {"is_causal": True}, name="longer causal")


OPS = [
    # float16/bfloat16: PyTorch's CPU kernel rounds its intermediates to the half type at other
    # points than ours (which rounds once from float32): an ulp apart (6e-5 in float16, 1e-3
    # in bfloat16 at these magnitudes)
    OpInfo("nn.functional.scaled_dot_product_attention", sdpa_samples,
           dtypes=FLOATS, differentiable=True,
           dtype_tol=(("float16", 1e-4, 3e-3), ("bfloat16", 2e-3, 1.6e-2))),
]
