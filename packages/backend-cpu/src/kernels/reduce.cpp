// Reductions: sum, prod, amax, amin, any, all over any set of dimensions, argmax, argmin.
//
// A reduction is planned as two loop nests over the input: the kept dimensions (input and
// output strides) and the reduced ones. Both are simplified like strided.h's nests (size-1
// dimensions dropped, contiguous dimensions merged). Then one of two loops runs:
//
// - inner: the innermost input dimension is reduced (`x.sum(-1)`, a full reduction). Each
//   output element reduces runs of the input: contiguous runs of plain arithmetic dtypes with
//   GCC vector types (sum, prod, amax, amin), the others with accumulator lanes that the
//   compiler vectorises; float sums are pairwise within a run (blocks of 1024), so their
//   rounding error grows with log(n).
// - outer: the innermost input dimension is kept (`x.sum(0)` of a row-major matrix). A chunk
//   of up to 256 neighbouring outputs is accumulated row by row, vectorised across the row.
//
// Threads split the outputs; when there are fewer than 16 output groups the reduced range is
// also cut into fixed blocks (independent of the thread count) whose partial results are
// combined in block order, so every result is the same for any number of threads.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "dtype.h"
#include "kernels.h"
#include "parallel.h"
#include "reduce.h"
#include "reduce_nest.h"
#include "simd.h"

