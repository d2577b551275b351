// float32 matrix products on our own packed kernels (AVX-512 or AVX2 with FMA).
//
// The blocking is Goto's, with the roles of the operands as in BLIS's AVX-512 kernels: a
// register tile of C is kMR rows by NR columns (four vectors per row on AVX-512, two on
// AVX2), B is packed into panels of NR columns (kKC deep, streamed from L2), A into panels of
// kMR rows (kKC deep, kept in L1 while the kernel sweeps one block of B panels). Zero padding
// makes every panel whole, so the kernels have no edge cases; a last partial panel runs the
// kernel instance for its height and its number of vectors, and partial tiles of C go through
// a small buffer.
//
// Threads split C into a grid of regions, one each (make_grid), and each packs what its region
// reads into its own buffers: sharing one packed B across cores cost more than packing it
// twice on the small products of a training step. A large product whose B is no wider than A
// is tall runs instead as row tasks that the threads take as they go (RowTasks): with a fixed
// region each, a thread slowed by another process on its core (a shared 2-core VM) held the
// product back (the benchmark's 1024^3 took about one thread's time on two). No two threads
// write the same element, and every element sums its depth in the same order whatever the
// thread count, so results do not depend on torch.get_num_threads().
//
// Why not OpenBLAS for these: split over our pool it packs B once per tile, and its own setup
// is tens of microseconds; a 256x256 product on two threads ran no faster than on one.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include "blas.h"
#include "matmul.h"
#include "parallel.h"
#include "simd.h"
#include "transpose16.h"
#include "transpose8.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define PLAIT_PACKED_SGEMM 1
#endif

namespace plait::cpu::blas::detail {
namespace {

// Depth of a packed slab (blas.h): an A panel (kMR x kKC) stays in L1.
constexpr int64_t kKC = kPackedSlab;
constexpr int64_t kMC = 96;   // rows of an A block (a multiple of the kernels' kMR)
// Multiply-adds per thread below which another thread costs more than it saves (waking a
// worker and moving its operands between cores take microseconds).
constexpr double kMinThreadWork = 1 << 18;

inline int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// Columns of a B block (kKC x block_columns() floats, kept in L2): half the L2 cache, between
// 512 and 1024 columns in multiples of 64, the widest panel (512 when the size is unknown).
// 1024 on a 2 MiB L2 ran 1024^3 and 2048^3 8-15% faster than 512 (A is packed once per block
// of columns); an element's sums do not depend on it.
int64_t block_columns() {
  static const int64_t columns = [] {
    int64_t l2 = 0;
#if defined(_SC_LEVEL2_CACHE_SIZE)
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    const int64_t fit = l2 > 0 ? l2 / 2 / (kKC * static_cast<int64_t>(sizeof(float))) : 512;
    return std::clamp<int64_t>(fit / 64 * 64, 512, 1024);
  }();
  return columns;
}
inline int64_t ceil_div(int64_t v, int64_t by) { return (v + by - 1) / by; }

// One kernel: c[h][v vectors] (row stride ldc, unit column stride) = alpha * ap @ bp +
// beta * c, where bp is kc rows of at least v vectors, ldb apart (NR in a packed panel, B's
// own row stride when B is read where it lies), and ap holds MR rows of depth kc, either row
// after row (kKC apart: copied from a row-major A) or column after column (MR apart: copied
// from a transposed A); beta == 0 never reads c. Each kernel computes the first h of the
// panel's MR rows and its first v vectors of columns (one instance per h and v), so a last
// partial panel costs h rows and v vectors, not MR x NR; every element takes the same
// operations in every instance, so results do not depend on h or v. With `bias` (v vectors
// of floats, beta ignored), c = alpha * ap @ bp + bias in every row: the bits of filling c
// with the bias and adding onto it with beta 1 (1 * bias is exact), without a pass that
// writes the tile before the kernel reads it back.
using KernelFn = void (*)(int64_t kc, const float* ap, const float* bp, int64_t ldb, float* c,
                          int64_t ldc, float alpha, float beta, const float* bias);

// Where element (row r, depth p) of a packed A panel is, for each layout.
template <bool kRowsA, int kPanelRows>
constexpr int64_t a_index(int r, int64_t p) {
  return kRowsA ? r * kKC + p : p * kPanelRows + r;
}

constexpr int kMaxMR = 6;
constexpr int kMaxVectors = 4;   // vectors per row of a C tile (kernels of 1..4 vectors)
constexpr int64_t kMaxNR = 64;   // floats per row of a C tile

struct Isa {
  // [v - 1][h - 1]: the kernel computing the first h rows and the first v vectors of columns
  // of a panel, for A panels packed row after row (rows) or column after column (columns).
  // The narrower kernels serve a last partial panel of B, so a product whose width is not a
  // multiple of nr computes whole vectors, not whole panels, past its last column.
  KernelFn rows_kernels[kMaxVectors][kMaxMR] = {};
  KernelFn columns_kernels[kMaxVectors][kMaxMR] = {};
  int64_t mr = 0;
  int64_t nr = 0;
  int64_t vector = 0;  // floats per vector
  const char* name = "";
};

std::atomic<bool> g_packed_disabled{false};

#if defined(PLAIT_PACKED_SGEMM)

// 6 x 64 (four vectors a row): 24 accumulators, four B vectors and a broadcast use 29 of the
// 32 registers. Against the 12 x 32 tile it replaced (two B vectors, twelve broadcasts for
// the same 24 multiply-adds) it issues 10 loads per 24 multiply-adds instead of 14: on this
// machine's (Sapphire Rapids) cores the kernel alone ran 10-13% faster, A in L1 and B
// streamed from L2, round-robin min of 100 against the old kernel. Every element's sum is
// the same chain of multiply-adds in the same order, so results keep their bits.
template <bool kRowsA, int kRows, int kVecs>
__attribute__((target("avx512f,fma"))) void kernel_avx512(int64_t kc, const float* ap,
                                                           const float* bp, int64_t ldb,
                                                           float* c, int64_t ldc, float alpha,
                                                           float beta, const float* bias) {
  constexpr int kPanelRows = 6;
  __m512 acc[kRows][kVecs];
#pragma GCC unroll 6
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    __m512 b[kVecs];
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) b[v] = _mm512_loadu_ps(bp + 16 * v);
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
      const __m512 a = _mm512_set1_ps(ap[a_index<kRowsA, kPanelRows>(r, p)]);
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[r][v] = _mm512_fmadd_ps(a, b[v], acc[r][v]);
    }
    bp += ldb;
  }
  const __m512 va = _mm512_set1_ps(alpha);
  if (bias != nullptr) {
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) {
        const __m512 scaled = _mm512_mul_ps(va, acc[r][v]);
        const __m512 row = _mm512_loadu_ps(bias + 16 * v);
        _mm512_storeu_ps(c + r * ldc + 16 * v, _mm512_add_ps(scaled, row));
      }
    }
  } else if (beta == 0.0f) {
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) {
        _mm512_storeu_ps(c + r * ldc + 16 * v, _mm512_mul_ps(va, acc[r][v]));
      }
    }
  } else {
    const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) {
        float* out = c + r * ldc + 16 * v;
        _mm512_storeu_ps(out, _mm512_add_ps(_mm512_mul_ps(va, acc[r][v]),
                                            _mm512_mul_ps(vb, _mm512_loadu_ps(out))));
      }
    }
  }
}

