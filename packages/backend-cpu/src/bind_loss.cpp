// Bindings of the fused cross-entropy kernels (kernels/loss.cpp). Operands are contiguous;
// plait_backend_cpu/kernels/loss.py checks them and allocates the outputs.
#include <optional>

#include "bindings.h"
#include "kernels/loss.h"

using namespace nanobind::literals;

namespace plait::cpu {
namespace {

// Releases the GIL for kernels over more than kReleaseGilAbove elements.
class ReleaseGilAbove {
 public:
  explicit ReleaseGilAbove(int64_t elements) {
    if (elements > kReleaseGilAbove) release_.emplace();
  }

 private:
  std::optional<nb::gil_scoped_release> release_;
};

}  // namespace

void bind_loss(nb::module_& m) {
  m.attr("LOSS_OK") = kLossOk;
  m.attr("LOSS_BAD_TARGET") = kLossBadTarget;
  m.def(
      "cross_entropy_forward",
      [](int dtype, int64_t rows, int64_t classes, int64_t reduction, int64_t ignore_index,
         uintptr_t loss, uintptr_t lse, uintptr_t x, uintptr_t target, uintptr_t weight) {
        ReleaseGilAbove nogil(rows * classes);
        return cross_entropy_forward(dtype, rows, classes, reduction, ignore_index, loss, lse,
                                     x, target, weight);
      },
      "dtype"_a, "rows"_a, "classes"_a, "reduction"_a, "ignore_index"_a, "loss"_a, "lse"_a,
      "x"_a, "target"_a, "weight"_a,
      "Cross-entropy of contiguous (rows, classes) logits against int64 class indices "
      "(weight 0: none); returns LOSS_OK, LOSS_BAD_TARGET or another code (unsupported).");
  m.def(
      "cross_entropy_backward",
      [](int dtype, int64_t rows, int64_t classes, int64_t reduction, int64_t ignore_index,
         uintptr_t grad_in, uintptr_t grad_out, uintptr_t x, uintptr_t target, uintptr_t weight,
         uintptr_t lse) {
        ReleaseGilAbove nogil(rows * classes);
        return cross_entropy_backward(dtype, rows, classes, reduction, ignore_index, grad_in,
                                      grad_out, x, target, weight, lse);
      },
      "dtype"_a, "rows"_a, "classes"_a, "reduction"_a, "ignore_index"_a, "grad_in"_a,
      "grad_out"_a, "x"_a, "target"_a, "weight"_a, "lse"_a,
      "The logits' gradient of cross_entropy_forward from its saved logsumexp.");
}

}  // namespace plait::cpu
