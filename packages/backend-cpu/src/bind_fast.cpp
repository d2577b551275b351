// Host blocks as Python objects, and the eager hot path's "allocate and run in one native call"
// entry points (docs/architecture.md, "The op path"; hookspecs.torch_backend_fast_path).
//
// A HostBlock owns one block of the host allocator and returns it to the free list when the
// Python object dies; `host_view` gives numpy a view that keeps the block alive. The fast
// entry points allocate the output block and run a contiguous kernel on it in one call: core
// takes them only for contiguous operands of the output's dtype, and every tier's result is
// the generic path's (tests compare them). Each returns None when the kernel leaves the case to
// the reference kernel, and core then takes the generic path.
#include <nanobind/ndarray.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "bindings.h"
#include "kernels/allocator.h"
#include "kernels/dtype.h"
#include "kernels/kernels.h"
#include "kernels/reduce.h"

using namespace nanobind::literals;

namespace plait::cpu {

HostBlock::HostBlock(size_t n) : block(host_allocator().allocate(n)), nbytes(n) {
  ptr = reinterpret_cast<uintptr_t>(block->data);
}

HostBlock::~HostBlock() {
  if (block != nullptr) host_allocator().release(block);
}

namespace {

using Owned = std::unique_ptr<HostBlock>;

// Writes `value` converted to dtype `dtype` into `slot` (large enough for any dtype); false
// for a dtype the kernels do not know. Core passes numbers for float32 and float64 tensors.
bool scalar_of_dtype(int dtype, double value, unsigned char* slot) {
  if (dtype == dtype_code<float>()) {
    // A finite double beyond float's range rounds to infinity (IEEE round to nearest); the
    // plain cast would be undefined there. FLT_MAX plus half an ulp is the rounding edge.
    constexpr double kEdge = 3.4028235677973366e38;
    const float f = std::isfinite(value) && std::fabs(value) >= kEdge
                        ? std::copysign(std::numeric_limits<float>::infinity(),
                                        static_cast<float>(value > 0 ? 1 : -1))
                        : static_cast<float>(value);
    std::memcpy(slot, &f, sizeof f);
    return true;
  }
  return visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T v = cast<T>(value);
    std::memcpy(slot, &v, sizeof(T));
  });
}

nb::object release_to_python(Owned block) {
  return nb::cast(block.release(), nb::rv_policy::take_ownership);
}

nb::object fast_binary(int op, int dtype, size_t nbytes, int64_t numel, uintptr_t a,
                       uintptr_t b) {
  Owned out(new HostBlock(nbytes));
  const Dims shape{numel};
  const Dims unit{1};
  bool done;
  {
    MaybeReleaseGil nogil(shape);
    done = binary(static_cast<BinaryOp>(op), dtype, shape, out->ptr, unit, a, unit, b, unit);
  }
  return done ? release_to_python(std::move(out)) : nb::none();
}

// `a op s` (or `s op a` when `reversed`) with `s` a Python number, converted to the dtype.
nb::object fast_binary_scalar(int op, int dtype, size_t nbytes, int64_t numel, uintptr_t a,
                              double scalar, bool reversed) {
  alignas(16) unsigned char slot[16];
  if (!scalar_of_dtype(dtype, scalar, slot)) return nb::none();
  Owned out(new HostBlock(nbytes));
  const Dims shape{numel};
  const Dims unit{1};
  const Dims zero{0};
  const uintptr_t s = reinterpret_cast<uintptr_t>(slot);
  bool done;
  {
    MaybeReleaseGil nogil(shape);
    done = reversed
               ? binary(static_cast<BinaryOp>(op), dtype, shape, out->ptr, unit, s, zero, a, unit)
               : binary(static_cast<BinaryOp>(op), dtype, shape, out->ptr, unit, a, unit, s, zero);
  }
  return done ? release_to_python(std::move(out)) : nb::none();
}

// A broadcast binary op between two fixed layouts, prepared once (core caches it per pair of
// interned layouts): the output is contiguous with `shape`; strides are in elements, 0 on the
// broadcast dimensions.
struct BroadcastPlan {
  int op;
  int dtype;
  size_t nbytes;
  Dims shape;
  Dims out_strides;
  Dims a_strides;
  Dims b_strides;
};

nb::object fast_binary_plan(const BroadcastPlan& p, uintptr_t a, uintptr_t b) {
  Owned out(new HostBlock(p.nbytes));
  bool done;
  {
    MaybeReleaseGil nogil(p.shape);
    done = binary(static_cast<BinaryOp>(p.op), p.dtype, p.shape, out->ptr, p.out_strides, a,
                  p.a_strides, b, p.b_strides);
  }
  return done ? release_to_python(std::move(out)) : nb::none();
}

nb::object fast_unary(int op, int dtype, size_t nbytes, int64_t numel, uintptr_t a) {
  Owned out(new HostBlock(nbytes));
  const Dims shape{numel};
  const Dims unit{1};
  bool done;
  {
    MaybeReleaseGil nogil(shape);
    done = unary(static_cast<UnaryOp>(op), dtype, shape, out->ptr, unit, a, unit);
  }
  return done ? release_to_python(std::move(out)) : nb::none();
}

