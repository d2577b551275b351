"""Op database rows: convolutions (conv1d/2d/3d, conv_transpose1d/2d/3d, convolution).

Samples hold small integers, so every product and sum is exact in every dtype (bfloat16
included) and results do not depend on the order of accumulation: Plait and PyTorch agree
exactly. Each row has samples small enough for the float64 gradchecks (at most 60 input
elements) beside larger ones for strides, padding, dilation and groups.
"""

from __future__ import annotations

from . import FLOATS, INTS, OpInfo, SampleInput

# PyTorch's CPU convolutions accept integers (not bool); they wrap like the output's type.
NUMERIC = FLOATS + tuple(d for d in INTS if d != "uint8")


def _t(make, shape, dtype, noncontiguous=False):
    """Small integers in [-2, 3) (exact in every dtype), zeros for zero-size shapes."""
    torch = make.torch
    dt = getattr(torch, dtype)
    if 0 in shape:
        return torch.zeros(shape, dtype=dt)
    if noncontiguous:
        wide = make.rng.integers(-2, 3, tuple(shape[:-1]) + (2 * shape[-1],))
        return torch.tensor(wide.tolist(), dtype=dt)[..., ::2]
    return torch.tensor(make.rng.integers(-2, 3, shape).tolist(), dtype=dt).reshape(shape)


def _conv_samples(nd):
    def samples(torch, dtype, make):
        sp = (5, 4, 3)[:nd]
        k2 = (2, 2, 2)[:nd]
        # gradcheck-sized (<= 60 elements in all)
        yield SampleInput(_t(make, (1, 2) + sp[:nd], dtype), (_t(make, (2, 2) + k2, dtype),),
                          name="basic")
        yield SampleInput(_t(make, (1, 2) + sp[:nd], dtype), (_t(make, (2, 1) + k2, dtype),),
                          {"bias": _t(make, (2,), dtype), "groups": 2}, name="groups, bias")
        yield SampleInput(_t(make, (1, 1) + sp[:nd], dtype), (_t(make, (2, 1) + k2, dtype),),
                          {"stride": 2, "padding": 1, "dilation": 1}, name="stride, padding")
        yield SampleInput(_t(make, (2,) + sp[:nd], dtype), (_t(make, (1, 2) + k2, dtype),),
                          {"padding": "same"}, name="unbatched, same")
        # larger
        big = (7, 6, 5)[:nd]
        k3 = (3, 3, 3)[:nd]
        yield SampleInput(_t(make, (2, 4) + big, dtype), (_t(make, (6, 2) + k3, dtype),),
                          {"bias": _t(make, (6,), dtype), "stride": (2, 1, 2)[:nd],
                           "padding": (1, 0, 1)[:nd], "dilation": (1, 2, 1)[:nd],
                           "groups": 2}, name="everything")
        yield SampleInput(_t(make, (1, 3) + big, dtype, noncontiguous=True),
                          (_t(make, (3, 1) + k3, dtype),), {"groups": 3, "padding": "valid"},
                          name="depthwise, strided input")
        yield SampleInput(_t(make, (2, 3) + big, dtype), (_t(make, (4, 3) + (1,) * nd, dtype),),
                          {"stride": 2}, name="1x1 strided")
        yield SampleInput(_t(make, (0, 2) + big, dtype), (_t(make, (3, 2) + k2, dtype),),
                          name="empty batch")
    return samples


def _conv_transpose_samples(nd):
    def samples(torch, dtype, make):
        sp = (4, 3, 2)[:nd]
        k2 = (2, 2, 2)[:nd]
        yield SampleInput(_t(make, (1, 2) + sp, dtype), (_t(make, (2, 2) + k2, dtype),),
                          name="basic")
        yield SampleInput(_t(make, (1, 2) + sp, dtype), (_t(make, (2, 1) + k2, dtype),),
                          {"bias": _t(make, (2,), dtype), "stride": 2, "padding": 1,
                           "output_padding": 1, "groups": 2}, name="stride, groups, bias")
        yield SampleInput(_t(make, (2,) + sp, dtype), (_t(make, (2, 1) + k2, dtype),),
                          {"dilation": 2}, name="unbatched, dilation")
        big = (5, 4, 3)[:nd]
        k3 = (3, 3, 3)[:nd]
        yield SampleInput(_t(make, (2, 4) + big, dtype), (_t(make, (4, 3) + k3, dtype),),
                          {"bias": _t(make, (6,), dtype), "stride": (2, 1, 3)[:nd],
                           "padding": (1, 0, 1)[:nd], "output_padding": (1, 0, 2)[:nd],
                           "groups": 2, "dilation": (1, 2, 1)[:nd]}, name="everything")
        yield SampleInput(_t(make, (1, 3) + big, dtype, noncontiguous=True),
                          (_t(make, (3, 2) + k2, dtype),), {"stride": 3},
                          name="strided input, gaps")
        yield SampleInput(_t(make, (0, 2) + big, dtype), (_t(make, (2, 3) + k2, dtype),),
                          name="empty batch")
    return samples


def convolution_samples(torch, dtype, make):
    yield SampleInput(_t(make, (1, 2, 4, 4), dtype), (_t(make, (3, 2, 2, 2), dtype),
                      _t(make, (3,), dtype), [2, 1], [1, 0], [1, 1], False, [0, 0], 1),
                      name="conv2d")
    yield SampleInput(_t(make, (1, 2, 3), dtype), (_t(make, (2, 2, 3), dtype), None, [2], [1],
                      [1], True, [1], 1), name="transposed 1d")
    yield SampleInput(_t(make, (2, 4, 3, 3), dtype), (_t(make, (4, 1, 2, 2), dtype), None,
                      [1], [1], [2], True, [0], 2), name="transposed, one value per param")


OPS: list[OpInfo] = [
    OpInfo("conv1d", _conv_samples(1), dtypes=NUMERIC, differentiable=True),
    OpInfo("conv2d", _conv_samples(2), dtypes=NUMERIC, differentiable=True),
    OpInfo("conv3d", _conv_samples(3), dtypes=FLOATS, differentiable=True),
    OpInfo("conv_transpose1d", _conv_transpose_samples(1), dtypes=NUMERIC,
           differentiable=True),
    OpInfo("conv_transpose2d", _conv_transpose_samples(2), dtypes=FLOATS, differentiable=True),
    OpInfo("conv_transpose3d", _conv_transpose_samples(3), dtypes=FLOATS, differentiable=True),
    OpInfo("convolution", convolution_samples, dtypes=FLOATS, differentiable=True),
]
