// The fused Adam / AdamW step; see adam.h.
#include "adam.h"

#include <cmath>
#include <type_traits>

// float32 also has an explicit AVX2 loop (x86-64 with GCC or Clang, chosen at run time): one
// pass per element with 256-bit square roots, which the auto-vectorised loop cannot have.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(PLAIT_NO_CLONES)
#define PLAIT_ADAM_AVX2 1
#include <immintrin.h>
#else
#define PLAIT_ADAM_AVX2 0
#endif

#include "dtype.h"
#include "parallel.h"
#include "simd.h"
#include "sqrt_array.h"

namespace plait::cpu {
namespace {

// Per-tensor constants, in the compute type C (float for float32 and the 16-bit floats, as
// the composite computes in the tensor's dtype).
template <class C>
struct StepConstants {
  C lerp_weight;          // 1 - beta1
  C beta2;
  C one_minus_beta2;
  C grad_sign;            // -1 with maximize
  C grad_scale;           // grad /= grad_scale (divided, as PyTorch does)
  C coupled_decay;        // Adam: grad += param * weight_decay (0 for AdamW)
  C decoupled_factor;     // AdamW: param *= 1 - lr * weight_decay (1 for Adam)
  C bias_correction2_sqrt;
  C eps;
  C neg_step_size;        // -lr / (1 - beta1^t)
};

template <class T, class C = ComputeType<T>>
inline C load(const T* p, int64_t i) {
  return cast<C>(p[i]);
}

template <class T, class C>
inline void store(T* p, int64_t i, C v) {
  p[i] = cast<T>(v);
}

// max(a, b) of non-negative floats (the second moments) through their bit patterns, which
// order like the values (NaN, positive or negative, compares above everything and wins, as
// torch.maximum propagates it). An integer select vectorises; a float one on computed values
// does not under -ftrapping-math.
inline float max_nonnegative(float a, float b) {
  const uint32_t ia = bit_cast<uint32_t>(a), ib = bit_cast<uint32_t>(b);
  return bit_cast<float>(ia > ib ? ia : ib);
}

inline double max_nonnegative(double a, double b) {
  const uint64_t ia = bit_cast<uint64_t>(a), ib = bit_cast<uint64_t>(b);
  return bit_cast<double>(ia > ib ? ia : ib);
}

// One contiguous run of elements, in blocks that stay in L1: pass 1 updates the moments (and
// applies AdamW's decay to the parameter), the square roots of the denominators run in
// between, pass 2 updates the parameter. Template flags instead of branches in the loops, so
// that their bodies are straight-line code the compiler vectorises.
template <class T, bool kAmsgrad, bool kScale, bool kLerpLow>
PLAIT_CLONES void adam_run(T* __restrict param, T* __restrict grad, T* __restrict exp_avg,
                           T* __restrict exp_avg_sq, T* __restrict max_exp_avg_sq, int64_t n,
                           const StepConstants<ComputeType<T>>& k) {
  using C = ComputeType<T>;
  constexpr int64_t kBlock = 256;
  // The decayed parameter and the new first moment stay in C between the passes: reloading
  // them from float16/bfloat16 storage would round them twice.
  alignas(64) C denom[kBlock];
  alignas(64) C p_new[kBlock];
  alignas(64) C m_new[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t len = n - b < kBlock ? n - b : kBlock;
    T* p_b = param + b;
    T* g_b = grad + b;
    T* m_b = exp_avg + b;
    T* v_b = exp_avg_sq + b;
    T* vmax_b = kAmsgrad ? max_exp_avg_sq + b : nullptr;
    for (int64_t i = 0; i < len; ++i) {
      C g = load(g_b, i);
      if constexpr (kScale) {
        g = g / k.grad_scale;
        store(g_b, i, g);  // the unscaled gradient is written back, as in PyTorch
      }
      g = g * k.grad_sign;
      const C p = load(p_b, i) * k.decoupled_factor;
      g = g + p * k.coupled_decay;
      C m = load(m_b, i);
      // torch.lerp: start + w * (end - start) for w < 0.5, else end - (end - start) * (1 - w)
      if constexpr (kLerpLow) {
        m = m + k.lerp_weight * (g - m);
      } else {
        m = g - (g - m) * (C(1) - k.lerp_weight);
      }
      C v = load(v_b, i);
      v = v * k.beta2 + k.one_minus_beta2 * g * g;
      p_new[i] = p;
      m_new[i] = m;
      store(m_b, i, m);
      store(v_b, i, v);
      if constexpr (kAmsgrad) {
        const C vmax = max_nonnegative(load(vmax_b, i), v);
        store(vmax_b, i, vmax);
        denom[i] = vmax;
      } else {
        denom[i] = v;
      }
    }
    sqrt_array<false, C>(denom, denom, len);  // (std::sqrt in the loop would not vectorise)
    for (int64_t i = 0; i < len; ++i) {
      const C d = denom[i] / k.bias_correction2_sqrt + k.eps;
      store(p_b, i, p_new[i] + k.neg_step_size * (m_new[i] / d));
    }
  }
}

#if PLAIT_ADAM_AVX2
bool has_avx2() {
  static const bool supported = __builtin_cpu_supports("avx2");
  return supported;
}

// Eight floats at `ptr`, or the lanes of `mask` for the last partial vector.
__attribute__((target("avx2"))) inline __m256 load8(const float* ptr, bool full, __m256i mask) {
  return full ? _mm256_loadu_ps(ptr) : _mm256_maskload_ps(ptr, mask);
}

__attribute__((target("avx2"))) inline void store8(float* ptr, bool full, __m256i mask,
                                                   __m256 value) {
  if (full) {
    _mm256_storeu_ps(ptr, value);
  } else {
    _mm256_maskstore_ps(ptr, mask, value);
  }
}

// The float32 step, eight elements at a time, the last partial vector through masked loads
// and stores, so that every element takes the same operations whatever the threads' chunk
// boundaries (results do not depend on the thread count). Plain multiplies and adds, in the
// order of adam_run (no FMA contraction in intrinsics).
template <bool kAmsgrad, bool kScale, bool kLerpLow>
__attribute__((target("avx2"))) void adam_run_avx2(float* param, float* grad, float* exp_avg,
                                                   float* exp_avg_sq, float* max_exp_avg_sq,
                                                   int64_t n, const StepConstants<float>& k) {
  const __m256 lerp_weight = _mm256_set1_ps(k.lerp_weight);
  const __m256 one_minus_lerp_weight = _mm256_set1_ps(1.0f - k.lerp_weight);
  const __m256 beta2 = _mm256_set1_ps(k.beta2);
  const __m256 one_minus_beta2 = _mm256_set1_ps(k.one_minus_beta2);
  const __m256 grad_sign = _mm256_set1_ps(k.grad_sign);
  const __m256 grad_scale = _mm256_set1_ps(k.grad_scale);
  const __m256 coupled_decay = _mm256_set1_ps(k.coupled_decay);
  const __m256 decoupled_factor = _mm256_set1_ps(k.decoupled_factor);
  const __m256 bias_correction2_sqrt = _mm256_set1_ps(k.bias_correction2_sqrt);
  const __m256 eps = _mm256_set1_ps(k.eps);
  const __m256 neg_step_size = _mm256_set1_ps(k.neg_step_size);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t i = 0; i < n; i += 8) {
    const int64_t left = n - i;
    const bool full = left >= 8;
    // lanes [0, left) on for the last partial vector
    const int lanes_on = full ? 8 : static_cast<int>(left);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes_on), lane);
    __m256 g = load8(grad + i, full, mask);
    if constexpr (kScale) {
      g = _mm256_div_ps(g, grad_scale);
      store8(grad + i, full, mask, g);
    }
    g = _mm256_mul_ps(g, grad_sign);
    __m256 p = _mm256_mul_ps(load8(param + i, full, mask), decoupled_factor);
    g = _mm256_add_ps(g, _mm256_mul_ps(p, coupled_decay));
    __m256 m = load8(exp_avg + i, full, mask);
    if constexpr (kLerpLow) {
      m = _mm256_add_ps(m, _mm256_mul_ps(lerp_weight, _mm256_sub_ps(g, m)));
    } else {
      m = _mm256_sub_ps(g, _mm256_mul_ps(_mm256_sub_ps(g, m), one_minus_lerp_weight));
    }
    __m256 v = _mm256_add_ps(_mm256_mul_ps(load8(exp_avg_sq + i, full, mask), beta2),
                             _mm256_mul_ps(_mm256_mul_ps(one_minus_beta2, g), g));
    store8(exp_avg + i, full, mask, m);
    store8(exp_avg_sq + i, full, mask, v);
    __m256 denom = v;
    if constexpr (kAmsgrad) {
      // max of non-negative values on their bit patterns (see max_nonnegative)
      const __m256 old = load8(max_exp_avg_sq + i, full, mask);
      const __m256i vmax =
          _mm256_max_epu32(_mm256_castps_si256(old), _mm256_castps_si256(v));
      denom = _mm256_castsi256_ps(vmax);
      store8(max_exp_avg_sq + i, full, mask, denom);
    }
    denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(denom), bias_correction2_sqrt), eps);
    p = _mm256_add_ps(p, _mm256_mul_ps(neg_step_size, _mm256_div_ps(m, denom)));
    store8(param + i, full, mask, p);
  }
}
#endif

