// Bindings of the fused GELU kernels (kernels/activation.cpp). Operands are contiguous;
// plait_backend_cpu/kernels/activation.py checks them and allocates the outputs.
#include <optional>

#include "bindings.h"
#include "kernels/activation.h"

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

void bind_activation(nb::module_& m) {
  m.def(
      "gelu_forward",
      [](int dtype, bool tanh, int64_t n, uintptr_t out, uintptr_t x) {
        ReleaseGilAbove nogil(n);
        return gelu_forward(dtype, tanh, n, out, x);
      },
      "dtype"_a, "tanh"_a, "n"_a, "out"_a, "x"_a,
      "gelu of n contiguous elements (the tanh approximation when `tanh`).");
  m.def(
      "gelu_backward",
      [](int dtype, bool tanh, int64_t n, uintptr_t grad_in, uintptr_t grad_out, uintptr_t x) {
        ReleaseGilAbove nogil(n);
        return gelu_backward(dtype, tanh, n, grad_in, grad_out, x);
      },
      "dtype"_a, "tanh"_a, "n"_a, "grad_in"_a, "grad_out"_a, "x"_a,
      "grad_out * gelu'(x) over n contiguous elements (the tanh approximation when `tanh`).");
}

}  // namespace plait::cpu
