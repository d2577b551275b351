// Bindings of the fused attention kernels (kernels/attention.cpp). An operand is passed as
// (address, batch strides, row stride, column stride); see attention.h for the layout rules the
// Python wrapper guarantees.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <tuple>

#include "bindings.h"
#include "kernels/attention.h"

using namespace nanobind::literals;

namespace plait::cpu {
namespace {

using OperandTuple = std::tuple<uintptr_t, std::vector<int64_t>, int64_t, int64_t>;

AttentionOperand operand(const OperandTuple& t) {
  AttentionOperand op;
  op.ptr = std::get<0>(t);
  op.batch_strides = std::get<1>(t);
  op.row_stride = std::get<2>(t);
  op.col_stride = std::get<3>(t);
  return op;
}

AttentionShape make_shape(const std::vector<int64_t>& batch, int64_t L, int64_t S, int64_t E,
                          int64_t Ev) {
  AttentionShape sh;
  sh.batch = batch;
  sh.L = L;
  sh.S = S;
  sh.E = E;
  sh.Ev = Ev;
  return sh;
}

// Work in multiply-adds: release the GIL when it is more than a trivial call.
Dims work(const AttentionShape& sh) {
  int64_t n = sh.L * sh.S * (sh.E + sh.Ev);
  for (const int64_t b : sh.batch) n *= b;
  return Dims{n};
}

}  // namespace

void bind_attention(nb::module_& m) {
  m.def(
      "attention_forward",
      [](int dtype, const std::vector<int64_t>& batch, int64_t L, int64_t S, int64_t E,
         int64_t Ev, const OperandTuple& q, const OperandTuple& k, const OperandTuple& v,
         const std::optional<OperandTuple>& mask, uintptr_t out, uintptr_t logsumexp,
         double scale, bool is_causal) {
        const AttentionShape sh = make_shape(batch, L, S, E, Ev);
        const AttentionOperand qo = operand(q), ko = operand(k), vo = operand(v);
        std::optional<AttentionOperand> mo;
        if (mask) mo = operand(*mask);
        MaybeReleaseGil nogil(work(sh));
        return attention_forward(dtype, sh, qo, ko, vo, mo ? &*mo : nullptr, out, logsumexp,
                                 scale, is_causal);
      },
      "dtype"_a, "batch"_a, "L"_a, "S"_a, "E"_a, "Ev"_a, "q"_a, "k"_a, "v"_a, "mask"_a.none(),
      "out"_a, "logsumexp"_a, "scale"_a, "is_causal"_a,
      "Fused attention forward into contiguous out (batch..., L, Ev) and logsumexp "
      "(batch..., L); False when it leaves the case to the composite.");
  m.def(
      "attention_backward",
      [](int dtype, const std::vector<int64_t>& batch, int64_t L, int64_t S, int64_t E,
         int64_t Ev, uintptr_t grad_out, const OperandTuple& q, const OperandTuple& k,
         const OperandTuple& v, const std::optional<OperandTuple>& mask, uintptr_t out,
         uintptr_t logsumexp, uintptr_t grad_q, uintptr_t grad_k, uintptr_t grad_v,
         double scale, bool is_causal) {
        const AttentionShape sh = make_shape(batch, L, S, E, Ev);
        const AttentionOperand qo = operand(q), ko = operand(k), vo = operand(v);
        std::optional<AttentionOperand> mo;
        if (mask) mo = operand(*mask);
        MaybeReleaseGil nogil(work(sh));
        return attention_backward(dtype, sh, grad_out, qo, ko, vo, mo ? &*mo : nullptr, out,
                                  logsumexp, grad_q, grad_k, grad_v, scale, is_causal);
      },
      "dtype"_a, "batch"_a, "L"_a, "S"_a, "E"_a, "Ev"_a, "grad_out"_a, "q"_a, "k"_a, "v"_a,
      "mask"_a.none(), "out"_a, "logsumexp"_a, "grad_q"_a, "grad_k"_a, "grad_v"_a, "scale"_a,
      "is_causal"_a,
      "Gradients of attention_forward into contiguous grad_q, grad_k, grad_v with the full "
      "batch shape; False when it leaves the case to the composite.");
}

}  // namespace plait::cpu