// The sum of all `numel` elements of a contiguous tensor into a 0-d output of the same dtype.
nb::object fast_sum_all(int dtype, size_t itemsize, int64_t numel, uintptr_t a) {
  Owned out(new HostBlock(itemsize));
  const Dims shape{numel};
  const Dims unit{1};
  const Dims zero{0};
  bool done;
  {
    MaybeReleaseGil nogil(shape);
    done = sum(dtype, dtype, shape, out->ptr, zero, a, unit, uint64_t{1});
  }
  return done ? release_to_python(std::move(out)) : nb::none();
}

// `op` (sum, amax or amin: the REDUCE_OPS index) over the last dimension of a contiguous
// (rows, cols) tensor into a new block of `rows` elements of the same dtype.
nb::object fast_reduce_rows(int op, int dtype, size_t itemsize, int64_t rows, int64_t cols,
                            uintptr_t a) {
  const auto kind = static_cast<ReduceOp>(op);
  if (kind != ReduceOp::Sum && kind != ReduceOp::Amax && kind != ReduceOp::Amin)
    throw std::invalid_argument("fast_reduce_rows: op must be sum, amax or amin");
  if (rows <= 0 || cols <= 0) return nb::none();  // empty: the generic path decides
  Owned out(new HostBlock(static_cast<size_t>(rows) * itemsize));
  const Dims shape{rows, cols};
  const Dims out_strides{1, 0};
  const Dims a_strides{cols, 1};
  bool done;
  {
    MaybeReleaseGil nogil(shape);
    done = reduce(kind, dtype, dtype, shape, out->ptr, out_strides, a, a_strides, uint64_t{2});
  }
  return done ? release_to_python(std::move(out)) : nb::none();
}

}  // namespace

void bind_fast(nb::module_& m) {
  nb::class_<HostBlock>(m, "HostBlock",
                        "One block of the host allocator, returned to its free list when this "
                        "object dies.")
      .def(nb::init<size_t>(), "nbytes"_a)
      .def_ro("ptr", &HostBlock::ptr, "The address of the first byte (a multiple of 64).")
      .def_ro("nbytes", &HostBlock::nbytes, "The bytes requested.");
  m.def(
      "host_view",
      [](nb::handle block) {
        const HostBlock& b = nb::cast<const HostBlock&>(block);
        return nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(reinterpret_cast<void*>(b.ptr),
                                                            {b.nbytes}, block);
      },
      "block"_a, "A 1-d uint8 numpy array over `block`'s bytes that keeps it alive.");

  nb::class_<BroadcastPlan>(m, "BroadcastPlan",
                            "A binary op between two fixed layouts broadcast to `shape`.")
      .def(
          "__init__",
          [](BroadcastPlan* self, int op, int dtype, size_t nbytes, Dims shape, Dims a_strides,
             Dims b_strides) {
            check_layout(shape, {&a_strides, &b_strides});
            Dims out_strides(shape.size());
            int64_t step = 1;
            for (size_t d = shape.size(); d-- > 0;) {
              out_strides[d] = step;
              step *= shape[d];
            }
            new (self) BroadcastPlan{op,        dtype,      nbytes,   std::move(shape),
                                     std::move(out_strides), std::move(a_strides),
                                     std::move(b_strides)};
          },
          "op"_a, "dtype"_a, "nbytes"_a, "shape"_a, "a_strides"_a, "b_strides"_a);

  m.def("fast_binary", &fast_binary, "op"_a, "dtype"_a, "nbytes"_a, "numel"_a, "a"_a, "b"_a,
        "A new block holding `a op b` for two contiguous operands of `numel` elements (op: an "
        "index into BINARY_OPS), or None.");
  m.def("fast_binary_scalar", &fast_binary_scalar, "op"_a, "dtype"_a, "nbytes"_a, "numel"_a,
        "a"_a, "scalar"_a, "reversed"_a,
        "A new block holding `a op scalar` (`scalar op a` when reversed), or None.");
  m.def("fast_binary_plan", &fast_binary_plan, "plan"_a, "a"_a, "b"_a,
        "A new block holding the broadcast `a op b` of a BroadcastPlan, or None.");
  m.def("fast_unary", &fast_unary, "op"_a, "dtype"_a, "nbytes"_a, "numel"_a, "a"_a,
        "A new block holding `op(a)` (op: an index into UNARY_OPS), or None.");
  m.def("fast_sum_all", &fast_sum_all, "dtype"_a, "itemsize"_a, "numel"_a, "a"_a,
        "A new block holding the sum of every element, in the same dtype, or None.");
  m.def("fast_reduce_rows", &fast_reduce_rows, "op"_a, "dtype"_a, "itemsize"_a, "rows"_a,
        "cols"_a, "a"_a,
        "A new block holding sum/amax/amin (op: an index into REDUCE_OPS) of each row of a "
        "contiguous (rows, cols) tensor, in its dtype, or None.");
}

}  // namespace plait::cpu