// 6 x 16 (two vectors a row): 12 accumulators, two B vectors and a broadcast use 15 of the
// 16 registers.
template <bool kRowsA, int kRows, int kVecs>
__attribute__((target("avx2,fma"))) void kernel_avx2(int64_t kc, const float* ap,
                                                     const float* bp, int64_t ldb, float* c,
                                                     int64_t ldc, float alpha, float beta,
                                                     const float* bias) {
  constexpr int kPanelRows = 6;
  __m256 acc[kRows][kVecs];
#pragma GCC unroll 6
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < kVecs; ++v) acc[r][v] = _mm256_setzero_ps();
  }
  // Four depth steps a loop iteration: the loop's own instructions (counter, two pointer
  // bumps, branch) were a fifth of each step's. On AMD Zen 3 (alternating runs, minima) a
  // training step's 24 products ran 1.5% faster in all on one thread (20 of them faster),
  // 3.7% on two; the square sizes within the noise. Each element's chain is unchanged.
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    __m256 b[kVecs];
#pragma GCC unroll 2
    for (int v = 0; v < kVecs; ++v) b[v] = _mm256_loadu_ps(bp + 8 * v);
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
      const __m256 a = _mm256_broadcast_ss(ap + a_index<kRowsA, kPanelRows>(r, p));
#pragma GCC unroll 2
      for (int v = 0; v < kVecs; ++v) acc[r][v] = _mm256_fmadd_ps(a, b[v], acc[r][v]);
    }
    bp += ldb;
  }
  const __m256 va = _mm256_set1_ps(alpha);
  if (bias != nullptr) {
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 2
      for (int v = 0; v < kVecs; ++v) {
        const __m256 scaled = _mm256_mul_ps(va, acc[r][v]);
        _mm256_storeu_ps(c + r * ldc + 8 * v, _mm256_add_ps(scaled, _mm256_loadu_ps(bias + 8 * v)));
      }
    }
  } else if (beta == 0.0f) {
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 2
      for (int v = 0; v < kVecs; ++v) {
        _mm256_storeu_ps(c + r * ldc + 8 * v, _mm256_mul_ps(va, acc[r][v]));
      }
    }
  } else {
    const __m256 vb = _mm256_set1_ps(beta);
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 2
      for (int v = 0; v < kVecs; ++v) {
        float* out = c + r * ldc + 8 * v;
        _mm256_storeu_ps(out, _mm256_add_ps(_mm256_mul_ps(va, acc[r][v]),
                                            _mm256_mul_ps(vb, _mm256_loadu_ps(out))));
      }
    }
  }
}

// isa.{rows,columns}_kernels[v - 1][h - 1] = make(v, h) for v = 1 .. V, h = 1 .. MR, where
// make returns the {rows, columns} pair of kernel instances.
template <int MR, int V, class Make, size_t... I>
void fill_kernels(Isa& isa, Make make, std::index_sequence<I...>) {
  ((isa.rows_kernels[I / MR][I % MR] = make(std::integral_constant<int, I / MR + 1>{},
                                            std::integral_constant<int, I % MR + 1>{})
                                           .first,
    isa.columns_kernels[I / MR][I % MR] = make(std::integral_constant<int, I / MR + 1>{},
                                               std::integral_constant<int, I % MR + 1>{})
                                              .second),
   ...);
}
template <int MR, int V, class Make>
void fill_kernels(Isa& isa, Make make) {
  fill_kernels<MR, V>(isa, make, std::make_index_sequence<MR * V>{});
}