// The vector steps take and return 32-byte GCC vectors. They are always inlined into the
// PLAIT_CLONES loops, so the calling convention of such values (which differs between ISAs,
// hence GCC's -Wpsabi note) never applies.
#define PLAIT_INLINE __attribute__((always_inline)) inline
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace plait::cpu {
namespace {

// Elements of input below which a loop stays on one thread.
constexpr int64_t kMinWork = int64_t{1} << 15;
// Input elements per fixed block when the reduced range is split.
constexpr int64_t kBlockElems = int64_t{1} << 16;
// Fewer output groups than this split the reduced range into blocks.
constexpr int64_t kFewGroups = 16;
// Outputs accumulated together by the outer loop (their accumulators stay in L1).
constexpr int64_t kOuterWidth = 256;
// Accumulator lanes of the inner loop (several independent vector registers) and the
// pairwise block of float sums.
constexpr int kLanes = 64;
constexpr int64_t kPairwiseBlock = 1024;

// An op: `Acc`, `identity()`, `step(acc, x)` folding in one input element and
// `combine(earlier, later)` of two partial results. `kPairwise` asks for pairwise runs.

// Floats sum in their compute type (float for float32, float16 and bfloat16, as the reference
// and PyTorch do; pairwise, so the error grows with log(n)), or in double when the output is
// float64; integers and bool in 64-bit integers that wrap (unsigned, so that overflow is
// defined) like PyTorch's int64 sums.
template <class T, class A>
struct SumInto {
  using Acc = A;
  static constexpr bool kPairwise = is_floating_v<T>;
  static Acc identity() { return Acc{0}; }
  static Acc step(Acc acc, T x) { return acc + static_cast<Acc>(load(x)); }
  static Acc combine(Acc a, Acc b) { return a + b; }
  template <class V>
  PLAIT_INLINE static V vstep(V acc, V x) {
    return acc + x;
  }
};

template <class T>
using SumOp = SumInto<T, std::conditional_t<is_floating_v<T>, ComputeType<T>, uint64_t>>;
template <class T>
using SumDoubleOp = SumInto<T, double>;

// Products stay in the dtype (float for float16/bfloat16), as the reference computes them:
// overflow to inf happens where it happens there.
template <class T>
struct ProdOp {
  using Acc = std::conditional_t<is_floating_v<T>, ComputeType<T>, uint64_t>;
  static constexpr bool kPairwise = false;
  static Acc identity() { return Acc{1}; }
  static Acc step(Acc acc, T x) { return acc * static_cast<Acc>(load(x)); }
  static Acc combine(Acc a, Acc b) { return a * b; }
  template <class V>
  PLAIT_INLINE static V vstep(V acc, V x) {
    return acc * x;
  }
};

// amax/amin propagate NaN: `v != v` is isnan without a call, so the loop still vectorises.
template <class T, bool kMax>
struct ExtremeOp {
  using Acc = ComputeType<T>;
  static constexpr bool kPairwise = false;
  static Acc identity() {
    if constexpr (std::is_same_v<T, bool>) {
      return !kMax;
    } else if constexpr (is_floating_v<T>) {
      return kMax ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
    } else {
      return kMax ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
    }
  }
  // True when `v` replaces `best`: strictly more extreme, or a NaN.
  static bool better(Acc v, Acc best) {
    if constexpr (kMax) {
      return v > best || v != v;
    } else {
      return v < best || v != v;
    }
  }
  static Acc step(Acc acc, T x) {
    const Acc v = load(x);
    return better(v, acc) ? v : acc;
  }
  static Acc combine(Acc a, Acc b) { return better(b, a) ? b : a; }
};

// any/all of `x != 0` (NaN counts as true); 0/1 bytes vectorise better than bool.
template <class T, bool kAny>
struct TruthOp {
  using Acc = uint8_t;
  static constexpr bool kPairwise = false;
  static Acc identity() { return kAny ? 0 : 1; }
  static Acc step(Acc acc, T x) {
    const Acc nonzero = load(x) != ComputeType<T>(0);
    return kAny ? (acc | nonzero) : (acc & nonzero);
  }
  static Acc combine(Acc a, Acc b) { return kAny ? (a | b) : (a & b); }
};

template <class D, class Acc>
inline D to_out(Acc v) {
  if constexpr (std::is_same_v<Acc, uint64_t>) {
    return cast<D>(static_cast<int64_t>(v));  // modular: the two's complement value
  } else {
    return cast<D>(v);
  }
}

// Ops with a vector step (`vstep` on GCC vector types) over plain arithmetic dtypes.
template <class Op, class T>
inline constexpr bool kHasVectorStep =
    std::is_arithmetic_v<T> && !std::is_same_v<T, bool> &&
    (std::is_same_v<Op, SumOp<T>> || std::is_same_v<Op, SumDoubleOp<T>> ||
     std::is_same_v<Op, ProdOp<T>>);

// Folds the lanes of a vector pairwise, lane j with lane j + w for w = width/2, ..., 1 (the
// order a scalar tree over a lane array would take), with half-width vector extracts that stay
// in registers: spilled to a lane array, each level waits on a store-to-load forward of a
// different width, which cost a short row (1024 floats) a fifth of its time.
template <class Op, class V, size_t... I>
PLAIT_INLINE auto fold_half(V v, std::index_sequence<I...>) {
  constexpr size_t kHalf = sizeof...(I);
  return Op::vstep(__builtin_shufflevector(v, v, I...),
                   __builtin_shufflevector(v, v, (I + kHalf)...));
}

template <class Op, class Acc, int kWidth, class V>
PLAIT_INLINE Acc fold_lanes(V v) {
  if constexpr (kWidth == 1) {
    return v[0];
  } else {
    return fold_lanes<Op, Acc, kWidth / 2>(
        fold_half<Op>(v, std::make_index_sequence<kWidth / 2>{}));
  }
}

// Bytes of the GCC vectors of the contiguous loops. 32, not 64, in the AVX-512 clone too:
// streaming a 40 MB float32 sum from memory took 6% longer with 64-byte loads on Zen 4 (both
// on huge pages, one thread), and L3-resident rows were no faster. One width also gives
// every clone the same lanes, so the same bits.
constexpr int kVectorBytes = 32;

// The contiguous inner loop written with GCC vector types (32-byte vectors of the
// accumulator type, four of them in flight): the compiler emits it for every clone's ISA,
// and selects and widening conversions stay in vector registers, which autovectorised
// accumulator arrays do not guarantee.
//
// The order of operations (the result, bitwise): element i goes to lane i % (4 * width)
// while whole groups of 4 * width remain; the four vectors fold as (v0 + v1) + (v2 + v3); the
// remaining elements go to lane (i - start) % width in order; then the lanes fold pairwise.
template <class Op, class T>
PLAIT_INLINE typename Op::Acc reduce_vectors(const T* p, int64_t n) {
  using Acc = typename Op::Acc;
  constexpr int kWidth = kVectorBytes / sizeof(Acc);
  typedef Acc VAcc __attribute__((vector_size(kVectorBytes)));
  typedef T VIn __attribute__((vector_size(kWidth * sizeof(T))));
  constexpr int kVectors = 4;  // the fold below assumes four
  const Acc id = Op::identity();
  const VAcc identity = VAcc{} + id;  // the identity in every lane
  VAcc acc[kVectors] = {identity, identity, identity, identity};
  int64_t i = 0;
  for (; i + kVectors * kWidth <= n; i += kVectors * kWidth) {
    for (int v = 0; v < kVectors; ++v) {
      VIn x;
      std::memcpy(&x, p + i + v * kWidth, sizeof(x));
      acc[v] = Op::vstep(acc[v], __builtin_convertvector(x, VAcc));
    }
  }
  acc[0] = Op::vstep(Op::vstep(acc[0], acc[1]), Op::vstep(acc[2], acc[3]));
  // The tail, a vector at a time; the last, partial one padded with the identity (x + 0 and
  // x * 1 are x, so the padding changes no lane).
  for (; i + kWidth <= n; i += kWidth) {
    VIn x;
    std::memcpy(&x, p + i, sizeof(x));
    acc[0] = Op::vstep(acc[0], __builtin_convertvector(x, VAcc));
  }
  if (i < n) {
    Acc rest[kWidth];
    for (int j = 0; j < kWidth; ++j) rest[j] = id;
    for (int j = 0; i + j < n; ++j) rest[j] = static_cast<Acc>(load(p[i + j]));
    VAcc x;
    std::memcpy(&x, rest, sizeof(x));
    acc[0] = Op::vstep(acc[0], x);
  }
  return fold_lanes<Op, Acc, kWidth>(acc[0]);
}

// amax/amin of a plain arithmetic dtype with GCC vector types: one compare-select per vector
// (a vector max/min instruction) and, for floats, a separate running "saw a NaN" mask.
// (Testing only the sum of a step's four vectors for NaN, with an exact search when it is,
// measured slower on L3-resident rows and no faster on a 1e7 stream.)
// The vectors are as wide as the CPU's registers (`extreme_row` picks), unlike the sums: a
// maximum is exact (the lane count changes no bit), and with AVX-512 its compare-select plus
// NaN mask per vector made 32-byte vectors compute-bound on cache-resident rows; wider than
// the registers, GCC lowers the select one element at a time.
template <class T, bool kMax, int kVectorBytes>
PLAIT_INLINE T extreme_vectors(const T* p, int64_t n) {
  constexpr int kWidth = kVectorBytes / sizeof(T);
  constexpr int kVectors = 4;
  // Signed integers of T's size: what a comparison yields and what a shuffle indexes with.
  using MaskElem = std::conditional_t<
      sizeof(T) == 1, int8_t,
      std::conditional_t<sizeof(T) == 2, int16_t,
                         std::conditional_t<sizeof(T) == 4, int32_t, int64_t>>>;
  typedef T V __attribute__((vector_size(kVectorBytes)));
  typedef MaskElem M __attribute__((vector_size(kWidth * sizeof(MaskElem))));
  T lane[kWidth];
  for (int j = 0; j < kWidth; ++j) lane[j] = ExtremeOp<T, kMax>::identity();
  V best[kVectors];
  M nan[kVectors];
  for (int v = 0; v < kVectors; ++v) std::memcpy(&best[v], lane, sizeof(V));
  std::memset(nan, 0, sizeof(nan));
  int64_t i = 0;
  for (; i + kVectors * kWidth <= n; i += kVectors * kWidth) {
    for (int v = 0; v < kVectors; ++v) {
      V x;
      std::memcpy(&x, p + i + v * kWidth, sizeof(x));
      if constexpr (kMax) {
        best[v] = x > best[v] ? x : best[v];
      } else {
        best[v] = x < best[v] ? x : best[v];
      }
      if constexpr (std::is_floating_point_v<T>) nan[v] |= (x != x);
    }
  }
  // Fold the vectors into one, then its halves into each other (shuffles), all in registers.
  typedef MaskElem Index __attribute__((vector_size(kWidth * sizeof(MaskElem))));
  auto pick = [](V a, V b) {
    if constexpr (kMax) {
      return a > b ? a : b;
    } else {
      return a < b ? a : b;
    }
  };
  for (int v = 1; v < kVectors; ++v) {
    best[0] = pick(best[v], best[0]);
    if constexpr (std::is_floating_point_v<T>) nan[0] |= nan[v];
  }
  for (int w = kWidth / 2; w >= 1; w /= 2) {
    MaskElem rotate[kWidth];
    for (int j = 0; j < kWidth; ++j) rotate[j] = static_cast<MaskElem>((j + w) % kWidth);
    Index index;
    std::memcpy(&index, rotate, sizeof(index));
    best[0] = pick(__builtin_shuffle(best[0], index), best[0]);
    if constexpr (std::is_floating_point_v<T>) nan[0] |= __builtin_shuffle(nan[0], index);
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (nan[0][0]) return std::numeric_limits<T>::quiet_NaN();
  }
  T result = best[0][0];
  for (; i < n; ++i) result = ExtremeOp<T, kMax>::step(result, p[i]);  // the tail
  return result;
}

// extreme_vectors at the running CPU's register width: the clone that runs is the one built
// for that CPU, so the other widths' code (compiled into every clone) is never reached.
template <class T, bool kMax>
PLAIT_INLINE T extreme_row(const T* p, int64_t n) {
  switch (native_vector_bytes()) {
    case 64:
      return extreme_vectors<T, kMax, 64>(p, n);
    case 32:
      return extreme_vectors<T, kMax, 32>(p, n);
    default:
      return extreme_vectors<T, kMax, 16>(p, n);
  }
}

// One contiguous run; inlined into the PLAIT_CLONES functions below.
template <class Op, class T>
PLAIT_INLINE typename Op::Acc reduce_row(const T* p, int64_t n) {
  if constexpr (kHasVectorStep<Op, T>) {
    return reduce_vectors<Op, T>(p, n);
  } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool> &&
                       std::is_same_v<Op, ExtremeOp<T, true>>) {
    return extreme_row<T, true>(p, n);
  } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool> &&
                       std::is_same_v<Op, ExtremeOp<T, false>>) {
    return extreme_row<T, false>(p, n);
  }
  using Acc = typename Op::Acc;
  Acc lane[kLanes];
  for (int j = 0; j < kLanes; ++j) lane[j] = Op::identity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    // Kept as a loop: fully unrolled, the selects of amax/amin stay scalar branches; as a
    // loop, the vectoriser turns them into masked vector moves.
#pragma GCC unroll 1
    for (int j = 0; j < kLanes; ++j) lane[j] = Op::step(lane[j], p[i + j]);
  }
  for (int j = 0; i < n; ++i, ++j) lane[j] = Op::step(lane[j], p[i]);
  for (int w = kLanes / 2; w >= 1; w /= 2) {
    for (int j = 0; j < w; ++j) lane[j] = Op::combine(lane[j], lane[j + w]);
  }
  return lane[0];
}

