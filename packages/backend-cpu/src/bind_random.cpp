// Bindings of the random kernels (kernels/random.cpp): random_bits_ and the fused samplers.
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "kernels/reduce.h"

using namespace nanobind::literals;

namespace plait::cpu {

void bind_random(nb::module_& m) {
  m.def(
      "random_bits",
      [](const Dims& shape, uintptr_t out, const Dims& out_strides, uint64_t seed,
         uint64_t offset) {
        MaybeReleaseGil nogil(shape);
        return random_bits(shape, out, out_strides, seed, offset);
      },
      "shape"_a, "out"_a, "out_strides"_a, "seed"_a, "offset"_a,
      "Philox4x32-10 words into a contiguous int64 tensor; seed and offset are unsigned 64-bit.");
  m.def(
      "random_uniform",
      [](int dtype, int64_t n, uintptr_t out, uint64_t seed, uint64_t offset, bool unit,
         double scale, double low) {
        MaybeReleaseGil nogil({n});
        return random_uniform(dtype, n, out, seed, offset, unit, scale, low);
      },
      "dtype"_a, "n"_a, "out"_a, "seed"_a, "offset"_a, "unit"_a, "scale"_a, "low"_a,
      "Uniform values into n contiguous elements, as core's composite draws them.");
  m.def(
      "random_normal",
      [](int dtype, int64_t n, uintptr_t out, uint64_t seed, uint64_t offset, double mean,
         double std, bool scaled, bool shifted) {
        MaybeReleaseGil nogil({n});
        return random_normal(dtype, n, out, seed, offset, mean, std, scaled, shifted);
      },
      "dtype"_a, "n"_a, "out"_a, "seed"_a, "offset"_a, "mean"_a, "std"_a, "scaled"_a,
      "shifted"_a, "Normal values (Box-Muller) into n contiguous elements, as core's composite.");
  m.def(
      "random_bernoulli",
      [](int dtype, int64_t n, uintptr_t out, uint64_t seed, uint64_t offset, double p) {
        MaybeReleaseGil nogil({n});
        return random_bernoulli(dtype, n, out, seed, offset, p);
      },
      "dtype"_a, "n"_a, "out"_a, "seed"_a, "offset"_a, "p"_a,
      "0/1 draws of probability p into n contiguous elements, as core's composite.");
}

}  // namespace plait::cpu
