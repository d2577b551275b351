// Bindings of the convolution kernels (kernels/conv.cpp).
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <optional>

#include "bindings.h"
#include "kernels/conv.h"

using namespace nanobind::literals;

namespace plait::cpu {
namespace {

ConvParams params_of(const Dims& stride, const Dims& padding, const Dims& dilation,
                     bool transposed, int64_t groups) {
  ConvParams p;
  p.stride = stride;
  p.padding = padding;
  p.dilation = dilation;
  p.transposed = transposed;
  p.groups = groups;
  return p;
}

// Multiply-adds, not elements, decide whether the GIL is worth releasing.
bool worth_releasing(const Dims& out_shape, const Dims& w_shape) {
  const double per_output = w_shape.size() > 1
      ? static_cast<double>(numel(w_shape)) / static_cast<double>(std::max<int64_t>(w_shape[0], 1))
      : 1.0;
  return static_cast<double>(numel(out_shape)) * per_output >
         static_cast<double>(kReleaseGilAbove);
}

}  // namespace

void bind_conv(nb::module_& m) {
  m.def(
      "convolution",
      [](int dtype, const Dims& out_shape, uintptr_t out, const Dims& out_strides,
         const Dims& in_shape, uintptr_t input, const Dims& in_strides, const Dims& w_shape,
         uintptr_t weight, const Dims& w_strides, const Dims& stride, const Dims& padding,
         const Dims& dilation, bool transposed, int64_t groups) {
        std::optional<nb::gil_scoped_release> nogil;
        if (worth_releasing(out_shape, w_shape)) nogil.emplace();
        return convolution(dtype, out_shape, out, out_strides, in_shape, input, in_strides,
                           w_shape, weight, w_strides,
                           params_of(stride, padding, dilation, transposed, groups));
      },
      "dtype"_a, "out_shape"_a, "out"_a, "out_strides"_a, "in_shape"_a, "input"_a,
      "in_strides"_a, "w_shape"_a, "weight"_a, "w_strides"_a, "stride"_a, "padding"_a,
      "dilation"_a, "transposed"_a, "groups"_a,
      "The convolution primitive into a contiguous `out`; False leaves the case to the "
      "reference kernel.");
  m.def(
      "convolution_backward",
      [](int dtype, const Dims& go_shape, uintptr_t grad_out, const Dims& go_strides,
         const Dims& in_shape, uintptr_t input, const Dims& in_strides, const Dims& w_shape,
         uintptr_t weight, const Dims& w_strides, const Dims& stride, const Dims& padding,
         const Dims& dilation, bool transposed, int64_t groups, uintptr_t grad_input,
         uintptr_t grad_weight, uintptr_t grad_bias) {
        std::optional<nb::gil_scoped_release> nogil;
        if (worth_releasing(go_shape, w_shape)) nogil.emplace();
        return convolution_backward(dtype, go_shape, grad_out, go_strides, in_shape, input,
                                    in_strides, w_shape, weight, w_strides,
                                    params_of(stride, padding, dilation, transposed, groups),
                                    grad_input, grad_weight, grad_bias);
      },
      "dtype"_a, "go_shape"_a, "grad_out"_a, "go_strides"_a, "in_shape"_a, "input"_a,
      "in_strides"_a, "w_shape"_a, "weight"_a, "w_strides"_a, "stride"_a, "padding"_a,
      "dilation"_a, "transposed"_a, "groups"_a, "grad_input"_a, "grad_weight"_a,
      "grad_bias"_a,
      "Gradients of a convolution into contiguous outputs (0 for one not wanted); False "
      "leaves the case to the composite.");
}

}  // namespace plait::cpu
