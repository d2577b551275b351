// Python bindings of plait_backend_cpu._C: the host allocator, the primitive kernels and
// build diagnostics. Kernels take addresses as ints and layouts as int sequences; see
// kernels/kernels.h for their contract and plait_backend_cpu/kernels.py for the wrappers that
// core calls.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>

#include "kernels/allocator.h"
#include "kernels/dtype.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"
#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace plait::cpu {
namespace {

nb::dict allocator_stats() {
  const AllocatorStats s = host_allocator().stats();
  nb::dict d;
  d["allocated_bytes"] = s.allocated_bytes;
  d["peak_bytes"] = s.peak_bytes;
  d["cached_bytes"] = s.cached_bytes;
  d["cache_limit"] = s.cache_limit;
  d["hits"] = s.hits;
  d["misses"] = s.misses;
  return d;
}

nb::list simd_features() {
  nb::list features;
#if defined(__SSE2__)
  features.append("sse2");
#endif
#if defined(__AVX__)
  features.append("avx");
#endif
#if defined(__AVX2__)
  features.append("avx2");
#endif
#if defined(__FMA__)
  features.append("fma");
#endif
#if defined(__AVX512F__)
  features.append("avx512f");
#endif
#if defined(__ARM_NEON)
  features.append("neon");
#endif
  return features;
}

nb::dict build_info() {
  nb::dict d;
#if defined(__clang__)
  d["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  d["compiler"] = std::string("gcc ") + __VERSION__;
#elif defined(_MSC_VER)
  d["compiler"] = std::string("msvc ") + std::to_string(_MSC_VER);
#else
  d["compiler"] = std::string("unknown");
#endif
  d["flags"] = std::string(PLAIT_BUILD_FLAGS);
  d["build_type"] = std::string(PLAIT_BUILD_TYPE);
  d["simd"] = simd_features();
  d["alignment"] = kAlignment;
  d["max_dims"] = kMaxDims;
  d["nanobind"] = std::to_string(NB_VERSION_MAJOR) + "." + std::to_string(NB_VERSION_MINOR) +
                  "." + std::to_string(NB_VERSION_PATCH);
  return d;
}

nb::tuple dtype_names() {
  nb::list names;
#define PLAIT_NAME(CODE, TYPE, NAME) names.append(NAME);
  PLAIT_CPU_DTYPES(PLAIT_NAME)
#undef PLAIT_NAME
  return nb::tuple(names);
}

}  // namespace
}  // namespace plait::cpu

NB_MODULE(_C, m) {
  using namespace plait::cpu;
  m.doc() = "Native part of plait-backend-cpu: host allocator and primitive kernels.";
  // Kernels, plans and allocator blocks live in Python-level caches that the interpreter
  // frees in no fixed order at exit; nanobind's exit-time leak report would list them as
  // leaks although the process is ending and the memory is returned with it.
  nb::set_leak_warnings(false);

  m.attr("DTYPES") = dtype_names();
  m.attr("ALIGNMENT") = kAlignment;

  // Allocator.
  bind_fast(m);  // HostBlock, host_view and the hot path's fast_* entry points
  // The allocator hook's `allocate(nbytes, device_index)` itself (HostAllocator binds it
  // directly: every tensor allocates through it); the host is one device, so the index is
  // ignored.
  m.def(
      "allocate",
      [](int64_t nbytes, int64_t /*device_index*/) {
        if (nbytes < 0) {
          throw nb::value_error(
              ("cannot allocate a negative number of bytes (" + std::to_string(nbytes) + ")")
                  .c_str());
        }
        return new HostBlock(static_cast<size_t>(nbytes));
      },
      "nbytes"_a, "device_index"_a = 0, nb::rv_policy::take_ownership,
      "A HostBlock of `nbytes` (64-byte aligned) from the host allocator's free lists.");
  m.def("size_class", &size_class, "nbytes"_a, "The block size serving a request of `nbytes`.");
  m.def("allocator_stats", &allocator_stats,
        "allocated/peak/cached bytes, the cache limit, free-list hits and misses.");
  m.def("empty_cache", [] { host_allocator().empty_cache(); },
        "Return every cached block to the system.");
  m.def("set_cache_limit", [](size_t bytes) { host_allocator().set_cache_limit(bytes); },
        "bytes"_a, "Cap the bytes kept in free lists (trims the cache at once).");
  m.def("reset_peak_memory_stats", [] { host_allocator().reset_peak(); });

  // Intra-op threads (kernels/parallel.h); torch.set_num_threads reaches set_num_threads.
  m.def("get_num_threads", &num_threads, "Threads the kernels use, the caller included.");
  m.def("set_num_threads", &set_num_threads, "n"_a,
        "Set the threads the kernels use (values below 1 mean 1).");
  m.def("parallel_for_address",
        [] { return reinterpret_cast<uintptr_t>(&plait_cpu_parallel_for); },
        "Address of the pool's C entry for generated code: void (*)(int64_t n, int64_t grain, "
        "void (*fn)(int64_t begin, int64_t end, void* ctx), void* ctx) (kernels/parallel.h).");

  // Kernels, area by area: each returns False when it leaves the case to the reference kernel.
  bind_elementwise(m);
  bind_reduce(m);
  bind_scan(m);
  bind_index(m);
  bind_sort(m);
  bind_random(m);
  bind_linalg(m);
  bind_optim(m);
  bind_attention(m);
  bind_conv(m);
  bind_fused(m);
  bind_activation(m);
  bind_rnn(m);
  bind_loss(m);
  bind_ternary(m);
  bind_spectral(m);

  m.def("build_info", &build_info, "Compiler, flags and SIMD features of this build.");
}
