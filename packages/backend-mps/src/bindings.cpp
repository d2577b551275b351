// Python bindings of plait_backend_mps._C: Metal device discovery. The same file binds the
// macOS build (kernels/metal.mm) and the stub (kernels/no_metal.cpp).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "kernels/metal.h"

namespace nb = nanobind;

NB_MODULE(_C, m) {
  using namespace plait::mps;
  m.doc() = "Native part of plait-backend-mps: Metal device discovery.";
  // Kernels, plans and allocator blocks live in Python-level caches that the interpreter
  // frees in no fixed order at exit; nanobind's exit-time leak report would list them as
  // leaks although the process is ending and the memory is returned with it.
  nb::set_leak_warnings(false);

  m.def("compiled_with_metal", &compiled_with_metal);
  m.def(
      "probe",
      [] {
        const Probe p = probe();
        nb::dict d;
        d["available"] = p.available;
        d["reason"] = p.reason;
        d["name"] = p.name;
        d["recommended_max_working_set_size"] = p.recommended_max_working_set_size;
        return d;
      },
      "available, reason (why not), name, recommended_max_working_set_size of the default "
      "Metal device; never raises.");
}
