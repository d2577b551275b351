// The loop machinery shared by the elementwise kernels (unary.cpp, binary.cpp, compare.cpp,
// elementwise.cpp).
//
// An operator is a struct with
//   template <class T> static constexpr bool supports;   // storage dtypes it runs natively
//   static R apply(C a, ...);                              // one element, in compute type C
// and optionally
//   static constexpr bool kRaw = true;      // apply() takes the storage type (no widening)
//   static constexpr int kCost = N;         // work per element relative to an add (grain)
//   static bool slow(C a) / static R apply_slow(C a);  // unary: elements the vector code
//                                            // leaves to a scalar path (e.g. huge sin args)
//   static void map(R* out, const C* a, int64_t n);   // unary: its own unit-stride loop
//   static bool map_vs(R* out, const C* a, C b, int64_t n);  // binary, scalar b: own loop
//   static void map_vv(R* out, const C* a, const C* b, int64_t n);  // binary: own loop
//
// Layers, from the outside in:
//  1. `run_elementwise` (threads): a contiguous call is split into chunks of the flat range;
//     a strided one builds the loop nest of strided.h and splits its flat index range, each
//     thread walking its runs with `for_each_run_range`.
//  2. `*_run` (one run of n elements with one byte stride per operand): processes blocks of
//     kBlock elements; operands that are not unit-stride compute-typed arrays are gathered
//     (and float16/bfloat16 widened) into stack buffers, a stride-0 operand is loaded once
//     as a scalar, and results are written straight to a unit-stride output or through a
//     buffer (narrowed / scattered) otherwise.
//  3. PLAIT_CLONES loops over unit-stride arrays (`map1`, `map2_*`), compiled per ISA level.
//
// Exact aliasing (out == input, `x.add_(y)`) goes through the output buffer: the loops never
// write an array they read, so no restrict promise is needed and there is no undefined
// behaviour.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "dtype.h"
#include "parallel.h"
#include "simd.h"
#include "strided.h"

namespace plait::cpu::ew {

// Elements per block of a run: the stack buffers (up to four of 8 bytes each) stay in L1.
inline constexpr int64_t kBlock = 512;

// Storage <-> compute type. bool storage is read as a byte and normalised.
template <class T>
inline ComputeType<T> widen(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return half_bits_to_float(v.bits);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return bfloat16_bits_to_float(v.bits);
  } else {
    return v;
  }
}

template <class T>
inline T narrow(ComputeType<T> v) {
  if constexpr (is_reduced_float_v<T>) {
    return T::from_float(v);
  } else {
    return v;
  }
}

// A result of compute type R stored as O.
template <class O, class R>
inline O to_storage(R v) {
  if constexpr (std::is_same_v<O, R>) {
    return v;
  } else {
    return narrow<O>(v);
  }
}

