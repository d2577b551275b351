// Fused GELU kernels: the forward and the backward of `aten::gelu` (approximate "none": x Phi(x),
// Phi the standard normal CDF; "tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))). They
// override core's composite aten ops `aten::gelu` / `aten::gelu_backward`, which stay the
// reference (docs/ops.md, "Fused composites").
//
// Every operand is contiguous (plait_backend_cpu/kernels/activation.py makes sure of it), holds
// `n` elements and has dtype `dtype`: float32, float64, float16 or bfloat16 (the 16-bit types
// load into float, compute in float and round once on store). Another dtype returns false and
// the wrapper runs the composite. float32 uses the vectorised erf/exp of vecmath.h, float64
// libm (erfc for the exact form, which keeps the far negative tail's digits; the tanh form
// goes through sigmoid(2u) = (1 + tanh u) / 2 in every dtype, for the same reason). Elements
// are split over the worker threads; each is computed the same way whatever the split.
#pragma once

#include <cstdint>

namespace plait::cpu {

// out = gelu(x), the tanh approximation when `tanh`.
bool gelu_forward(int dtype, bool tanh, int64_t n, uintptr_t out, uintptr_t x);

// grad_in = grad_out * gelu'(x), the tanh approximation's derivative when `tanh`.
bool gelu_backward(int dtype, bool tanh, int64_t n, uintptr_t grad_in, uintptr_t grad_out,
                   uintptr_t x);

}  // namespace plait::cpu
