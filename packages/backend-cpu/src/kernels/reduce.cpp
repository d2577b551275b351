// Reductions: sum.
//
// The input is walked once in its own memory order while a dense accumulator (one slot per
// output element) collects the partial sums; the accumulator is then cast into `out`. A run
// whose accumulator stride is 0 is a reduction of contiguous or strided input into one slot
// (pairwise summation, eight lanes that vectorise); a run whose accumulator stride is not 0
// adds a row of the input into a row of slots (`sum(dim=0)` of a row-major matrix).
#include <vector>

#include "dtype.h"
#include "kernels.h"

namespace plait::cpu {
namespace {

// Floating inputs accumulate in double, integer and bool inputs in 64-bit integers that wrap
// (unsigned, so that overflow is defined) like PyTorch's int64 sums.
template <class T>
using AccOf = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

template <class D, class Acc>
inline D from_acc(Acc v) {
  if constexpr (std::is_same_v<Acc, uint64_t>) {
    return cast<D>(static_cast<int64_t>(v));
  } else {
    return cast<D>(v);
  }
}

// Runs of at most this many elements are summed with eight running lanes; longer runs are
// split in halves (pairwise summation), so the rounding error grows with log(n), not n.
constexpr int64_t kPairwiseBlock = 1024;

template <class Acc, class T>
Acc sum_run(const char* p, int64_t n, int64_t stride) {
  if (n > kPairwiseBlock) {
    const int64_t half = (n / 2 + 7) / 8 * 8;
    return sum_run<Acc, T>(p, half, stride) + sum_run<Acc, T>(p + half * stride, n - half, stride);
  }
  Acc lane[8] = {};
  int64_t i = 0;
  if (stride == static_cast<int64_t>(sizeof(T))) {
    const T* a = reinterpret_cast<const T*>(p);
    for (; i + 8 <= n; i += 8) {
      for (int j = 0; j < 8; ++j) lane[j] += static_cast<Acc>(a[i + j]);
    }
  }
  for (; i < n; ++i) lane[i & 7] += static_cast<Acc>(*reinterpret_cast<const T*>(p + i * stride));
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

template <class Acc, class T>
void accumulate_run(int64_t n, char* const* p, const int64_t* s) {
  constexpr int64_t acc_size = sizeof(Acc);
  constexpr int64_t in_size = sizeof(T);
  if (s[0] == 0) {
    at<Acc>(p[0], 0) += sum_run<Acc, T>(p[1], n, s[1]);
  } else if (s[0] == acc_size && s[1] == in_size) {
    Acc* acc = reinterpret_cast<Acc*>(p[0]);
    const T* a = reinterpret_cast<const T*>(p[1]);
    for (int64_t i = 0; i < n; ++i) acc[i] += static_cast<Acc>(a[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      at<Acc>(p[0], i * s[0]) += static_cast<Acc>(at<const T>(p[1], i * s[1]));
    }
  }
}

template <class D, class Acc>
void store_run(int64_t n, char* const* p, const int64_t* s) {
  for (int64_t i = 0; i < n; ++i) at<D>(p[0], i * s[0]) = from_acc<D>(at<Acc>(p[1], i * s[1]));
}

template <class D, class T>
void sum_typed(const Dims& shape, uintptr_t out, const Dims& out_strides, uintptr_t a,
               const Dims& a_strides, uint64_t reduce_mask) {
  using Acc = AccOf<T>;
  const size_t nd = shape.size();
  // Row-major strides of the dense accumulator over the kept dimensions; 0 on reduced ones.
  Dims acc_strides(nd, 0);
  Dims out_shape(shape);
  int64_t kept = 1;
  for (size_t d = nd; d-- > 0;) {
    if ((reduce_mask >> d) & 1) {
      out_shape[d] = 1;
    } else {
      acc_strides[d] = kept;
      kept *= shape[d];
    }
  }
  std::vector<Acc> acc(static_cast<size_t>(kept), Acc{0});
  char* acc_base = reinterpret_cast<char*>(acc.data());

  Strided<2> walk;  // in the input's memory order
  if (walk.build(shape, {&acc_strides, &a_strides}, {sizeof(Acc), sizeof(T)}, 1)) {
    for_each_run(walk, std::array<char*, 2>{acc_base, reinterpret_cast<char*>(a)},
             accumulate_run<Acc, T>);
  }
  Strided<2> store;  // in the output's memory order
  if (store.build(out_shape, {&out_strides, &acc_strides}, {sizeof(D), sizeof(Acc)}, 0)) {
    for_each_run(store, std::array<char*, 2>{reinterpret_cast<char*>(out), acc_base},
             store_run<D, Acc>);
  }
}

}  // namespace

bool sum(int out_dtype, int a_dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
         uintptr_t a, const Dims& a_strides, uint64_t reduce_mask) {
  check_layout(shape, {&out_strides, &a_strides});
  if (shape.size() > static_cast<size_t>(kMaxDims)) return false;
  Dims out_shape(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    if ((reduce_mask >> d) & 1) out_shape[d] = 1;
  }
  const size_t out_size = itemsize(out_dtype);
  const size_t a_size = itemsize(a_dtype);
  if (out_size == 0 || a_size == 0) return false;
  if (numel(out_shape) == 0) return true;
  if (has_zero_stride(out_shape, out_strides)) return false;
  if (numel(shape) > 0) {
    // `out` is written only after `a` has been read in full, but an output that shares bytes
    // with its input is a caller's mistake: leave its semantics to the reference kernel.
    const Extent o = extent(out, out_shape, out_strides, out_size);
    const Extent i = extent(a, shape, a_strides, a_size);
    if (!(o.last <= i.first || i.last <= o.first)) return false;
  }
  bool done = false;
  visit_dtype(a_dtype, [&](auto tag) {
    using T = decltype(tag);
    // The accumulator dtypes of the primitive's contract: a float sums into itself or into
    // float64, integers and bool into int64.
    if constexpr (std::is_floating_point_v<T>) {
      if (out_dtype == a_dtype) {
        sum_typed<T, T>(shape, out, out_strides, a, a_strides, reduce_mask);
        done = true;
      } else if (out_dtype == dtype_code<double>()) {
        sum_typed<double, T>(shape, out, out_strides, a, a_strides, reduce_mask);
        done = true;
      }
    } else if (out_dtype == dtype_code<int64_t>()) {
      sum_typed<int64_t, T>(shape, out, out_strides, a, a_strides, reduce_mask);
      done = true;
    }
  });
  return done;
}

}  // namespace plait::cpu
