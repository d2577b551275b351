// Run-time ISA selection for hot loops.
//
// Wheels must run on any x86-64 CPU, so nothing is compiled with -march. A hot inner-loop
// function marked PLAIT_CLONES is compiled three times (x86-64-v4: AVX-512; x86-64-v3: AVX2+FMA+F16C; baseline SSE2) and the
// dynamic loader picks the best clone for the running CPU once (GNU ifunc). Keep marked
// functions small and simple (unit-stride loops the compiler vectorises) and call them from
// the unmarked dispatch code. Elsewhere (other compilers or architectures) the macro is empty
// and the baseline build runs.
#pragma once

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(PLAIT_NO_CLONES)
#define PLAIT_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PLAIT_CLONES
#endif