// The running CPU's kernel, chosen once (PLAIT_CPU_VECTOR_BYTES=32 selects the AVX2 kernel on
// an AVX-512 machine, as for every vectorised kernel; 16 leaves float32 products to OpenBLAS).
const Isa& isa() {
  static const Isa chosen = [] {
    const int bytes = native_vector_bytes();
    __builtin_cpu_init();
    // The forced width only narrows the choice: never a kernel the CPU cannot run.
    const bool fma = __builtin_cpu_supports("fma");
    Isa isa;
    if (bytes == 64 && fma && __builtin_cpu_supports("avx512f")) {
      fill_kernels<6, 4>(isa, [](auto vecs, auto rows) {
        constexpr int v = decltype(vecs)::value, h = decltype(rows)::value;
        return std::pair{kernel_avx512<true, h, v>, kernel_avx512<false, h, v>};
      });
      isa.mr = 6;
      isa.nr = 64;
      isa.vector = 16;
      isa.name = "avx512 6x64";
    } else if (bytes >= 32 && fma && __builtin_cpu_supports("avx2")) {
      fill_kernels<6, 2>(isa, [](auto vecs, auto rows) {
        constexpr int v = decltype(vecs)::value, h = decltype(rows)::value;
        return std::pair{kernel_avx2<true, h, v>, kernel_avx2<false, h, v>};
      });
      isa.mr = 6;
      isa.nr = 16;
      isa.vector = 8;
      isa.name = "avx2 6x16";
    }
    return isa;
  }();
  return chosen;
}

#else
const Isa& isa() {
  static const Isa none{};
  return none;
}
#endif

