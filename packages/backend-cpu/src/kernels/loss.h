// Fused cross-entropy over logits: the forward (loss and row logsumexp) and the backward
// (the logits' gradient), overriding core's composite aten ops `aten::_cross_entropy_forward`
// and `aten::_cross_entropy_backward` (docs/architecture.md), whose composites stay the reference.
//
// `x` is a contiguous (rows, classes) matrix of dtype `dtype` (float32, float64, or float16 /
// bfloat16 computed in float and rounded once on store), `target` `rows` int64 class indices,
// `weight` `classes` values of `x`'s dtype or 0 (absent). A target equal to `ignore_index`
// counts with weight 0. `reduction` is PyTorch's enum: 0 none, 1 mean, anything else sum.
//
// Both return kOk, kBadTarget (some target that is not ignore_index lies outside [0, classes):
// nothing was written, the wrapper runs the composite, which raises PyTorch's error) or
// kBadDtype. Rows are split over the worker threads; row sums are combined per fixed block of
// rows in block order (parallel.h), so every result is independent of the thread count.
#pragma once

#include <cstdint>

namespace plait::cpu {

inline constexpr int kLossOk = 0;
inline constexpr int kLossBadTarget = 1;
inline constexpr int kLossBadDtype = 2;

// loss: `rows` values for reduction none, else one (the sum, or the sum divided by the summed
// weights of the targets: NaN when there are none); `lse`: the `rows` logsumexps of x's rows.
// Row r's loss is weight[t] * (lse[r] - x[r, t]) with t = target[r] (0 when ignored).
int cross_entropy_forward(int dtype, int64_t rows, int64_t classes, int64_t reduction,
                          int64_t ignore_index, uintptr_t loss, uintptr_t lse, uintptr_t x,
                          uintptr_t target, uintptr_t weight);

// grad_in (rows, classes) = (exp(x - lse) - onehot(target)) * weight[t] * g, row by row, with
// g = grad_out[r] (none), grad_out[0] (sum) or grad_out[0] / summed weights (mean); a row whose
// weight is 0 (ignored target) gets zeros, also when every target is ignored.
int cross_entropy_backward(int dtype, int64_t rows, int64_t classes, int64_t reduction,
                           int64_t ignore_index, uintptr_t grad_in, uintptr_t grad_out,
                           uintptr_t x, uintptr_t target, uintptr_t weight, uintptr_t lse);

}  // namespace plait::cpu
