// Fused normalisation kernels: softmax / log_softmax (forward and backward) and layer norm
// (forward and backward). They override the composite aten ops of core (`aten::_softmax`,
// `aten::native_layer_norm`...; docs/architecture.md), whose composites stay the reference.
//
// Every operand is contiguous (the Python wrappers in plait_backend_cpu/kernels/fused.py make
// sure of it) and of dtype `dtype`: float32, float64, float16 or bfloat16 (the 16-bit types
// load into float, compute in float and round once on store). Another dtype returns false and
// the wrapper runs the composite. Rows are split over the worker threads (parallel.h); the
// results do not depend on the thread count.
#pragma once

#include <cstdint>

namespace plait::cpu {

// softmax (or log_softmax when `log`) of `in` seen as (outer, dim, inner), along the middle
// dimension, into `out` of the same shape. As the composite: a row's maximum shifts it before
// exp unless that maximum is infinite.
bool softmax_forward(int dtype, bool log, int64_t outer, int64_t dim, int64_t inner,
                     uintptr_t out, uintptr_t in);

// The backward of softmax (`grad_in = y * (g - sum(g * y))`) or log_softmax (`grad_in = g -
// exp(y) * sum(g)`) for the output `output` (y) and its gradient `grad_out` (g), same layout.
bool softmax_backward(int dtype, bool log, int64_t outer, int64_t dim, int64_t inner,
                      uintptr_t grad_in, uintptr_t grad_out, uintptr_t output);

// Layer norm of `x` seen as (rows, cols) over its rows: `out = (x - mean) * rstd * weight +
// bias` with `rstd = 1 / sqrt(var + eps)` (biased variance); `mean` and `rstd` get one value per
// row. `weight` and `bias` (cols elements) may be 0 (absent).
bool layer_norm_forward(int dtype, int64_t rows, int64_t cols, double eps, uintptr_t out,
                        uintptr_t mean, uintptr_t rstd, uintptr_t x, uintptr_t weight,
                        uintptr_t bias);

// The backward of layer_norm_forward for the gradient `grad_out` of `out`: with h = grad_out *
// weight and xhat = (x - mean) * rstd, `grad_in = rstd * (h - mean(h) - xhat * mean(h * xhat))`
// per row, `grad_weight = sum over rows of grad_out * xhat`, `grad_bias = sum over rows of
// grad_out`. An output address of 0 is not computed; `weight` may be 0 (absent).
bool layer_norm_backward(int dtype, int64_t rows, int64_t cols, uintptr_t grad_in,
                         uintptr_t grad_weight, uintptr_t grad_bias, uintptr_t grad_out,
                         uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t weight);

}  // namespace plait::cpu