// A growable 64-byte aligned buffer per thread, so a product allocates (and faults in pages)
// only when it needs more than any before it on this thread.
class Scratch {
 public:
  float* get(int64_t count) {
    if (count > capacity_) {
      const int64_t bytes = round_up(count * static_cast<int64_t>(sizeof(float)), 64);
      data_.reset(static_cast<float*>(std::aligned_alloc(64, static_cast<size_t>(bytes))));
      if (!data_) throw std::bad_alloc();
      capacity_ = bytes / static_cast<int64_t>(sizeof(float));
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
  int64_t capacity_ = 0;
};

Scratch& b_scratch() {
  thread_local Scratch scratch;
  return scratch;
}
Scratch& a_scratch() {
  thread_local Scratch scratch;
  return scratch;
}

// n floats from src to dst: a plain loop (GCC emits a memcpy call or vector moves).
inline void copy_floats(float* __restrict dst, const float* __restrict src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

// One panel row of N floats: a fixed size, so a few vector moves rather than a memcpy call
// (a call per 32 floats doubled the time of packing a small B).
template <int64_t N>
inline void copy_row(float* __restrict dst, const float* __restrict src) {
  float tmp[N];
  std::memcpy(tmp, src, sizeof(tmp));
  std::memcpy(dst, tmp, sizeof(tmp));
}

#if defined(PLAIT_PACKED_SGEMM)
// dst[i * dst_stride + j] = src[j * src_stride + i] for an 8 x 8 block (AVX2 shuffles: both
// kernels need AVX2, so this runs wherever they do).
__attribute__((target("avx2"))) void transpose_8x8(const float* src, int64_t src_stride,
                                                   float* dst, int64_t dst_stride) {
  __m256 r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * src_stride);
  simd256::transpose8(r);
  for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + i * dst_stride, r[i]);
}

// dst[i * dst_stride + j] = src[j * src_stride + i] for a 16 x 16 block: on AVX-512 a
// transposed B (a linear layer's weight) is packed 16 columns at a time, each load and store
// a whole 64-byte row, instead of 8 x 8 blocks of half rows.
__attribute__((target("avx512f"))) void transpose_16x16(const float* src, int64_t src_stride,
                                                       float* dst, int64_t dst_stride) {
  __m512 r[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * src_stride);
  simd512::transpose16(r);
  for (int i = 0; i < 16; ++i) _mm512_storeu_ps(dst + i * dst_stride, r[i]);
}
#endif

// b[p0 : p0 + kc, j0 : j0 + nc] as panels of nr columns, kc x nr floats each (zeros past the
// last column).
void pack_b_block(const MatView<const float>& b, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                  int64_t nr, float* out) {
  // Whole panels of a row-major B: row by row across the panels, so each row of B is read
  // front to back (the prefetcher follows it; panel by panel, each row's 128 bytes waited
  // on memory).
  const int64_t whole = b.cs == 1 ? nc / nr * nr : 0;
  for (int64_t p = 0; p < kc && whole > 0; ++p) {
    const float* row = b.data + (p0 + p) * b.rs + j0;
    for (int64_t jp = 0; jp < whole; jp += nr) {
      if (nr == 64) {
        copy_row<64>(out + jp * kc + p * nr, row + jp);
      } else {
        copy_row<16>(out + jp * kc + p * nr, row + jp);
      }
    }
  }
  out += whole * kc;
  for (int64_t jp = whole; jp < nc; jp += nr, out += kc * nr) {
    const int64_t w = std::min(nr, nc - jp);
    const float* src = b.data + p0 * b.rs + (j0 + jp) * b.cs;
    if (w < nr) {
      for (int64_t p = 0; p < kc; ++p) std::fill(out + p * nr + w, out + (p + 1) * nr, 0.0f);
    }
    if (b.cs == 1 || w == 1) {
      for (int64_t p = 0; p < kc; ++p) copy_floats(out + p * nr, src + p * b.rs, w);
    } else {  // columns of b are contiguous (a transposed weight): transposed in blocks
      int64_t p8 = 0, j8 = 0;
#if defined(PLAIT_PACKED_SGEMM)
      if (b.rs == 1) {
        p8 = kc / 8 * 8;
        j8 = w / 8 * 8;
        // 16 x 16 blocks where the kernels are AVX-512 (64-column panels), then 8 x 8 blocks
        // over the rest of the [0, j8) x [0, p8) area: rows p16.. of the first j16 columns,
        // then every row of columns j16 .. j8.
        const int64_t p16 = nr == 64 ? kc / 16 * 16 : 0, j16 = nr == 64 ? w / 16 * 16 : 0;
        for (int64_t j = 0; j < j16; j += 16) {
          for (int64_t p = 0; p < p16; p += 16) {
            transpose_16x16(src + j * b.cs + p, b.cs, out + p * nr + j, nr);
          }
        }
        for (int64_t j = 0; j < j8; j += 8) {
          for (int64_t p = j < j16 ? p16 : 0; p < p8; p += 8) {
            transpose_8x8(src + j * b.cs + p, b.cs, out + p * nr + j, nr);
          }
        }
      }
#endif
      for (int64_t j = 0; j < w; ++j) {
        const float* col = src + j * b.cs;
        for (int64_t p = j < j8 ? p8 : 0; p < kc; ++p) out[p * nr + j] = col[p * b.rs];
      }
    }
  }
}

// A panels hold mr rows of one slab, mr * kKC floats each (a_index gives the layout).
// Rows-layout panels copy rows of a row-major A; the columns layout copies columns of a
// transposed A (a weight gradient's x^T) and gathers any other strides.
bool rows_layout(const MatView<const float>& a) { return a.cs == 1 && a.rows > 1; }

// Depth rows ahead of the one being copied that the packing of a transposed A asks the cache
// for. Its source rows are a gradient's rows (n floats apart), read a few hundred bytes at a
// time, which the hardware prefetcher did not fetch in time: a 768x384 gradient's weight
// product spent 21-24% of its time packing A, 15% with 4-16 rows ahead (sampled profile, one
// thread; distance 4, 8 and 16 the same).
constexpr int64_t kPackAhead = 8;

// Asks for the cache lines of floats [p, p + count) to be brought into L1.
inline void prefetch_floats(const float* p, int64_t count) {
#if defined(PLAIT_PACKED_SGEMM)
  if (count <= 0) return;
  const char* first = reinterpret_cast<const char*>(p);
  const int64_t bytes = count * static_cast<int64_t>(sizeof(float));
  for (int64_t byte = 0; byte < bytes; byte += 64) _mm_prefetch(first + byte, _MM_HINT_T0);
  _mm_prefetch(first + bytes - 1, _MM_HINT_T0);  // the last line of an unaligned range
#else
  (void)p, (void)count;
#endif
}

// a[i0 : i0 + mc, p0 : p0 + kc] as panels of mr rows (zeros past the last row).
void pack_a_block(const MatView<const float>& a, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                  int64_t mr, float* out) {
  const bool by_rows = rows_layout(a);
  int64_t start = 0;
  if (!by_rows && a.rs == 1 && mr == 6) {
    // Whole panels of a transposed A: depth by depth, each of A's columns read front to back
    // into six-float moves, one per panel (panel by panel, the loop's own work per six floats
    // outweighed the copy: a 512x64x16 weight gradient packed 1.2-1.5x slower than with the
    // 12-row panels before).
    start = mc / mr * mr;
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = a.data + i0 + (p0 + p) * a.cs;
      if (p + kPackAhead < kc) prefetch_floats(src + kPackAhead * a.cs, start);
      float* column = out + p * mr;
      for (int64_t ip = 0; ip < start; ip += mr) copy_row<6>(column + ip * kKC, src + ip);
    }
    out += start * kKC;
  }
  for (int64_t ip = start; ip < mc; ip += mr, out += mr * kKC) {
    const int64_t h = std::min(mr, mc - ip);
    const float* first = a.data + (i0 + ip) * a.rs + p0 * a.cs;
    if (by_rows) {
      for (int64_t r = 0; r < h; ++r) copy_floats(out + r * kKC, first + r * a.rs, kc);
      for (int64_t r = h; r < mr; ++r) std::fill(out + r * kKC, out + r * kKC + kc, 0.0f);
      continue;
    }
    for (int64_t p = 0; p < kc; ++p) {
      float* column = out + p * mr;
      const float* src = first + p * a.cs;
      if (a.rs == 1) {
        copy_floats(column, src, h);
      } else {
        for (int64_t r = 0; r < h; ++r) column[r] = src[r * a.rs];
      }
      for (int64_t r = h; r < mr; ++r) column[r] = 0.0f;
    }
  }
}

// Rows of C up to which a row-major B is read where it lies instead of packed: each B panel
// then serves at most this many rows' kernels, too few to repay copying it (a batch-16
// linear layer spent half its time packing B).
constexpr int64_t kDirectRows = 48;

// Asks for the h x w tile of C at ct (row stride ldc) that a kernel will add onto (beta != 0)
// to be brought into L2 while the kernel runs its kc multiply-adds: a large product's C
// block leaves L2 between slabs (2048^2 floats per thread at 2048^3), and the kernel's loads
// at its end then waited on L3. Into L2, not L1: the kernel's B panel (64 KiB) streams
// through L1 and would evict the lines before their use. Thread CPU time, interleaved with
// the kernel without it, 9 runs of 1024^3/2048^3 on 1 and 2 threads: 2-18% less in 8.
inline void prefetch_tile_to_l2(const float* ct, int64_t ldc, int64_t h, int64_t w) {
#if defined(PLAIT_PACKED_SGEMM)
  for (int64_t r = 0; r < h; ++r) {
    const char* row = reinterpret_cast<const char*>(ct + r * ldc);
    const int64_t bytes = w * static_cast<int64_t>(sizeof(float));
    for (int64_t byte = 0; byte < bytes; byte += 64) _mm_prefetch(row + byte, _MM_HINT_T1);
    _mm_prefetch(row + bytes - 1, _MM_HINT_T1);  // the last line of an unaligned row
  }
#else
  (void)ct, (void)ldc, (void)h, (void)w;
#endif
}

