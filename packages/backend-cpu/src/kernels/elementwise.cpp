// The memory primitives: copy_ (with a dtype cast), fill_ and arange_. The arithmetic groups
// live in unary.cpp, binary.cpp and compare.cpp; all share elementwise.h.
#include <cstring>

#include "dtype.h"
#include "elementwise.h"
#include "kernels.h"

namespace plait::cpu {
namespace {

template <class D, class S>
PLAIT_CLONES void cast_array(D* out, const S* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = cast<D>(in[i]);
}

template <class T>
PLAIT_CLONES void fill_array(T* out, T value, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = value;
}

// One run of `out = cast<D>(src)`; strides in bytes. Exact aliasing between two dtypes of one
// size (`x.view(int32).copy_(x)`) casts block by block through a buffer, so no memory is read
// through one type while written through another.
template <class D, class S>
void copy_run(int64_t n, char* const* p, const int64_t* s) {
  if (s[0] == static_cast<int64_t>(sizeof(D)) && s[1] == static_cast<int64_t>(sizeof(S))) {
    if constexpr (std::is_same_v<D, S>) {
      if (p[0] != p[1]) std::memcpy(p[0], p[1], static_cast<size_t>(n) * sizeof(D));
    } else if (p[0] == p[1]) {
      alignas(64) S buf[ew::kBlock];
      alignas(64) D cast_buf[ew::kBlock];
      for (int64_t i0 = 0; i0 < n; i0 += ew::kBlock) {
        const int64_t m = std::min(ew::kBlock, n - i0);
        std::memcpy(buf, p[1] + i0 * s[1], static_cast<size_t>(m) * sizeof(S));
        cast_array<D, S>(cast_buf, buf, m);
        std::memcpy(p[0] + i0 * s[0], cast_buf, static_cast<size_t>(m) * sizeof(D));
      }
    } else {
      cast_array<D, S>(reinterpret_cast<D*>(p[0]), reinterpret_cast<const S*>(p[1]), n);
    }
  } else if (s[1] == 0) {
    const D v = cast<D>(ew::load_at<S>(p[1]));
    if (s[0] == static_cast<int64_t>(sizeof(D))) {
      fill_array<D>(reinterpret_cast<D*>(p[0]), v, n);
    } else {
      for (int64_t i = 0; i < n; ++i) ew::store_at<D>(p[0] + i * s[0], v);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      ew::store_at<D>(p[0] + i * s[0], cast<D>(ew::load_at<S>(p[1] + i * s[1])));
    }
  }
}

template <class T>
bool fill_typed(const Dims& shape, uintptr_t out, const Dims& out_strides, T value) {
  if (!ew::admissible(shape, out, out_strides, sizeof(T), {})) return false;
  const int64_t total = numel(shape);
  if (total == 0) return true;
  Strided<1> nest;
  nest.build(shape, {&out_strides}, {sizeof(T)}, 0);
  const std::array<char*, 1> base{reinterpret_cast<char*>(out)};
  parallel_for(total, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    ew::for_each_run_range(nest, base, begin, end,
                           [value](int64_t n, char* const* p, const int64_t* s) {
                             if (s[0] == static_cast<int64_t>(sizeof(T))) {
                               fill_array<T>(reinterpret_cast<T*>(p[0]), value, n);
                             } else {
                               for (int64_t i = 0; i < n; ++i) {
                                 ew::store_at<T>(p[0] + i * s[0], value);
                               }
                             }
                           });
  });
  return true;
}

}  // namespace

bool fill_int(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
              int64_t value) {
  check_layout(shape, {&out_strides});
  bool done = false;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    done = fill_typed<T>(shape, out, out_strides, cast<T>(value));
  });
  return done;
}

bool fill_float(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
                double value) {
  check_layout(shape, {&out_strides});
  bool done = false;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    done = fill_typed<T>(shape, out, out_strides, cast<T>(value));
  });
  return done;
}

bool copy(int out_dtype, int src_dtype, const Dims& shape, uintptr_t out,
          const Dims& out_strides, uintptr_t src, const Dims& src_strides) {
  check_layout(shape, {&out_strides, &src_strides});
  const size_t out_size = itemsize(out_dtype);
  const size_t src_size = itemsize(src_dtype);
  if (out_size == 0 || src_size == 0) return false;
  if (!ew::admissible(shape, out, out_strides, out_size, {{src, &src_strides, src_size}})) {
    return false;
  }
  if (numel(shape) == 0) return true;
  if (out == src && out_dtype == src_dtype) return true;  // exact alias: nothing to move
  ew::RunFn run = nullptr;
  visit_dtype(out_dtype, [&](auto out_tag) {
    visit_dtype(src_dtype, [&](auto src_tag) {
      run = &copy_run<decltype(out_tag), decltype(src_tag)>;
    });
  });
  ew::run_elementwise<2>(shape, {out, src}, {&out_strides, &src_strides}, {out_size, src_size},
                         kElementwiseGrain, run);
  return true;
}

namespace {

// out[i] = start + i * step for i in [begin, end); V is int64_t (wrapping) or double.
template <class T, class V>
void arange_range(char* out, int64_t stride, V start, V step, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    V v;
    if constexpr (std::is_integral_v<V>) {
      v = static_cast<V>(static_cast<uint64_t>(start) +
                         static_cast<uint64_t>(i) * static_cast<uint64_t>(step));
    } else {
      v = start + static_cast<double>(i) * step;
    }
    ew::store_at<T>(out + i * stride, cast<T>(v));
  }
}

template <class V>
bool arange_typed(int dtype, int64_t n, uintptr_t out, int64_t stride, V start, V step) {
  if (n < 0) throw std::invalid_argument("plait_backend_cpu: negative size in shape");
  if (n > 1 && stride == 0) return false;
  bool done = false;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {  // PyTorch has no bool arange
      char* base = reinterpret_cast<char*>(out);
      const int64_t byte_stride = stride * static_cast<int64_t>(sizeof(T));
      parallel_for(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
        arange_range<T, V>(base, byte_stride, start, step, begin, end);
      });
      done = true;
    }
  });
  return done;
}

}  // namespace

bool arange_int(int dtype, int64_t n, uintptr_t out, int64_t stride, int64_t start,
                int64_t step) {
  return arange_typed<int64_t>(dtype, n, out, stride, start, step);
}

bool arange_float(int dtype, int64_t n, uintptr_t out, int64_t stride, double start,
                  double step) {
  return arange_typed<double>(dtype, n, out, stride, start, step);
}

}  // namespace plait::cpu
