// Sorting along one dimension: sort, topk, searchsorted.
//
// sort and topk turn each element into an unsigned key whose integer order is the sort order
// (NaN largest, -0.0 equal to 0.0; descending order complements the key) and break ties by the
// original position, so an ordinary (unstable, fast) std::sort gives the stable order of the
// reference. Keys of 32-bit and narrower dtypes are packed with the position into one 64-bit
// word. Threads split the slices.
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "dtype.h"
#include "parallel.h"
#include "reduce.h"
#include "reduce_nest.h"

namespace plait::cpu {
namespace {

constexpr int64_t kMinWork = int64_t{1} << 14;

// 32-bit keys for dtypes whose values fit a float or 32-bit integer, 64-bit keys otherwise.
template <class T>
using Key = std::conditional_t<(sizeof(ComputeType<T>) <= 4), uint32_t, uint64_t>;

template <class T>
inline Key<T> sort_key(T x) {
  using C = ComputeType<T>;
  using K = Key<T>;
  constexpr K top = K{1} << (sizeof(K) * 8 - 1);
  const C v = load(x);
  if constexpr (std::is_floating_point_v<C>) {
    if (v != v) return ~K{0};                     // every NaN: after +inf
    const K bits = bit_cast<K>(v == C(0) ? C(0) : v);  // -0.0 sorts with 0.0
    return (bits & top) ? ~bits : (bits | top);
  } else if constexpr (std::is_signed_v<C>) {
    return static_cast<K>(static_cast<std::make_signed_t<K>>(v)) ^ top;
  } else {
    return static_cast<K>(v);
  }
}

template <class T>
struct Slot {
  Key<T> key;
  int64_t index;
  bool operator<(const Slot& other) const {
    return key < other.key || (key == other.key && index < other.index);
  }
};

// Sorts one slice's (key, position) pairs, the first `k` of them when k < n.
template <class T>
class SliceSorter {
 public:
  void load_slice(const char* a, int64_t stride, int64_t n, bool descending) {
    if constexpr (sizeof(Key<T>) == 4) {
      packed_.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        Key<T> key = sort_key(at<const T>(const_cast<char*>(a), i * stride));
        if (descending) key = ~key;
        packed_[i] = (static_cast<uint64_t>(key) << 32) | static_cast<uint64_t>(i);
      }
    } else {
      slots_.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        Key<T> key = sort_key(at<const T>(const_cast<char*>(a), i * stride));
        slots_[i] = {descending ? ~key : key, i};
      }
    }
  }

  void sort_first(int64_t k) {
    if constexpr (sizeof(Key<T>) == 4) {
      order(packed_, k);
    } else {
      order(slots_, k);
    }
  }

  int64_t index(int64_t i) const {
    if constexpr (sizeof(Key<T>) == 4) {
      return static_cast<int64_t>(packed_[i] & 0xFFFFFFFFu);
    } else {
      return slots_[i].index;
    }
  }

 private:
  template <class V>
  static void order(std::vector<V>& v, int64_t k) {
    if (k < static_cast<int64_t>(v.size())) {
      std::partial_sort(v.begin(), v.begin() + k, v.end());
    } else {
      std::sort(v.begin(), v.end());
    }
  }

  std::vector<uint64_t> packed_;
  std::vector<Slot<T>> slots_;
};