template <class Op, class T>
PLAIT_CLONES typename Op::Acc reduce_contiguous(const T* p, int64_t n) {
  return reduce_row<Op, T>(p, n);
}

// out[r] = the reduction of the contiguous row r of `n` elements, for `rows` rows (strides in
// bytes): one call per chunk of rows rather than a dispatched call per (short) row. Each row
// takes reduce_contiguous's order of operations, so its result does not depend on the chunk.
template <class Op, class T, class D>
PLAIT_CLONES void reduce_rows(char* out, int64_t out_step, const char* a, int64_t a_step,
                              int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    at<D>(out, r * out_step) =
        to_out<D>(reduce_row<Op, T>(reinterpret_cast<const T*>(a + r * a_step), n));
  }
}

template <class Op, class T>
typename Op::Acc reduce_strided(const char* p, int64_t n, int64_t stride) {
  using Acc = typename Op::Acc;
  Acc lane[4] = {Op::identity(), Op::identity(), Op::identity(), Op::identity()};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int j = 0; j < 4; ++j) lane[j] = Op::step(lane[j], at<const T>(const_cast<char*>(p), (i + j) * stride));
  }
  for (int j = 0; i < n; ++i, ++j) lane[j] = Op::step(lane[j], at<const T>(const_cast<char*>(p), i * stride));
  return Op::combine(Op::combine(lane[0], lane[1]), Op::combine(lane[2], lane[3]));
}

