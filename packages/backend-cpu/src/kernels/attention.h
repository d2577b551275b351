// Fused scaled dot-product attention (aten::_scaled_dot_product_flash_attention_for_cpu and
// its backward): per batch entry and block of query rows, S = scale * Q K^T through
// blas::gemm, the mask added and the causal triangle cut, a softmax in place, then P V through
// blas::gemm. Only O(rows x S) scratch per thread; the logsumexp of every query row is kept
// for the backward pass, which recomputes P from it.
#pragma once

#include <cstdint>
#include <vector>

namespace plait::cpu {

// A (batch..., rows, cols) operand: its address (element 0), one stride per batch dimension
// (0 where it broadcasts) and the strides of its two matrix dimensions, in elements. Q, K, V
// (and their gradients) need one of the matrix strides to be 1 (row- or column-major, the
// other at least the extent it steps over); the mask may have any strides.
struct AttentionOperand {
  uintptr_t ptr = 0;
  std::vector<int64_t> batch_strides;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

struct AttentionShape {
  std::vector<int64_t> batch;  // the broadcast batch shape
  int64_t L = 0;               // query rows
  int64_t S = 0;               // key/value rows
  int64_t E = 0;               // query/key width
  int64_t Ev = 0;              // value width
};

// out: contiguous (batch..., L, Ev); logsumexp: contiguous (batch..., L), -inf for a row that
// sees no key (its output row is 0). `mask` is null or an additive mask of the same dtype.
// float32 and float64 only; returns false (nothing written) for anything else.
bool attention_forward(int dtype, const AttentionShape& shape, const AttentionOperand& q,
                       const AttentionOperand& k, const AttentionOperand& v,
                       const AttentionOperand* mask, uintptr_t out, uintptr_t logsumexp,
                       double scale, bool is_causal);

// Gradients of attention_forward. grad_out and out are contiguous (batch..., L, Ev),
// logsumexp contiguous (batch..., L); grad_q (batch..., L, E), grad_k (batch..., S, E) and
// grad_v (batch..., S, Ev) are contiguous outputs with the full batch shape (the caller sums
// broadcast dimensions down). Threads over batch entries.
bool attention_backward(int dtype, const AttentionShape& shape, uintptr_t grad_out,
                        const AttentionOperand& q, const AttentionOperand& k,
                        const AttentionOperand& v, const AttentionOperand* mask, uintptr_t out,
                        uintptr_t logsumexp, uintptr_t grad_q, uintptr_t grad_k,
                        uintptr_t grad_v, double scale, bool is_causal);

}  // namespace plait::cpu
