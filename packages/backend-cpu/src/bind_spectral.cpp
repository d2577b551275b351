// Bindings of the batched FFT (kernels/fft.cpp). plait_backend_cpu/kernels/spectral.py
// checks the operands and passes their data pointers (storage offsets applied) and strides.
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "kernels/fft.h"

using namespace nanobind::literals;

namespace plait::cpu {

void bind_spectral(nb::module_& m) {
  m.attr("FFT_OK") = kFftOk;
  m.def("fft_length_supported", &fft_length_supported, "n"_a,
        "True when the native FFT takes signals of length n (prime factors 2, 3, 5).");
  m.def(
      "fft",
      [](int kind, bool double_precision, bool forward, int64_t length, int64_t in_length,
         int64_t out_length, double scale, uintptr_t in, uintptr_t out, int64_t in_stride,
         int64_t out_stride, std::vector<int64_t> batch_shape,
         std::vector<int64_t> in_batch_strides, std::vector<int64_t> out_batch_strides) {
        if (kind < 0 || kind > 2) return kFftUnsupported;
        FftCall call{static_cast<FftKind>(kind), double_precision, forward, length, in_length,
                     out_length, scale, in, out, in_stride, out_stride, std::move(batch_shape),
                     std::move(in_batch_strides), std::move(out_batch_strides)};
        int64_t elements = length;
        for (int64_t size : call.batch_shape) elements *= size;
        std::optional<nb::gil_scoped_release> release;
        if (elements > kReleaseGilAbove) release.emplace();
        return fft_run(call);
      },
      "kind"_a, "double_precision"_a, "forward"_a, "length"_a, "in_length"_a, "out_length"_a,
      "scale"_a, "input"_a, "output"_a, "in_stride"_a, "out_stride"_a, "batch_shape"_a,
      "in_batch_strides"_a, "out_batch_strides"_a,
      "One-dimensional FFTs of a batch of strided signals (kind 0 c2c, 1 r2c, 2 c2r; strides "
      "in elements of each operand's type). Returns FFT_OK, or another code with nothing "
      "written (a length or layout the kernel does not take).");
}

}  // namespace plait::cpu