template <class T, bool kAmsgrad, bool kScale>
void adam_run_dispatch(bool lerp_low, T* param, T* grad, T* exp_avg, T* exp_avg_sq,
                       T* max_exp_avg_sq, int64_t n, const StepConstants<ComputeType<T>>& k) {
#if PLAIT_ADAM_AVX2
  if constexpr (std::is_same_v<T, float>) {
    if (has_avx2()) {
      if (lerp_low) {
        adam_run_avx2<kAmsgrad, kScale, true>(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq,
                                              n, k);
      } else {
        adam_run_avx2<kAmsgrad, kScale, false>(param, grad, exp_avg, exp_avg_sq,
                                               max_exp_avg_sq, n, k);
      }
      return;
    }
  }
#endif
  if (lerp_low) {
    adam_run<T, kAmsgrad, kScale, true>(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, n, k);
  } else {
    adam_run<T, kAmsgrad, kScale, false>(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, n,
                                         k);
  }
}

template <class T>
void run(T* param, T* grad, T* exp_avg, T* exp_avg_sq, T* max_exp_avg_sq, int64_t n,
         const StepConstants<ComputeType<T>>& k, const AdamOptions& o) {
  const bool lerp_low = (1.0 - o.beta1) < 0.5;
  if (o.amsgrad) {
    if (o.has_grad_scale) {
      adam_run_dispatch<T, true, true>(lerp_low, param, grad, exp_avg, exp_avg_sq,
                                       max_exp_avg_sq, n, k);
    } else {
      adam_run_dispatch<T, true, false>(lerp_low, param, grad, exp_avg, exp_avg_sq,
                                        max_exp_avg_sq, n, k);
    }
  } else if (o.has_grad_scale) {
    adam_run_dispatch<T, false, true>(lerp_low, param, grad, exp_avg, exp_avg_sq, nullptr, n,
                                      k);
  } else {
    adam_run_dispatch<T, false, false>(lerp_low, param, grad, exp_avg, exp_avg_sq, nullptr, n,
                                       k);
  }
}