// One packed A block (mc rows, one slab of depth kc) times nc columns of B: every tile of
// c[ic : ic + mc, jc : jc + nc] gets alpha * (its sum over the slab) + beta * c. B panel jp
// (of nr columns) is read at b_panel(jp) with row stride ldb(jp). A tile of fewer than MR
// rows runs the kernel instance for its height; one of fewer than NR columns (or a strided
// C) sums into `edge` and is then stored with the kernel's own arithmetic, so a tile's values
// never depend on where it lies.
//
// With `bias` (the first slab of a product with a bias, beta 0), each tile gets alpha * its
// sum + bias[jc + j], as the kernel stores it: the arithmetic of filling C with the bias
// before the product and adding onto it (beta 1), without that pass over the tile (a 768 x
// 128 x 512 linear layer ran 7-9% slower than the same product without a bias, one and two
// threads).
template <class PanelAt>
void multiply_block(const Isa& cpu, bool rows_a, const float* apack, int64_t mc, int64_t kc,
                    int64_t nc, PanelAt panel_at, const MatView<float>& c, int64_t ic,
                    int64_t jc, float alpha, float beta, const float* bias) {
  const int64_t mr = cpu.mr, nr = cpu.nr;
  const auto& kernels = rows_a ? cpu.rows_kernels : cpu.columns_kernels;
  alignas(64) float edge[kMaxMR * kMaxNR];
  for (int64_t ip = 0; ip < mc; ip += mr) {
    const float* ap = apack + ip * kKC;
    const int64_t h = std::min(mr, mc - ip);
    for (int64_t jp = 0; jp < nc; jp += nr) {
      int64_t ldb = nr;
      const float* bp = panel_at(jp, ldb);
      const int64_t w = std::min(nr, nc - jp);
      const int64_t vectors = ceil_div(w, cpu.vector);
      const KernelFn kernel = kernels[vectors - 1][h - 1];
      float* ct = c.data + (ic + ip) * c.rs + (jc + jp) * c.cs;
      const float* tile_bias = bias != nullptr ? bias + jc + jp : nullptr;
      if (w == vectors * cpu.vector && c.cs == 1) {
        if (beta != 0.0f && tile_bias == nullptr) prefetch_tile_to_l2(ct, c.rs, h, w);
        kernel(kc, ap, bp, ldb, ct, c.rs, alpha, beta, tile_bias);
        continue;
      }
      kernel(kc, ap, bp, ldb, edge, nr, 1.0f, 0.0f, nullptr);
      for (int64_t r = 0; r < h; ++r) {
        for (int64_t j = 0; j < w; ++j) {
          float& out = ct[r * c.rs + j * c.cs];
          const float scaled = alpha * edge[r * nr + j];
          out = tile_bias != nullptr ? scaled + tile_bias[j]
                : beta == 0.0f       ? scaled
                                     : scaled + beta * out;
        }
      }
    }
  }
}

// c[i0 : i1, j0 : j1] = alpha * a[i0 : i1, :] @ b[:, j0 : j1] + beta * c[...] on the calling
// thread, packing what it reads into this thread's buffers: for each block of B's columns and
// kKC-deep slab, the B block is packed once, then each kMC-row block of A, whose panels the
// kernel pairs with every B panel of the block.
void product_region(const MatView<const float>& a, const MatView<const float>& b,
                    const MatView<float>& c, const Isa& cpu, int64_t i0, int64_t i1, int64_t j0,
                    int64_t j1, float alpha, float beta, const float* bias) {
  const int64_t mr = cpu.mr, nr = cpu.nr, k = a.cols;
  const bool rows_a = rows_layout(a);
  // Whole panels of a row-major B are read in place when few rows use them; a last partial
  // panel is still packed (zero padding keeps the kernel free of edge cases).
  const bool direct_b = b.cs == 1 && i1 - i0 <= kDirectRows;
  const int64_t block = block_columns();
  float* bpack = b_scratch().get(kKC * round_up(std::min(block, j1 - j0), nr));
  float* apack = a_scratch().get(round_up(std::min(kMC, i1 - i0), mr) * kKC);
  for (int64_t jc = j0; jc < j1; jc += block) {
    const int64_t nc = std::min(block, j1 - jc);
    const int64_t whole = direct_b ? nc / nr * nr : 0;  // columns read in place
    for (int64_t p0 = 0; p0 < k; p0 += kKC) {
      const int64_t kc = std::min(kKC, k - p0);
      const float slab_beta = p0 == 0 ? beta : 1.0f;  // later slabs add onto the first's sums
      if (whole < nc) pack_b_block(b, p0, kc, jc + whole, nc - whole, nr, bpack + whole * kc);
      auto panel_at = [&](int64_t jp, int64_t& ldb) -> const float* {
        if (jp < whole) {
          ldb = b.rs;
          return b.data + p0 * b.rs + jc + jp;
        }
        return bpack + jp * kc;
      };
      for (int64_t ic = i0; ic < i1; ic += kMC) {
        const int64_t mc = std::min(kMC, i1 - ic);
        pack_a_block(a, ic, mc, p0, kc, mr, apack);
        multiply_block(cpu, rows_a, apack, mc, kc, nc, panel_at, c, ic, jc, alpha, slab_beta,
                       p0 == 0 ? bias : nullptr);
      }
    }
  }
}