// One run of `n` elements `stride` bytes apart.
template <class Op, class T>
typename Op::Acc reduce_run(const char* p, int64_t n, int64_t stride) {
  if constexpr (Op::kPairwise) {
    if (n > kPairwiseBlock) {
      // Named in order: as two arguments of one call the halves may run second half first,
      // and walking memory backwards defeats the hardware prefetcher (4x slower).
      const int64_t half = (n / 2 + kLanes - 1) / kLanes * kLanes;
      const typename Op::Acc first = reduce_run<Op, T>(p, half, stride);
      const typename Op::Acc second = reduce_run<Op, T>(p + half * stride, n - half, stride);
      return Op::combine(first, second);
    }
  }
  if (stride == static_cast<int64_t>(sizeof(T))) {
    return reduce_contiguous<Op, T>(reinterpret_cast<const T*>(p), n);
  }
  return reduce_strided<Op, T>(p, n, stride);
}

// acc[j] = step(acc[j], row[j]) for a row of `w` outputs.
template <class Op, class T>
PLAIT_CLONES void accumulate_row(typename Op::Acc* __restrict acc, const T* __restrict row,
                                 int64_t w) {
  for (int64_t j = 0; j < w; ++j) acc[j] = Op::step(acc[j], row[j]);
}

template <class Op, class T>
void accumulate_row_strided(typename Op::Acc* acc, const char* row, int64_t w, int64_t stride) {
  for (int64_t j = 0; j < w; ++j) {
    acc[j] = Op::step(acc[j], at<const T>(const_cast<char*>(row), j * stride));
  }
}

// The two nests of a reduction (strides in bytes): `kept` over the output elements (operand 0
// the input, 1 the output) and `reduced` over the input elements each one combines.
struct Plan {
  Strided<2> kept;
  Strided<1> reduced;
  int64_t outputs = 0;
  int64_t count = 0;   // elements reduced into each output
  bool outer = false;  // the innermost input dimension is kept
};

Plan make_plan(const Dims& shape, const Dims& out_strides, size_t out_size,
               const Dims& a_strides, size_t a_size, uint64_t mask) {
  Plan plan;
  const Dims kept_shape = with_dims_set(shape, mask, 1);
  const Dims reduced_shape = with_dims_set(shape, ~mask, 1);
  plan.kept.build(kept_shape, {&a_strides, &out_strides}, {a_size, out_size}, 0);
  plan.outputs = nest_size(plan.kept);
  plan.count = plan.reduced.build(reduced_shape, {&a_strides}, {a_size}, 0)
                   ? nest_size(plan.reduced)
                   : 0;
  const int kl = plan.kept.ndim - 1;
  const int rl = plan.reduced.ndim - 1;
  plan.outer = plan.kept.ndim > 0 &&
               (plan.reduced.ndim == 0 ||
                std::llabs(plan.kept.strides[0][kl]) < std::llabs(plan.reduced.strides[0][rl]));
  return plan;
}

