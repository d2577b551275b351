// Comparison and logical primitives (`CompareOp` in kernels.h: two inputs of one dtype, a bool
// output) and the ternary `where` (a pure selection of storage values).
#include "elementwise.h"
#include "kernels.h"

namespace plait::cpu {
namespace {

// Comparisons of the compute values (float16/bfloat16 in float32, NaN unequal to everything).
#define PLAIT_COMPARE(NAME, EXPR)             \
  struct NAME {                               \
    template <class T>                        \
    static constexpr bool supports = true;    \
    template <class C>                        \
    static bool apply(C a, C b) {             \
      return EXPR;                            \
    }                                         \
  };
PLAIT_COMPARE(Eq, a == b)
PLAIT_COMPARE(Ne, a != b)
PLAIT_COMPARE(Lt, a < b)
PLAIT_COMPARE(Le, a <= b)
PLAIT_COMPARE(Gt, a > b)
PLAIT_COMPARE(Ge, a >= b)
PLAIT_COMPARE(LogicalAnd, (a != C(0)) & (b != C(0)))
PLAIT_COMPARE(LogicalOr, (a != C(0)) | (b != C(0)))
PLAIT_COMPARE(LogicalXor, (a != C(0)) != (b != C(0)))
#undef PLAIT_COMPARE

template <class Op>
bool compare_op(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
                uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides) {
  bool done = false;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr size_t size = sizeof(T);
    if (!ew::admissible(shape, out, out_strides, sizeof(bool),
                        {{a, &a_strides, size}, {b, &b_strides, size}})) {
      return;
    }
    ew::run_elementwise<3>(shape, {out, a, b}, {&out_strides, &a_strides, &b_strides},
                           {sizeof(bool), size, size}, ew::grain_of<Op>(),
                           &ew::binary_run<Op, bool, T>);
    done = true;
  });
  return done;
}

// where on storage bits: only the item size matters.
template <class U>
PLAIT_CLONES void select(U* out, const uint8_t* cond, const U* a, const U* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = cond[i] ? a[i] : b[i];
}

// One run of `out = cond ? a : b`; operands 0..3 are out, cond, a, b. Stride-0 operands are
// broadcast into their block buffer, so one vectorised loop serves every layout.
template <class U>
void where_run(int64_t n, char* const* p, const int64_t* s) {
  constexpr int64_t size = sizeof(U);
  alignas(64) uint8_t cbuf[ew::kBlock];
  alignas(64) U abuf[ew::kBlock];
  alignas(64) U bbuf[ew::kBlock];
  alignas(64) U obuf[ew::kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += ew::kBlock) {
    const int64_t m = std::min(ew::kBlock, n - i0);
    char* out = p[0] + i0 * s[0];
    const char* pc = p[1] + i0 * s[1];
    const char* pa = p[2] + i0 * s[2];
    const char* pb = p[3] + i0 * s[3];
    const uint8_t* c = reinterpret_cast<const uint8_t*>(pc);
    if (s[1] != 1) {
      for (int64_t i = 0; i < m; ++i) cbuf[i] = ew::load_at<uint8_t>(pc + i * s[1]);
      c = cbuf;
    }
    const U* va = reinterpret_cast<const U*>(pa);
    if (s[2] != size) {
      for (int64_t i = 0; i < m; ++i) abuf[i] = ew::load_at<U>(pa + i * s[2]);
      va = abuf;
    }
    const U* vb = reinterpret_cast<const U*>(pb);
    if (s[3] != size) {
      for (int64_t i = 0; i < m; ++i) bbuf[i] = ew::load_at<U>(pb + i * s[3]);
      vb = bbuf;
    }
    const bool direct = ew::direct_output<U, U>(out, s[0], {pa, pb});
    U* dst = direct ? reinterpret_cast<U*>(out) : obuf;
    select<U>(dst, c, va, vb, m);
    if (!direct) ew::store_block<U, U>(out, s[0], obuf, m);
  }
}

}  // namespace

bool compare(CompareOp op, int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides,
             uintptr_t a, const Dims& a_strides, uintptr_t b, const Dims& b_strides) {
  check_layout(shape, {&out_strides, &a_strides, &b_strides});
  switch (op) {
#define PLAIT_COMPARE_CASE(NAME, PRIM) \
  case CompareOp::NAME:                \
    return compare_op<NAME>(dtype, shape, out, out_strides, a, a_strides, b, b_strides);
    PLAIT_CPU_COMPARE_OPS(PLAIT_COMPARE_CASE)
#undef PLAIT_COMPARE_CASE
  }
  return false;
}

bool where(int dtype, const Dims& shape, uintptr_t out, const Dims& out_strides, uintptr_t cond,
           const Dims& cond_strides, uintptr_t a, const Dims& a_strides, uintptr_t b,
           const Dims& b_strides) {
  check_layout(shape, {&out_strides, &cond_strides, &a_strides, &b_strides});
  const size_t size = itemsize(dtype);
  if (size == 0) return false;
  if (!ew::admissible(shape, out, out_strides, size,
                      {{cond, &cond_strides, sizeof(bool)},
                       {a, &a_strides, size},
                       {b, &b_strides, size}})) {
    return false;
  }
  ew::RunFn run = nullptr;
  switch (size) {
    case 1: run = &where_run<uint8_t>; break;
    case 2: run = &where_run<uint16_t>; break;
    case 4: run = &where_run<uint32_t>; break;
    case 8: run = &where_run<uint64_t>; break;
    default: return false;
  }
  ew::run_elementwise<4>(shape, {out, cond, a, b},
                         {&out_strides, &cond_strides, &a_strides, &b_strides},
                         {size, sizeof(bool), size, size}, kElementwiseGrain, run);
  return true;
}

}  // namespace plait::cpu
