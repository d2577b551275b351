// Fused addcmul, addcdiv and lerp (ternary.h): one loop over blocks of the three operands.
#include "ternary.h"

#include <algorithm>
#include <cmath>

#include "dtype.h"
#include "elementwise.h"
#include "parallel.h"
#include "simd.h"

namespace plait::cpu {
namespace {

// Work per element relative to an add, for the parallel grain.
constexpr int64_t kCost = 2;

// The three formulas, in the compute type C. `value` is addcmul's and addcdiv's scalar; lerp
// ignores it: its weight is always an operand (a number weight a broadcast one).
struct Addcmul {
  template <class C>
  static C apply(C self, C t1, C t2, C value) {
    return std::fma(value * t1, t2, self);
  }
};

struct Addcdiv {
  template <class C>
  static C apply(C self, C t1, C t2, C value) {
    return self + value * t1 / t2;
  }
};

// Exact at both ends: from `self` for small weights, from `end` for the others.
struct Lerp {
  template <class C>
  static C apply(C self, C end, C weight, C /*value*/) {
    const bool small = std::abs(weight) < C(0.5);
    const C coeff = small ? weight : weight - C(1);
    const C base = small ? self : end;
    return std::fma(coeff, end - self, base);
  }
};

template <class Form, class C>
PLAIT_CLONES void apply_array(C* out, const C* a, const C* b, const C* c, C value, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = Form::apply(a[i], b[i], c[i], value);
}

inline int64_t grain() { return std::max<int64_t>(kElementwiseGrain / kCost, 1024); }

template <class T>
const T* ptr(uintptr_t address) {
  return reinterpret_cast<const T*>(address);
}

// One input of `run`: n elements of T from `data` (step 1), or `constant` for every element
// (step 0: a broadcast 1-element tensor, or lerp's number weight), already in the compute type.
template <class T>
struct Source {
  const T* data;
  int64_t step;
  ComputeType<T> constant;
};

template <class T>
Source<T> source(TernaryOperand operand) {
  const T* data = ptr<T>(operand.address);
  if (operand.step == 0) return {data, 0, load<T>(*data)};
  return {data, 1, ComputeType<T>(0)};
}

// Runs Form over n elements in blocks of ew::kBlock. A full float/double operand is read in
// place; a broadcast one comes from a block filled once with its value; a 16-bit one is widened
// block by block into float.
template <class Form, class T>
void run(int64_t n, T* out, const Source<T> (&in)[3], ComputeType<T> value) {
  using C = ComputeType<T>;
  parallel_for(n, grain(), [&](int64_t begin, int64_t end) {
    alignas(64) C bufs[3][ew::kBlock];
    alignas(64) C result[ew::kBlock];
    for (int k = 0; k < 3; ++k) {
      if (in[k].step == 0) std::fill_n(bufs[k], ew::kBlock, in[k].constant);
    }
    for (int64_t i = begin; i < end; i += ew::kBlock) {
      const int64_t m = std::min(ew::kBlock, end - i);
      const C* x[3];
      for (int k = 0; k < 3; ++k) {
        if (in[k].step == 0) {
          x[k] = bufs[k];
        } else if constexpr (is_reduced_float_v<T>) {
          ew::widen_array<T>(bufs[k], in[k].data + i, m);
          x[k] = bufs[k];
        } else {
          x[k] = in[k].data + i;
        }
      }
      if constexpr (is_reduced_float_v<T>) {
        apply_array<Form, C>(result, x[0], x[1], x[2], value, m);
        ew::narrow_array<T>(out + i, result, m);
      } else {
        apply_array<Form, C>(out + i, x[0], x[1], x[2], value, m);
      }
    }
  });
}

// Runs Form for dtype `dtype`; a number `weight` (a null weight address) for lerp.
template <class Form>
bool dispatch(int dtype, int64_t n, uintptr_t out, TernaryOperand a, TernaryOperand b,
              TernaryOperand c, double value) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    if (n <= 0) return;
    // the scalar rounded once to the compute type, as PyTorch's `value.to<opmath_t>()`
    const C scalar = static_cast<C>(value);
    const Source<T> in[3] = {source<T>(a), source<T>(b),
                             c.address ? source<T>(c) : Source<T>{nullptr, 0, scalar}};
    run<Form, T>(n, reinterpret_cast<T*>(out), in, scalar);
  });
}

