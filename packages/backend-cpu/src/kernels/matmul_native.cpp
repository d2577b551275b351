// The native matrix product: integers, and every float dtype when OpenBLAS is not loaded.
//
// Cache blocking in the usual (Goto) shape: for each kNC-column block of B and kMC-row block
// of A, the kKC-deep slices of both are packed into panels (converted to the accumulation
// type, zero-padded to whole micro-tiles), and a kMR x NR micro-kernel (a row of NR is one
// 64-byte vector) accumulates a register tile over the slice's depth. A block's sums stay in an accumulator buffer until the whole
// depth is done, so float16/bfloat16 round once and integers wrap once on store. Packing reads
// any strides, so no operand is ever copied beforehand.
#include <algorithm>
#include <cstring>
#include <memory>

#include "matmul.h"
#include "simd.h"

namespace plait::cpu::blas::detail {
namespace {

constexpr int64_t kMR = 6;     // micro-tile rows
constexpr int64_t kKC = 256;   // depth of a packed slice
constexpr int64_t kMC = 120;   // rows of a packed A block (multiple of kMR)
constexpr int64_t kNC = 256;   // columns of a packed B block (multiple of every NR)

// Micro-tile columns: one 64-byte vector (one AVX-512 register, two AVX2 ones).
template <class Acc>
constexpr int64_t kNR = 64 / sizeof(Acc);

inline int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// c[kMR][NR] (row stride ldc) += ap (kc x kMR, interleaved) @ bp (kc x NR).
#if defined(__GNUC__) || defined(__clang__)
// A row of the tile is one GNU vector: the compiler keeps the kMR accumulators in registers
// (plain nested loops over a 2-d array were left in memory, 10x slower).
template <class Acc, int64_t NR>
PLAIT_CLONES void micro_kernel(int64_t kc, const Acc* __restrict ap, const Acc* __restrict bp,
                               Acc* __restrict c, int64_t ldc) {
  typedef Acc Vec __attribute__((vector_size(NR * sizeof(Acc))));
  Vec t[kMR];
  for (int64_t r = 0; r < kMR; ++r) t[r] = Vec{};
  for (int64_t p = 0; p < kc; ++p) {
    Vec bv;
    std::memcpy(&bv, bp + p * NR, sizeof(Vec));
    for (int64_t r = 0; r < kMR; ++r) t[r] += ap[p * kMR + r] * bv;
  }
  for (int64_t r = 0; r < kMR; ++r) {
    Vec cv;
    std::memcpy(&cv, c + r * ldc, sizeof(Vec));
    cv += t[r];
    std::memcpy(c + r * ldc, &cv, sizeof(Vec));
  }
}
#else
template <class Acc, int64_t NR>
void micro_kernel(int64_t kc, const Acc* __restrict ap, const Acc* __restrict bp,
                  Acc* __restrict c, int64_t ldc) {
  for (int64_t p = 0; p < kc; ++p) {
    for (int64_t r = 0; r < kMR; ++r) {
      const Acc av = ap[p * kMR + r];
      for (int64_t j = 0; j < NR; ++j) c[r * ldc + j] += av * bp[p * NR + j];
    }
  }
}
#endif

template <class T, class Acc>
inline Acc load(T v) {
  if constexpr (is_reduced_float_v<T>) {
    return cast<float>(v);
  } else {
    return static_cast<Acc>(v);  // integers: modulo 2^bits of Acc, well defined for unsigned
  }
}

template <class T, class Acc>
inline T store(Acc v) {
  if constexpr (is_reduced_float_v<T>) {
    return cast<T>(v);
  } else {
    return static_cast<T>(v);  // integers: the low bits, i.e. the wrapped value
  }
}

// Panels of NR columns of b[p0:p0+kc, j0:j0+nc], each kc x NR row-major, zero-padded.
template <class T, class Acc, int64_t NR>
void pack_b(const MatView<const T>& b, int64_t p0, int64_t kc, int64_t j0, int64_t nc, Acc* out) {
  for (int64_t jp = 0; jp < nc; jp += NR) {
    const int64_t w = std::min(NR, nc - jp);
    for (int64_t p = 0; p < kc; ++p) {
      const T* row = b.data + (p0 + p) * b.rs + (j0 + jp) * b.cs;
      Acc* dst = out + p * NR;
      if (b.cs == 1) {
        for (int64_t j = 0; j < w; ++j) dst[j] = load<T, Acc>(row[j]);
      } else {
        for (int64_t j = 0; j < w; ++j) dst[j] = load<T, Acc>(row[j * b.cs]);
      }
      for (int64_t j = w; j < NR; ++j) dst[j] = Acc(0);
    }
    out += kc * NR;
  }
}

// Panels of kMR rows of a[i0:i0+mc, p0:p0+kc], each kc x kMR (interleaved), zero-padded.
template <class T, class Acc>
void pack_a(const MatView<const T>& a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, Acc* out) {
  for (int64_t ip = 0; ip < mc; ip += kMR) {
    const int64_t h = std::min(kMR, mc - ip);
    for (int64_t r = 0; r < kMR; ++r) {
      if (r < h) {
        const T* row = a.data + (i0 + ip + r) * a.rs + p0 * a.cs;
        for (int64_t p = 0; p < kc; ++p) out[p * kMR + r] = load<T, Acc>(row[p * a.cs]);
      } else {
        for (int64_t p = 0; p < kc; ++p) out[p * kMR + r] = Acc(0);
      }
    }
    out += kc * kMR;
  }
}

}  // namespace

template <class T>
void native_gemm(const MatView<const T>& a, const MatView<const T>& b, const MatView<T>& c,
                 AccType<T> alpha, AccType<T> beta) {
  using Acc = AccType<T>;
  constexpr int64_t NR = kNR<Acc>;
  const int64_t m = c.rows;
  const int64_t n = c.cols;
  const int64_t k = a.cols;
  if (m <= 0 || n <= 0) return;
  const int64_t mc_max = std::min(kMC, round_up(m, kMR));
  const int64_t nc_max = std::min(kNC, round_up(n, NR));
  const int64_t kc_max = std::max<int64_t>(1, std::min(kKC, k));
  // Uninitialised: every element is written before it is read.
  std::unique_ptr<Acc[]> apack(new Acc[mc_max * kc_max]);
  std::unique_ptr<Acc[]> bpack(new Acc[kc_max * nc_max]);
  std::unique_ptr<Acc[]> acc(new Acc[mc_max * nc_max]);
  for (int64_t j0 = 0; j0 < n; j0 += kNC) {
    const int64_t nc = std::min(kNC, n - j0);
    const int64_t ncp = round_up(nc, NR);
    for (int64_t i0 = 0; i0 < m; i0 += kMC) {
      const int64_t mc = std::min(kMC, m - i0);
      const int64_t mcp = round_up(mc, kMR);
      std::fill(acc.get(), acc.get() + mcp * ncp, Acc(0));
      for (int64_t p0 = 0; p0 < k; p0 += kKC) {
        const int64_t kc = std::min(kKC, k - p0);
        pack_b<T, Acc, NR>(b, p0, kc, j0, nc, bpack.get());
        pack_a<T, Acc>(a, i0, mc, p0, kc, apack.get());
        for (int64_t ip = 0; ip < mcp; ip += kMR) {
          for (int64_t jp = 0; jp < ncp; jp += NR) {
            micro_kernel<Acc, NR>(kc, apack.get() + ip * kc, bpack.get() + jp * kc,
                                  acc.get() + ip * ncp + jp, ncp);
          }
        }
      }
      // C = alpha * sums + beta * C, rounding or wrapping once.
      for (int64_t i = 0; i < mc; ++i) {
        T* crow = c.data + (i0 + i) * c.rs + j0 * c.cs;
        const Acc* arow = acc.get() + i * ncp;
        for (int64_t j = 0; j < nc; ++j) {
          Acc v = alpha == Acc(1) ? arow[j] : alpha * arow[j];
          if (beta != Acc(0)) v += beta * load<T, Acc>(crow[j * c.cs]);
          crow[j * c.cs] = store<T, Acc>(v);
        }
      }
    }
  }
}

#define PLAIT_NATIVE_GEMM(T)                                                                \
  template void native_gemm<T>(const MatView<const T>&, const MatView<const T>&,            \
                               const MatView<T>&, AccType<T>, AccType<T>);
PLAIT_NATIVE_GEMM(uint8_t)
PLAIT_NATIVE_GEMM(int8_t)
PLAIT_NATIVE_GEMM(int16_t)
PLAIT_NATIVE_GEMM(int32_t)
PLAIT_NATIVE_GEMM(int64_t)
PLAIT_NATIVE_GEMM(float)
PLAIT_NATIVE_GEMM(double)
PLAIT_NATIVE_GEMM(Half)
PLAIT_NATIVE_GEMM(BFloat16)
#undef PLAIT_NATIVE_GEMM

}  // namespace plait::cpu::blas::detail