template <class Op, class T, class D>
void reduce_inner(const Plan& plan, char* out, char* a) {
  using Acc = typename Op::Acc;
  const int64_t groups = plan.outputs;
  const int64_t n = plan.count;
  const bool split = groups < kFewGroups && n > kBlockElems;
  const int64_t block = split ? kBlockElems : n;
  const int64_t blocks = fixed_block_count(n, block);
  // One kept and one reduced dimension (`x.sum(-1)` of a matrix, a full reduction): plain
  // offsets instead of the nest walk, whose divisions would cost as much as a short row.
  const bool simple = plan.kept.ndim <= 1 && plan.reduced.ndim == 1;
  auto offsets = [&](int64_t g) {
    if (simple) {
      return plan.kept.ndim == 0
                 ? std::array<int64_t, 2>{0, 0}
                 : std::array<int64_t, 2>{g * plan.kept.strides[0][0], g * plan.kept.strides[1][0]};
    }
    return nest_offsets(plan.kept, plan.kept.ndim, g);
  };
  auto partial = [&](int64_t g, int64_t begin, int64_t end) {
    const auto off = offsets(g);
    if (simple) {
      const int64_t step = plan.reduced.strides[0][0];
      return reduce_run<Op, T>(a + off[0] + begin * step, end - begin, step);
    }
    Acc acc = Op::identity();
    walk_range(plan.reduced, std::array<char*, 1>{a + off[0]}, begin, end,
               [&](char* const* p, int64_t len, const int64_t* s) {
                 acc = Op::combine(acc, reduce_run<Op, T>(p[0], len, s[0]));
               });
    return acc;
  };
  auto store = [&](int64_t g, Acc acc) { at<D>(out, offsets(g)[1]) = to_out<D>(acc); };
  if (!split && simple && plan.kept.ndim == 1 &&
      plan.reduced.strides[0][0] == static_cast<int64_t>(sizeof(T)) &&
      (!Op::kPairwise || n <= kPairwiseBlock)) {
    // Contiguous rows that reduce_run would not split (`x.sum(-1)` of a row-major matrix).
    const int64_t a_step = plan.kept.strides[0][0];
    const int64_t out_step = plan.kept.strides[1][0];
    parallel_for_balanced(groups, std::max<int64_t>(1, kMinWork / n), [&](int64_t g0, int64_t g1) {
      reduce_rows<Op, T, D>(out + g0 * out_step, out_step, a + g0 * a_step, a_step, g1 - g0, n);
    });
    return;
  }
  if (!split) {
    parallel_for_balanced(groups, std::max<int64_t>(1, kMinWork / n), [&](int64_t g0, int64_t g1) {
      for (int64_t g = g0; g < g1; ++g) store(g, partial(g, 0, n));
    });
    return;
  }
  std::unique_ptr<Acc[]> partials(new Acc[static_cast<size_t>(groups * blocks)]);
  parallel_for_balanced(groups * blocks, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t % blocks;
      partials[t] = partial(t / blocks, b * block, std::min(n, (b + 1) * block));
    }
  });
  for (int64_t g = 0; g < groups; ++g) {
    Acc acc = partials[g * blocks];
    for (int64_t b = 1; b < blocks; ++b) acc = Op::combine(acc, partials[g * blocks + b]);
    store(g, acc);
  }
}