// Sorts (the first k of) every slice of `a` along dim into values/indices, whose size at dim is
// k. `shape` is a's shape.
template <class T>
void sort_typed(const Dims& shape, char* values, const Dims& v_strides, char* indices,
                const Dims& i_strides, char* a, const Dims& a_strides, int dim, int64_t k,
                bool descending) {
  const int64_t n = shape[dim];
  constexpr int64_t size = sizeof(T);
  const int64_t vs = v_strides[dim] * size;
  const int64_t is = i_strides[dim] * int64_t{8};
  const int64_t as = a_strides[dim] * size;
  Dims batch_shape(shape);
  batch_shape[dim] = 1;
  Strided<3> batch;
  if (!batch.build(batch_shape, {&v_strides, &i_strides, &a_strides},
                   {sizeof(T), sizeof(int64_t), sizeof(T)}, 2)) {
    return;
  }
  parallel_for(nest_size(batch), std::max<int64_t>(1, kMinWork / std::max<int64_t>(1, n)),
               [&](int64_t b0, int64_t b1) {
                 SliceSorter<T> sorter;
                 walk_range(batch, std::array<char*, 3>{values, indices, a}, b0, b1,
                            [&](char* const* p, int64_t len, const int64_t* s) {
                              for (int64_t j = 0; j < len; ++j) {
                                const char* src = p[2] + j * s[2];
                                char* v = p[0] + j * s[0];
                                char* ix = p[1] + j * s[1];
                                sorter.load_slice(src, as, n, descending);
                                sorter.sort_first(k);
                                for (int64_t i = 0; i < k; ++i) {
                                  const int64_t from = sorter.index(i);
                                  // Copy the element itself (its bits: -0.0 stays -0.0).
                                  at<T>(v, i * vs) = at<const T>(const_cast<char*>(src), from * as);
                                  at<int64_t>(ix, i * is) = from;
                                }
                              }
                            });
               });
}

bool sort_args_ok(int dtype, const Dims& shape, const Dims& out_shape, uintptr_t values,
                  const Dims& v_strides, uintptr_t indices, const Dims& i_strides, uintptr_t a,
                  const Dims& a_strides, int dim) {
  check_layout(shape, {&a_strides});
  check_layout(out_shape, {&v_strides, &i_strides});
  const size_t size = itemsize(dtype);
  if (size == 0 || shape.size() > static_cast<size_t>(kMaxDims) || dim < 0 ||
      static_cast<size_t>(dim) >= shape.size() || shape[dim] >= (int64_t{1} << 32)) {
    return false;
  }
  if (numel(out_shape) == 0 || numel(shape) == 0) return true;
  return !(has_zero_stride(out_shape, v_strides) || has_zero_stride(out_shape, i_strides) ||
           extents_overlap(values, out_shape, v_strides, size, a, shape, a_strides, size) ||
           extents_overlap(indices, out_shape, i_strides, 8, a, shape, a_strides, size) ||
           extents_overlap(values, out_shape, v_strides, size, indices, out_shape, i_strides, 8));
}

template <class T>
void search_typed(int64_t batches, int64_t n, int64_t m, const Dims& seq_shape, char* seq,
                  const Dims& seq_strides, const Dims& values_shape, char* values,
                  const Dims& values_strides, char* out, const Dims& out_strides, bool right) {
  using C = ComputeType<T>;
  const size_t nd = seq_shape.size();
  const int64_t ss = seq_strides[nd - 1] * static_cast<int64_t>(sizeof(T));
  const int64_t vs = values_strides[nd - 1] * static_cast<int64_t>(sizeof(T));
  const int64_t os = out_strides[nd - 1] * int64_t{8};
  // Batch offsets: row-major over the leading dims (shared by seq, values and out).
  auto offsets = [&](int64_t b) {
    std::array<int64_t, 3> off{};
    for (size_t d = nd - 1; d-- > 0;) {
      const int64_t i = b % seq_shape[d];
      b /= seq_shape[d];
      off[0] += i * seq_strides[d] * static_cast<int64_t>(sizeof(T));
      off[1] += i * values_strides[d] * static_cast<int64_t>(sizeof(T));
      off[2] += i * out_strides[d] * 8;
    }
    return off;
  };
  (void)values_shape;
  const int64_t steps = 64 - __builtin_clzll(static_cast<unsigned long long>(n) | 1);
  parallel_for(batches * m, std::max<int64_t>(1, kMinWork / steps), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / m;
      const int64_t j = t % m;
      const auto off = offsets(b);
      const char* row = seq + off[0];
      const C v = load(at<const T>(values, off[1] + j * vs));
      // The reference's bisection, comparison for comparison (NaN lands where it does there).
      int64_t start = 0;
      int64_t end = n;
      while (start < end) {
        const int64_t mid = start + (end - start) / 2;
        const C probe = load(at<const T>(const_cast<char*>(row), mid * ss));
        const bool stop = right ? probe > v : probe >= v;
        if (stop) {
          end = mid;
        } else {
          start = mid + 1;
        }
      }
      at<int64_t>(out, off[2] + j * os) = start;
    }
  });
}

}  // namespace

