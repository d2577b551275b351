// Fused GELU forward and backward (activation.h). One pass over memory each, where the
// composites run five elementwise ops forward and about ten backward.
#include "activation.h"

#include <algorithm>
#include <cmath>

#include "dtype.h"
#include "elementwise.h"
#include "parallel.h"
#include "simd.h"
#include "vecmath.h"

namespace plait::cpu {
namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;      // 1 / sqrt(2)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi), the tanh form's scale
constexpr double kCubic = 0.044715;                      // the tanh form's cubic coefficient
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi), phi(0)

// Work per element relative to an add, for the parallel grain.
constexpr int64_t kCost = 12;

// float32 GELU reads the rational erf (3.6e-7 absolute error, a third of erf()'s time): PyTorch's
// float32 GELU kernel reads an erf of 1.5e-7 absolute error, and torch.erf keeps its 2 ulp.
inline float erf_of(float x) { return vecmath::erf_rational(x); }
inline float exp_of(float x) { return vecmath::exp(x); }
inline double exp_of(double x) { return std::exp(x); }

// The exact form: x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2. float32 as PyTorch's kernel
// writes it; float64 through erfc(-x / sqrt 2) = 1 + erf(x / sqrt 2) without the cancellation
// below -3 or so.
struct Exact {
  static float cdf(float x) { return 0.5f * (1.0f + erf_of(x * static_cast<float>(kSqrt1_2))); }
  static double cdf(double x) { return 0.5 * std::erfc(-x * kSqrt1_2); }

  template <class C>
  static C forward(C x) {
    return x * cdf(x);
  }
  // Phi(x) + x phi(x), phi(x) = e^(-x^2 / 2) / sqrt(2 pi)
  template <class C>
  static C backward(C g, C x) {
    const C pdf = static_cast<C>(kInvSqrt2Pi) * exp_of(static_cast<C>(-0.5) * (x * x));
    return g * (cdf(x) + x * pdf);
  }
};

inline float pick(bool cond, float a, float b) { return vecmath::select(cond, a, b); }
inline double pick(bool cond, double a, double b) { return cond ? a : b; }

// The tanh approximation through s = (1 + tanh u) / 2 = sigmoid(2u), u = k (x + c x^3):
// gelu = x s, and gelu' = s + 2 x s (1 - s) u' with u' = k (1 + 3 c x^2). s and 1 - s both
// come from e = e^-2|u| as 1 / (1 + e) and e / (1 + e), so neither cancels where tanh u is
// near -1 (the far negative tail keeps its digits, unlike 1 + tanh u in float).
struct Tanh {
  // s = sigmoid(2u) and r = 1 - s
  template <class C>
  static void halves(C u, C* s, C* r) {
    const C a = u < C(0) ? -u : u;
    const C e = exp_of(-(a + a));
    const C big = C(1) / (C(1) + e);
    const C small = e * big;
    *s = pick(u < C(0), small, big);
    *r = pick(u < C(0), big, small);
  }
  template <class C>
  static C forward(C x) {
    const C u = static_cast<C>(kSqrt2OverPi) * (x + static_cast<C>(kCubic) * (x * x * x));
    C s, r;
    halves(u, &s, &r);
    return x * s;
  }
  template <class C>
  static C backward(C g, C x) {
    const C x2 = x * x;
    const C k = static_cast<C>(kSqrt2OverPi);
    const C u = k * (x + static_cast<C>(kCubic) * (x2 * x));
    const C du = k * (C(1) + static_cast<C>(3 * kCubic) * x2);
    C s, r;
    halves(u, &s, &r);
    return g * (s + C(2) * x * (s * r) * du);
  }
};

template <class Form, class C>
PLAIT_CLONES void forward_array(C* out, const C* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = Form::forward(x[i]);
}

template <class Form, class C>
PLAIT_CLONES void backward_array(C* out, const C* g, const C* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = Form::backward(g[i], x[i]);
}

inline int64_t grain() { return std::max<int64_t>(kElementwiseGrain / kCost, 1024); }

template <class Form, class T>
void forward_run(int64_t n, T* out, const T* x) {
  parallel_for(n, grain(), [&](int64_t begin, int64_t end) {
    if constexpr (is_reduced_float_v<T>) {
      // blocks widened into float, computed, and rounded once on store
      float xs[ew::kBlock], ys[ew::kBlock];
      for (int64_t i = begin; i < end; i += ew::kBlock) {
        const int64_t m = std::min(ew::kBlock, end - i);
        ew::widen_array<T>(xs, x + i, m);
        forward_array<Form, float>(ys, xs, m);
        ew::narrow_array<T>(out + i, ys, m);
      }
    } else {
      forward_array<Form, T>(out + begin, x + begin, end - begin);
    }
  });
}

template <class Form, class T>
void backward_run(int64_t n, T* out, const T* g, const T* x) {
  parallel_for(n, grain(), [&](int64_t begin, int64_t end) {
    if constexpr (is_reduced_float_v<T>) {
      float gs[ew::kBlock], xs[ew::kBlock], ys[ew::kBlock];
      for (int64_t i = begin; i < end; i += ew::kBlock) {
        const int64_t m = std::min(ew::kBlock, end - i);
        ew::widen_array<T>(gs, g + i, m);
        ew::widen_array<T>(xs, x + i, m);
        backward_array<Form, float>(ys, gs, xs, m);
        ew::narrow_array<T>(out + i, ys, m);
      }
    } else {
      backward_array<Form, T>(out + begin, g + begin, x + begin, end - begin);
    }
  });
}

}  // namespace

bool gelu_forward(int dtype, bool tanh, int64_t n, uintptr_t out, uintptr_t x) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (n <= 0) return;
    if (tanh) {
      forward_run<Tanh, T>(n, ptr<T>(out), ptr<const T>(x));
    } else {
      forward_run<Exact, T>(n, ptr<T>(out), ptr<const T>(x));
    }
  });
}

bool gelu_backward(int dtype, bool tanh, int64_t n, uintptr_t grad_in, uintptr_t grad_out,
                   uintptr_t x) {
  return visit_floating(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (n <= 0) return;
    if (tanh) {
      backward_run<Tanh, T>(n, ptr<T>(grad_in), ptr<const T>(grad_out), ptr<const T>(x));
    } else {
      backward_run<Exact, T>(n, ptr<T>(grad_in), ptr<const T>(grad_out), ptr<const T>(x));
    }
  });
}

}  // namespace plait::cpu