// [0, extent) cut into `groups` parts at multiples of `align`; part g is [edge(g), edge(g + 1)).
int64_t group_edge(int64_t g, int64_t groups, int64_t extent, int64_t align) {
  const int64_t units = ceil_div(extent, align);
  return std::min(extent, (units * g / groups) * align);
}

// A large product on several threads as row tasks that the threads take as they go, instead of
// one fixed region each. A step is one block of B's columns times one kKC-deep slab; its rows
// are cut evenly into tasks of about kTaskRows (each packing its own A), which start as one
// contiguous range per thread. A thread takes tasks from the front of its own range and, when that is
// empty, from the back of another's, then moves on to the next step; it packs a step's B
// block into its own buffer once, when it takes its first task of that step. So:
//  - a thread that runs slower (the machine gave its core to another process for a while, or
//    it started late) does fewer tasks instead of holding the product back: with one region
//    each, a thread at half speed made two threads no faster than one;
//  - on a quiet machine each thread keeps the same rows step after step (their C tiles stay in
//    its cache, as with a row split) and packs what a row split packs: all of B, its share of A.
// A task adds onto the sums of the same rows' task of the step before (the slab before), so it
// waits until that task is done. Every task of a step is taken before any thread moves past
// it, so the earliest unfinished task never waits and the product always completes. Every tile
// is the same kernel call on the same operands as on one thread: the same bits.
constexpr int64_t kTaskRows = 48;  // rows of a row task, about (rows cut evenly into tasks)
// Tasks per thread at least: an uneven last task then costs a fraction of one thread's share
// (256 rows in 6 tasks of 48 or 16 gave one thread 144 rows, the other 112).
constexpr int64_t kTasksPerThread = 4;
// Multiply-adds from which a product on several threads runs as row tasks (256^3 does; a
// training step's 768 x 128 x 128 does not). Below it the per-step tasks cost more than the
// balance they buy.
constexpr double kRowTaskWork = 1 << 24;

// Busy-waits (with the CPU's pause hint) until `ready`, yielding the CPU now and then: the task
// waited on may belong to a thread that shares this CPU.
template <class Ready>
void wait_until(const Ready& ready) {
  for (int round = 0; !ready(); ++round) {
    for (int i = 0; i < 64 && !ready(); ++i) {
#if defined(PLAIT_PACKED_SGEMM)
      _mm_pause();
#endif
    }
    if (round >= 16) std::this_thread::yield();
  }
}

class RowTasks {
 public:
  RowTasks(const MatView<const float>& a, const MatView<const float>& b, const MatView<float>& c,
           const Isa& cpu, float alpha, float beta, const float* bias, int threads)
      : a_(a), b_(b), c_(c), cpu_(cpu), alpha_(alpha), beta_(beta), bias_(bias),
        threads_(threads), block_(block_columns()), slabs_(ceil_div(a.cols, kKC)),
        steps_(ceil_div(c.cols, block_) * slabs_),
        row_tasks_(std::max<int64_t>(kTasksPerThread * threads, ceil_div(c.rows, kTaskRows))),
        task_done_(new std::atomic<bool>[steps_ * row_tasks_]),
        ranges_(new std::atomic<uint64_t>[steps_ * threads]) {
    for (int64_t t = 0; t < steps_ * row_tasks_; ++t) {
      task_done_[t].store(false, std::memory_order_relaxed);
    }
    for (int64_t st = 0; st < steps_; ++st) {
      for (int p = 0; p < threads; ++p) {
        const uint64_t front = static_cast<uint64_t>(row_tasks_ * p / threads);
        const uint64_t back = static_cast<uint64_t>(row_tasks_ * (p + 1) / threads);
        ranges_[st * threads + p].store(front << 32 | back, std::memory_order_relaxed);
      }
    }
  }

  // Row tasks pack all of B once per thread, as a row split does: chosen where that packs no
  // more than a column split (B no wider than A is tall), with enough rows for every thread.
  static bool wanted(int64_t m, int64_t n, int64_t k, int threads) {
    const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    return threads > 1 && work >= kRowTaskWork && n <= m && m >= 2 * kTaskRows * threads;
  }

  // Takes tasks, step after step, until none is left; `me` picks the range taken from the
  // front. Buffers are taken before the first task, so a failed allocation leaves the tasks
  // to the other threads.
  void participate(int me) {
    const int64_t most_rows = ceil_div(ceil_div(c_.rows, cpu_.mr), row_tasks_) * cpu_.mr;
    float* apack = a_scratch().get(most_rows * kKC);
    float* bpack = b_scratch().get(kKC * round_up(std::min(block_, c_.cols), cpu_.nr));
    int64_t packed_step = -1;
    for (int64_t s = 0; s < steps_; ++s) {
      while (true) {
        const int64_t task = claim(s, me);
        if (task < 0) break;
        const int64_t p0 = s % slabs_ * kKC, kc = std::min(kKC, a_.cols - p0);
        const int64_t jc = s / slabs_ * block_, nc = std::min(block_, c_.cols - jc);
        if (s != packed_step) {
          pack_b_block(b_, p0, kc, jc, nc, cpu_.nr, bpack);
          packed_step = s;
        }
        if (p0 > 0) {
          wait_until([&] { return done(s - 1, task).load(std::memory_order_acquire); });
        }
        // Whole panels of A in every task but the last (the panels of one thread's product).
        const int64_t ic = group_edge(task, row_tasks_, c_.rows, cpu_.mr);
        const int64_t mc = group_edge(task + 1, row_tasks_, c_.rows, cpu_.mr) - ic;
        pack_a_block(a_, ic, mc, p0, kc, cpu_.mr, apack);
        auto panel_at = [&](int64_t jp, int64_t& ldb) -> const float* {
          ldb = cpu_.nr;
          return bpack + jp * kc;
        };
        multiply_block(cpu_, rows_layout(a_), apack, mc, kc, nc, panel_at, c_, ic, jc, alpha_,
                       p0 == 0 ? beta_ : 1.0f, p0 == 0 ? bias_ : nullptr);
        done(s, task).store(true, std::memory_order_release);
      }
    }
  }