bool sort(int dtype, const Dims& shape, uintptr_t values, const Dims& values_strides,
          uintptr_t indices, const Dims& indices_strides, uintptr_t a, const Dims& a_strides,
          int dim, bool descending) {
  if (!sort_args_ok(dtype, shape, shape, values, values_strides, indices, indices_strides, a,
                    a_strides, dim)) {
    return false;
  }
  if (numel(shape) == 0) return true;
  return visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    sort_typed<T>(shape, reinterpret_cast<char*>(values), values_strides,
                  reinterpret_cast<char*>(indices), indices_strides, reinterpret_cast<char*>(a),
                  a_strides, dim, shape[dim], descending);
  });
}

bool topk(int dtype, const Dims& shape, uintptr_t values, const Dims& values_strides,
          uintptr_t indices, const Dims& indices_strides, uintptr_t a, const Dims& a_strides,
          int64_t k, int dim, bool largest) {
  if (dim < 0 || static_cast<size_t>(dim) >= shape.size() || k < 0 || k > shape[dim]) {
    return false;
  }
  Dims out_shape(shape);
  out_shape[dim] = k;
  if (!sort_args_ok(dtype, shape, out_shape, values, values_strides, indices, indices_strides,
                    a, a_strides, dim)) {
    return false;
  }
  if (numel(out_shape) == 0) return true;
  // The output's strides at dim step through the k results; a's through its n elements.
  return visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    sort_typed<T>(shape, reinterpret_cast<char*>(values), values_strides,
                  reinterpret_cast<char*>(indices), indices_strides, reinterpret_cast<char*>(a),
                  a_strides, dim, k, largest);
  });
}

bool searchsorted(int dtype, const Dims& seq_shape, uintptr_t seq, const Dims& seq_strides,
                  const Dims& values_shape, uintptr_t values, const Dims& values_strides,
                  uintptr_t out, const Dims& out_strides, bool right) {
  check_layout(seq_shape, {&seq_strides});
  check_layout(values_shape, {&values_strides, &out_strides});
  const size_t nd = seq_shape.size();
  const size_t size = itemsize(dtype);
  if (size == 0 || nd == 0 || nd > static_cast<size_t>(kMaxDims) || values_shape.size() != nd) {
    return false;
  }
  for (size_t d = 0; d + 1 < nd; ++d) {
    if (seq_shape[d] != values_shape[d]) return false;
  }
  if (numel(values_shape) == 0) return true;
  if (has_zero_stride(values_shape, out_strides) ||
      extents_overlap(out, values_shape, out_strides, 8, values, values_shape, values_strides,
                      size) ||
      (numel(seq_shape) > 0 &&
       extents_overlap(out, values_shape, out_strides, 8, seq, seq_shape, seq_strides, size))) {
    return false;
  }
  const int64_t n = seq_shape[nd - 1];
  const int64_t m = values_shape[nd - 1];
  const int64_t batches = numel(values_shape) / m;
  return visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    search_typed<T>(batches, n, m, seq_shape, reinterpret_cast<char*>(seq), seq_strides,
                    values_shape, reinterpret_cast<char*>(values), values_strides,
                    reinterpret_cast<char*>(out), out_strides, right);
  });
}

}  // namespace plait::cpu