// One run of the strided form; operands 0..4 are out, a, b, c and the scalar (a compute-typed
// constant of stride 0). kNumberC: operand c is lerp's number weight, a compute-typed constant
// too. Strides in bytes.
template <class Form, class T, bool kNumberC>
void strided_run(int64_t n, char* const* p, const int64_t* s) {
  using C = ComputeType<T>;
  alignas(64) C bufs[3][ew::kBlock];
  alignas(64) C result[ew::kBlock];
  const C value = *reinterpret_cast<const C*>(p[4]);
  for (int64_t i0 = 0; i0 < n; i0 += ew::kBlock) {
    const int64_t m = std::min(ew::kBlock, n - i0);
    const C* x[3];
    const char* at[3];
    for (int k = 0; k < 3; ++k) {
      at[k] = p[k + 1] + i0 * s[k + 1];
      if (kNumberC && k == 2) {
        std::fill_n(bufs[k], m, *reinterpret_cast<const C*>(p[3]));
        x[k] = bufs[k];
        continue;
      }
      ew::Input<T, C> input;
      input.load(at[k], s[k + 1], m, bufs[k]);
      if (input.is_scalar) std::fill_n(bufs[k], m, input.scalar);
      x[k] = input.is_scalar ? bufs[k] : input.ptr;
    }
    char* out = p[0] + i0 * s[0];
    const bool direct = ew::direct_output<T, C>(out, s[0], {at[0], at[1], at[2]});
    C* dst = direct ? reinterpret_cast<C*>(out) : result;
    apply_array<Form, C>(dst, x[0], x[1], x[2], value, m);
    if (!direct) ew::store_block<T, C>(out, s[0], result, m);
  }
}

template <class Form>
bool strided(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides, uintptr_t a,
             const Dims& a_strides, uintptr_t b, const Dims& b_strides, uintptr_t c,
             const Dims& c_strides, double value) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const C scalar = static_cast<C>(value);  // as the contiguous form rounds it
    const Dims none(shape.size(), 0);
    const bool number_c = c == 0;
    const uintptr_t constant = reinterpret_cast<uintptr_t>(&scalar);
    ew::run_elementwise<5>(
        shape, {out, a, b, number_c ? constant : c, constant},
        {&out_strides, &a_strides, &b_strides, number_c ? &none : &c_strides, &none},
        {sizeof(T), sizeof(T), sizeof(T), number_c ? sizeof(C) : sizeof(T), sizeof(C)}, grain(),
        number_c ? &strided_run<Form, T, true> : &strided_run<Form, T, false>);
  });
}

}  // namespace

bool ternary_strided(TernaryOp op, int dtype, const Dims& shape, uintptr_t out,
                     const Dims& out_strides, uintptr_t a, const Dims& a_strides, uintptr_t b,
                     const Dims& b_strides, uintptr_t c, const Dims& c_strides, double value) {
  check_layout(shape, {&out_strides, &a_strides, &b_strides, &c_strides});
  const size_t size = itemsize(dtype);
  if (size == 0) return false;
  if (c == 0 && op != TernaryOp::kLerp) return false;
  const bool admissible =
      c == 0 ? ew::admissible(shape, out, out_strides, size,
                              {{a, &a_strides, size}, {b, &b_strides, size}})
             : ew::admissible(shape, out, out_strides, size,
                              {{a, &a_strides, size}, {b, &b_strides, size}, {c, &c_strides, size}});
  if (!admissible) return false;
  if (numel(shape) == 0) return visit_floating(dtype, [](auto) {});
  switch (op) {
    case TernaryOp::kAddcmul:
      return strided<Addcmul>(dtype, shape, out, out_strides, a, a_strides, b, b_strides, c,
                              c_strides, value);
    case TernaryOp::kAddcdiv:
      return strided<Addcdiv>(dtype, shape, out, out_strides, a, a_strides, b, b_strides, c,
                              c_strides, value);
    case TernaryOp::kLerp:
      return strided<Lerp>(dtype, shape, out, out_strides, a, a_strides, b, b_strides, c,
                           c_strides, value);
  }
  return false;
}

bool addcmul(int dtype, int64_t n, uintptr_t out, TernaryOperand self, TernaryOperand t1,
             TernaryOperand t2, double value) {
  return dispatch<Addcmul>(dtype, n, out, self, t1, t2, value);
}

bool addcdiv(int dtype, int64_t n, uintptr_t out, TernaryOperand self, TernaryOperand t1,
             TernaryOperand t2, double value) {
  return dispatch<Addcdiv>(dtype, n, out, self, t1, t2, value);
}

bool lerp(int dtype, int64_t n, uintptr_t out, TernaryOperand self, TernaryOperand end,
          TernaryOperand weight, double weight_value) {
  return dispatch<Lerp>(dtype, n, out, self, end, weight, weight_value);
}

}  // namespace plait::cpu