 private:
  // The next task of step s for thread `me`: the front of its own range, else the back of
  // another thread's; -1 when none is left.
  int64_t claim(int64_t s, int me) {
    for (int i = 0; i < threads_; ++i) {
      const int q = (me + i) % threads_;
      std::atomic<uint64_t>& range = ranges_[s * threads_ + q];
      uint64_t v = range.load(std::memory_order_relaxed);
      while (true) {
        const uint64_t front = v >> 32, back = v & 0xffffffffu;
        if (front >= back) break;
        const uint64_t next = i == 0 ? (front + 1) << 32 | back : front << 32 | (back - 1);
        if (range.compare_exchange_weak(v, next, std::memory_order_relaxed)) {
          return static_cast<int64_t>(i == 0 ? front : back - 1);
        }
      }
    }
    return -1;
  }
  std::atomic<bool>& done(int64_t s, int64_t task) { return task_done_[s * row_tasks_ + task]; }
  const MatView<const float>& a_;
  const MatView<const float>& b_;
  const MatView<float>& c_;
  const Isa& cpu_;
  const float alpha_, beta_;
  const float* bias_;
  const int threads_;
  const int64_t block_, slabs_, steps_, row_tasks_;
  std::unique_ptr<std::atomic<bool>[]> task_done_;  // per step and task
  // Per step and thread: the range of tasks not yet taken, front << 32 | back.
  std::unique_ptr<std::atomic<uint64_t>[]> ranges_;
};

// How a product is shared among threads: a grid of row groups by column groups, one region
// per thread. Each thread packs what its region reads, so B is packed once per row group and
// A once per column group: split the dimension whose split duplicates the smaller operand.
struct Grid {
  int64_t row_groups = 1;
  int64_t col_groups = 1;
};

// How much more packing a float of a transposed A costs than one of B in make_grid's
// reckoning. Its panels gather six floats from each of kc rows of the gradient, B's copy whole
// rows; and with a column split both threads read all of the gradient. On two threads, weight
// products (g^T @ x, depth 768) whose grid was chosen by volume alone split columns; rows ran
// 10-20% faster (128x128: 183 against 228 us, 128x512: 715 against 797, 65x128: 95 against
// 110; alternating runs, minima of 600 calls each).
constexpr double kGatheredAWeight = 5;

Grid make_grid(int64_t m, int64_t n, int64_t k, const Isa& cpu, int threads, bool gathered_a) {
  Grid grid;
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  int64_t parts = std::min<int64_t>(threads, static_cast<int64_t>(work / kMinThreadWork));
  const double a_weight = gathered_a ? kGatheredAWeight : 1.0;
  // Every region at least one register tile wide in the dimensions it splits.
  const int64_t row_tiles = ceil_div(m, cpu.mr), col_tiles = ceil_div(n, cpu.nr);
  parts = std::min(parts, row_tiles * col_tiles);
  // Of the grids with `parts` regions, the one that packs the least: B is packed once per row
  // group (r * k * n floats), A once per column group (c * m * k, weighted when gathered from
  // a transposed A). When no grid of `parts` regions fits the tiles, one region fewer.
  for (; parts > 1; --parts) {
    double least = -1;
    for (int64_t r = 1; r <= parts; ++r) {
      const int64_t cols = parts / r;
      if (r * cols != parts || r > row_tiles || cols > col_tiles) continue;
      const double packed = static_cast<double>(r) * n + static_cast<double>(cols) * m * a_weight;
      if (least < 0 || packed < least) {
        least = packed;
        grid = {r, cols};
      }
    }
    if (least >= 0) break;
  }
  return grid;
}


}  // namespace

bool packed_sgemm_available() {
  return isa().rows_kernels[0][0] != nullptr && !g_packed_disabled.load(std::memory_order_relaxed);
}

void packed_sgemm(const MatView<const float>& a, const MatView<const float>& b,
                  const MatView<float>& c, float alpha, float beta, bool threaded,
                  const float* bias) {
  const Isa& cpu = isa();
  const int64_t m = c.rows, n = c.cols, k = a.cols;
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || cpu.rows_kernels[0][0] == nullptr) {  // an empty sum, or no kernel: the native product
    if (bias != nullptr) {  // C = bias in every row, then the product added onto it
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) c.data[i * c.rs + j * c.cs] = bias[j];
      }
      beta = 1.0f;
    }
    native_gemm<float>(a, b, c, alpha, beta);
    return;
  }
  const int threads = threaded && !in_parallel_region() ? num_threads() : 1;
  if (RowTasks::wanted(m, n, k, threads)) {
    RowTasks tasks(a, b, c, cpu, alpha, beta, bias, threads);
    // One chunk per thread; a chunk the pool runs after another on the same thread (a worker
    // that came late) finds every task taken.
    parallel_for(threads, 1,
                 [&](int64_t t0, int64_t) { tasks.participate(static_cast<int>(t0)); });
    return;
  }
  const Grid grid = make_grid(m, n, k, cpu, threads, !rows_layout(a));
  const int64_t regions = grid.row_groups * grid.col_groups;
  auto body = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t rg = t / grid.col_groups, cg = t % grid.col_groups;
      const int64_t i0 = group_edge(rg, grid.row_groups, m, cpu.mr);
      const int64_t i1 = group_edge(rg + 1, grid.row_groups, m, cpu.mr);
      const int64_t j0 = group_edge(cg, grid.col_groups, n, cpu.nr);
      const int64_t j1 = group_edge(cg + 1, grid.col_groups, n, cpu.nr);
      if (i0 < i1 && j0 < j1) product_region(a, b, c, cpu, i0, i1, j0, j1, alpha, beta, bias);
    }
  };
  if (regions > 1) {
    parallel_for(regions, 1, body);
  } else {
    body(0, 1);
  }
}

}  // namespace plait::cpu::blas::detail