template <class Op, class T, class D>
void reduce_outer(const Plan& plan, char* out, char* a) {
  using Acc = typename Op::Acc;
  const int kl = plan.kept.ndim - 1;
  const int64_t m = plan.kept.shape[kl];
  const int64_t in_step = plan.kept.strides[0][kl];
  const int64_t out_step = plan.kept.strides[1][kl];
  const int64_t chunks = (m + kOuterWidth - 1) / kOuterWidth;
  const int64_t groups = plan.outputs / m * chunks;
  const int64_t width = std::min(m, kOuterWidth);
  const int64_t n = plan.count;
  const int64_t rows_per_block = std::max<int64_t>(1, kBlockElems / width);
  const bool split = groups < kFewGroups && n > rows_per_block;
  const int64_t block = split ? rows_per_block : n;
  const int64_t blocks = fixed_block_count(n, block);
  // Accumulates rows [begin, end) of group g into acc[0, w); returns w.
  auto partial = [&](int64_t g, int64_t begin, int64_t end, Acc* acc) {
    const int64_t j0 = g % chunks * kOuterWidth;
    const int64_t w = std::min(kOuterWidth, m - j0);
    const auto off = nest_offsets(plan.kept, kl, g / chunks);
    std::fill(acc, acc + w, Op::identity());
    walk_range(plan.reduced, std::array<char*, 1>{a + off[0] + j0 * in_step}, begin, end,
               [&](char* const* p, int64_t len, const int64_t* s) {
                 for (int64_t i = 0; i < len; ++i) {
                   const char* row = p[0] + i * s[0];
                   if (in_step == static_cast<int64_t>(sizeof(T))) {
                     accumulate_row<Op, T>(acc, reinterpret_cast<const T*>(row), w);
                   } else {
                     accumulate_row_strided<Op, T>(acc, row, w, in_step);
                   }
                 }
               });
    return w;
  };
  auto store = [&](int64_t g, const Acc* acc, int64_t w) {
    const int64_t j0 = g % chunks * kOuterWidth;
    const auto off = nest_offsets(plan.kept, kl, g / chunks);
    char* o = out + off[1] + j0 * out_step;
    for (int64_t j = 0; j < w; ++j) at<D>(o, j * out_step) = to_out<D>(acc[j]);
  };
  if (!split) {
    const int64_t grain = std::max<int64_t>(1, kMinWork / std::max<int64_t>(1, n * width));
    parallel_for_balanced(groups, grain, [&](int64_t g0, int64_t g1) {
      Acc acc[kOuterWidth];
      for (int64_t g = g0; g < g1; ++g) store(g, acc, partial(g, 0, n, acc));
    });
    return;
  }
  // Not std::vector: vector<bool> is not an array of bool.
  std::unique_ptr<Acc[]> partials(new Acc[static_cast<size_t>(groups * blocks * width)]);
  parallel_for_balanced(groups * blocks, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t % blocks;
      partial(t / blocks, b * block, std::min(n, (b + 1) * block), &partials[t * width]);
    }
  });
  for (int64_t g = 0; g < groups; ++g) {
    Acc* acc = &partials[g * blocks * width];
    const int64_t w = std::min(kOuterWidth, m - g % chunks * kOuterWidth);
    for (int64_t b = 1; b < blocks; ++b) {
      const Acc* next = acc + b * width;
      for (int64_t j = 0; j < w; ++j) acc[j] = Op::combine(acc[j], next[j]);
    }
    store(g, acc, w);
  }
}

struct Args {
  const Dims& shape;
  uintptr_t out;
  const Dims& out_strides;
  uintptr_t a;
  const Dims& a_strides;
  uint64_t mask;
};

template <class Op, class T, class D>
bool reduce_typed(const Args& args) {
  using Acc = typename Op::Acc;
  const Plan plan =
      make_plan(args.shape, args.out_strides, sizeof(D), args.a_strides, sizeof(T), args.mask);
  char* out = reinterpret_cast<char*>(args.out);
  char* a = reinterpret_cast<char*>(args.a);
  if (plan.count == 0) {  // nothing to combine: the identity (0 for sum, 1 for prod, ...)
    const D value = to_out<D>(Op::identity());
    walk_range(plan.kept, std::array<char*, 2>{a, out}, 0, plan.outputs,
               [&](char* const* p, int64_t len, const int64_t* s) {
                 for (int64_t i = 0; i < len; ++i) at<D>(p[1], i * s[1]) = value;
               });
    return true;
  }
  static_assert(std::is_trivially_copyable_v<Acc>);
  if (plan.outer) {
    reduce_outer<Op, T, D>(plan, out, a);
  } else {
    reduce_inner<Op, T, D>(plan, out, a);
  }
  return true;
}

// sum/prod: the input dtype, float64 from a float, int64 from an integer or bool.
template <template <class> class Op, class T>
bool reduce_accumulating(int out_dtype, const Args& args) {
  if constexpr (is_floating_v<T>) {
    if (out_dtype == dtype_code<T>()) return reduce_typed<Op<T>, T, T>(args);
    if (out_dtype == dtype_code<double>()) {
      if constexpr (std::is_same_v<Op<T>, SumOp<T>>) {  // a float64 sum accumulates in double
        return reduce_typed<SumDoubleOp<T>, T, double>(args);
      } else {
        return reduce_typed<Op<T>, T, double>(args);
      }
    }
  } else {
    if (out_dtype == dtype_code<int64_t>()) return reduce_typed<Op<T>, T, int64_t>(args);
    if constexpr (!std::is_same_v<T, bool>) {
      if (out_dtype == dtype_code<T>()) return reduce_typed<Op<T>, T, T>(args);
    }
  }
  return false;
}

template <bool kAny, class T>
bool reduce_truth(int out_dtype, const Args& args) {
  if (out_dtype == dtype_code<bool>()) return reduce_typed<TruthOp<T, kAny>, T, bool>(args);
  if (out_dtype == dtype_code<uint8_t>()) {
    return reduce_typed<TruthOp<T, kAny>, T, uint8_t>(args);
  }
  return false;
}

// argmax/argmin ------------------------------------------------------------------------------

// The extreme of a run and its position (the first one; the first NaN if there is one).
template <class T, bool kMax>
struct Best {
  ComputeType<T> value;
  int64_t index;
};

