// Bindings of the fused optimizer steps (kernels/adam.cpp).
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "kernels/adam.h"

using namespace nanobind::literals;

namespace plait::cpu {

void bind_optim(nb::module_& m) {
  m.def(
      "fused_adam",
      [](int dtype, const std::vector<int64_t>& numels, const std::vector<uintptr_t>& params,
         const std::vector<uintptr_t>& grads, const std::vector<uintptr_t>& exp_avgs,
         const std::vector<uintptr_t>& exp_avg_sqs, const std::vector<uintptr_t>& max_exp_avg_sqs,
         const std::vector<double>& steps, double lr, double beta1, double beta2,
         double weight_decay, double eps, bool amsgrad, bool maximize, bool decoupled,
         bool has_grad_scale, double grad_scale) {
        AdamOptions o;
        o.lr = lr;
        o.beta1 = beta1;
        o.beta2 = beta2;
        o.weight_decay = weight_decay;
        o.eps = eps;
        o.amsgrad = amsgrad;
        o.maximize = maximize;
        o.decoupled = decoupled;
        o.has_grad_scale = has_grad_scale;
        o.grad_scale = grad_scale;
        int64_t total = 0;
        for (const int64_t n : numels) total += n > 0 ? n : 0;
        MaybeReleaseGil nogil(Dims{total});
        return fused_adam(dtype, numels, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                          steps, o);
      },
      "dtype"_a, "numels"_a, "params"_a, "grads"_a, "exp_avgs"_a, "exp_avg_sqs"_a,
      "max_exp_avg_sqs"_a, "steps"_a, "lr"_a, "beta1"_a, "beta2"_a, "weight_decay"_a, "eps"_a,
      "amsgrad"_a, "maximize"_a, "decoupled"_a, "has_grad_scale"_a, "grad_scale"_a,
      "One Adam (decoupled: AdamW) step over lists of contiguous tensors of one dtype, in "
      "place; False when it leaves the case to the composite.");
}

}  // namespace plait::cpu