template <class T>
StepConstants<ComputeType<T>> constants(const AdamOptions& o, double step) {
  using C = ComputeType<T>;
  StepConstants<C> k;
  k.lerp_weight = static_cast<C>(1.0 - o.beta1);
  k.beta2 = static_cast<C>(o.beta2);
  k.one_minus_beta2 = static_cast<C>(1.0 - o.beta2);
  k.grad_sign = o.maximize ? C(-1) : C(1);
  k.grad_scale = static_cast<C>(o.grad_scale);
  const bool decay = o.weight_decay != 0.0;
  k.coupled_decay = decay && !o.decoupled ? static_cast<C>(o.weight_decay) : C(0);
  k.decoupled_factor = decay && o.decoupled ? static_cast<C>(1.0 - o.lr * o.weight_decay) : C(1);
  // Bias corrections in double, as the optimizer computes them in Python floats.
  const double bias_correction1 = 1.0 - std::pow(o.beta1, step);
  k.bias_correction2_sqrt = static_cast<C>(std::sqrt(1.0 - std::pow(o.beta2, step)));
  k.eps = static_cast<C>(o.eps);
  k.neg_step_size = static_cast<C>(-(o.lr / bias_correction1));
  return k;
}

template <class T>
void fused_adam_typed(const std::vector<int64_t>& numels, const std::vector<uintptr_t>& params,
                      const std::vector<uintptr_t>& grads, const std::vector<uintptr_t>& exp_avgs,
                      const std::vector<uintptr_t>& exp_avg_sqs,
                      const std::vector<uintptr_t>& max_exp_avg_sqs,
                      const std::vector<double>& steps, const AdamOptions& o) {
  const size_t count = numels.size();
  std::vector<StepConstants<ComputeType<T>>> consts(count);
  std::vector<int64_t> offsets(count + 1, 0);  // prefix sums: tensor i covers [off_i, off_i+1)
  for (size_t i = 0; i < count; ++i) {
    consts[i] = constants<T>(o, steps[i]);
    offsets[i + 1] = offsets[i] + numels[i];
  }
  auto ptr = [](uintptr_t address) { return reinterpret_cast<T*>(address); };
  // One parallel region over every element of every tensor: a chunk may span tensors. About
  // 10 flops and 5 memory streams per element: a thread pays off above ~32k elements.
  parallel_for(offsets[count], kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for (size_t i = 0; i < count; ++i) {
      const int64_t lo = begin > offsets[i] ? begin : offsets[i];
      const int64_t hi = end < offsets[i + 1] ? end : offsets[i + 1];
      if (lo >= hi) continue;
      const int64_t at = lo - offsets[i];
      T* vmax = o.amsgrad ? ptr(max_exp_avg_sqs[i]) + at : nullptr;
      run<T>(ptr(params[i]) + at, ptr(grads[i]) + at, ptr(exp_avgs[i]) + at,
             ptr(exp_avg_sqs[i]) + at, vmax, hi - lo, consts[i], o);
    }
  });
}

}  // namespace

bool fused_adam(int dtype, const std::vector<int64_t>& numels,
                const std::vector<uintptr_t>& params, const std::vector<uintptr_t>& grads,
                const std::vector<uintptr_t>& exp_avgs, const std::vector<uintptr_t>& exp_avg_sqs,
                const std::vector<uintptr_t>& max_exp_avg_sqs, const std::vector<double>& steps,
                const AdamOptions& options) {
  const size_t n = numels.size();
  if (params.size() != n || grads.size() != n || exp_avgs.size() != n ||
      exp_avg_sqs.size() != n || steps.size() != n ||
      (options.amsgrad && max_exp_avg_sqs.size() != n)) {
    return false;
  }
  for (size_t i = 0; i < n; ++i) {
    if (numels[i] < 0) return false;
  }
  bool handled = false;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating_v<T>) {
      fused_adam_typed<T>(numels, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
                          options);
      handled = true;
    }
  });
  return handled;
}

}  // namespace plait::cpu
