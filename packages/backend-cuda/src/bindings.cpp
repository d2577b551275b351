// Python bindings of plait_backend_cuda._C: device queries, the device allocator and byte
// copies. The same file binds the CUDA build (kernels/runtime.cu) and the stub
// (kernels/runtime_stub.cpp, PLAIT_CUDA_STUB).
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <mutex>
#include <string>
#include <unordered_map>

#include "kernels/runtime.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace plait::cuda {
namespace {

// Bytes in live DeviceBuffers, per device (memory_allocated / max_memory_allocated).
class MemoryStats {
 public:
  void add(int device, size_t nbytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& e = entries_[device];
    e.allocated += nbytes;
    if (e.allocated > e.peak) e.peak = e.allocated;
  }
  void sub(int device, size_t nbytes) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_[device].allocated -= nbytes;
  }
  std::pair<size_t, size_t> get(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    const Entry& e = entries_[device];
    return {e.allocated, e.peak};
  }
  void reset_peak(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& e = entries_[device];
    e.peak = e.allocated;
  }

 private:
  struct Entry {
    size_t allocated = 0;
    size_t peak = 0;
  };
  std::mutex mutex_;
  std::unordered_map<int, Entry> entries_;
};

// Never destroyed: buffers may be collected after static destructors at interpreter exit.
MemoryStats& memory_stats() {
  static MemoryStats* stats = new MemoryStats();
  return *stats;
}

// One cudaMalloc'd block, freed when the Python object is collected.
class DeviceBuffer {
 public:
  DeviceBuffer(size_t nbytes, int device)
      : ptr_(malloc_device(nbytes, device)), nbytes_(nbytes), device_(device) {
    memory_stats().add(device_, nbytes_);
  }
  ~DeviceBuffer() {
    free_device(ptr_, device_);
    memory_stats().sub(device_, nbytes_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  uintptr_t ptr() const { return reinterpret_cast<uintptr_t>(ptr_); }
  size_t nbytes() const { return nbytes_; }
  int device() const { return device_; }

 private:
  void* ptr_;
  size_t nbytes_;
  int device_;
};

nb::dict properties(int device) {
  const DeviceProperties p = device_properties(device);
  nb::dict d;
  d["name"] = p.name;
  d["major"] = p.major;
  d["minor"] = p.minor;
  d["total_memory"] = p.total_memory;
  d["multi_processor_count"] = p.multi_processor_count;
  return d;
}

nb::dict build_info() {
  nb::dict d;
  d["cuda"] = compiled_with_cuda();
  d["runtime_version"] = runtime_version();
#ifdef PLAIT_CUDA_ARCHITECTURES
  d["architectures"] = std::string(PLAIT_CUDA_ARCHITECTURES);
#else
  d["architectures"] = std::string();
#endif
  d["cudart"] = std::string(compiled_with_cuda() ? "static" : "none");
  return d;
}

}  // namespace
}  // namespace plait::cuda

NB_MODULE(_C, m) {
  using namespace plait::cuda;
  using release_gil = nb::call_guard<nb::gil_scoped_release>;
  m.doc() = "Native part of plait-backend-cuda: device queries, allocator and copies.";
  // Kernels, plans and allocator blocks live in Python-level caches that the interpreter
  // frees in no fixed order at exit; nanobind's exit-time leak report would list them as
  // leaks although the process is ending and the memory is returned with it.
  nb::set_leak_warnings(false);

  nb::exception<CudaError>(m, "CudaError", PyExc_RuntimeError);

  m.def(
      "device_count",
      [] {
        const DeviceCount c = device_count();
        return std::make_pair(c.count, c.error);
      },
      "(number of usable devices, why it is 0 or ''); never raises.");
  m.def(
      "driver_error", [] { return device_count().error; },
      "Why no CUDA device is usable ('' when one is).");
  m.def("compiled_with_cuda", &compiled_with_cuda);
  m.def("runtime_version", &runtime_version);
  m.def("driver_version", &driver_version);
  m.def("build_info", &build_info);

  m.def("set_device", &set_device, "device"_a);
  m.def("current_device", &current_device);
  m.def("synchronize", &synchronize, "device"_a, release_gil());
  m.def("query", &query, "device"_a);
  m.def("device_properties", &properties, "device"_a);
  m.def(
      "mem_get_info",
      [](int device) {
        size_t free_bytes = 0;
        size_t total_bytes = 0;
        mem_get_info(device, &free_bytes, &total_bytes);
        return std::make_pair(free_bytes, total_bytes);
      },
      "device"_a);

  nb::class_<DeviceBuffer>(m, "DeviceBuffer",
                           "A block of device memory, freed when this object is collected.")
      .def(nb::init<size_t, int>(), "nbytes"_a, "device"_a = 0)
      .def_prop_ro("ptr", &DeviceBuffer::ptr)
      .def_prop_ro("nbytes", &DeviceBuffer::nbytes)
      .def_prop_ro("device", &DeviceBuffer::device)
      .def("__repr__", [](const DeviceBuffer& b) {
        return "DeviceBuffer(nbytes=" + std::to_string(b.nbytes()) +
               ", device=" + std::to_string(b.device()) + ")";
      });
  m.def(
      "memory_stats",
      [](int device) { return memory_stats().get(device); }, "device"_a,
      "(allocated bytes, peak allocated bytes) of live DeviceBuffers on `device`.");
  m.def(
      "reset_peak_memory_stats", [](int device) { memory_stats().reset_peak(device); },
      "device"_a);

  m.def("memcpy_h2d", &memcpy_h2d, "dst"_a, "src"_a, "nbytes"_a, release_gil());
  m.def("memcpy_d2h", &memcpy_d2h, "dst"_a, "src"_a, "nbytes"_a, release_gil());
  m.def("memcpy_d2d", &memcpy_d2d, "dst"_a, "src"_a, "nbytes"_a, release_gil());
}
