// The fused Adam / AdamW step (torch._fused_adam_, torch._fused_adamw_): every element of
// every parameter is updated in one pass that reads the parameter, its gradient and moment
// buffers once and writes them once. The math is torch.optim.Adam's single-tensor path (see
// core's torch/_fused_adam.py); float16 and bfloat16 compute in float and round on store.
#pragma once

#include <cstdint>
#include <vector>

namespace plait::cpu {

struct AdamOptions {
  double lr = 0.0;
  double beta1 = 0.0;
  double beta2 = 0.0;
  double weight_decay = 0.0;
  double eps = 0.0;
  bool amsgrad = false;
  bool maximize = false;
  bool decoupled = false;       // AdamW: param *= 1 - lr * weight_decay
  bool has_grad_scale = false;  // grad /= grad_scale, written back into grad
  double grad_scale = 1.0;
};

// One list of contiguous tensors of dtype `dtype`: params[i], grads[i], exp_avgs[i],
// exp_avg_sqs[i] (and max_exp_avg_sqs[i] with amsgrad) are addresses of numels[i] elements;
// steps[i] is the tensor's (already incremented) step count. Threads over all elements.
// Returns false (nothing written) for a dtype it does not handle or inconsistent list sizes.
bool fused_adam(int dtype, const std::vector<int64_t>& numels,
                const std::vector<uintptr_t>& params, const std::vector<uintptr_t>& grads,
                const std::vector<uintptr_t>& exp_avgs, const std::vector<uintptr_t>& exp_avg_sqs,
                const std::vector<uintptr_t>& max_exp_avg_sqs, const std::vector<double>& steps,
                const AdamOptions& options);

}  // namespace plait::cpu
