// The convolution primitive and the fused convolution backward (N-d, grouped, strided, padded,
// dilated, plain or transposed), as im2col / col2im + GEMM through blas.h.
//
// Both directions see the convolution from one side: the "image" tensor is indexed by the
// positions the kernel is laid over (the input of a plain convolution, the output of a
// transposed one) and the "grid" tensor by the kernel's placements (the output of a plain
// convolution, the input of a transposed one). Per sample and group the weight is then one
// row-major (grid channels) x (image channels * kernel volume) matrix W for both layouts
// PyTorch uses ((G*Co, Ci, *K) plain, (G*Ci, Co, *K) transposed), and
//   grid  = W @ im2col(image)            (plain forward, transposed input gradient)
//   image = col2im(W^T @ grid)           (transposed forward, plain input gradient)
//   dW   += grid @ im2col(image)^T       (the weight gradient of both).
//
// Small 2-d float convolutions (a grid of at most 1024 positions, at least 32 reduction rows)
// skip the columns: a direct kernel keeps a register tile of output columns x 16 channels
// (forward) or weight rows x 16 channels (weight gradient) and runs the whole reduction in it.
//
// Operands may have any strides and float32/float64/float16/bfloat16 storage (16-bit floats
// compute in float32 buffers); the forward primitive also takes the integer dtypes (exact,
// wrapping like PyTorch). Outputs must be contiguous. Work is split over (sample, group)
// pairs with bounded per-thread column buffers; a single pair leaves the threading to the
// GEMM. The weight gradient sums per-block partials in block order, so results do not depend
// on the thread count.
#pragma once

#include <cstdint>

#include "strided.h"

namespace plait::cpu {

struct ConvParams {
  Dims stride, padding, dilation;
  bool transposed = false;
  int64_t groups = 1;
};

// The `convolution` primitive (torch/_prims.py): out (N, G*Co, *O), input (N, G*Ci, *S),
// weight as PyTorch lays it out. Returns false (nothing written) for a dtype it does not
// handle (bool) or an output that is not contiguous; throws std::invalid_argument on
// inconsistent shapes.
bool convolution(int dtype, const Dims& out_shape, uintptr_t out, const Dims& out_strides,
                 const Dims& in_shape, uintptr_t input, const Dims& in_strides,
                 const Dims& w_shape, uintptr_t weight, const Dims& w_strides,
                 const ConvParams& params);

// `aten::convolution_backward` of the forward convolution(input, weight, params) whose output
// gradient is `grad_out` (floating dtypes only: false for the others). Each of grad_input (input's shape), grad_weight (weight's shape),
// grad_bias (channels of grad_out) is a contiguous output, or 0 when not wanted.
bool convolution_backward(int dtype, const Dims& go_shape, uintptr_t grad_out,
                          const Dims& go_strides, const Dims& in_shape, uintptr_t input,
                          const Dims& in_strides, const Dims& w_shape, uintptr_t weight,
                          const Dims& w_strides, const ConvParams& params,
                          uintptr_t grad_input, uintptr_t grad_weight, uintptr_t grad_bias);

}  // namespace plait::cpu