template <class T>
inline T load_at(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
inline void store_at(char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

template <class Op, class = void>
struct CostOf {
  static constexpr int value = 1;
};
template <class Op>
struct CostOf<Op, std::void_t<decltype(Op::kCost)>> {
  static constexpr int value = Op::kCost;
};

template <class Op, class = void>
struct IsRaw : std::false_type {};
template <class Op>
struct IsRaw<Op, std::void_t<decltype(Op::kRaw)>> : std::bool_constant<Op::kRaw> {};

template <class Op, class = void>
struct HasSlow : std::false_type {};
template <class Op>
struct HasSlow<Op, std::void_t<decltype(Op::slow(0.0f))>> : std::true_type {};

// Op::map(out, a, n): an operator's own loop over unit-stride arrays (for a function the
// compiler will not vectorise from apply(), e.g. sqrt, which sets errno).
template <class Op, class R, class C, class = void>
struct HasMap : std::false_type {};
template <class Op, class R, class C>
struct HasMap<Op, R, C,
              std::void_t<decltype(Op::map(std::declval<R*>(), std::declval<const C*>(),
                                           int64_t{0}))>> : std::true_type {};

// Op::map_vs(out, a, b, n) -> bool: an operator's own loop for a scalar second operand, used
// when it returns true (pow by 2 is a square).
template <class Op, class R, class C, class = void>
struct HasMapVs : std::false_type {};
template <class Op, class R, class C>
struct HasMapVs<Op, R, C,
                std::void_t<decltype(Op::map_vs(std::declval<R*>(), std::declval<const C*>(),
                                                std::declval<C>(), int64_t{0}))>>
    : std::true_type {};

// Op::map_vv(out, a, b, n): an operator's own loop over two unit-stride arrays (hypot's
// square root, which the compiler will not vectorise from apply()).
template <class Op, class R, class C, class = void>
struct HasMapVv : std::false_type {};
template <class Op, class R, class C>
struct HasMapVv<Op, R, C,
                std::void_t<decltype(Op::map_vv(std::declval<R*>(), std::declval<const C*>(),
                                                std::declval<const C*>(), int64_t{0}))>>
    : std::true_type {};

// The type Op computes T in.
template <class Op, class T>
using OpCompute = std::conditional_t<IsRaw<Op>::value, T, ComputeType<T>>;

// -- vectorised loops over unit-stride arrays --------------------------------------------

template <class Op, class R, class C>
PLAIT_CLONES void map1(R* out, const C* a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = Op::apply(a[i]);
}

template <class Op, class R, class C>
PLAIT_CLONES void map2_vv(R* out, const C* a, const C* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = Op::apply(a[i], b[i]);
}

template <class Op, class R, class C>
PLAIT_CLONES void map2_vs(R* out, const C* a, C b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = Op::apply(a[i], b);
}

template <class Op, class R, class C>
PLAIT_CLONES void map2_sv(R* out, C a, const C* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = Op::apply(a, b[i]);
}

// float16 / bfloat16 <-> float over unit-stride arrays.
template <class T>
PLAIT_CLONES void widen_array(float* out, const T* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = widen(in[i]);
}

template <class T>
PLAIT_CLONES void narrow_array(T* out, const float* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = narrow<T>(in[i]);
}

// -- operands of one block ----------------------------------------------------------------

// Input k of a block: a unit-stride compute-typed array, a scalar, or gathered into `buf`.
template <class T, class C>
struct Input {
  const C* ptr = nullptr;
  C scalar{};
  bool is_scalar = false;

  void load(const char* p, int64_t stride, int64_t m, C* buf) {
    if (stride == 0) {
      is_scalar = true;
      scalar = to_compute(load_at<T>(p));
      return;
    }
    is_scalar = false;
    if (stride == static_cast<int64_t>(sizeof(T))) {
      if constexpr (std::is_same_v<C, T>) {
        ptr = reinterpret_cast<const C*>(p);
        return;
      } else if constexpr (std::is_same_v<C, float> && is_reduced_float_v<T>) {
        widen_array<T>(buf, reinterpret_cast<const T*>(p), m);
        ptr = buf;
        return;
      }
    }
    for (int64_t i = 0; i < m; ++i) buf[i] = to_compute(load_at<T>(p + i * stride));
    ptr = buf;
  }

  static C to_compute(T v) {
    if constexpr (std::is_same_v<C, T>) {
      return v;
    } else {
      return widen(v);
    }
  }
};

// Writes m results (compute type R) to the output of storage type O at p with byte stride s.
template <class O, class R>
inline void store_block(char* p, int64_t stride, const R* values, int64_t m) {
  if (stride == static_cast<int64_t>(sizeof(O))) {
    if constexpr (std::is_same_v<O, R>) {
      std::memcpy(p, values, static_cast<size_t>(m) * sizeof(O));
      return;
    } else if constexpr (std::is_same_v<R, float> && is_reduced_float_v<O>) {
      narrow_array<O>(reinterpret_cast<O*>(p), values, m);
      return;
    }
  }
  for (int64_t i = 0; i < m; ++i) {
    if constexpr (std::is_same_v<O, R>) {
      store_at<O>(p + i * stride, values[i]);
    } else {
      store_at<O>(p + i * stride, narrow<O>(values[i]));
    }
  }
}

// True when results can be written straight into the output: unit stride, the storage type
// is the result type, and the output is none of the inputs (exact aliasing goes through the
// buffer).
template <class O, class R>
inline bool direct_output(const char* out, int64_t stride, std::initializer_list<const char*> in) {
  if constexpr (!std::is_same_v<O, R>) {
    return false;
  } else {
    if (stride != static_cast<int64_t>(sizeof(O))) return false;
    for (const char* p : in) {
      if (p == out) return false;
    }
    return true;
  }
}

// -- runs ---------------------------------------------------------------------------------

// out (O) = Op(a (T)); strides in bytes.
template <class Op, class O, class T>
void unary_run(int64_t n, char* const* p, const int64_t* s) {
  using C = OpCompute<Op, T>;
  using R = decltype(Op::apply(std::declval<C>()));
  alignas(64) C abuf[kBlock];
  alignas(64) R obuf[kBlock];
  if (s[1] == 0) {  // one value, computed once
    Input<T, C> a;
    a.load(p[1], 0, 1, abuf);
    R v = Op::apply(a.scalar);
    if constexpr (HasSlow<Op>::value) {
      if (Op::slow(a.scalar)) v = Op::apply_slow(a.scalar);
    }
    for (int64_t i = 0; i < n; ++i) store_at<O>(p[0] + i * s[0], to_storage<O, R>(v));
    return;
  }
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t m = std::min(kBlock, n - i0);
    char* out = p[0] + i0 * s[0];
    Input<T, C> a;
    a.load(p[1] + i0 * s[1], s[1], m, abuf);
    const bool direct = direct_output<O, R>(out, s[0], {p[1] + i0 * s[1]});
    R* dst = direct ? reinterpret_cast<R*>(out) : obuf;
    if constexpr (HasMap<Op, R, C>::value) {
      Op::map(dst, a.ptr, m);
    } else {
      map1<Op, R, C>(dst, a.ptr, m);
    }
    if constexpr (HasSlow<Op>::value) {
      for (int64_t i = 0; i < m; ++i) {
        if (Op::slow(a.ptr[i])) dst[i] = Op::apply_slow(a.ptr[i]);
      }
    }
    if (!direct) store_block<O, R>(out, s[0], obuf, m);
  }
}

// out (O) = Op(a (T), b (T)); strides in bytes.
template <class Op, class O, class T>
void binary_run(int64_t n, char* const* p, const int64_t* s) {
  using C = OpCompute<Op, T>;
  using R = decltype(Op::apply(std::declval<C>(), std::declval<C>()));
  alignas(64) C abuf[kBlock];
  alignas(64) C bbuf[kBlock];
  alignas(64) R obuf[kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t m = std::min(kBlock, n - i0);
    char* out = p[0] + i0 * s[0];
    const char* pa = p[1] + i0 * s[1];
    const char* pb = p[2] + i0 * s[2];
    Input<T, C> a;
    Input<T, C> b;
    a.load(pa, s[1], m, abuf);
    b.load(pb, s[2], m, bbuf);
    const bool direct = direct_output<O, R>(out, s[0], {pa, pb});
    R* dst = direct ? reinterpret_cast<R*>(out) : obuf;
    if (a.is_scalar && b.is_scalar) {
      const R v = Op::apply(a.scalar, b.scalar);
      for (int64_t i = 0; i < m; ++i) dst[i] = v;
    } else if (a.is_scalar) {
      map2_sv<Op, R, C>(dst, a.scalar, b.ptr, m);
    } else if (b.is_scalar) {
      bool done = false;
      if constexpr (HasMapVs<Op, R, C>::value) done = Op::map_vs(dst, a.ptr, b.scalar, m);
      if (!done) map2_vs<Op, R, C>(dst, a.ptr, b.scalar, m);
    } else if constexpr (HasMapVv<Op, R, C>::value) {
      Op::map_vv(dst, a.ptr, b.ptr, m);
    } else {
      map2_vv<Op, R, C>(dst, a.ptr, b.ptr, m);
    }
    if (!direct) store_block<O, R>(out, s[0], obuf, m);
  }
}

// -- threads ------------------------------------------------------------------------------

// Calls inner(n, ptrs, byte_strides) for the runs covering flat indices [begin, end) of the
// nest (row-major over the nest's dimensions).
template <size_t N, class Inner>
void for_each_run_range(const Strided<N>& nest, const std::array<char*, N>& base, int64_t begin,
                        int64_t end, Inner&& inner) {
  std::array<int64_t, N> run_strides{};
  if (nest.ndim == 0) {
    if (begin < end) inner(int64_t{1}, base.data(), run_strides.data());
    return;
  }
  const int last = nest.ndim - 1;
  for (size_t k = 0; k < N; ++k) run_strides[k] = nest.strides[k][last];
  // The multi-index of `begin`, and the pointers there.
  std::array<int64_t, kMaxDims> index;
  std::array<char*, N> ptr = base;
  int64_t rest = begin;
  for (int d = last; d >= 0; --d) {
    index[d] = rest % nest.shape[d];
    rest /= nest.shape[d];
    for (size_t k = 0; k < N; ++k) ptr[k] += index[d] * nest.strides[k][d];
  }
  int64_t todo = end - begin;
  while (todo > 0) {
    const int64_t len = std::min(nest.shape[last] - index[last], todo);
    inner(len, ptr.data(), run_strides.data());
    todo -= len;
    if (todo == 0) return;
    // Step to the start of the next run: the innermost index wraps to 0.
    for (size_t k = 0; k < N; ++k) ptr[k] -= index[last] * nest.strides[k][last];
    index[last] = 0;
    for (int d = last - 1; d >= 0; --d) {
      if (++index[d] < nest.shape[d]) {
        for (size_t k = 0; k < N; ++k) ptr[k] += nest.strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) ptr[k] -= nest.strides[k][d] * (nest.shape[d] - 1);
      index[d] = 0;
    }
  }
}

using RunFn = void (*)(int64_t, char* const*, const int64_t*);

// Runs `run` over every element of N operands (operand 0 the output), in parallel above
// `grain` elements. Operand k has element strides `*strides[k]` and `itemsize[k]` bytes.
template <size_t N>
void run_elementwise(const Dims& shape, const std::array<uintptr_t, N>& ptrs,
                     const std::array<const Dims*, N>& strides,
                     const std::array<size_t, N>& itemsize, int64_t grain, RunFn run) {
  const int64_t total = numel(shape);
  if (total == 0) return;
  std::array<char*, N> base;
  for (size_t k = 0; k < N; ++k) base[k] = reinterpret_cast<char*>(ptrs[k]);
  bool contiguous = true;
  for (size_t k = 0; k < N && contiguous; ++k) contiguous = is_contiguous(shape, *strides[k]);
  if (contiguous) {
    std::array<int64_t, N> unit;
    for (size_t k = 0; k < N; ++k) unit[k] = static_cast<int64_t>(itemsize[k]);
    parallel_for(total, grain, [&](int64_t begin, int64_t end) {
      std::array<char*, N> p;
      for (size_t k = 0; k < N; ++k) p[k] = base[k] + begin * unit[k];
      run(end - begin, p.data(), unit.data());
    });
    return;
  }
  Strided<N> nest;
  if (!nest.build(shape, strides, itemsize, 0)) return;
  parallel_for(total, grain, [&](int64_t begin, int64_t end) {
    for_each_run_range(nest, base, begin, end, run);
  });
}

// Grain of an operator: cheap ones keep the default, costly ones go parallel sooner.
template <class Op>
inline int64_t grain_of() {
  return std::max<int64_t>(kElementwiseGrain / CostOf<Op>::value, 1024);
}

// Admission checks shared by every elementwise kernel: a rank the nest handles, an output
// that does not write one element twice, and no partial overlap between the output and an
// input (exact aliasing is fine). Returns false to leave the call to the reference kernel.
inline bool admissible(const Dims& shape, uintptr_t out, const Dims& out_strides,
                       size_t out_size,
                       std::initializer_list<std::tuple<uintptr_t, const Dims*, size_t>> inputs) {
  if (shape.size() > static_cast<size_t>(kMaxDims)) return false;
  if (numel(shape) == 0) return true;
  if (has_zero_stride(shape, out_strides)) return false;
  for (const auto& [ptr, strides, size] : inputs) {
    if (unsafe_overlap(out, out_strides, out_size, ptr, *strides, size, shape)) return false;
  }
  return true;
}

}  // namespace plait::cpu::ew
