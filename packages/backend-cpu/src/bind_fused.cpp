// Bindings of the fused normalisation kernels (kernels/fused_norm.cpp): softmax / log_softmax
// and layer norm, forward and backward. Operands are contiguous; plait_backend_cpu/kernels/
// fused.py checks them and allocates the outputs.
#include <optional>

#include "bindings.h"
#include "kernels/fused_norm.h"

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

void bind_fused(nb::module_& m) {
  m.def(
      "softmax_forward",
      [](int dtype, bool log, int64_t outer, int64_t dim, int64_t inner, uintptr_t out,
         uintptr_t in) {
        ReleaseGilAbove nogil(outer * dim * inner);
        return softmax_forward(dtype, log, outer, dim, inner, out, in);
      },
      "dtype"_a, "log"_a, "outer"_a, "dim"_a, "inner"_a, "out"_a, "input"_a,
      "softmax (log_softmax when `log`) of a contiguous (outer, dim, inner) tensor along dim.");
  m.def(
      "softmax_backward",
      [](int dtype, bool log, int64_t outer, int64_t dim, int64_t inner, uintptr_t grad_in,
         uintptr_t grad_out, uintptr_t output) {
        ReleaseGilAbove nogil(outer * dim * inner);
        return softmax_backward(dtype, log, outer, dim, inner, grad_in, grad_out, output);
      },
      "dtype"_a, "log"_a, "outer"_a, "dim"_a, "inner"_a, "grad_in"_a, "grad_out"_a, "output"_a,
      "The input gradient of softmax (log_softmax when `log`) from its output.");
  m.def(
      "layer_norm_forward",
      [](int dtype, int64_t rows, int64_t cols, double eps, uintptr_t out, uintptr_t mean,
         uintptr_t rstd, uintptr_t x, uintptr_t weight, uintptr_t bias) {
        ReleaseGilAbove nogil(rows * cols);
        return layer_norm_forward(dtype, rows, cols, eps, out, mean, rstd, x, weight, bias);
      },
      "dtype"_a, "rows"_a, "cols"_a, "eps"_a, "out"_a, "mean"_a, "rstd"_a, "x"_a, "weight"_a,
      "bias"_a, "Layer norm of a contiguous (rows, cols) matrix over its rows (0: no weight/bias).");
  m.def(
      "layer_norm_backward",
      [](int dtype, int64_t rows, int64_t cols, uintptr_t grad_in, uintptr_t grad_weight,
         uintptr_t grad_bias, uintptr_t grad_out, uintptr_t x, uintptr_t mean, uintptr_t rstd,
         uintptr_t weight) {
        ReleaseGilAbove nogil(rows * cols);
        return layer_norm_backward(dtype, rows, cols, grad_in, grad_weight, grad_bias, grad_out,
                                   x, mean, rstd, weight);
      },
      "dtype"_a, "rows"_a, "cols"_a, "grad_in"_a, "grad_weight"_a, "grad_bias"_a, "grad_out"_a,
      "x"_a, "mean"_a, "rstd"_a, "weight"_a,
      "Gradients of layer_norm_forward (an output address of 0 is not computed).");
}

}  // namespace plait::cpu
