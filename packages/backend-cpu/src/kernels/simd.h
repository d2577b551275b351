// Run-time ISA selection for hot loops.
//
// Wheels must run on any x86-64 CPU, so nothing is compiled with -march. A hot inner-loop
// function marked PLAIT_CLONES is compiled three times (x86-64-v4: AVX-512; x86-64-v3: AVX2+FMA+F16C; baseline SSE2) and the
// dynamic loader picks the best clone for the running CPU once (GNU ifunc). Keep marked
// functions small and simple (unit-stride loops the compiler vectorises) and call them from
// the unmarked dispatch code. Elsewhere (other compilers or architectures) the macro is empty
// and the baseline build runs.
#pragma once

#include <cstdlib>

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(PLAIT_NO_CLONES)
#define PLAIT_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PLAIT_CLONES
#endif

namespace plait::cpu {

// Whether the running CPU executes the AVX-512 subsets (F, BW, VL, DQ) of the x86-64-v4 clones.
// Code written with explicit AVX-512 instructions checks this besides native_vector_bytes():
// a forced width only narrows the choice of instructions, it never picks ones the CPU lacks
// (GCC vector types are safe at any width, their arithmetic is lowered to the clone's ISA).
inline bool cpu_has_avx512() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  }();
  return has;
#else
  return false;
#endif
}

// Whether the running CPU executes AVX2 (code written with explicit AVX2 instructions checks
// this besides native_vector_bytes(), as cpu_has_avx512()).
inline bool cpu_has_avx2() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
#else
  return false;
#endif
}

// Bytes of the widest vector register the running CPU computes with: 64 (AVX-512), 32 (AVX2)
// or 16. For loops whose GCC vector types must match the clone's registers: GCC splits a
// too-wide vector's arithmetic into native halves, but lowers a too-wide compare-select one
// element at a time (a 64-byte amax in the AVX2 clone ran 10x slower than 32-byte vectors).
// The environment variable PLAIT_CPU_VECTOR_BYTES (16, 32 or 64, read once) overrides the
// answer, so that tests run every width's code on one machine: a width the CPU lacks is
// slower there, never wrong, and the kernels promise the same results at every width.
inline int native_vector_bytes() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const int bytes = [] {
    if (const char* forced = std::getenv("PLAIT_CPU_VECTOR_BYTES")) {
      const int value = std::atoi(forced);
      if (value == 16 || value == 32 || value == 64) return value;
    }
    if (cpu_has_avx512()) return 64;
    return cpu_has_avx2() ? 32 : 16;
  }();
  return bytes;
#else
  return 16;
#endif
}

}  // namespace plait::cpu