template <class T, bool kMax>
Best<T, kMax> arg_run(const char* p, int64_t n, int64_t stride, int64_t first_index) {
  using Op = ExtremeOp<T, kMax>;
  using C = ComputeType<T>;
  if (stride == static_cast<int64_t>(sizeof(T))) {
    // Two vectorised passes: the extreme, then its first position.
    const T* x = reinterpret_cast<const T*>(p);
    const C best = reduce_contiguous<Op, T>(x, n);
    // Find the block of 64 holding the first match with a vectorised test, then the match.
    const bool nan = best != best;
    auto match = [&](int64_t i) {
      const C v = load(x[i]);
      return nan ? v != v : v == best;
    };
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
      bool hit = false;
      for (int64_t j = i; j < i + 64; ++j) hit |= match(j);
      if (hit) break;
    }
    while (!match(i)) ++i;
    return {best, first_index + i};
  }
  C best = load(at<const T>(const_cast<char*>(p), 0));
  int64_t index = 0;
  for (int64_t i = 1; i < n; ++i) {
    const C v = load(at<const T>(const_cast<char*>(p), i * stride));
    if (Op::better(v, best) && best == best) {
      best = v;
      index = i;
    }
  }
  return {best, first_index + index};
}

// argmax over columns: best[j], index[j] updated row by row.
template <class T, bool kMax>
PLAIT_CLONES void arg_row(ComputeType<T>* __restrict best, int64_t* __restrict index,
                          const T* __restrict row, int64_t w, int64_t i) {
  using C = ComputeType<T>;
  for (int64_t j = 0; j < w; ++j) {
    const C v = load(row[j]);
    const bool take = ExtremeOp<T, kMax>::better(v, best[j]) && best[j] == best[j];
    best[j] = take ? v : best[j];
    index[j] = take ? i : index[j];
  }
}

template <class T, bool kMax>
void arg_typed(const Dims& shape, char* out, const Dims& out_strides, char* a,
               const Dims& a_strides, uint64_t mask) {
  using C = ComputeType<T>;
  using Op = ExtremeOp<T, kMax>;
  const Plan plan = make_plan(shape, out_strides, sizeof(int64_t), a_strides, sizeof(T), mask);
  const int64_t n = plan.count;
  if (plan.reduced.ndim == 0) {  // one element per output: index 0
    walk_range(plan.kept, std::array<char*, 2>{a, out}, 0, plan.outputs,
               [&](char* const* p, int64_t len, const int64_t* s) {
                 for (int64_t i = 0; i < len; ++i) at<int64_t>(p[1], i * s[1]) = 0;
               });
    return;
  }
  const int64_t step = plan.reduced.strides[0][0];  // one reduced dimension
  if (!plan.outer) {
    const int64_t groups = plan.outputs;
    const bool split = groups < kFewGroups && n > kBlockElems;
    const int64_t block = split ? kBlockElems : n;
    const int64_t blocks = fixed_block_count(n, block);
    std::vector<Best<T, kMax>> partials(static_cast<size_t>(groups * blocks));
    parallel_for_balanced(groups * blocks, split ? 1 : std::max<int64_t>(1, kMinWork / n),
                 [&](int64_t t0, int64_t t1) {
                   for (int64_t t = t0; t < t1; ++t) {
                     const int64_t g = t / blocks;
                     const int64_t begin = t % blocks * block;
                     const int64_t len = std::min(n, begin + block) - begin;
                     const auto off = nest_offsets(plan.kept, plan.kept.ndim, g);
                     partials[t] = arg_run<T, kMax>(a + off[0] + begin * step, len, step, begin);
                   }
                 });
    for (int64_t g = 0; g < groups; ++g) {
      Best<T, kMax> best = partials[g * blocks];
      for (int64_t b = 1; b < blocks; ++b) {
        const Best<T, kMax>& next = partials[g * blocks + b];
        if (Op::better(next.value, best.value) && best.value == best.value) best = next;
      }
      const auto off = nest_offsets(plan.kept, plan.kept.ndim, g);
      at<int64_t>(out, off[1]) = best.index;
    }
    return;
  }
  const int kl = plan.kept.ndim - 1;
  const int64_t m = plan.kept.shape[kl];
  const int64_t in_step = plan.kept.strides[0][kl];
  const int64_t out_step = plan.kept.strides[1][kl];
  const int64_t chunks = (m + kOuterWidth - 1) / kOuterWidth;
  const int64_t groups = plan.outputs / m * chunks;
  const int64_t width = std::min(m, kOuterWidth);
  parallel_for_balanced(groups, std::max<int64_t>(1, kMinWork / (n * width)), [&](int64_t g0, int64_t g1) {
    C best[kOuterWidth];
    int64_t index[kOuterWidth];
    T row[kOuterWidth];
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t j0 = g % chunks * kOuterWidth;
      const int64_t w = std::min(kOuterWidth, m - j0);
      const auto off = nest_offsets(plan.kept, kl, g / chunks);
      const char* base = a + off[0] + j0 * in_step;
      for (int64_t j = 0; j < w; ++j) {
        best[j] = load(at<const T>(const_cast<char*>(base), j * in_step));
        index[j] = 0;
      }
      for (int64_t i = 1; i < n; ++i) {
        const char* r = base + i * step;
        const T* x = reinterpret_cast<const T*>(r);
        if (in_step != static_cast<int64_t>(sizeof(T))) {
          for (int64_t j = 0; j < w; ++j) row[j] = at<const T>(const_cast<char*>(r), j * in_step);
          x = row;
        }
        arg_row<T, kMax>(best, index, x, w, i);
      }
      char* o = out + off[1] + j0 * out_step;
      for (int64_t j = 0; j < w; ++j) at<int64_t>(o, j * out_step) = index[j];
    }
  });
}