namespace plait::cpu::blas {

std::string packed_kernel() { return detail::packed_sgemm_available() ? detail::isa().name : ""; }

int64_t packed_panel_width() { return detail::packed_sgemm_available() ? detail::isa().nr : 0; }

int64_t packed_a_floats(int64_t m, int64_t k) {
  using namespace detail;
  return ceil_div(std::max<int64_t>(k, 1), kKC) * round_up(std::max<int64_t>(m, 1), isa().mr) *
         kKC;
}

// Slab s of the packed operand (its panels as pack_a_block lays them out for kMC rows at a
// time, so a block of rows ic.. starts at ic * kKC) at out + s * round_up(m, mr) * kKC.
void pack_a(int64_t m, int64_t k, const float* a, int64_t lda, float* out) {
  using namespace detail;
  const Isa& cpu = isa();
  if (m <= 0 || k <= 0 || cpu.mr == 0) return;
  const MatView<const float> view{a, m, k, lda, 1};
  const int64_t slab = round_up(m, cpu.mr) * kKC;
  for (int64_t p0 = 0, s = 0; p0 < k; p0 += kKC, ++s) {
    pack_a_block(view, 0, m, p0, std::min(kKC, k - p0), cpu.mr, out + s * slab);
  }
}

void packed_gemm_panels(int64_t m, int64_t n, int64_t k, const float* a_packed,
                        const float* b_panels, int64_t panel_stride, float beta, float* c,
                        int64_t ldc) {
  using namespace detail;
  const Isa& cpu = isa();
  if (m <= 0 || n <= 0 || cpu.mr == 0) return;
  const MatView<float> cv{c, m, n, ldc, 1};
  if (k <= 0) {  // an empty sum: C = beta * C, as the packed product's callers expect
    native_gemm<float>(MatView<const float>{a_packed, m, 0, 1, 1},
                       MatView<const float>{b_panels, 0, n, 1, 1}, cv, 1.0f, beta);
    return;
  }
  // pack_a's layout: a row-major A of one row is packed column after column (rows_layout).
  const bool rows_a = m > 1;
  const int64_t slab = round_up(m, cpu.mr) * kKC;
  for (int64_t p0 = 0, s = 0; p0 < k; p0 += kKC, ++s) {
    const int64_t kc = std::min(kKC, k - p0);
    auto panel_at = [&](int64_t jp, int64_t& ldb) -> const float* {
      ldb = cpu.nr;
      return b_panels + jp / cpu.nr * panel_stride + p0 * cpu.nr;
    };
    for (int64_t ic = 0; ic < m; ic += kMC) {
      multiply_block(cpu, rows_a, a_packed + s * slab + ic * kKC, std::min(kMC, m - ic), kc, n,
                     panel_at, cv, ic, 0, 1.0f, p0 == 0 ? beta : 1.0f, nullptr);
    }
  }
}

void set_packed_disabled(bool disabled) { detail::g_packed_disabled.store(disabled); }

int64_t packed_a_slab_floats(int64_t m) {
  using namespace detail;
  return round_up(std::max<int64_t>(m, 1), isa().mr) * kKC;
}

void packed_gemm_b(int64_t m, int64_t n, int64_t k, const float* a_packed, const float* b,
                   int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t ldc) {
  using namespace detail;
  const Isa& cpu = isa();
  if (m <= 0 || n <= 0 || cpu.mr == 0) return;
  const MatView<float> cv{c, m, n, ldc, 1};
  const MatView<const float> bv{b, k, n, b_rs, b_cs};
  if (k <= 0) {  // an empty sum: C = beta * C
    native_gemm<float>(MatView<const float>{a_packed, m, 0, 1, 1}, bv, cv, 1.0f, beta);
    return;
  }
  const int64_t slab = round_up(m, cpu.mr) * kKC, block = block_columns(), nr = cpu.nr;
  float* bpack = b_scratch().get(kKC * round_up(std::min(block, n), nr));
  for (int64_t jc = 0; jc < n; jc += block) {
    const int64_t nc = std::min(block, n - jc);
    for (int64_t p0 = 0, s = 0; p0 < k; p0 += kKC, ++s) {
      const int64_t kc = std::min(kKC, k - p0);
      pack_b_block(bv, p0, kc, jc, nc, nr, bpack);
      auto panel_at = [&](int64_t jp, int64_t& ldb) -> const float* {
        ldb = nr;
        return bpack + jp * kc;
      };
      for (int64_t ic = 0; ic < m; ic += kMC) {
        multiply_block(cpu, m > 1, a_packed + s * slab + ic * kKC, std::min(kMC, m - ic), kc,
                       nc, panel_at, cv, ic, jc, 1.0f, p0 == 0 ? beta : 1.0f, nullptr);
      }
    }
  }
}

}  // namespace plait::cpu::blas