bool check_reduce_args(const Dims& shape, uintptr_t out, const Dims& out_strides,
                       size_t out_size, uintptr_t a, const Dims& a_strides, size_t a_size,
                       uint64_t mask) {
  check_layout(shape, {&out_strides, &a_strides});
  if (shape.size() > static_cast<size_t>(kMaxDims) || out_size == 0 || a_size == 0) {
    return false;
  }
  const Dims out_shape = with_dims_set(shape, mask, 1);
  if (numel(out_shape) == 0) return true;
  if (has_zero_stride(out_shape, out_strides)) return false;
  // `out` is written only after `a` has been read, but an output that shares bytes with its
  // input is a caller's mistake: leave its semantics to the reference kernel.
  return numel(shape) == 0 ||
         !extents_overlap(out, out_shape, out_strides, out_size, a, shape, a_strides, a_size);
}

uint64_t valid_mask(uint64_t mask, size_t ndim) {
  return ndim >= 64 ? mask : mask & ((uint64_t{1} << ndim) - 1);
}

}  // namespace

bool reduce(ReduceOp op, int out_dtype, int a_dtype, const Dims& shape, uintptr_t out,
            const Dims& out_strides, uintptr_t a, const Dims& a_strides, uint64_t reduce_mask) {
  reduce_mask = valid_mask(reduce_mask, shape.size());
  if (!check_reduce_args(shape, out, out_strides, itemsize(out_dtype), a, a_strides,
                         itemsize(a_dtype), reduce_mask)) {
    return false;
  }
  if (numel(with_dims_set(shape, reduce_mask, 1)) == 0) return true;
  const Args args{shape, out, out_strides, a, a_strides, reduce_mask};
  bool done = false;
  visit_dtype(a_dtype, [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
      case ReduceOp::Sum:
        done = reduce_accumulating<SumOp, T>(out_dtype, args);
        break;
      case ReduceOp::Prod:
        done = reduce_accumulating<ProdOp, T>(out_dtype, args);
        break;
      case ReduceOp::Amax:
        done = out_dtype == a_dtype && reduce_typed<ExtremeOp<T, true>, T, T>(args);
        break;
      case ReduceOp::Amin:
        done = out_dtype == a_dtype && reduce_typed<ExtremeOp<T, false>, T, T>(args);
        break;
      case ReduceOp::Any:
        done = reduce_truth<true, T>(out_dtype, args);
        break;
      case ReduceOp::All:
        done = reduce_truth<false, T>(out_dtype, args);
        break;
    }
  });
  return done;
}

bool sum(int out_dtype, int a_dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
         uintptr_t a, const Dims& a_strides, uint64_t reduce_mask) {
  return reduce(ReduceOp::Sum, out_dtype, a_dtype, shape, out, out_strides, a, a_strides,
                reduce_mask);
}

bool arg_reduce(bool is_max, int a_dtype, const Dims& shape, uintptr_t out,
                const Dims& out_strides, uintptr_t a, const Dims& a_strides, int dim) {
  if (shape.empty() && dim == 0) {  // a 0-d input: its one element is the extreme, index 0
    check_layout(shape, {&out_strides, &a_strides});
    if (itemsize(a_dtype) == 0 || out == 0) return false;
    at<int64_t>(reinterpret_cast<char*>(out), 0) = 0;
    return true;
  }
  if (dim < 0 || static_cast<size_t>(dim) >= shape.size() ||
      shape.size() > static_cast<size_t>(kMaxDims)) {
    check_layout(shape, {&out_strides, &a_strides});
    return false;
  }
  const uint64_t mask = uint64_t{1} << dim;
  if (!check_reduce_args(shape, out, out_strides, sizeof(int64_t), a, a_strides,
                         itemsize(a_dtype), mask)) {
    return false;
  }
  if (numel(with_dims_set(shape, mask, 1)) == 0) return true;
  if (shape[dim] == 0) return false;  // no extreme: the reference raises
  char* o = reinterpret_cast<char*>(out);
  char* p = reinterpret_cast<char*>(a);
  return visit_dtype(a_dtype, [&](auto tag) {
    using T = decltype(tag);
    if (is_max) {
      arg_typed<T, true>(shape, o, out_strides, p, a_strides, mask);
    } else {
      arg_typed<T, false>(shape, o, out_strides, p, a_strides, mask);
    }
  });
}

}  // namespace plait::cpu
